// RUN: memfmt-opt %s -split-input-file -verify-diagnostics

// Every verifier error of the memfmt ops (MemFmtOps.cpp), one case each, and
// the ODS type constraints. Layout errors cite the rule of DESIGN.md §1.

//===----------------------------------------------------------------------===//
// Shared checks: ODS constraints, static shapes, element types, L4
//===----------------------------------------------------------------------===//

// conv2d needs a 4-D input (ODS rank constraint).
func.func @conv2d_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{operand #0 must be 4D tensor of}}
  %y = memfmt.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d's bias is 1-D (ODS rank constraint).
func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{operand #2 must be 1D tensor of}}
  %y = memfmt.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Integer tensors are not memfmt tensors (ODS element type constraint).
func.func @relu_integer(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %y = memfmt.relu %x : tensor<2x3xi32> -> tensor<2x3xi32>
  return
}

// -----

// The indices of max_pool2d_with_indices are i64 (ODS constraint).
func.func @max_pool2d_indices_type(%x: tensor<1x8x6x6xf32>) {
  // expected-error @+1 {{result #1 must be 4D tensor of 64-bit signless integer values}}
  %y, %i = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>, tensor<1x8x3x3xi32>
  return
}

// -----

// All floating-point tensors of an op share one element type.
func.func @element_type_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{expects one element type for all floating-point tensors, but operand #1 has 'f16'}}
  %y = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Dynamic shapes have no known strides.
func.func @dynamic_shape(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{operand #0 must have a static shape, got 'tensor<?x4xf32>'}}
  %y = memfmt.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

// L4: a permuted (dense, but neither NCHW nor NHWC) result is not produced.
func.func @result_not_supported_format(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{result #0 has strides [20, 40, 5, 1], which are neither contiguous nor channels-last contiguous; only those formats can be produced (L4)}}
  %y = memfmt.relu %x : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  return
}

// -----

// L4: channels-last ordered strides with gaps are not dense, so unsupported.
func.func @result_not_dense(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{result #0 has strides [288, 1, 48, 8], which are neither contiguous nor channels-last contiguous}}
  %y = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
  return
}

// -----

// relu keeps the input's shape.
func.func @relu_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3], got [3, 2]}}
  %y = memfmt.relu %x : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

// -----

// conv2d: stride has two values.
func.func @conv2d_stride_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 'stride' to have 2 values, got 3}}
  %y = memfmt.conv2d %x, %w {stride = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: stride values are positive.
func.func @conv2d_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects every 'stride' value to be positive, got [0, 1]}}
  %y = memfmt.conv2d %x, %w {stride = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: padding has 2 (symmetric) or 4 (top, left, bottom, right) values.
func.func @conv2d_padding_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 'padding' to have 2 or 4 values, got 3}}
  %y = memfmt.conv2d %x, %w {padding = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: padding is non-negative.
func.func @conv2d_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects every 'padding' value to be non-negative, got [0, -1, 0, 0]}}
  %y = memfmt.conv2d %x, %w {padding = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: dilation has two values.
func.func @conv2d_dilation_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 'dilation' to have 2 values, got 1}}
  %y = memfmt.conv2d %x, %w {dilation = array<i64: 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: groups is at least 1.
func.func @conv2d_groups_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 'groups' >= 1, got 0}}
  %y = memfmt.conv2d %x, %w {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: input channels split evenly into groups.
func.func @conv2d_input_channels_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{input channels (3) must be divisible by groups (2)}}
  %y = memfmt.conv2d %x, %w {groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: output channels split evenly into groups.
func.func @conv2d_output_channels_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{output channels (3) must be divisible by groups (2)}}
  %y = memfmt.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// -----

// conv2d: the weight has C / groups input channels.
func.func @conv2d_weight_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{weight [4, 4, 3, 3] expects 4 input channels per group, but the input has 4 channels in 2 group(s)}}
  %y = memfmt.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: the bias has one value per output channel.
