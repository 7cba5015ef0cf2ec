// RUN: memfmt-opt %s | memfmt-opt | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic | memfmt-opt | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every memfmt op and attribute (DESIGN.md §2): custom form
// twice, and custom -> generic -> custom. The GENERIC prefix checks the kinds
// of the inherent attributes in the generic form.

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

// conv2d without bias and with default attributes; defaults are not printed.
// CHECK-LABEL: func.func @conv2d_no_bias
// CHECK: memfmt.conv2d %{{.+}}, %{{.+}} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// GENERIC-LABEL: sym_name = "conv2d_no_bias"
// GENERIC: "memfmt.conv2d"(%{{.+}}, %{{.+}}) <{dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}>
func.func @conv2d_no_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// conv2d with bias, stride and 2-value (symmetric) padding, as ResNet's stem.
// CHECK-LABEL: func.func @conv2d_bias
// CHECK: memfmt.conv2d %{{.+}}, %{{.+}}, %{{.+}} {padding = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
func.func @conv2d_bias(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>) -> tensor<1x64x112x112xf32> {
  %y = memfmt.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 3, 3>}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  return %y : tensor<1x64x112x112xf32>
}

// conv2d with 4-value (top, left, bottom, right) padding, dilation and groups.
// CHECK-LABEL: func.func @conv2d_asymmetric_grouped
// CHECK: memfmt.conv2d %{{.+}}, %{{.+}} {dilation = array<i64: 2, 1>, groups = 2 : i64, padding = array<i64: 0, 1, 2, 0>}
// CHECK-SAME: -> tensor<2x8x4x7xf32>
// GENERIC-LABEL: sym_name = "conv2d_asymmetric_grouped"
// GENERIC: "memfmt.conv2d"(%{{.+}}, %{{.+}}) <{dilation = array<i64: 2, 1>, groups = 2 : i64, padding = array<i64: 0, 1, 2, 0>, stride = array<i64: 1, 1>}>
func.func @conv2d_asymmetric_grouped(%x: tensor<2x4x6x8xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<2x8x4x7xf32> {
  %y = memfmt.conv2d %x, %w {padding = array<i64: 0, 1, 2, 0>, dilation = array<i64: 2, 1>, groups = 2 : i64}
      : (tensor<2x4x6x8xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x4x7xf32>
  return %y : tensor<2x8x4x7xf32>
}

// conv2d on channels-last input and weight; the encodings survive.
// CHECK-LABEL: func.func @conv2d_channels_last
// CHECK: memfmt.conv2d %{{.+}}, %{{.+}} : (tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>, tensor<4x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
func.func @conv2d_channels_last(%x: tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>, %w: tensor<4x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>> {
  %y = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>, tensor<4x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>) -> tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
  return %y : tensor<1x4x8x8xf32, #memfmt.strides<[256, 1, 32, 4]>>
}

//===----------------------------------------------------------------------===//
// batch_norm, relu, add
//===----------------------------------------------------------------------===//

// batch_norm with eps, momentum and training; f64 and bool attributes.
// CHECK-LABEL: func.func @batch_norm
// CHECK: memfmt.batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {eps = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64, training = true} : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x5x5xf32>
// GENERIC-LABEL: sym_name = "batch_norm"
// GENERIC: "memfmt.batch_norm"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) <{eps = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64, training = true}>
func.func @batch_norm(%x: tensor<2x4x5x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4x5x5xf32> {
  %y = memfmt.batch_norm %x, %g, %b, %m, %v {eps = 1.0e-3 : f64, momentum = 0.2 : f64, training = true}
      : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x5x5xf32>
  return %y : tensor<2x4x5x5xf32>
}

// batch_norm with default attributes on a 2-D input (N, C).
// CHECK-LABEL: func.func @batch_norm_defaults
// CHECK: memfmt.batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
func.func @batch_norm_defaults(%x: tensor<8x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = memfmt.batch_norm %x, %g, %b, %m, %v : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// relu on a channels-last bf16 tensor.
// CHECK-LABEL: func.func @relu
// CHECK: memfmt.relu %{{.+}} : tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>>
func.func @relu(%x: tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>> {
  %y = memfmt.relu %x : tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>>
  return %y : tensor<2x3x4x5xbf16, #memfmt.strides<[60, 1, 15, 3]>>
}

// add of equal shapes, one channels-last, in f16.
// CHECK-LABEL: func.func @add
// CHECK: memfmt.add %{{.+}}, %{{.+}} : tensor<2x3x4x5xf16>, tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>>
func.func @add(%a: tensor<2x3x4x5xf16>, %b: tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>> {
  %y = memfmt.add %a, %b : tensor<2x3x4x5xf16>, tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>>
  return %y : tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>>
}

// add with NumPy broadcasting: lower rank and size-1 dims on both sides.
// CHECK-LABEL: func.func @add_broadcast
// CHECK: memfmt.add %{{.+}}, %{{.+}} : tensor<2x3x1x5xf32>, tensor<4x1xf32> -> tensor<2x3x4x5xf32>
func.func @add_broadcast(%a: tensor<2x3x1x5xf32>, %b: tensor<4x1xf32>) -> tensor<2x3x4x5xf32> {
  %y = memfmt.add %a, %b : tensor<2x3x1x5xf32>, tensor<4x1xf32> -> tensor<2x3x4x5xf32>
  return %y : tensor<2x3x4x5xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// max_pool2d as in ResNet: 3x3 window, stride 2, padding 1.
// CHECK-LABEL: func.func @max_pool2d
// CHECK: memfmt.max_pool2d %{{.+}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
// GENERIC-LABEL: sym_name = "max_pool2d"
// GENERIC: "memfmt.max_pool2d"(%{{.+}}) <{ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}>
func.func @max_pool2d(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
      : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  return %y : tensor<1x64x56x56xf32>
}

// max_pool2d with an empty stride (= kernel_size): 7x7 / 2 -> 3x3.
// CHECK-LABEL: func.func @max_pool2d_empty_stride
// CHECK: memfmt.max_pool2d %{{.+}} {kernel_size = array<i64: 2, 2>} : tensor<1x8x7x7xf32> -> tensor<1x8x3x3xf32>
// GENERIC-LABEL: sym_name = "max_pool2d_empty_stride"
// GENERIC: "memfmt.max_pool2d"(%{{.+}}) <{{.*}}stride = array<i64>}>
func.func @max_pool2d_empty_stride(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x3x3xf32> {
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64>} : tensor<1x8x7x7xf32> -> tensor<1x8x3x3xf32>
  return %y : tensor<1x8x3x3xf32>
}

// max_pool2d with ceil_mode (7x7 / 2 -> 4x4) and dilation (8x8, 2x2 dilated
// by 2 -> 6x6), on a channels-last input.
// CHECK-LABEL: func.func @max_pool2d_ceil_dilation
// CHECK: memfmt.max_pool2d %{{.+}} {ceil_mode = true, kernel_size = array<i64: 2, 2>} : tensor<1x8x7x7xf32> -> tensor<1x8x4x4xf32>
// CHECK: memfmt.max_pool2d %{{.+}} {dilation = array<i64: 2, 2>, kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>} : tensor<1x8x8x8xf32, #memfmt.strides<[512, 1, 64, 8]>> -> tensor<1x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
func.func @max_pool2d_ceil_dilation(%x: tensor<1x8x7x7xf32>, %z: tensor<1x8x8x8xf32, #memfmt.strides<[512, 1, 64, 8]>>) -> (tensor<1x8x4x4xf32>, tensor<1x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>) {
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>, ceil_mode = true} : tensor<1x8x7x7xf32> -> tensor<1x8x4x4xf32>
  %d = memfmt.max_pool2d %z {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>}
      : tensor<1x8x8x8xf32, #memfmt.strides<[512, 1, 64, 8]>> -> tensor<1x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
  return %y, %d : tensor<1x8x4x4xf32>, tensor<1x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
}

// max_pool2d_with_indices: two results, the indices in i64.
// CHECK-LABEL: func.func @max_pool2d_with_indices
// CHECK: %[[Y:[^ ,]+]], %[[I:[^ ,]+]] = memfmt.max_pool2d_with_indices %{{.+}} {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>
// CHECK: return %[[Y]], %[[I]]
func.func @max_pool2d_with_indices(%x: tensor<1x8x6x6xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>) {
  %y, %i = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>}
      : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>
  return %y, %i : tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>
}

// avg_pool2d with defaults, and with count_include_pad = false and ceil_mode.
// CHECK-LABEL: func.func @avg_pool2d
// CHECK: memfmt.avg_pool2d %{{.+}} {kernel_size = array<i64: 2, 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
// CHECK: memfmt.avg_pool2d %{{.+}} {ceil_mode = true, count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x4x4xf32>
// GENERIC-LABEL: sym_name = "avg_pool2d"
// GENERIC: "memfmt.avg_pool2d"(%{{.+}}) <{ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>}>
// GENERIC: "memfmt.avg_pool2d"(%{{.+}}) <{ceil_mode = true, count_include_pad = false,
func.func @avg_pool2d(%x: tensor<1x8x6x6xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8x4x4xf32>) {
  %y = memfmt.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
  %z = memfmt.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false}
      : tensor<1x8x6x6xf32> -> tensor<1x8x4x4xf32>
  return %y, %z : tensor<1x8x3x3xf32>, tensor<1x8x4x4xf32>
}

// adaptive_avg_pool2d to 1x1, channels-last in and out (L3 shape out).
// CHECK-LABEL: func.func @adaptive_avg_pool2d
// CHECK: memfmt.adaptive_avg_pool2d %{{.+}} {output_size = array<i64: 1, 1>} : tensor<8x2048x7x7xf32, #memfmt.strides<[100352, 1, 14336, 2048]>> -> tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
func.func @adaptive_avg_pool2d(%x: tensor<8x2048x7x7xf32, #memfmt.strides<[100352, 1, 14336, 2048]>>) -> tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>> {
  %y = memfmt.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>}
      : tensor<8x2048x7x7xf32, #memfmt.strides<[100352, 1, 14336, 2048]>> -> tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
  return %y : tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
}

//===----------------------------------------------------------------------===//
// flatten, reshape, linear
//===----------------------------------------------------------------------===//

// flatten from dim 1 (ResNet's head), and with explicit negative end_dim.
// CHECK-LABEL: func.func @flatten
// CHECK: memfmt.flatten %{{.+}} {start_dim = 1 : i64} : tensor<8x2048x1x1xf32> -> tensor<8x2048xf32>
// CHECK: memfmt.flatten %{{.+}} {end_dim = -2 : i64, start_dim = 1 : i64} : tensor<2x3x4x5xf32> -> tensor<2x12x5xf32>
// GENERIC-LABEL: sym_name = "flatten"
// GENERIC: "memfmt.flatten"(%{{.+}}) <{end_dim = -1 : i64, start_dim = 1 : i64}>
func.func @flatten(%x: tensor<8x2048x1x1xf32>, %z: tensor<2x3x4x5xf32>) -> (tensor<8x2048xf32>, tensor<2x12x5xf32>) {
  %y = memfmt.flatten %x {start_dim = 1 : i64} : tensor<8x2048x1x1xf32> -> tensor<8x2048xf32>
  %w = memfmt.flatten %z {start_dim = 1 : i64, end_dim = -2 : i64} : tensor<2x3x4x5xf32> -> tensor<2x12x5xf32>
  return %y, %w : tensor<8x2048xf32>, tensor<2x12x5xf32>
}

// reshape to another shape with the same number of elements.
// CHECK-LABEL: func.func @reshape
// CHECK: memfmt.reshape %{{.+}} : tensor<8x512x7x7xf32> -> tensor<8x25088xf32>
func.func @reshape(%x: tensor<8x512x7x7xf32>) -> tensor<8x25088xf32> {
  %y = memfmt.reshape %x : tensor<8x512x7x7xf32> -> tensor<8x25088xf32>
  return %y : tensor<8x25088xf32>
}

// linear with and without bias, on 2-D and 3-D inputs.
// CHECK-LABEL: func.func @linear
// CHECK: memfmt.linear %{{.+}}, %{{.+}}, %{{.+}} : (tensor<8x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
// CHECK: memfmt.linear %{{.+}}, %{{.+}} : (tensor<2x4x2048xf32>, tensor<1000x2048xf32>) -> tensor<2x4x1000xf32>
// CHECK: memfmt.linear %{{.+}}, %{{.+}}, %{{.+}} {activation = "clamp", activation_alpha = 0.000000e+00 : f64, activation_beta = 6.000000e+00 : f64} : (tensor<8x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
func.func @linear(%x: tensor<8x2048xf32>, %x3: tensor<2x4x2048xf32>, %w: tensor<1000x2048xf32>, %b: tensor<1000xf32>) -> (tensor<8x1000xf32>, tensor<2x4x1000xf32>, tensor<8x1000xf32>) {
  %y = memfmt.linear %x, %w, %b : (tensor<8x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
  %z = memfmt.linear %x3, %w : (tensor<2x4x2048xf32>, tensor<1000x2048xf32>) -> tensor<2x4x1000xf32>
  %a = memfmt.linear %x, %w, %b {activation = "clamp", activation_alpha = 0.0 : f64, activation_beta = 6.0 : f64} : (tensor<8x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<8x1000xf32>
  return %y, %z, %a : tensor<8x1000xf32>, tensor<2x4x1000xf32>, tensor<8x1000xf32>
}

//===----------------------------------------------------------------------===//
// contiguous and the preserve_format ops (L2, L6)
//===----------------------------------------------------------------------===//

// contiguous to channels_last and back to contiguous (the default); the result
// type is inferred from L2.
// CHECK-LABEL: func.func @contiguous
// CHECK: %[[CL:.+]] = memfmt.contiguous %{{.+}} {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
// CHECK: memfmt.contiguous %[[CL]] : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
// GENERIC-LABEL: sym_name = "contiguous"
// GENERIC: "memfmt.contiguous"(%{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
// GENERIC: "memfmt.contiguous"(%{{.+}}) <{memory_format = #memfmt.memory_format<contiguous>}> : (tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>) -> tensor<1x3x8x8xf32>
func.func @contiguous(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %cl = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
  %y = memfmt.contiguous %cl : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
  return %y : tensor<1x3x8x8xf32>
}

// contiguous of a 5-D tensor to channels_last_3d (C < W < H < D < N).
// CHECK-LABEL: func.func @contiguous_5d
// CHECK: memfmt.contiguous %{{.+}} {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5x6xf32>
// GENERIC-LABEL: sym_name = "contiguous_5d"
// GENERIC: -> tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>
func.func @contiguous_5d(%x: tensor<2x3x4x5x6xf32>) -> tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>> {
  %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5x6xf32>
  return %y : tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>
}

// contiguous also converts i64 tensors (max_pool2d_with_indices' indices).
// CHECK-LABEL: func.func @contiguous_indices
// CHECK: memfmt.contiguous %{{.+}} : tensor<1x8x3x3xi64, #memfmt.strides<[72, 1, 24, 8]>>
// GENERIC-LABEL: sym_name = "contiguous_indices"
// GENERIC: "memfmt.contiguous"(%{{.+}}) <{memory_format = #memfmt.memory_format<contiguous>}> : (tensor<1x8x3x3xi64, #memfmt.strides<[72, 1, 24, 8]>>) -> tensor<1x8x3x3xi64>
func.func @contiguous_indices(%i: tensor<1x8x3x3xi64, #memfmt.strides<[72, 1, 24, 8]>>) -> tensor<1x8x3x3xi64> {
  %y = memfmt.contiguous %i : tensor<1x8x3x3xi64, #memfmt.strides<[72, 1, 24, 8]>>
  return %y : tensor<1x8x3x3xi64>
}

// clone: preserve (default) keeps a dense permuted input's exact strides
// (L6); explicit formats give the L2 strides.
// CHECK-LABEL: func.func @clone
// CHECK: memfmt.clone %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// CHECK: memfmt.clone %{{.+}} {memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// CHECK: memfmt.clone %{{.+}} {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// GENERIC-LABEL: sym_name = "clone"
// GENERIC: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// GENERIC: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<contiguous>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xf32>
// GENERIC: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
func.func @clone(%x: tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) {
  %0 = memfmt.clone %x : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  %1 = memfmt.clone %x {memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  %2 = memfmt.clone %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  return
}

// clone of a non-dense (zero-stride, expanded) input takes its L4 format.
// CHECK-LABEL: func.func @clone_expanded
// CHECK: memfmt.clone %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>
// GENERIC-LABEL: sym_name = "clone_expanded"
// GENERIC: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>) -> tensor<2x3x4x5xf32>
func.func @clone_expanded(%x: tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>) {
  %0 = memfmt.clone %x : tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>
  return
}

// empty_like: preserve and explicit formats.
// CHECK-LABEL: func.func @empty_like
// CHECK: memfmt.empty_like %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// CHECK: memfmt.empty_like %{{.+}} {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
// CHECK: memfmt.empty_like %{{.+}} {memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// GENERIC-LABEL: sym_name = "empty_like"
// GENERIC: "memfmt.empty_like"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
func.func @empty_like(%x: tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>, %y: tensor<2x3x4x5xf32>, %z: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) {
  %0 = memfmt.empty_like %x : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  %1 = memfmt.empty_like %y {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  %2 = memfmt.empty_like %z {memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

// to: dtype only (preserve), dtype with a format, format only.
// CHECK-LABEL: func.func @to
// CHECK: memfmt.to %{{.+}} {dtype = bf16} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// CHECK: memfmt.to %{{.+}} {dtype = f16, memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
// CHECK: memfmt.to %{{.+}} {memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// GENERIC-LABEL: sym_name = "to"
// GENERIC: "memfmt.to"(%{{.+}}) <{dtype = bf16, memory_format = #memfmt.memory_format<preserve>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xbf16, #memfmt.strides<[20, 40, 5, 1]>>
// GENERIC: "memfmt.to"(%{{.+}}) <{dtype = f16, memory_format = #memfmt.memory_format<channels_last>}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>>
func.func @to(%x: tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>, %y: tensor<2x3x4x5xf32>, %z: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) {
  %0 = memfmt.to %x {dtype = bf16} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  %1 = memfmt.to %y {dtype = f16, memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  %2 = memfmt.to %z {memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

// resize_as: the template's shape and (preserve) its strides, or an explicit
// format; the input's element type.
// CHECK-LABEL: func.func @resize_as
// CHECK: memfmt.resize_as %{{.+}}, %{{.+}} : tensor<120xf16>, tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// CHECK: memfmt.resize_as %{{.+}}, %{{.+}} {memory_format = #memfmt.memory_format<channels_last>} : tensor<120xf16>, tensor<2x3x4x5xf32>
// GENERIC-LABEL: sym_name = "resize_as"
// GENERIC: "memfmt.resize_as"(%{{.+}}, %{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}> : (tensor<120xf16>, tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xf16, #memfmt.strides<[20, 40, 5, 1]>>
// GENERIC: "memfmt.resize_as"(%{{.+}}, %{{.+}}) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<120xf16>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf16, #memfmt.strides<[60, 1, 15, 3]>>
func.func @resize_as(%x: tensor<120xf16>, %t: tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>, %u: tensor<2x3x4x5xf32>) {
  %0 = memfmt.resize_as %x, %t : tensor<120xf16>, tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  %1 = memfmt.resize_as %x, %u {memory_format = #memfmt.memory_format<channels_last>} : tensor<120xf16>, tensor<2x3x4x5xf32>
  return
}

//===----------------------------------------------------------------------===//
// cat, chunk, weight
//===----------------------------------------------------------------------===//

// cat along the batch (default dim) and along a negative dim.
// CHECK-LABEL: func.func @cat
// CHECK: memfmt.cat %{{.+}}, %{{.+}} : tensor<2x8x4x4xf32>, tensor<3x8x4x4xf32> -> tensor<5x8x4x4xf32>
// CHECK: memfmt.cat %{{.+}}, %{{.+}}, %{{.+}} {dim = -3 : i64} : tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32> -> tensor<2x24x4x4xf32>
// GENERIC-LABEL: sym_name = "cat"
// GENERIC: "memfmt.cat"(%{{.+}}, %{{.+}}) <{dim = 0 : i64}>
func.func @cat(%a: tensor<2x8x4x4xf32>, %b: tensor<3x8x4x4xf32>) -> (tensor<5x8x4x4xf32>, tensor<2x24x4x4xf32>) {
  %y = memfmt.cat %a, %b : tensor<2x8x4x4xf32>, tensor<3x8x4x4xf32> -> tensor<5x8x4x4xf32>
  %z = memfmt.cat %a, %a, %a {dim = -3 : i64} : tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32> -> tensor<2x24x4x4xf32>
  return %y, %z : tensor<5x8x4x4xf32>, tensor<2x24x4x4xf32>
}

// chunk into equal pieces, and with an uneven last chunk (5 into 3: 2, 2, 1).
// CHECK-LABEL: func.func @chunk
// CHECK: %{{.+}}:2 = memfmt.chunk %{{.+}} {chunks = 2 : i64} : tensor<4x8x4x4xf32> -> tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>
// CHECK: %{{.+}}:3 = memfmt.chunk %{{.+}} {chunks = 3 : i64, dim = 1 : i64} : tensor<2x5xf32> -> tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>
// GENERIC-LABEL: sym_name = "chunk"
// GENERIC: "memfmt.chunk"(%{{.+}}) <{chunks = 2 : i64, dim = 0 : i64}>
func.func @chunk(%x: tensor<4x8x4x4xf32>, %y: tensor<2x5xf32>) {
  %a:2 = memfmt.chunk %x {chunks = 2 : i64} : tensor<4x8x4x4xf32> -> tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>
  %b:3 = memfmt.chunk %y {chunks = 3 : i64, dim = 1 : i64} : tensor<2x5xf32> -> tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>
  return
}

// chunk with fewer pieces than requested (4 into 3: 2, 2), as ATen.
// CHECK-LABEL: func.func @chunk_fewer_pieces
// CHECK: %{{.+}}:2 = memfmt.chunk %{{.+}} {chunks = 3 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
func.func @chunk_fewer_pieces(%x: tensor<4x3xf32>) {
  %a:2 = memfmt.chunk %x {chunks = 3 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// weight: a named parameter, contiguous and channels-last.
// CHECK-LABEL: func.func @weight
// CHECK: memfmt.weight "layer1.0.conv1.weight" : tensor<64x64x1x1xf32>
// CHECK: memfmt.weight "conv1.weight" : tensor<64x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>
// GENERIC-LABEL: sym_name = "weight"
// GENERIC: "memfmt.weight"() <{name = "layer1.0.conv1.weight"}> : () -> tensor<64x64x1x1xf32>
func.func @weight() -> (tensor<64x64x1x1xf32>, tensor<64x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>) {
  %a = memfmt.weight "layer1.0.conv1.weight" : tensor<64x64x1x1xf32>
  %b = memfmt.weight "conv1.weight" : tensor<64x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>
  return %a, %b : tensor<64x64x1x1xf32>, tensor<64x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// A tensor both contiguous and channels-last (L3) keeps its written strides,
// also through an op that preserves them.
// CHECK-LABEL: func.func @strides_l3
// CHECK-SAME: tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
// CHECK: memfmt.clone %{{.+}} : tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
// CHECK: memfmt.relu %{{.+}} : tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>> -> tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
// GENERIC-LABEL: sym_name = "strides_l3"
// GENERIC: "memfmt.clone"(%{{.+}}) <{memory_format = #memfmt.memory_format<preserve>}> : (tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>) -> tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
func.func @strides_l3(%x: tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>) -> tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>> {
  %0 = memfmt.clone %x : tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
  %1 = memfmt.relu %x : tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>> -> tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
  return %1 : tensor<2x3x1x1xf32, #memfmt.strides<[3, 1, 3, 3]>>
}

// A 5-D channels_last_3d encoding through relu.
// CHECK-LABEL: func.func @strides_5d
// CHECK: memfmt.relu %{{.+}} : tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>> -> tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>
func.func @strides_5d(%x: tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>) -> tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>> {
  %y = memfmt.relu %x : tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>> -> tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>
  return %y : tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>
}

// The rank-0 encoding has an empty stride list.
// CHECK-LABEL: func.func @strides_rank0
// CHECK: memfmt.weight "scale" : tensor<f32, #memfmt.strides<[]>>
// CHECK: memfmt.relu %{{.+}} : tensor<f32, #memfmt.strides<[]>> -> tensor<f32>
func.func @strides_rank0() -> tensor<f32> {
  %s = memfmt.weight "scale" : tensor<f32, #memfmt.strides<[]>>
  %y = memfmt.relu %s : tensor<f32, #memfmt.strides<[]>> -> tensor<f32>
  return %y : tensor<f32>
}

// Both attributes stand alone as discardable attributes, too.
// CHECK-LABEL: func.func @attributes
// CHECK-SAME: attributes {fmt = #memfmt.memory_format<channels_last>, pre = #memfmt.memory_format<preserve>, s = #memfmt.strides<[60, 1, 15, 3]>}
func.func @attributes() attributes {s = #memfmt.strides<[60, 1, 15, 3]>, fmt = #memfmt.memory_format<channels_last>, pre = #memfmt.memory_format<preserve>} {
  return
}

// The fusion ops: a conv with bias, residual and relu epilogues, and a batch
// norm folded into a conv's parameters.
// CHECK-LABEL: func.func @fusion_ops(
// CHECK: %[[W:.+]], %[[B:.+]] = memfmt.fold_batch_norm %{{.+}} bias %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {eps = 1.000000e-03 : f64} : tensor<4x2x3x3xf32>, bias tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x2x3x3xf32>, tensor<4xf32>
// CHECK: memfmt.fused_conv2d %{{.+}}, %[[W]] bias %[[B]] residual %{{.+}} {padding = array<i64: 1, 1>, relu = true} : tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32> bias tensor<4xf32> residual tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
// CHECK: memfmt.fused_conv2d %{{.+}}, %{{.+}} : tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x3x3xf32>
// GENERIC-LABEL: "func.func"() <{function_type = {{.*}}, sym_name = "fusion_ops"}>
// GENERIC: "memfmt.fold_batch_norm"({{.*}}) <{eps = 1.000000e-03 : f64}>
// GENERIC: "memfmt.fused_conv2d"({{.*}}) <{dilation = array<i64: 1, 1>, groups = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1>, padding = array<i64: 1, 1>, relu = true, stride = array<i64: 1, 1>}>
func.func @fusion_ops(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>, %p: tensor<4xf32>, %r: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>) {
  %w2, %b2 = memfmt.fold_batch_norm %w bias %p, %p, %p, %p, %p {eps = 1.0e-3 : f64} : tensor<4x2x3x3xf32>, bias tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x2x3x3xf32>, tensor<4xf32>
  %0 = memfmt.fused_conv2d %x, %w2 bias %b2 residual %r {padding = array<i64: 1, 1>, relu = true} : tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32> bias tensor<4xf32> residual tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %1 = memfmt.fused_conv2d %x, %w : tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x3x3xf32>
  return %0, %1 : tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>
}
