// RUN: memfmt-opt %s --mlir-print-op-generic | memfmt-opt --mlir-print-op-generic | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic > %t.1.mlir
// RUN: memfmt-opt %t.1.mlir --mlir-print-op-generic > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir

// Every op of DESIGN.md §2 written only in the generic form, as a frontend or
// another tool would write it: the same ops once with the inherent attributes
// in the properties syntax `<{...}>` and once in the plain attribute
// dictionary `{...}`. Both parse, verify and print the same generic form, and
// printing that form again gives identical text.

// Inherent attributes in the properties syntax, every attribute written out:
// integer lists (array<i64>), i64, f64, bool, memory_format and string.
// CHECK-LABEL: sym_name = "properties"
// CHECK: "memfmt.weight"() <{name = "conv1.weight"}> : () -> tensor<4x3x3x3xf32>
// CHECK: "memfmt.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) <{dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK: "memfmt.batch_norm"({{.+}}) <{eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false}>
// CHECK: "memfmt.relu"
// CHECK: "memfmt.add"
// CHECK: "memfmt.max_pool2d"(%{{.+}}) <{ceil_mode = true, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
// CHECK: "memfmt.max_pool2d_with_indices"(%{{.+}}) <{ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>}> : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
// CHECK: "memfmt.avg_pool2d"(%{{.+}}) <{ceil_mode = false, count_include_pad = false, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}>
// CHECK: "memfmt.adaptive_avg_pool2d"(%{{.+}}) <{output_size = array<i64: 1, 1>}>
// CHECK: "memfmt.flatten"(%{{.+}}) <{end_dim = -1 : i64, start_dim = 1 : i64}>
// CHECK: "memfmt.reshape"
// CHECK: "memfmt.linear"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x4xf32>, tensor<10x4xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK: "memfmt.contiguous"(%{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
// CHECK: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}>
// CHECK: "memfmt.empty_like"(%{{.+}}) <{memory_format = #memfmt.memory_format<contiguous>}>
// CHECK: "memfmt.to"(%{{.+}}) <{dtype = bf16, memory_format = #memfmt.memory_format<preserve>}> : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xbf16, #memfmt.strides<[256, 1, 32, 4]>>
// CHECK: "memfmt.resize_as"(%{{.+}}, %{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}>
// CHECK: "memfmt.cat"(%{{.+}}, %{{.+}}) <{dim = 0 : i64}>
// CHECK: "memfmt.chunk"(%{{.+}}) <{chunks = 2 : i64, dim = 0 : i64}>
"func.func"() <{function_type = (tensor<1x3x8x8xf32>, tensor<4xf32>, tensor<256xf32>) -> (), sym_name = "properties"}> ({
^bb0(%x: tensor<1x3x8x8xf32>, %p: tensor<4xf32>, %flat: tensor<256xf32>):
  %w = "memfmt.weight"() <{name = "conv1.weight"}> : () -> tensor<4x3x3x3xf32>
  %c = "memfmt.conv2d"(%x, %w, %p) <{stride = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %bn = "memfmt.batch_norm"(%c, %p, %p, %p, %p) <{eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = false}> : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = "memfmt.relu"(%bn) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a = "memfmt.add"(%r, %bn) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %mp = "memfmt.max_pool2d"(%r) <{kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = true}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
  %mi:2 = "memfmt.max_pool2d_with_indices"(%r) <{kernel_size = array<i64: 2, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false}> : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  %ap = "memfmt.avg_pool2d"(%r) <{kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = false}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %gp = "memfmt.adaptive_avg_pool2d"(%r) <{output_size = array<i64: 1, 1>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  %f = "memfmt.flatten"(%gp) <{start_dim = 1 : i64, end_dim = -1 : i64}> : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
  %rs = "memfmt.reshape"(%flat) : (tensor<256xf32>) -> tensor<1x4x8x8xf32>
  %fw = "memfmt.weight"() <{name = "fc.weight"}> : () -> tensor<10x4xf32>
  %fb = "memfmt.weight"() <{name = "fc.bias"}> : () -> tensor<10xf32>
  %l = "memfmt.linear"(%f, %fw, %fb) : (tensor<1x4xf32>, tensor<10x4xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %cl = "memfmt.contiguous"(%r) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  %cc = "memfmt.clone"(%cl) <{memory_format = #memfmt.memory_format<preserve>}> : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  %el = "memfmt.empty_like"(%cl) <{memory_format = #memfmt.memory_format<contiguous>}> : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xf32>
  %to = "memfmt.to"(%cl) <{dtype = bf16, memory_format = #memfmt.memory_format<preserve>}> : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xbf16, #memfmt.strides<[256, 1, 32, 4]>>
  %ra = "memfmt.resize_as"(%flat, %r) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<256xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  %ct = "memfmt.cat"(%r, %r) <{dim = 0 : i64}> : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %ch:2 = "memfmt.chunk"(%ct) <{chunks = 2 : i64, dim = 0 : i64}> : (tensor<2x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
  "func.return"() : () -> ()
}) : () -> ()

// The same ops with the inherent attributes in the plain attribute
// dictionary (the pre-properties generic form); they become properties, and
// a discardable attribute (`memfmt_test.tag`) stays in the dictionary.
// CHECK-LABEL: sym_name = "attribute_dictionary"
// CHECK: "memfmt.weight"() <{name = "conv1.weight"}> : () -> tensor<4x3x3x3xf32>
// CHECK: "memfmt.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) <{dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}> {memfmt_test.tag = "stem"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK: "memfmt.batch_norm"({{.+}}) <{eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false}>
// CHECK: "memfmt.relu"
// CHECK: "memfmt.add"
// CHECK: "memfmt.max_pool2d"(%{{.+}}) <{ceil_mode = true, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
// CHECK: "memfmt.max_pool2d_with_indices"(%{{.+}}) <{ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>}> : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
// CHECK: "memfmt.avg_pool2d"(%{{.+}}) <{ceil_mode = false, count_include_pad = false, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}>
// CHECK: "memfmt.adaptive_avg_pool2d"(%{{.+}}) <{output_size = array<i64: 1, 1>}>
// CHECK: "memfmt.flatten"(%{{.+}}) <{end_dim = -1 : i64, start_dim = 1 : i64}>
// CHECK: "memfmt.reshape"
// CHECK: "memfmt.linear"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x4xf32>, tensor<10x4xf32>, tensor<10xf32>) -> tensor<1x10xf32>
// CHECK: "memfmt.contiguous"(%{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
// CHECK: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}>
// CHECK: "memfmt.empty_like"(%{{.+}}) <{memory_format = #memfmt.memory_format<contiguous>}>
// CHECK: "memfmt.to"(%{{.+}}) <{dtype = bf16, memory_format = #memfmt.memory_format<preserve>}> : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xbf16, #memfmt.strides<[256, 1, 32, 4]>>
// CHECK: "memfmt.resize_as"(%{{.+}}, %{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}>
// CHECK: "memfmt.cat"(%{{.+}}, %{{.+}}) <{dim = 0 : i64}>
// CHECK: "memfmt.chunk"(%{{.+}}) <{chunks = 2 : i64, dim = 0 : i64}>
"func.func"() <{function_type = (tensor<1x3x8x8xf32>, tensor<4xf32>, tensor<256xf32>) -> (), sym_name = "attribute_dictionary"}> ({
^bb0(%x: tensor<1x3x8x8xf32>, %p: tensor<4xf32>, %flat: tensor<256xf32>):
  %w = "memfmt.weight"() {name = "conv1.weight"} : () -> tensor<4x3x3x3xf32>
  %c = "memfmt.conv2d"(%x, %w, %p) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, memfmt_test.tag = "stem"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %bn = "memfmt.batch_norm"(%c, %p, %p, %p, %p) {eps = 1.0e-05 : f64, momentum = 0.1 : f64, training = false} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = "memfmt.relu"(%bn) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a = "memfmt.add"(%r, %bn) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %mp = "memfmt.max_pool2d"(%r) {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
  %mi:2 = "memfmt.max_pool2d_with_indices"(%r) {kernel_size = array<i64: 2, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  %ap = "memfmt.avg_pool2d"(%r) {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = false} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %gp = "memfmt.adaptive_avg_pool2d"(%r) {output_size = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x1x1xf32>
  %f = "memfmt.flatten"(%gp) {start_dim = 1 : i64, end_dim = -1 : i64} : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
  %rs = "memfmt.reshape"(%flat) : (tensor<256xf32>) -> tensor<1x4x8x8xf32>
  %fw = "memfmt.weight"() {name = "fc.weight"} : () -> tensor<10x4xf32>
  %fb = "memfmt.weight"() {name = "fc.bias"} : () -> tensor<10xf32>
  %l = "memfmt.linear"(%f, %fw, %fb) : (tensor<1x4xf32>, tensor<10x4xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %cl = "memfmt.contiguous"(%r) {memory_format = #memfmt.memory_format<channels_last>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  %cc = "memfmt.clone"(%cl) {memory_format = #memfmt.memory_format<preserve>} : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  %el = "memfmt.empty_like"(%cl) {memory_format = #memfmt.memory_format<contiguous>} : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xf32>
  %to = "memfmt.to"(%cl) {dtype = bf16, memory_format = #memfmt.memory_format<preserve>} : (tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>) -> tensor<1x4x8x8xbf16, #memfmt.strides<[256, 1, 32, 4]>>
  %ra = "memfmt.resize_as"(%flat, %r) {memory_format = #memfmt.memory_format<channels_last>} : (tensor<256xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  %ct = "memfmt.cat"(%r, %r) {dim = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %ch:2 = "memfmt.chunk"(%ct) {chunks = 2 : i64, dim = 0 : i64} : (tensor<2x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
  "func.return"() : () -> ()
}) : () -> ()

// Attributes with defaults may be left out in the generic form; the parsed op
// carries the defaults (ATen's), and optional `dtype` stays absent.
// CHECK-LABEL: sym_name = "defaults"
// CHECK: "memfmt.conv2d"(%{{.+}}, %{{.+}}) <{dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}>
// CHECK: "memfmt.batch_norm"({{.+}}) <{eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = false}>
// CHECK: "memfmt.max_pool2d"(%{{.+}}) <{ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>}>
// CHECK: "memfmt.avg_pool2d"(%{{.+}}) <{ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>}>
// CHECK: "memfmt.flatten"(%{{.+}}) <{end_dim = -1 : i64, start_dim = 0 : i64}>
// CHECK: "memfmt.contiguous"(%{{.+}}) <{memory_format = #memfmt.memory_format<contiguous>}>
// CHECK: "memfmt.to"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}>
// CHECK: "memfmt.cat"(%{{.+}}) <{dim = 0 : i64}>
// CHECK: "memfmt.chunk"(%{{.+}}) <{chunks = 1 : i64, dim = 0 : i64}>
"func.func"() <{function_type = (tensor<1x4x4x4xf32>, tensor<4xf32>) -> (), sym_name = "defaults"}> ({
^bb0(%x: tensor<1x4x4x4xf32>, %p: tensor<4xf32>):
  %c = "memfmt.conv2d"(%x, %x) : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x1x1x1xf32>
  %bn = "memfmt.batch_norm"(%x, %p, %p, %p, %p) : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %mp = "memfmt.max_pool2d"(%x) <{kernel_size = array<i64: 2, 2>}> : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  %ap = "memfmt.avg_pool2d"(%x) {kernel_size = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  %f = "memfmt.flatten"(%x) : (tensor<1x4x4x4xf32>) -> tensor<64xf32>
  %cc = "memfmt.contiguous"(%x) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %to = "memfmt.to"(%x) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ct = "memfmt.cat"(%x) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ch = "memfmt.chunk"(%x) <{chunks = 1 : i64}> : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  "func.return"() : () -> ()
}) : () -> ()