func.func @conv2d_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{expected bias shape [4], got [5]}}
  %y = memfmt.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: a dilated kernel larger than the padded input does not fit.
func.func @conv2d_kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{kernel [3, 3] (dilated, with padding) does not fit the input [4, 4]}}
  %y = memfmt.conv2d %x, %w {dilation = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

// conv2d: the result shape follows the output-size formula.
func.func @conv2d_result_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected result shape [1, 4, 4, 4], got [1, 4, 3, 3]}}
  %y = memfmt.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----

// conv2d: 4-value padding is top, left, bottom, right (H: 8+0+2-3+1 = 8,
// W: 8+1+0-3+1 = 7), not symmetric.
func.func @conv2d_asymmetric_result_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected result shape [1, 4, 8, 7], got [1, 4, 7, 8]}}
  %y = memfmt.conv2d %x, %w {padding = array<i64: 0, 1, 2, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x7x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

// -----

// batch_norm: every parameter has one value per channel.
func.func @batch_norm_param_shape(%x: tensor<2x4x5x5xf32>, %p: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expected running_var shape [4], got [3]}}
  %y = memfmt.batch_norm %x, %p, %p, %p, %v : tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32> -> tensor<2x4x5x5xf32>
  return
}

// -----

// batch_norm: the input has a channel dimension.
func.func @batch_norm_rank(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{expects an input of rank >= 2 (N, C, ...), got rank 1}}
  %y = memfmt.batch_norm %x, %p, %p, %p, %p : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// batch_norm: eps is non-negative.
func.func @batch_norm_negative_eps(%x: tensor<2x4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{expects 'eps' >= 0}}
  %y = memfmt.batch_norm %x, %p, %p, %p, %p {eps = -1.0 : f64} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// add
//===----------------------------------------------------------------------===//

// -----

// add: shapes must broadcast (right-aligned, equal or 1).
func.func @add_not_broadcastable(%a: tensor<2x3x4x5xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes [2, 3, 4, 5] and [4] do not broadcast}}
  %y = memfmt.add %a, %b : tensor<2x3x4x5xf32>, tensor<4xf32> -> tensor<2x3x4x5xf32>
  return
}

// -----

// add: the result has the broadcast shape.
func.func @add_result_shape(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) {
  // expected-error @+1 {{expected result shape [2, 3, 4], got [2, 1, 4]}}
  %y = memfmt.add %a, %b : tensor<2x1x4xf32>, tensor<3x1xf32> -> tensor<2x1x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

// max_pool2d: kernel_size has two values.
func.func @max_pool2d_kernel_count(%x: tensor<1x8x6x6xf32>) {
  // expected-error @+1 {{expects 'kernel_size' to have 2 values, got 1}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
  return
}

// -----

// max_pool2d: a non-empty stride has two values.
func.func @max_pool2d_stride_count(%x: tensor<1x8x6x6xf32>) {
  // expected-error @+1 {{expects 'stride' to have 2 values, got 1}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
  return
}

// -----

// max_pool2d: the window does not fit the input.
func.func @max_pool2d_window_too_large(%x: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{window [5, 5] (dilated, with padding) does not fit the input [4, 4]}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 5, 5>} : tensor<1x8x4x4xf32> -> tensor<1x8x1x1xf32>
  return
}

// -----

// max_pool2d: without ceil_mode the output size rounds down (7 / 2 -> 3).
func.func @max_pool2d_result_shape(%x: tensor<1x8x7x7xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 3, 3], got [1, 8, 4, 4]}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<1x8x7x7xf32> -> tensor<1x8x4x4xf32>
  return
}

// -----

// max_pool2d: with ceil_mode the output size rounds up (7 / 2 -> 4).
func.func @max_pool2d_ceil_result_shape(%x: tensor<1x8x7x7xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 4, 4], got [1, 8, 3, 3]}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>, ceil_mode = true} : tensor<1x8x7x7xf32> -> tensor<1x8x3x3xf32>
  return
}

