// RUN: memfmt-opt %s | memfmt-opt | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic | memfmt-opt | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every training op (MemFmtTrainingOps.td): custom form twice,
// and custom -> generic -> custom. Shapes cover the edge cases of the issue:
// N=1, C=1, H=W=1, odd sizes, grouped convolution.

// Mixed precision: bf16 activations, f32 parameters and statistics; a bf16
// convolution gradient with f32 weight and bias gradients.
// CHECK-LABEL: func.func @mixed_precision
// CHECK: memfmt.native_batch_norm {{.*}} : (tensor<2x3x5x5xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5x5xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: memfmt.convolution_backward {{.*}} -> (tensor<2x3x5x5xbf16>, tensor<3x3x1x1xf32>, tensor<3xf32>)
// GENERIC-LABEL: sym_name = "mixed_precision"
func.func @mixed_precision(%x: tensor<2x3x5x5xbf16>, %v: tensor<3xf32>, %w: tensor<3x3x1x1xbf16>) {
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<2x3x5x5xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x5x5xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %g:3 = memfmt.convolution_backward %y#0, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x3x5x5xbf16>, tensor<2x3x5x5xbf16>, tensor<3x3x1x1xbf16>) -> (tensor<2x3x5x5xbf16>, tensor<3x3x1x1xf32>, tensor<3xf32>)
  return
}

// Training batch norm with default attributes on an odd-sized input.
// CHECK-LABEL: func.func @native_batch_norm
// CHECK: memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// GENERIC-LABEL: sym_name = "native_batch_norm"
// GENERIC: "memfmt.native_batch_norm"({{.*}}) <{eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, relu = false}>
func.func @native_batch_norm(%x: tensor<1x3x5x7xf32>, %v: tensor<3xf32>) -> tensor<1x3x5x7xf32> {
  %y, %mean, %invstd, %rm, %rv = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y : tensor<1x3x5x7xf32>
}

