// RUN: memfmt-opt %s -split-input-file -verify-diagnostics

// Every verifier error of the training ops (MemFmtTrainingOps.cpp), one case
// each. Layout errors cite L9 (a gradient has its primal's memory format).

//===----------------------------------------------------------------------===//
// native_batch_norm, native_batch_norm_backward
//===----------------------------------------------------------------------===//

// Training batch norm needs (N, C, ...).
func.func @bn_rank(%x: tensor<3xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects an input of rank >= 2 (N, C, ...), got rank 1}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// Mixed precision (MixedPrecisionOpInterface): a bf16 batch norm keeps its
// parameters and statistics f32.
func.func @bn_bf16_weight(%x: tensor<2x3x4x4xbf16>, %v: tensor<3xf32>, %w: tensor<3xbf16>) {
  // expected-error @+1 {{operand #1 must be f32 whatever the op computes in (mixed precision keeps it f32), got 'bf16'}}
  %y:5 = memfmt.native_batch_norm %x, %w, %v, %v, %v : (tensor<2x3x4x4xbf16>, tensor<3xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// ... and its activations share one type.
func.func @bn_mixed_output(%x: tensor<2x3x4x4xbf16>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects one element type for all floating-point tensors, but result #0 has 'f32' and an earlier tensor has 'bf16'}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// A weight gradient is f32 whatever the convolution computes in.
func.func @conv_backward_bf16_grad_weight(%g: tensor<1x2x3x3xbf16>, %x: tensor<1x2x3x3xbf16>, %w: tensor<2x2x1x1xbf16>) {
  // expected-error @+1 {{result #1 must be f32 whatever the op computes in (mixed precision keeps it f32), got 'bf16'}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, false>} : (tensor<1x2x3x3xbf16>, tensor<1x2x3x3xbf16>, tensor<2x2x1x1xbf16>) -> (tensor<1x2x3x3xbf16>, tensor<2x2x1x1xbf16>, tensor<2xf32>)
  return
}

// -----

// The running statistics have one value per channel.
func.func @bn_running_var(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>, %u: tensor<4xf32>) {
  // expected-error @+1 {{expected running_var shape [3], got [4]}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %u : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// save_invstd has one value per channel too.
func.func @bn_save_invstd(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expected save_invstd shape [3], got [2]}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// The training fusion's residual has the input's shape.
func.func @bn_residual_shape(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>, %r: tensor<2x3x4x1xf32>) {
  // expected-error @+1 {{expected residual shape [2, 3, 4, 4], got [2, 3, 4, 1]}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v residual %r {relu = true} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// The backward of a relu-fused batch norm reads the forward's output...
func.func @bn_backward_relu_without_output(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects the forward's 'output' operand exactly when 'relu' is set (relu's gradient reads it)}}
  %g:3 = memfmt.native_batch_norm_backward %x, %x, %v, %v, %v {output_mask = array<i1: true, true, true>, relu = true} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// ... and only then.
func.func @bn_backward_output_without_relu(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects the forward's 'output' operand exactly when 'relu' is set}}
  %g:3 = memfmt.native_batch_norm_backward %x, %x, %v, %v, %v output %x {output_mask = array<i1: true, true, true>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// The forward's output has the input's shape.
func.func @bn_backward_output_shape(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>, %y: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected output shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %g:3 = memfmt.native_batch_norm_backward %x, %x, %v, %v, %v output %y {output_mask = array<i1: true, true, true>, relu = true} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x5xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// A negative eps is rejected.
func.func @bn_eps(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects 'eps' >= 0}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v {eps = -1.0 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// N=1, H=W=1: one value per channel has no unbiased variance (as ATen).
func.func @bn_one_value(%x: tensor<1x3x1x1xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects more than 1 value per channel in training mode (the unbiased variance divides by n - 1), got input shape [1, 3, 1, 1]}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<1x3x1x1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1x3x1x1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// The output has the input's shape.
func.func @bn_result(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// output_mask has three values (ODS).
func.func @bn_backward_mask(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'output_mask' failed to satisfy constraint}}
  %r:3 = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {output_mask = array<i1: true, true>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// grad_out has the forward output's (the input's) shape.
func.func @bn_backward_grad_out_shape(%g: tensor<2x3x4x5xf32>, %x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expected grad_out shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %r:3 = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {output_mask = array<i1: true, true, true>} : (tensor<2x3x4x5xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// grad_weight has one value per channel.
func.func @bn_backward_grad_weight(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expected grad_weight shape [3], got [4]}}
  %r:3 = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {output_mask = array<i1: true, true, true>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<3xf32>)
  return
}

// -----

// Batch norm backward rejects a negative eps too.
func.func @bn_backward_eps(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects 'eps' >= 0}}
  %r:3 = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {eps = -1.0 : f64, output_mask = array<i1: true, true, true>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// L9: an NCHW grad_out for a channels-last input.
func.func @bn_backward_grad_out_format(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects 'grad_out' in the memory format of 'input' (channels_last; L9: a gradient has its primal's memory format), got strides [48, 16, 4, 1]}}
  %r:3 = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {output_mask = array<i1: true, true, true>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// L9: an NCHW grad_input for a channels-last input.
func.func @bn_backward_grad_input_format(%g: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %v: tensor<3xf32>) {
  // expected-error @+1 {{expects 'grad_input' in the memory format of 'input' (channels_last; L9}}
  %r:3 = memfmt.native_batch_norm_backward %g, %x, %v, %v, %v {output_mask = array<i1: true, true, true>} : (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// convolution_backward, linear_backward
//===----------------------------------------------------------------------===//

// The convolution rules of conv2d apply (groups).
func.func @conv_backward_groups(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{input channels (3) must be divisible by groups (2)}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {groups = 2 : i64, output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>, tensor<4xf32>)
  return
}

// -----

// padding has 2 (symmetric) or 4 (top, left, bottom, right) values, as
// conv2d's.
func.func @conv_backward_padding_count(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 'padding' to have 2 or 4 values, got 3}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {padding = array<i64: 1, 1, 1>, output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x4x4xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  return
}

// -----

// 4 padding values are top, left, bottom, right: grad_output must have the
// asymmetric forward result's shape.
func.func @conv_backward_asymmetric_padding_shape(%g: tensor<1x3x5x5xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{expected grad_output shape [1, 3, 6, 4], got [1, 3, 5, 5]}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {padding = array<i64: 1, 0, 2, 1>, output_mask = array<i1: true, true, true>} : (tensor<1x3x5x5xf32>, tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>)
  return
}

// -----

// grad_output has the forward result's shape.
func.func @conv_backward_grad_output_shape(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected grad_output shape [2, 4, 2, 2], got [2, 4, 4, 4]}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x4x4xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  return
}

// -----

// grad_input has the input's shape.
func.func @conv_backward_grad_input_shape(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{expected grad_input shape [2, 3, 4, 4], got [2, 4, 4, 4]}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>) -> (tensor<2x4x4x4xf32>, tensor<4x3x1x1xf32>, tensor<4xf32>)
  return
}

// -----

// grad_weight has the weight's shape.
func.func @conv_backward_grad_weight_shape(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{expected grad_weight shape [4, 3, 1, 1], got [4, 3, 2, 2]}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<4x3x2x2xf32>, tensor<4xf32>)
  return
}

// -----

// grad_bias has one value per output channel.
func.func @conv_backward_grad_bias_shape(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{expected grad_bias shape [4], got [3]}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>, tensor<3xf32>)
  return
}

// -----

// L9 with L5: a channels-last weight makes the forward result, hence
// grad_output, channels-last.
func.func @conv_backward_grad_output_format(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x4x4xf32>, %w: tensor<4x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) {
  // expected-error @+1 {{expects 'grad_output' in the memory format of the forward result (L5 of input and weight) (channels_last; L9}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>, output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>, tensor<4x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>) -> (tensor<2x3x4x4xf32>, tensor<4x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<4xf32>)
  return
}

// -----

// L9: grad_input has the input's format, even when grad_output is channels-last.
func.func @conv_backward_grad_input_format(%g: tensor<2x4x4x4xf32, #memfmt.strides<[64, 1, 16, 4]>>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{expects 'grad_input' in the memory format of 'input' (channels_last; L9}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32, #memfmt.strides<[64, 1, 16, 4]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<4x3x1x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>, tensor<4xf32>)
  return
}

// -----

// L9: grad_weight keeps the weight's layout: an NCHW weight gets an NCHW
// gradient even when the activations are channels-last.
func.func @conv_backward_grad_weight_format(%g: tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %w: tensor<4x3x2x2xf32>) {
  // expected-error @+1 {{expects 'grad_weight' in the memory format of 'weight' (contiguous; L9: a gradient has its primal's memory format), got strides [12, 1, 6, 3]}}
  %r:3 = memfmt.convolution_backward %g, %x, %w {output_mask = array<i1: true, true, true>} : (tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<4x3x2x2xf32>) -> (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<4x3x2x2xf32, #memfmt.strides<[12, 1, 6, 3]>>, tensor<4xf32>)
  return
}

// -----

// layer_norm_backward: the forward's rules (the last dim, eps, the weight).
func.func @layer_norm_backward_normalized_shape(%g: tensor<2x5xf32>, %x: tensor<2x5xf32>) {
  // expected-error @+1 {{normalises over the last dimension: 'normalized_shape' must be [5], got [2, 5]}}
  %r:3 = memfmt.layer_norm_backward %g, %x {normalized_shape = array<i64: 2, 5>, output_mask = array<i1: true, true, true>} : (tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return
}

// -----

func.func @layer_norm_backward_eps(%g: tensor<2x5xf32>, %x: tensor<2x5xf32>) {
  // expected-error @+1 {{expects a finite 'eps' >= 0, got -1}}
  %r:3 = memfmt.layer_norm_backward %g, %x {normalized_shape = array<i64: 5>, eps = -1.0 : f64, output_mask = array<i1: true, true, true>} : (tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return
}

// -----

func.func @layer_norm_backward_weight(%g: tensor<2x5xf32>, %x: tensor<2x5xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{expected weight shape [5], got [4]}}
  %r:3 = memfmt.layer_norm_backward %g, %x, %w {normalized_shape = array<i64: 5>, output_mask = array<i1: true, true, true>} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<4xf32>) -> (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return
}

// -----

func.func @layer_norm_backward_grad_output(%g: tensor<2x4xf32>, %x: tensor<2x5xf32>) {
  // expected-error @+1 {{expected grad_output shape [2, 5], got [2, 4]}}
  %r:3 = memfmt.layer_norm_backward %g, %x {normalized_shape = array<i64: 5>, output_mask = array<i1: true, true, true>} : (tensor<2x4xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return
}

// -----

func.func @layer_norm_backward_grad_bias(%g: tensor<2x5xf32>, %x: tensor<2x5xf32>) {
  // expected-error @+1 {{expected grad_bias shape [5], got [2]}}
  %r:3 = memfmt.layer_norm_backward %g, %x {normalized_shape = array<i64: 5>, output_mask = array<i1: true, true, true>} : (tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<5xf32>, tensor<2xf32>)
  return
}

// -----

// L9: grad_output in the input's format.
func.func @layer_norm_backward_grad_output_format(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'grad_output' in the memory format of 'input' (channels_last; L9: a gradient has its primal's memory format), got strides [48, 16, 4, 1]}}
  %r:3 = memfmt.layer_norm_backward %g, %x {normalized_shape = array<i64: 4>, output_mask = array<i1: true, true, true>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// softmax_backward: softmax's dim rule, grad_output of the output's shape,
// L9.
func.func @softmax_backward_dim(%g: tensor<2x5xf32>, %y: tensor<2x5xf32>) {
  // expected-error @+1 {{expects 'dim' in [0, 2) for an output of rank 2, got 2}}
  %r = memfmt.softmax_backward %g, %y {dim = 2 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @softmax_backward_rank(%g: tensor<f32>, %y: tensor<f32>) {
  // expected-error @+1 {{expects an output of rank >= 1}}
  %r = memfmt.softmax_backward %g, %y {dim = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @softmax_backward_grad_output(%g: tensor<2x4xf32>, %y: tensor<2x5xf32>) {
  // expected-error @+1 {{expected grad_output shape [2, 5], got [2, 4]}}
  %r = memfmt.softmax_backward %g, %y {dim = 1 : i64} : (tensor<2x4xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @softmax_backward_grad_input(%g: tensor<2x5xf32>, %y: tensor<2x5xf32>) {
  // expected-error @+1 {{expected grad_input shape [2, 5], got [5, 2]}}
  %r = memfmt.softmax_backward %g, %y {dim = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<5x2xf32>
  return
}

// -----

func.func @softmax_backward_grad_output_format(%g: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'grad_output' in the memory format of 'output' (channels_last; L9: a gradient has its primal's memory format), got strides [48, 16, 4, 1]}}
  %r = memfmt.softmax_backward %g, %y {dim = 1 : i64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  return
}

// -----

// linear_backward: the input's features are the weight's columns.
func.func @linear_backward_features(%x: tensor<2x5xf32>, %g: tensor<2x3xf32>, %w: tensor<3x7xf32>) {
  // expected-error @+1 {{input [2, 5] must have weight's 7 features in its last dim}}
  %r:3 = memfmt.linear_backward %x, %g, %w {output_mask = array<i1: true, true, true>} : (tensor<2x5xf32>, tensor<2x3xf32>, tensor<3x7xf32>) -> (tensor<2x5xf32>, tensor<3x7xf32>, tensor<3xf32>)
  return
}

// -----

// linear_backward: grad_output is [*, M].
func.func @linear_backward_grad_output(%x: tensor<2x7xf32>, %g: tensor<2x4xf32>, %w: tensor<3x7xf32>) {
  // expected-error @+1 {{expected grad_output shape [2, 3], got [2, 4]}}
  %r:3 = memfmt.linear_backward %x, %g, %w {output_mask = array<i1: true, true, true>} : (tensor<2x7xf32>, tensor<2x4xf32>, tensor<3x7xf32>) -> (tensor<2x7xf32>, tensor<3x7xf32>, tensor<3xf32>)
  return
}

// -----

// L9: a transposed grad_weight is not the weight's layout.
func.func @linear_backward_grad_weight_format(%x: tensor<2x7xf32>, %g: tensor<2x3xf32>, %w: tensor<3x7xf32>) {
  // expected-error @+1 {{expects 'grad_weight' in the memory format of 'weight' (contiguous; L9: a gradient has its primal's memory format), got strides [1, 3]}}
  %r:3 = memfmt.linear_backward %x, %g, %w {output_mask = array<i1: true, true, true>} : (tensor<2x7xf32>, tensor<2x3xf32>, tensor<3x7xf32>) -> (tensor<2x7xf32>, tensor<3x7xf32, #memfmt.strides<[1, 3]>>, tensor<3xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// threshold_backward, pooling backward
//===----------------------------------------------------------------------===//

// threshold_backward: grad_output has self's shape.
func.func @threshold_backward_shape(%g: tensor<2x3x4x5xf32>, %y: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expected grad_output shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %0 = memfmt.threshold_backward %g, %y : (tensor<2x3x4x5xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

// threshold_backward: the addend has self's shape and format (L9).
func.func @threshold_backward_addend_shape(%g: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32>, %a: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected addend shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %0 = memfmt.threshold_backward %g, %y addend %a : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @threshold_backward_addend_format(%g: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32>, %a: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'addend' in the memory format of 'self' (contiguous; L9: a gradient has its primal's memory format), got strides [48, 1, 12, 3]}}
  %0 = memfmt.threshold_backward %g, %y addend %a : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> tensor<2x3x4x4xf32>
  return
}

// -----

// Where self is in both formats (C = 1), the addend may carry either one's
// strides.
func.func @threshold_backward_addend_either_format(%g: tensor<2x1x4x4xf32>, %y: tensor<2x1x4x4xf32>, %a: tensor<2x1x4x4xf32, #memfmt.strides<[16, 1, 4, 1]>>) -> tensor<2x1x4x4xf32> {
  %0 = memfmt.threshold_backward %g, %y addend %a : (tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32, #memfmt.strides<[16, 1, 4, 1]>>) -> tensor<2x1x4x4xf32>
  return %0 : tensor<2x1x4x4xf32>
}

// -----

// threshold_backward: grad_input has self's shape.
func.func @threshold_backward_result_shape(%g: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expected grad_input shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %0 = memfmt.threshold_backward %g, %y : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

// L9: relu's gradient of a channels-last activation is channels-last.
func.func @threshold_backward_format(%g: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %y: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'grad_input' in the memory format of 'self' (channels_last; L9}}
  %0 = memfmt.threshold_backward %g, %y : (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> tensor<2x3x4x4xf32>
  return
}

// -----

// max pooling backward: indices have the pooled shape.
func.func @max_pool_backward_indices(%g: tensor<1x2x2x2xf32>, %x: tensor<1x2x5x5xf32>, %i: tensor<1x2x3x3xi64>) {
  // expected-error @+1 {{expected indices shape [1, 2, 2, 2], got [1, 2, 3, 3]}}
  %0 = memfmt.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x5x5xf32>, tensor<1x2x3x3xi64>) -> tensor<1x2x5x5xf32>
  return
}

// -----

// max pooling backward: grad_output has the pooled shape (ceil mode: 3x3).
func.func @max_pool_backward_grad_output(%g: tensor<1x2x2x2xf32>, %x: tensor<1x2x5x5xf32>, %i: tensor<1x2x2x2xi64>) {
  // expected-error @+1 {{expected grad_output shape [1, 2, 3, 3], got [1, 2, 2, 2]}}
  %0 = memfmt.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x2x2xf32>, tensor<1x2x5x5xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x5x5xf32>
  return
}

// -----

// max pooling backward: the forward's window rules apply.
func.func @max_pool_backward_window(%g: tensor<1x2x2x2xf32>, %x: tensor<1x2x5x5xf32>, %i: tensor<1x2x2x2xi64>) {
  // expected-error @+1 {{padding [2, 2] must be smaller than the (dilated) window [2, 2]}}
  %0 = memfmt.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 2, 2>, padding = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x5x5xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x5x5xf32>
  return
}

// -----

// average pooling backward: grad_output has the pooled shape.
func.func @avg_pool_backward_grad_output(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>) {
  // expected-error @+1 {{expected grad_output shape [1, 2, 2, 2], got [1, 2, 3, 3]}}
  %0 = memfmt.avg_pool2d_backward %g, %x {kernel_size = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

// L9: average pooling's grad_output has self's (channels-last) format.
func.func @avg_pool_backward_format(%g: tensor<2x3x2x2xf32>, %x: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'grad_output' in the memory format of 'self' (channels_last; L9}}
  %0 = memfmt.avg_pool2d_backward %g, %x {kernel_size = array<i64: 2, 2>} : (tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  return
}

// -----

// adaptive pooling backward: grad_output is [N, C, OH, OW].
func.func @adaptive_pool_backward_shape(%g: tensor<2x4x1x1xf32>, %x: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expects grad_output shape [2, 3, OH >= 1, OW >= 1], got [2, 4, 1, 1]}}
  %0 = memfmt.adaptive_avg_pool2d_backward %g, %x : (tensor<2x4x1x1xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cross_entropy_loss, cross_entropy_loss_backward
//===----------------------------------------------------------------------===//

// One target per row of logits.
func.func @loss_target(%x: tensor<2x10xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{expected target shape [2], got [3]}}
  %0 = memfmt.cross_entropy_loss %x, %t : (tensor<2x10xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----

// Targets are i64 class indices (ODS).
func.func @loss_target_type(%x: tensor<2x10xf32>, %t: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 64-bit signless integer values}}
  %0 = memfmt.cross_entropy_loss %x, %t : (tensor<2x10xf32>, tensor<2xf32>) -> tensor<f32>
  return
}

// -----

// The mean over an empty batch is undefined.
func.func @loss_empty(%x: tensor<0x10xf32>, %t: tensor<0xi64>) {
  // expected-error @+1 {{expects a non-empty batch (the mean of no losses is undefined)}}
  %0 = memfmt.cross_entropy_loss %x, %t : (tensor<0x10xf32>, tensor<0xi64>) -> tensor<f32>
  return
}

// -----

// The loss's gradient has the logits' shape.
func.func @loss_backward_shape(%l: tensor<f32>, %x: tensor<2x10xf32>, %t: tensor<2xi64>) {
  // expected-error @+1 {{expected grad_input shape [2, 10], got [2, 9]}}
  %0 = memfmt.cross_entropy_loss_backward %l, %x, %t : (tensor<f32>, tensor<2x10xf32>, tensor<2xi64>) -> tensor<2x9xf32>
  return
}

// -----

// L9: the loss's gradient has the logits' layout (not transposed).
func.func @loss_backward_format(%l: tensor<f32>, %x: tensor<2x10xf32>, %t: tensor<2xi64>) {
  // expected-error @+1 {{expects 'grad_input' in the memory format of 'self' (contiguous; L9: a gradient has its primal's memory format), got strides [1, 2]}}
  %0 = memfmt.cross_entropy_loss_backward %l, %x, %t : (tensor<f32>, tensor<2x10xf32>, tensor<2xi64>) -> tensor<2x10xf32, #memfmt.strides<[1, 2]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// sgd_update
//===----------------------------------------------------------------------===//

// torch.optim.SGD rejects a negative learning rate.
func.func @sgd_lr(%p: tensor<4xf32>) {
  // expected-error @+1 {{expects 'lr', 'momentum' and 'weight_decay' >= 0 (as torch.optim.SGD), got -1.000000e+00, 0.000000e+00, 0.000000e+00}}
  %r:2 = memfmt.sgd_update %p, %p, %p {lr = -1.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Nesterov momentum requires momentum > 0 (as torch).
func.func @sgd_nesterov_momentum(%p: tensor<4xf32>) {
  // expected-error @+1 {{'nesterov' requires 'momentum' > 0 and 'dampening' == 0 (as torch.optim.SGD), got 0.000000e+00 and 0.000000e+00}}
  %r:2 = memfmt.sgd_update %p, %p, %p {lr = 0.1 : f64, nesterov = true} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Nesterov momentum requires dampening == 0 (as torch).
func.func @sgd_nesterov_dampening(%p: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{'nesterov' requires 'momentum' > 0 and 'dampening' == 0 (as torch.optim.SGD), got 9.000000e-01 and 1.000000e-01}}
  %r:2 = memfmt.sgd_update %p, %p, %p step %s {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov = true} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Dampened momentum needs the step to know torch's undamped first step.
func.func @sgd_dampening_step(%p: tensor<4xf32>) {
  // expected-error @+1 {{'dampening' != 0 with momentum needs the 'step' operand: torch's first step sets the buffer to the gradient, undamped}}
  %r:2 = memfmt.sgd_update %p, %p, %p {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// The gradient has the parameter's shape.
func.func @sgd_grad_shape(%p: tensor<4xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{expected grad shape [4], got [5]}}
  %r:2 = memfmt.sgd_update %p, %g, %p {lr = 0.1 : f64} : (tensor<4xf32>, tensor<5xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// L9: a channels-last gradient for an NCHW weight.
func.func @sgd_grad_format(%p: tensor<2x3x4x4xf32>, %g: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'grad' in the memory format of 'param' (contiguous; L9: a gradient has its primal's memory format), got strides [48, 1, 12, 3]}}
  %r:2 = memfmt.sgd_update %p, %g, %p {lr = 0.1 : f64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>)
  return
}

// -----

// L9: the momentum buffer has the parameter's layout too.
func.func @sgd_buffer_format(%p: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %b: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expects 'momentum_buffer' in the memory format of 'param' (channels_last; L9}}
  %r:2 = memfmt.sgd_update %p, %p, %b {lr = 0.1 : f64} : (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>)
  return
}

// -----

// L9: the updated parameter keeps the parameter's layout.
func.func @sgd_result_format(%p: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  // expected-error @+1 {{expects 'param_out' in the memory format of 'param' (channels_last; L9}}
  %r:2 = memfmt.sgd_update %p, %p, %p {lr = 0.1 : f64} : (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>)
  return
}

//===----------------------------------------------------------------------===//
// assign_weight
//===----------------------------------------------------------------------===//


// -----

// A state tensor keeps its layout: a channels-last value cannot replace an
// NCHW weight.
func.func @assign_layout(%v: tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>) {
  %w = memfmt.weight "w" : tensor<2x3x1x2xf32>
  // expected-error @+1 {{assigns a value of type 'tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>' to "w" of type 'tensor<2x3x1x2xf32>'; a state tensor keeps its type and layout}}
  memfmt.assign_weight "w", %v : tensor<2x3x1x2xf32, #memfmt.strides<[6, 1, 6, 3]>>
  return
}

// -----

func.func @assign_twice(%v: tensor<4xf32>) {
  %w = memfmt.weight "w" : tensor<4xf32>
  // expected-error @+1 {{assigns "w" more than once in one function}}
  memfmt.assign_weight "w", %v : tensor<4xf32>
  memfmt.assign_weight "w", %v : tensor<4xf32>
  return
}

// -----

func.func @assign_empty(%v: tensor<4xf32>) {
  // expected-error @+1 {{expects a non-empty weight name}}
  memfmt.assign_weight "", %v : tensor<4xf32>
  return
}

// -----

// An all-reduce keeps the type, memory format included.
func.func @all_reduce_type(%g: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>> {
  // expected-error @+1 {{all of {input, output} have same type}}
  %0 = "memfmt.all_reduce"(%g) <{reduce_op = "avg"}> : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  return %0 : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
}

// -----

func.func @all_reduce_op(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects 'reduce_op' "sum" or "avg", got "max"}}
  %0 = memfmt.all_reduce %g {reduce_op = "max"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @increment_float(%s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be 0D tensor of 64-bit signless integer values}}
  %0 = "memfmt.increment"(%s) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @step_count_not_scalar() -> tensor<2xi64> {
  // expected-error @+1 {{result #0 must be float tensor or 0-d i64 tensor}}
  %0 = memfmt.weight "optimizer.step" {zero_init} : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

//===----------------------------------------------------------------------===//
// The elementwise functions' gradients, sum_to_size
//===----------------------------------------------------------------------===//

// sigmoid_backward: grad_output has the output's shape.
func.func @sigmoid_backward_shape(%g: tensor<2x3x4x5xf32>, %y: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expected grad_output shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %0 = memfmt.sigmoid_backward %g, %y : (tensor<2x3x4x5xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

// clamp_backward: grad_input has self's shape.
func.func @clamp_backward_result_shape(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expected grad_input shape [2, 3, 4, 4], got [2, 3, 4, 5]}}
  %0 = memfmt.clamp_backward %g, %x {max = 6.0 : f64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

// L9: grad_output in self's memory format.
func.func @silu_backward_format(%g: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, %x: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{expects 'grad_output' in the memory format of 'self' (contiguous; L9: a gradient has its primal's memory format), got strides [48, 1, 12, 3]}}
  %0 = memfmt.silu_backward %g, %x : (tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @hardsigmoid_backward_nan(%g: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'alpha' is NaN}}
  %0 = memfmt.hardsigmoid_backward %g, %x {alpha = 0x7FF8000000000000 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @gelu_backward_approximate(%g: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = memfmt.gelu_backward %g, %x {approximate = "erf"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @sum_to_size_not_broadcast(%g: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{result shape [2, 2, 1, 1] is not a shape the input [2, 3, 4, 4] broadcasts from (each dim, aligned to the right, the input's size or 1)}}
  %0 = memfmt.sum_to_size %g : tensor<2x3x4x4xf32> -> tensor<2x2x1x1xf32>
  return
}

// -----

func.func @sum_to_size_rank(%g: tensor<3x4xf32>) {
  // expected-error @+1 {{result shape [1, 3, 4] is not a shape the input [3, 4] broadcasts from}}
  %0 = memfmt.sum_to_size %g : tensor<3x4xf32> -> tensor<1x3x4xf32>
  return
}

// -----

func.func @loss_scale_init(%s: tensor<f32>) {
  // expected-error @+1 {{expects a finite 'init_scale' > 0 (in f32), got 0.000000e+00}}
  %0 = memfmt.loss_scale %s {init_scale = 0.0 : f64} : tensor<f32>
  return
}

// -----

func.func @loss_scale_overflow(%s: tensor<f32>) {
  // expected-error @+1 {{expects a finite 'init_scale' > 0 (in f32), got 1.000000e+39}}
  %0 = memfmt.loss_scale %s {init_scale = 1.0e39 : f64} : tensor<f32>
  return
}

// -----

func.func @unscale_result_type(%g: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{expects 'grad_out' of the gradient's type 'tensor<4xf32>', got 'tensor<5xf32>'}}
  %0, %1 = memfmt.unscale_gradient %g, %s : (tensor<4xf32>, tensor<f32>) -> (tensor<5xf32>, tensor<f32>)
  return
}

// -----

func.func @unscale_bf16(%g: tensor<4xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{expects an f32 gradient (a master weight's), got 'tensor<4xbf16>'}}
  %0, %1 = memfmt.unscale_gradient %g, %s : (tensor<4xbf16>, tensor<f32>) -> (tensor<4xbf16>, tensor<f32>)
  return
}

// -----

func.func @update_loss_scale_growth(%s: tensor<f32>, %t: tensor<i64>, %f: tensor<f32>) {
  // expected-error @+1 {{expects a finite 'growth_factor' > 1 (as GradScaler), got 1.000000e+00}}
  %0, %1 = memfmt.update_loss_scale %s, %t, %f {growth_factor = 1.0 : f64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return
}

// -----

func.func @update_loss_scale_backoff(%s: tensor<f32>, %t: tensor<i64>, %f: tensor<f32>) {
  // expected-error @+1 {{expects 0 < 'backoff_factor' < 1 (as GradScaler), got 1.000000e+00}}
  %0, %1 = memfmt.update_loss_scale %s, %t, %f {backoff_factor = 1.0 : f64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return
}

// -----

func.func @update_loss_scale_interval(%s: tensor<f32>, %t: tensor<i64>, %f: tensor<f32>) {
  // expected-error @+1 {{expects 'growth_interval' >= 1 (as GradScaler), got 0}}
  %0, %1 = memfmt.update_loss_scale %s, %t, %f {growth_interval = 0 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return
}