// -----

// max_pool2d: ceil_mode drops a last window that would start in the end
// padding (5 + 2 padding, kernel 2, stride 2 -> 3, not 4), as ATen.
func.func @max_pool2d_ceil_last_window(%x: tensor<1x8x5x5xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 3, 3], got [1, 8, 4, 4]}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = true} : tensor<1x8x5x5xf32> -> tensor<1x8x4x4xf32>
  return
}

// -----

// max_pool2d_with_indices: the indices have the output's shape too.
func.func @max_pool2d_indices_shape(%x: tensor<1x8x6x6xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 3, 3], got [1, 8, 6, 6]}}
  %y, %i = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>, tensor<1x8x6x6xi64>
  return
}

// -----

// avg_pool2d: padding is non-negative.
func.func @avg_pool2d_negative_padding(%x: tensor<1x8x6x6xf32>) {
  // expected-error @+1 {{expects every 'padding' value to be non-negative, got [-1, -1]}}
  %y = memfmt.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: -1, -1>} : tensor<1x8x6x6xf32> -> tensor<1x8x2x2xf32>
  return
}

// -----

// avg_pool2d: count_include_pad does not change the result shape.
func.func @avg_pool2d_result_shape(%x: tensor<1x8x6x6xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 4, 4], got [1, 8, 3, 3]}}
  %y = memfmt.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 1, 1>, count_include_pad = false} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
  return
}

// -----

// adaptive_avg_pool2d: output_size has two values.
func.func @adaptive_avg_pool2d_output_size_count(%x: tensor<1x8x7x7xf32>) {
  // expected-error @+1 {{expects 'output_size' to have 2 values, got 1}}
  %y = memfmt.adaptive_avg_pool2d %x {output_size = array<i64: 1>} : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
  return
}

// -----

// adaptive_avg_pool2d: output_size values are positive.
func.func @adaptive_avg_pool2d_output_size_zero(%x: tensor<1x8x7x7xf32>) {
  // expected-error @+1 {{expects every 'output_size' value to be positive, got [0, 1]}}
  %y = memfmt.adaptive_avg_pool2d %x {output_size = array<i64: 0, 1>} : tensor<1x8x7x7xf32> -> tensor<1x8x0x1xf32>
  return
}

// -----

// adaptive_avg_pool2d: the result has shape [N, C] + output_size.
func.func @adaptive_avg_pool2d_result_shape(%x: tensor<1x8x7x7xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 2, 2], got [1, 8, 1, 1]}}
  %y = memfmt.adaptive_avg_pool2d %x {output_size = array<i64: 2, 2>} : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// flatten, reshape (L7), linear
//===----------------------------------------------------------------------===//

// -----

// flatten: start_dim is in [-rank, rank).
func.func @flatten_start_dim_range(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'start_dim' = 4 is out of range for rank 4}}
  %y = memfmt.flatten %x {start_dim = 4 : i64} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  return
}

// -----

// flatten: end_dim is in [-rank, rank).
func.func @flatten_end_dim_range(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'end_dim' = -5 is out of range for rank 4}}
  %y = memfmt.flatten %x {end_dim = -5 : i64} : tensor<2x3x4x5xf32> -> tensor<120xf32>
  return
}

// -----

// flatten: start_dim comes no later than end_dim (after normalising).
func.func @flatten_start_after_end(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'start_dim' (2) must not come after 'end_dim' (1)}}
  %y = memfmt.flatten %x {start_dim = 2 : i64, end_dim = -3 : i64} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  return
}

// -----

// flatten: the result merges exactly start_dim..end_dim.
func.func @flatten_result_shape(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected result shape [2, 60], got [6, 20]}}
  %y = memfmt.flatten %x {start_dim = 1 : i64} : tensor<2x3x4x5xf32> -> tensor<6x20xf32>
  return
}