// Training batch norm with C=1 in channels-last strides and explicit eps and momentum.
// The training fusion's epilogue: a residual and relu; the backward of a
// relu-fused batch norm with the forward's output.
// CHECK-LABEL: func.func @native_batch_norm_fused
// CHECK: %[[Y:.+]], %[[M:[^,]+]], %[[I:[^,]+]], %{{.+}}, %{{.+}} = memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} residual %{{.+}} {relu = true} : (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3x5x7xf32>) -> (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: memfmt.native_batch_norm_backward %{{.+}}, %{{.+}}, %{{.+}}, %[[M]], %[[I]] output %[[Y]] {output_mask = array<i1: true, true, true>, relu = true} : (tensor<1x3x5x7xf32>, tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3x5x7xf32>) -> (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>)
// GENERIC-LABEL: sym_name = "native_batch_norm_fused"
// GENERIC: "memfmt.native_batch_norm"({{.*}}) <{eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, relu = true}>
func.func @native_batch_norm_fused(%x: tensor<1x3x5x7xf32>, %r: tensor<1x3x5x7xf32>, %v: tensor<3xf32>) -> tensor<1x3x5x7xf32> {
  %y, %mean, %invstd, %rm, %rv = memfmt.native_batch_norm %x, %v, %v, %v, %v residual %r {relu = true} : (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3x5x7xf32>) -> (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %gi, %gw, %gb = memfmt.native_batch_norm_backward %x, %x, %v, %mean, %invstd output %y {output_mask = array<i1: true, true, true>, relu = true} : (tensor<1x3x5x7xf32>, tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3x5x7xf32>) -> (tensor<1x3x5x7xf32>, tensor<3xf32>, tensor<3xf32>)
  return %gi : tensor<1x3x5x7xf32>
}

// CHECK-LABEL: func.func @native_batch_norm_channels_last
// CHECK: memfmt.native_batch_norm {{.*}} {eps = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64} : (tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>>
func.func @native_batch_norm_channels_last(%x: tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>>, %v: tensor<1xf32>) -> tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>> {
  %y, %mean, %invstd, %rm, %rv = memfmt.native_batch_norm %x, %v, %v, %v, %v {eps = 1.0e-3 : f64, momentum = 0.0 : f64} : (tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  return %y : tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>>
}

// Batch norm backward in channels-last with only grad_input wanted.
// CHECK-LABEL: func.func @native_batch_norm_backward
// CHECK: memfmt.native_batch_norm_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {output_mask = array<i1: true, false, false>} : (tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, tensor<4xf32>, tensor<4xf32>)
// GENERIC-LABEL: sym_name = "native_batch_norm_backward"
// GENERIC: "memfmt.native_batch_norm_backward"({{.*}}) <{eps = 1.000000e-05 : f64, output_mask = array<i1: true, false, false>, relu = false}>
func.func @native_batch_norm_backward(%g: tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, %x: tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, %v: tensor<4xf32>) -> tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>> {
  %gi, %gw, %gb = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {output_mask = array<i1: true, false, false>} : (tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>, tensor<4xf32>, tensor<4xf32>)
  return %gi : tensor<2x4x3x5xf32, #memfmt.strides<[60, 1, 20, 4]>>
}

// Convolution backward, grouped, stride 2 and padding on odd sizes.
// CHECK-LABEL: func.func @convolution_backward_grouped
// CHECK: memfmt.convolution_backward %{{.+}}, %{{.+}}, %{{.+}} {groups = 2 : i64, output_mask = array<i1: true, true, true>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x6x3x4xf32>, tensor<1x4x5x7xf32>, tensor<6x2x3x3xf32>) -> (tensor<1x4x5x7xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>)
// GENERIC-LABEL: sym_name = "convolution_backward_grouped"
// GENERIC: "memfmt.convolution_backward"({{.*}}) <{dilation = array<i64: 1, 1>, groups = 2 : i64, output_mask = array<i1: true, true, true>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}>
func.func @convolution_backward_grouped(%g: tensor<1x6x3x4xf32>, %x: tensor<1x4x5x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<6x2x3x3xf32> {
  %gi, %gw, %gb = memfmt.convolution_backward %g, %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 2 : i64, output_mask = array<i1: true, true, true>} : (tensor<1x6x3x4xf32>, tensor<1x4x5x7xf32>, tensor<6x2x3x3xf32>) -> (tensor<1x4x5x7xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>)
  return %gw : tensor<6x2x3x3xf32>
}

// Convolution backward with 4 padding values (top, left, bottom, right),
// as conv2d takes them: grad_output is [1, 3, 6, 4].
// CHECK-LABEL: func.func @convolution_backward_asymmetric_padding
// CHECK: memfmt.convolution_backward %{{.+}}, %{{.+}}, %{{.+}} {output_mask = array<i1: true, true, false>, padding = array<i64: 1, 0, 2, 1>} : (tensor<1x3x6x4xf32>, tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>)
// GENERIC-LABEL: sym_name = "convolution_backward_asymmetric_padding"
// GENERIC: "memfmt.convolution_backward"({{.*}}) <{dilation = array<i64: 1, 1>, groups = 1 : i64, output_mask = array<i1: true, true, false>, padding = array<i64: 1, 0, 2, 1>, stride = array<i64: 1, 1>}>
func.func @convolution_backward_asymmetric_padding(%g: tensor<1x3x6x4xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x5x5xf32> {
  %gi, %gw, %gb = memfmt.convolution_backward %g, %x, %w {padding = array<i64: 1, 0, 2, 1>, output_mask = array<i1: true, true, false>} : (tensor<1x3x6x4xf32>, tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>)
  return %gi : tensor<1x2x5x5xf32>
}

// Convolution backward with a channels-last input and an NCHW weight (L9:
// grad_weight keeps the weight's layout); H=W=1.
// CHECK-LABEL: func.func @convolution_backward_mixed
// CHECK: memfmt.convolution_backward {{.*}} -> (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<5x3x1x1xf32>, tensor<5xf32>)
func.func @convolution_backward_mixed(%g: tensor<2x5x4x4xf32, #memfmt.strides<[80, 1, 20, 5]>>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %w: tensor<5x3x1x1xf32>) -> tensor<5x3x1x1xf32> {
  %gi, %gw, %gb = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: false, true, true>} : (tensor<2x5x4x4xf32, #memfmt.strides<[80, 1, 20, 5]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<5x3x1x1xf32>) -> (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<5x3x1x1xf32>, tensor<5xf32>)
  return %gw : tensor<5x3x1x1xf32>
}

// Linear backward, N=1.
// CHECK-LABEL: func.func @linear_backward
// CHECK: memfmt.linear_backward %{{.+}}, %{{.+}}, %{{.+}} {output_mask = array<i1: false, true, true>} : (tensor<1x7xf32>, tensor<1x3xf32>, tensor<3x7xf32>) -> (tensor<1x7xf32>, tensor<3x7xf32>, tensor<3xf32>)
// GENERIC-LABEL: sym_name = "linear_backward"
// GENERIC: "memfmt.linear_backward"({{.*}}) <{output_mask = array<i1: false, true, true>}>
func.func @linear_backward(%x: tensor<1x7xf32>, %g: tensor<1x3xf32>, %w: tensor<3x7xf32>) -> tensor<3x7xf32> {
  %gi, %gw, %gb = memfmt.linear_backward %x, %g, %w {output_mask = array<i1: false, true, true>} : (tensor<1x7xf32>, tensor<1x3xf32>, tensor<3x7xf32>) -> (tensor<1x7xf32>, tensor<3x7xf32>, tensor<3xf32>)
  return %gw : tensor<3x7xf32>
}

// Layer norm backward over the channels of a channels-last [N, H, W, C]
// view (N=1, odd C), with a weight; then without one (D=1), and in bf16
// with f32 weight and bias gradients.
// CHECK-LABEL: func.func @layer_norm_backward
// CHECK: memfmt.layer_norm_backward %{{.+}}, %{{.+}}, %{{.+}} {eps = 9.9999999999999995E-7 : f64, normalized_shape = array<i64: 7>, output_mask = array<i1: true, true, true>} : (tensor<1x3x5x7xf32>, tensor<1x3x5x7xf32>, tensor<7xf32>) -> (tensor<1x3x5x7xf32>, tensor<7xf32>, tensor<7xf32>)
// CHECK: memfmt.layer_norm_backward %{{.+}}, %{{.+}} {normalized_shape = array<i64: 1>, output_mask = array<i1: true, false, false>} : (tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<1xf32>, tensor<1xf32>)
// CHECK: memfmt.layer_norm_backward {{.*}} : (tensor<2x96xbf16>, tensor<2x96xbf16>, tensor<96xbf16>) -> (tensor<2x96xbf16>, tensor<96xf32>, tensor<96xf32>)
// GENERIC-LABEL: sym_name = "layer_norm_backward"
// GENERIC: "memfmt.layer_norm_backward"({{.*}}) <{eps = 9.9999999999999995E-7 : f64, normalized_shape = array<i64: 7>, output_mask = array<i1: true, true, true>}>
func.func @layer_norm_backward(%g: tensor<1x3x5x7xf32>, %x: tensor<1x3x5x7xf32>, %w: tensor<7xf32>, %g1: tensor<4x1xf32>, %x1: tensor<4x1xf32>, %gh: tensor<2x96xbf16>, %xh: tensor<2x96xbf16>, %wh: tensor<96xbf16>) -> (tensor<1x3x5x7xf32>, tensor<4x1xf32>, tensor<96xf32>) {
  %gi, %gw, %gb = memfmt.layer_norm_backward %g, %x, %w {normalized_shape = array<i64: 7>, eps = 1.0e-06 : f64, output_mask = array<i1: true, true, true>} : (tensor<1x3x5x7xf32>, tensor<1x3x5x7xf32>, tensor<7xf32>) -> (tensor<1x3x5x7xf32>, tensor<7xf32>, tensor<7xf32>)
  %gi1, %gw1, %gb1 = memfmt.layer_norm_backward %g1, %x1 {normalized_shape = array<i64: 1>, output_mask = array<i1: true, false, false>} : (tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<1xf32>, tensor<1xf32>)
  %gih, %gwh, %gbh = memfmt.layer_norm_backward %gh, %xh, %wh {normalized_shape = array<i64: 96>, output_mask = array<i1: true, true, true>} : (tensor<2x96xbf16>, tensor<2x96xbf16>, tensor<96xbf16>) -> (tensor<2x96xbf16>, tensor<96xf32>, tensor<96xf32>)
  return %gi, %gi1, %gwh : tensor<1x3x5x7xf32>, tensor<4x1xf32>, tensor<96xf32>
}

// softmax_backward along the last dim of attention scores (odd sizes), along
// the channels of a channels-last tensor (C=1: H=W=1, N=1), and in bf16.
// CHECK-LABEL: func.func @softmax_backward
// CHECK: memfmt.softmax_backward %{{.+}}, %{{.+}} {dim = 2 : i64} : (tensor<3x5x5xf32>, tensor<3x5x5xf32>) -> tensor<3x5x5xf32>
// CHECK: memfmt.softmax_backward %{{.+}}, %{{.+}} {dim = 1 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK: memfmt.softmax_backward %{{.+}}, %{{.+}} {dim = 1 : i64} : (tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>, tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>) -> tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>
// CHECK: memfmt.softmax_backward %{{.+}}, %{{.+}} {dim = 1 : i64} : (tensor<4x97xbf16>, tensor<4x97xbf16>) -> tensor<4x97xbf16>
// GENERIC-LABEL: sym_name = "softmax_backward"
// GENERIC: "memfmt.softmax_backward"({{.*}}) <{dim = 2 : i64}>
func.func @softmax_backward(%g: tensor<3x5x5xf32>, %y: tensor<3x5x5xf32>, %g1: tensor<1x1x1x1xf32>, %y1: tensor<1x1x1x1xf32>, %gc: tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>, %yc: tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>, %gh: tensor<4x97xbf16>, %yh: tensor<4x97xbf16>) -> (tensor<3x5x5xf32>, tensor<1x1x1x1xf32>, tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>, tensor<4x97xbf16>) {
  %0 = memfmt.softmax_backward %g, %y {dim = 2 : i64} : (tensor<3x5x5xf32>, tensor<3x5x5xf32>) -> tensor<3x5x5xf32>
  %1 = memfmt.softmax_backward %g1, %y1 {dim = 1 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %2 = memfmt.softmax_backward %gc, %yc {dim = 1 : i64} : (tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>, tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>) -> tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>
  %3 = memfmt.softmax_backward %gh, %yh {dim = 1 : i64} : (tensor<4x97xbf16>, tensor<4x97xbf16>) -> tensor<4x97xbf16>
  return %0, %1, %2, %3 : tensor<3x5x5xf32>, tensor<1x1x1x1xf32>, tensor<2x7x3x3xf32, #memfmt.strides<[63, 1, 21, 7]>>, tensor<4x97xbf16>
}

// threshold_backward (relu's backward) with the default threshold, then another.
// CHECK-LABEL: func.func @threshold_backward
// CHECK: memfmt.threshold_backward %{{.+}}, %{{.+}} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK: memfmt.threshold_backward %{{.+}}, %{{.+}} {threshold = 5.000000e-01 : f64}
// GENERIC-LABEL: sym_name = "threshold_backward"
// CHECK: memfmt.threshold_backward %{{.+}}, %{{.+}} addend %{{.+}} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
// GENERIC: "memfmt.threshold_backward"({{.*}}) <{threshold = 0.000000e+00 : f64}>
func.func @threshold_backward(%g: tensor<1x1x1x1xf32>, %y: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %0 = memfmt.threshold_backward %g, %y : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %1 = memfmt.threshold_backward %0, %y {threshold = 0.5 : f64} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %2 = memfmt.threshold_backward %1, %y addend %g : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  return %2 : tensor<1x1x1x1xf32>
}

// Max pooling backward with ceil mode on an odd-sized input.
// CHECK-LABEL: func.func @max_pool2d_with_indices_backward
// CHECK: memfmt.max_pool2d_with_indices_backward %{{.+}}, %{{.+}}, %{{.+}} {ceil_mode = true, kernel_size = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>, tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32>
// GENERIC-LABEL: sym_name = "max_pool2d_with_indices_backward"
// GENERIC: "memfmt.max_pool2d_with_indices_backward"({{.*}}) <{ceil_mode = true, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>}>
func.func @max_pool2d_with_indices_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>, %i: tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32> {
  %0 = memfmt.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>, tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// Average pooling backward with stride, padding and count_include_pad = false.
// CHECK-LABEL: func.func @avg_pool2d_backward
// CHECK: memfmt.avg_pool2d_backward %{{.+}}, %{{.+}} {count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
// GENERIC-LABEL: sym_name = "avg_pool2d_backward"
// GENERIC: "memfmt.avg_pool2d_backward"({{.*}}) <{ceil_mode = false, count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}>
func.func @avg_pool2d_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %0 = memfmt.avg_pool2d_backward %g, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, count_include_pad = false} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// Adaptive average pooling backward: a contiguous [N, C, 1, 1] gradient is
// also channels-last (L3), so it serves a channels-last self.
// CHECK-LABEL: func.func @adaptive_avg_pool2d_backward
// CHECK: memfmt.adaptive_avg_pool2d_backward %{{.+}}, %{{.+}} : (tensor<2x3x1x1xf32>, tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>>) -> tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>>
func.func @adaptive_avg_pool2d_backward(%g: tensor<2x3x1x1xf32>, %x: tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>>) -> tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>> {
  %0 = memfmt.adaptive_avg_pool2d_backward %g, %x : (tensor<2x3x1x1xf32>, tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>>) -> tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>>
  return %0 : tensor<2x3x5x5xf32, #memfmt.strides<[75, 1, 15, 3]>>
}

// Cross-entropy loss and its backward; N=1, C=1.
// CHECK-LABEL: func.func @cross_entropy_loss
// CHECK: %[[L:.+]] = memfmt.cross_entropy_loss %{{.+}}, %{{.+}} : (tensor<1x1xf32>, tensor<1xi64>) -> tensor<f32>
// CHECK: memfmt.cross_entropy_loss_backward %[[L]], %{{.+}}, %{{.+}} : (tensor<f32>, tensor<1x1xf32>, tensor<1xi64>) -> tensor<1x1xf32>
func.func @cross_entropy_loss(%x: tensor<1x1xf32>, %t: tensor<1xi64>) -> tensor<1x1xf32> {
  %loss = memfmt.cross_entropy_loss %x, %t : (tensor<1x1xf32>, tensor<1xi64>) -> tensor<f32>
  %g = memfmt.cross_entropy_loss_backward %loss, %x, %t : (tensor<f32>, tensor<1x1xf32>, tensor<1xi64>) -> tensor<1x1xf32>
  return %g : tensor<1x1xf32>
}

// SGD update with every attribute, nesterov, and with the optional step.
// CHECK-LABEL: func.func @sgd_update
// CHECK: memfmt.sgd_update %{{.+}}, %{{.+}}, %{{.+}} {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 1.000000e-04 : f64} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
// CHECK: memfmt.sgd_update %{{.+}}, %{{.+}}, %{{.+}} step %{{.+}} {dampening = 5.000000e-01 : f64, lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
// GENERIC-LABEL: sym_name = "sgd_update"
// GENERIC: "memfmt.sgd_update"({{.*}}) <{dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = true, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, weight_decay = 1.000000e-04 : f64}>
func.func @sgd_update(%w: tensor<4x3x3x3xf32>, %gw: tensor<4x3x3x3xf32>, %buf: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %step: tensor<i64>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>) {
  %w1, %buf1 = memfmt.sgd_update %w, %gw, %buf {lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 1.0e-4 : f64, nesterov = true} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
  %b1, %bbuf1 = memfmt.sgd_update %b, %b, %b step %step {lr = 0.01 : f64, momentum = 0.9 : f64, dampening = 0.5 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return %w1, %b1 : tensor<4x3x3x3xf32>, tensor<4xf32>
}

// An all-reduce over the replicas keeps its input's type, channels-last
// included; the mean (avg) and the sum.
// CHECK-LABEL: func.func @all_reduce
// CHECK: memfmt.all_reduce %{{.+}} {reduce_op = "avg"} : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
// CHECK: memfmt.all_reduce %{{.+}} {reduce_op = "sum"} : tensor<4xf32>
// GENERIC-LABEL: sym_name = "all_reduce"
// GENERIC: "memfmt.all_reduce"(%{{.+}}) <{reduce_op = "sum"}> : (tensor<4xf32>) -> tensor<4xf32>
func.func @all_reduce(%g: tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, %b: tensor<4xf32>) -> (tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4xf32>) {
  %0 = memfmt.all_reduce %g {reduce_op = "avg"} : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %1 = memfmt.all_reduce %b {reduce_op = "sum"} : tensor<4xf32>
  return %0, %1 : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4xf32>
}

// Gradient accumulation is memfmt.add of the gradients (L5's join, L9).
// CHECK-LABEL: func.func @accumulate
// CHECK: memfmt.add
func.func @accumulate(%a: tensor<1x2x3x3xf32>, %b: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = memfmt.add %a, %b : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// Training batch norm with no channels: nothing to normalise, no error.
// CHECK-LABEL: func.func @native_batch_norm_no_channels
// CHECK: memfmt.native_batch_norm {{.*}} : (tensor<2x0x3x3xf32>
func.func @native_batch_norm_no_channels(%x: tensor<2x0x3x3xf32>, %v: tensor<0xf32>) -> tensor<2x0x3x3xf32> {
  %y, %mean, %invstd, %rm, %rv = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<2x0x3x3xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>) -> (tensor<2x0x3x3xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>)
  return %y : tensor<2x0x3x3xf32>
}

// Model state: a zero-initialised momentum buffer and the assignments a
// training step ends with.
// CHECK-LABEL: func.func @assign_weight
// CHECK: memfmt.weight "w.momentum_buffer" {zero_init} : tensor<4xf32>
// CHECK: memfmt.assign_weight "w", %{{.+}} : tensor<4xf32>
// CHECK: memfmt.assign_weight "w.momentum_buffer", %{{.+}} : tensor<4xf32>
// GENERIC-LABEL: sym_name = "assign_weight"
// GENERIC: "memfmt.assign_weight"(%{{.+}}) <{name = "w"}> : (tensor<4xf32>) -> ()
func.func @assign_weight(%g: tensor<4xf32>) {
  %w = memfmt.weight "w" : tensor<4xf32>
  %m = memfmt.weight "w.momentum_buffer" {zero_init} : tensor<4xf32>
  %w1, %m1 = memfmt.sgd_update %w, %g, %m {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  memfmt.assign_weight "w", %w1 : tensor<4xf32>
  memfmt.assign_weight "w.momentum_buffer", %m1 : tensor<4xf32>
  return
}

// While the layout passes re-lay a parameter (a conversion of the weight,
// before memfmt-fold-conversions makes it the re-laid weight), its
// assignment may already have the new layout.
// CHECK-LABEL: func.func @assign_relaid
// CHECK: memfmt.assign_weight "w", %{{.+}} : tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>
func.func @assign_relaid(%v: tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>) -> tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>> {
  %w = memfmt.weight "w" : tensor<2x3x1x2xf32>
  %c = memfmt.contiguous %w {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x1x2xf32>
  memfmt.assign_weight "w", %v : tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>
  return %c : tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>
}

// The optimizer's step count: 0-d i64 model state, read by sgd_update and
// incremented after the updates.
// CHECK-LABEL: func.func @step_count
// CHECK: %[[S:.+]] = memfmt.weight "optimizer.step" {zero_init} : tensor<i64>
// CHECK: memfmt.sgd_update %{{.+}}, %{{.+}}, %{{.+}} step %[[S]]
// CHECK: %[[N:.+]] = memfmt.increment %[[S]] : tensor<i64>
// CHECK: memfmt.assign_weight "optimizer.step", %[[N]] : tensor<i64>
func.func @step_count(%g: tensor<4xf32>) {
  %w = memfmt.weight "w" : tensor<4xf32>
  %m = memfmt.weight "w.momentum_buffer" {zero_init} : tensor<4xf32>
  %s = memfmt.weight "optimizer.step" {zero_init} : tensor<i64>
  %w1, %m1 = memfmt.sgd_update %w, %g, %m step %s {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.5 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  memfmt.assign_weight "w", %w1 : tensor<4xf32>
  memfmt.assign_weight "w.momentum_buffer", %m1 : tensor<4xf32>
  %n = memfmt.increment %s : tensor<i64>
  memfmt.assign_weight "optimizer.step", %n : tensor<i64>
  return
}

// The gradients of the elementwise functions, with the forward ops'
// attributes (defaults elided), in channels-last (L9: the gradients take
// self's strides), and sum_to_size down to a squeeze-excite scale, a layer
// scale and a 0-d tensor.
// CHECK-LABEL: func.func @eltwise_backward
// CHECK: memfmt.sigmoid_backward %{{.+}}, %{{.+}} : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
// CHECK: memfmt.silu_backward
// CHECK: memfmt.hardswish_backward
// CHECK: memfmt.hardsigmoid_backward %{{.+}}, %{{.+}} :
// CHECK: memfmt.hardsigmoid_backward %{{.+}}, %{{.+}} {alpha = 2.000000e-01 : f64}
// CHECK: memfmt.clamp_backward %{{.+}}, %{{.+}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: memfmt.clamp_backward %{{.+}}, %{{.+}} {min = -1.000000e+00 : f64}
// CHECK: memfmt.gelu_backward %{{.+}}, %{{.+}} :
// CHECK: memfmt.gelu_backward %{{.+}}, %{{.+}} {approximate = "tanh"}
// GENERIC-LABEL: sym_name = "eltwise_backward"
// GENERIC: "memfmt.hardsigmoid_backward"({{.*}}) <{alpha = 0.16666666666666666 : f64, beta = 5.000000e-01 : f64}>
// GENERIC: "memfmt.gelu_backward"({{.*}}) <{approximate = "none"}>
func.func @eltwise_backward(%g: tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, %x: tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>> {
  %0 = memfmt.sigmoid_backward %g, %x : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %1 = memfmt.silu_backward %0, %x : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %2 = memfmt.hardswish_backward %1, %x : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %3 = memfmt.hardsigmoid_backward %2, %x : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %4 = memfmt.hardsigmoid_backward %3, %x {alpha = 0.2 : f64} : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %5 = memfmt.clamp_backward %4, %x {min = 0.0 : f64, max = 6.0 : f64} : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %6 = memfmt.clamp_backward %5, %x {min = -1.0 : f64} : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %7 = memfmt.gelu_backward %6, %x : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  %8 = memfmt.gelu_backward %7, %x {approximate = "tanh"} : (tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
  return %8 : tensor<1x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>
}

// CHECK-LABEL: func.func @sum_to_size
// CHECK: memfmt.sum_to_size %{{.+}} : tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>> -> tensor<2x5x1x1xf32>
// CHECK: memfmt.sum_to_size %{{.+}} : tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>> -> tensor<5x1x1xf32>
// CHECK: memfmt.sum_to_size %{{.+}} : tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>> -> tensor<f32>
// GENERIC-LABEL: sym_name = "sum_to_size"
// GENERIC: "memfmt.sum_to_size"
func.func @sum_to_size(%g: tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>>) -> (tensor<2x5x1x1xf32>, tensor<5x1x1xf32>, tensor<f32>) {
  %0 = memfmt.sum_to_size %g : tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>> -> tensor<2x5x1x1xf32>
  %1 = memfmt.sum_to_size %g : tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>> -> tensor<5x1x1xf32>
  %2 = memfmt.sum_to_size %g : tensor<2x5x3x7xf32, #memfmt.strides<[105, 1, 35, 5]>> -> tensor<f32>
  return %0, %1, %2 : tensor<2x5x1x1xf32>, tensor<5x1x1xf32>, tensor<f32>
}