// -----

// L7: flatten keeps NCHW meaning, so its result is contiguous.
func.func @flatten_result_not_contiguous(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{result must be contiguous (L7: reshapes keep NCHW meaning), got strides [60, 1, 15, 3]}}
  %y = memfmt.flatten %x {start_dim = 3 : i64} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

// -----

// reshape: the element count is kept.
func.func @reshape_element_count(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{cannot reshape [2, 3, 4, 5] (120 elements) to [2, 50] (100 elements)}}
  %y = memfmt.reshape %x : tensor<2x3x4x5xf32> -> tensor<2x50xf32>
  return
}

// -----

// L7: reshape produces a contiguous result, never channels-last.
func.func @reshape_result_not_contiguous(%x: tensor<2x60xf32>) {
  // expected-error @+1 {{result must be contiguous (L7: reshapes keep NCHW meaning), got strides [60, 1, 15, 3]}}
  %y = memfmt.reshape %x : tensor<2x60xf32> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

// -----

// linear: the input has a feature dimension.
func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<4x1xf32>) {
  // expected-error @+1 {{expects an input of rank >= 1}}
  %y = memfmt.linear %x, %w : (tensor<f32>, tensor<4x1xf32>) -> tensor<4xf32>
  return
}

// -----

// linear: the weight is [out_features, in_features].
func.func @linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<4x8x1xf32>) {
  // expected-error @+1 {{expects a 2-D weight [out_features, in_features], got [4, 8, 1]}}
  %y = memfmt.linear %x, %w : (tensor<2x8xf32>, tensor<4x8x1xf32>) -> tensor<2x4xf32>
  return
}

// -----

// linear: the input's last dimension is in_features.
func.func @linear_features(%x: tensor<2x8xf32>, %w: tensor<4x7xf32>) {
  // expected-error @+1 {{input features (8) do not match the weight's in_features (7)}}
  %y = memfmt.linear %x, %w : (tensor<2x8xf32>, tensor<4x7xf32>) -> tensor<2x4xf32>
  return
}

// -----

// linear: the bias has out_features values.
func.func @linear_bias_shape(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected bias shape [4], got [8]}}
  %y = memfmt.linear %x, %w, %b : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  return
}

// -----

// linear: the result is [*, out_features].
func.func @linear_result_shape(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{expected result shape [2, 4], got [2, 8]}}
  %y = memfmt.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// contiguous (L2) and the preserve_format ops (L6)
//===----------------------------------------------------------------------===//

// -----

// contiguous converts to a format; preserve is not one.
func.func @contiguous_preserve(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{memory_format must be contiguous or channels_last; preserve is only for clone, empty_like, to and resize_as (L6)}}
  %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<preserve>} : tensor<2x3x4x5xf32>
  return
}

// -----

// L1: only 4-D and 5-D tensors have a channels-last format.
func.func @contiguous_channels_last_rank3(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{memory_format channels_last needs a 4-D or 5-D tensor (L1), got rank 3}}
  %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4xf32>
  return
}

// -----

// L2: the result of contiguous has the dense strides of its format (generic
// form: the custom form infers the result).
func.func @contiguous_result_strides(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{result strides [60, 20, 5, 1] are not [60, 1, 15, 3] (L2: the dense strides of the requested format)}}
  %y = "memfmt.contiguous"(%x) <{memory_format = #memfmt.memory_format<channels_last>}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

// contiguous keeps the shape.
func.func @contiguous_result_shape(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x3x4x5xf32>', got 'tensor<120xf32>'}}
  %y = "memfmt.contiguous"(%x) : (tensor<2x3x4x5xf32>) -> tensor<120xf32>
  return
}

// -----

// A preserve_format op needs a static shape to infer its result's strides.
func.func @clone_dynamic_shape(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{expects a static shape, got 'tensor<?x3xf32>'}}
  %y = memfmt.clone %x : tensor<?x3xf32>
  return
}

// -----

// L6: zero strides (an expanded input) are never preserved; the result takes
// the input's L4 format.
func.func @clone_keeps_zero_strides(%x: tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>) {
  // expected-error @+1 {{result strides [0, 0, 5, 1] are not [60, 20, 5, 1] (L6: preserve_format keeps the strides of a dense, non-overlapping input, never zero strides, and otherwise takes its L4 format)}}
  %y = "memfmt.clone"(%x) : (tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[0, 0, 5, 1]>>
  return
}

// -----

// L6: a zero stride is not preserved even on a size-1 dimension, where it
// would describe the same bytes.
func.func @clone_keeps_zero_stride_size1(%x: tensor<1x3x4x5xf32, #memfmt.strides<[0, 20, 5, 1]>>) {
  // expected-error @+1 {{result strides [0, 20, 5, 1] are not [60, 20, 5, 1] (L6}}
  %y = "memfmt.clone"(%x) : (tensor<1x3x4x5xf32, #memfmt.strides<[0, 20, 5, 1]>>) -> tensor<1x3x4x5xf32, #memfmt.strides<[0, 20, 5, 1]>>
  return
}

// -----

// L6: clone with preserve keeps a dense input's strides; a channels-last
// result of a contiguous input is wrong.
func.func @clone_result_strides(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{result strides [60, 1, 15, 3] are not [60, 20, 5, 1] (L6}}
  %y = "memfmt.clone"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

// -----

// L2: empty_like with an explicit format does not keep the input's strides.
func.func @empty_like_result_strides(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) {
  // expected-error @+1 {{result strides [60, 1, 15, 3] are not [60, 20, 5, 1] (L2}}
  %y = "memfmt.empty_like"(%x) <{memory_format = #memfmt.memory_format<contiguous>}> : (tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

// -----

// to: the result's element type is dtype.
func.func @to_result_element_type(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x3x4x5xbf16>', got 'tensor<2x3x4x5xf16>'}}
  %y = "memfmt.to"(%x) <{dtype = bf16}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf16>
  return
}

// -----

// to: without dtype the element type is kept.
func.func @to_result_element_type_default(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x3x4x5xf32>', got 'tensor<2x3x4x5xbf16>'}}
  %y = "memfmt.to"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xbf16>
  return
}

// -----

// to: dtype is a floating-point type (ODS constraint).
func.func @to_integer_dtype(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint}}
  %y = "memfmt.to"(%x) <{dtype = i32}> : (tensor<2x3xf32>) -> tensor<2x3xi32>
  return
}

// -----

// resize_as: the result has the template's shape and the input's element type.
func.func @resize_as_result_type(%x: tensor<120xf16>, %t: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected result type 'tensor<2x3x4x5xf16>', got 'tensor<2x3x4x5xf32>'}}
  %y = "memfmt.resize_as"(%x, %t) : (tensor<120xf16>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

// L6: resize_as with preserve takes the template's strides, not the input's.
func.func @resize_as_result_strides(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, %t: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{result strides [60, 1, 15, 3] are not [60, 20, 5, 1] (L6}}
  %y = "memfmt.resize_as"(%x, %t) : (tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return
}

//===----------------------------------------------------------------------===//
// cat, chunk
//===----------------------------------------------------------------------===//

// -----

// cat: at least one tensor (generic form: variadic operands may be empty).
func.func @cat_no_tensors() {
  // expected-error @+1 {{expects at least one tensor}}
  %y = "memfmt.cat"() : () -> tensor<2x3xf32>
  return
}

// -----

// cat: tensors agree outside dim.
func.func @cat_mismatched_shapes(%a: tensor<2x8x4x4xf32>, %b: tensor<2x4x4x4xf32>) {
  // expected-error @+1 {{operand #1 has shape [2, 4, 4, 4], which differs from [2, 8, 4, 4] outside dim 0}}
  %y = memfmt.cat %a, %b : tensor<2x8x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<4x8x4x4xf32>
  return
}

// -----

// cat: tensors have one rank.
func.func @cat_mismatched_ranks(%a: tensor<2x8xf32>, %b: tensor<2x8x1xf32>) {
  // expected-error @+1 {{operand #1 has shape [2, 8, 1], which differs from [2, 8] outside dim 0}}
  %y = memfmt.cat %a, %b : tensor<2x8xf32>, tensor<2x8x1xf32> -> tensor<4x8xf32>
  return
}

// -----

// cat: dim is in [-rank, rank).
func.func @cat_dim_range(%a: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'dim' = 4 is out of range for rank 4}}
  %y = memfmt.cat %a, %a {dim = 4 : i64} : tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32> -> tensor<4x8x4x4xf32>
  return
}

// -----

// cat: zero-dimensional tensors cannot be concatenated (ATen).
func.func @cat_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{zero-dimensional tensor cannot be concatenated}}
  %y = memfmt.cat %a, %a : tensor<f32>, tensor<f32> -> tensor<2xf32>
  return
}

// -----

// cat: the result's dim is the sum of the inputs'.
func.func @cat_result_shape(%a: tensor<2x8x4x4xf32>, %b: tensor<3x8x4x4xf32>) {
  // expected-error @+1 {{expected result shape [5, 8, 4, 4], got [4, 8, 4, 4]}}
  %y = memfmt.cat %a, %b : tensor<2x8x4x4xf32>, tensor<3x8x4x4xf32> -> tensor<4x8x4x4xf32>
  return
}

// -----

// chunk: the input has a dimension to split.
func.func @chunk_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{expects an input of rank >= 1}}
  %y = memfmt.chunk %x {chunks = 1 : i64} : tensor<f32> -> tensor<f32>
  return
}

// -----

// chunk: chunks is at least 1.
func.func @chunk_zero_chunks(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{expects 'chunks' >= 1, got 0}}
  %y = memfmt.chunk %x {chunks = 0 : i64} : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// chunk: dim is in [-rank, rank).
func.func @chunk_dim_range(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dim' = -3 is out of range for rank 2}}
  %y:2 = memfmt.chunk %x {chunks = 2 : i64, dim = -3 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

// chunk: 4 into 3 gives 2 pieces of 2 (ATen), not 3.
func.func @chunk_count(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{splitting size 4 into 3 chunks gives 2 pieces [2, 2], but the op has 3 results}}
  %y:3 = memfmt.chunk %x {chunks = 3 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>
  return
}

// -----

// chunk: every piece but the last has ceil(size / chunks) elements.
func.func @chunk_piece_shape(%x: tensor<5x3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3], got [1, 3]}}
  %y:3 = memfmt.chunk %x {chunks = 3 : i64} : tensor<5x3xf32> -> tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// weight
//===----------------------------------------------------------------------===//

// -----

// weight: the parameter has a name.
func.func @weight_empty_name() {
  // expected-error @+1 {{expects a non-empty parameter name}}
  %w = memfmt.weight "" : tensor<4x3x3x3xf32>
  return
}

// -----

// L4: a weight is laid out contiguous or channels-last, not permuted.
func.func @weight_permuted() {
  // expected-error @+1 {{result #0 has strides [1, 4, 12, 36], which are neither contiguous nor channels-last contiguous}}
  %w = memfmt.weight "w" : tensor<4x3x3x3xf32, #memfmt.strides<[1, 4, 12, 36]>>
  return
}

// -----

// Pool padding as large as the window would leave windows with no input.
func.func @pool_padding_too_large(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{padding [2, 2] must be smaller than the (dilated) window [2, 2] so that every window sees an input element}}
  %0 = memfmt.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// fused_conv2d: the residual has the result's shape.
func.func @fused_conv_residual_shape(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %r: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+1 {{expected residual shape [1, 3, 4, 4], got [1, 2, 4, 4]}}
  %0 = memfmt.fused_conv2d %x, %w residual %r {relu = true} : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32> residual tensor<1x2x4x4xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// fused_conv2d shares conv2d's checks.
func.func @fused_conv_groups(%x: tensor<1x3x4x4xf32>, %w: tensor<4x1x1x1xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{input channels (3) must be divisible by groups (2)}}
  %0 = memfmt.fused_conv2d %x, %w {groups = 2 : i64} : tensor<1x3x4x4xf32>, tensor<4x1x1x1xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// fold_batch_norm: statistics have one value per output channel.
func.func @fold_bn_gamma(%w: tensor<4x2x3x3xf32>, %p: tensor<4xf32>, %q: tensor<3xf32>) -> tensor<4x2x3x3xf32> {
  // expected-error @+1 {{expected gamma shape [4], got [3]}}
  %0, %1 = memfmt.fold_batch_norm %w, %q, %p, %p, %p : tensor<4x2x3x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x2x3x3xf32>, tensor<4xf32>
  return %0 : tensor<4x2x3x3xf32>
}

// -----

// fold_batch_norm: the folded weight keeps the weight's shape.
func.func @fold_bn_result(%w: tensor<4x2x3x3xf32>, %p: tensor<4xf32>) -> tensor<4x2x1x1xf32> {
  // expected-error @+1 {{expected new_weight shape [4, 2, 3, 3], got [4, 2, 1, 1]}}
  %0, %1 = memfmt.fold_batch_norm %w, %p, %p, %p, %p : tensor<4x2x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x2x1x1xf32>, tensor<4xf32>
  return %0 : tensor<4x2x1x1xf32>
}

// -----

// fold_batch_norm: a negative eps is rejected.
func.func @fold_bn_eps(%w: tensor<4x2x3x3xf32>, %p: tensor<4xf32>) -> tensor<4x2x3x3xf32> {
  // expected-error @+1 {{expects 'eps' >= 0}}
  %0, %1 = memfmt.fold_batch_norm %w, %p, %p, %p, %p {eps = -1.0 : f64} : tensor<4x2x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x2x3x3xf32>, tensor<4xf32>
  return %0 : tensor<4x2x3x3xf32>
}

// -----

func.func @fused_conv_unknown_activation(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{unknown activation 'tanh' (sigmoid, silu, hardswish, hardsigmoid, clamp, gelu or gelu_tanh)}}
  %y = memfmt.fused_conv2d %x, %w {activation = "tanh"} : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @fused_conv_relu_and_activation(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{has both relu and activation 'silu'}}
  %y = memfmt.fused_conv2d %x, %w {relu = true, activation = "silu"} : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @fused_conv_hardsigmoid_parameters(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{hardsigmoid needs activation_alpha and activation_beta}}
  %y = memfmt.fused_conv2d %x, %w {activation = "hardsigmoid"} : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @fused_conv_stray_parameters(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{activation_alpha and activation_beta belong to a hardsigmoid or clamp activation}}
  %y = memfmt.fused_conv2d %x, %w {activation = "silu", activation_alpha = 1.0 : f64} : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

// linear's activation is checked as fused_conv2d's.
func.func @linear_unknown_activation(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{unknown activation 'relu' (sigmoid, silu, hardswish, hardsigmoid, clamp, gelu or gelu_tanh)}}
  %y = memfmt.linear %x, %w {activation = "relu"} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_hardsigmoid_parameters(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{hardsigmoid needs activation_alpha and activation_beta}}
  %y = memfmt.linear %x, %w {activation = "hardsigmoid"} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_stray_parameter(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{activation_alpha and activation_beta belong to a hardsigmoid or clamp activation}}
  %y = memfmt.linear %x, %w {activation = "gelu", activation_alpha = 1.0 : f64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return
}
