// RUN: memfmt-opt %s -split-input-file --memfmt-training-forward -verify-diagnostics --allow-unregistered-dialect

// memfmt-training-forward's errors: each names what the function or op
// lacks to become a training forward.

// Not exactly one result.
// expected-error @+1 {{memfmt-training-forward: @two returns 2 values; a model's forward for training returns exactly one, the logits [N, C]}}
func.func @two(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  return %x, %x : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// A result that is not [N, C] logits.
// expected-error @+1 {{memfmt-training-forward: @rank4 returns 'tensor<2x5x1x1xf32>'; the cross-entropy loss needs logits of shape [N, C] (batch, classes)}}
func.func @rank4(%x: tensor<2x5x1x1xf32>) -> tensor<2x5x1x1xf32> {
  return %x : tensor<2x5x1x1xf32>
}

// -----

// A running statistic that is not a parameter.
func.func @stat_not_weight(%x: tensor<2x4x3x3xf32>, %m: tensor<4xf32>) -> tensor<2x5xf32> {
  %g = memfmt.weight "bn.weight" : tensor<4xf32>
  %b = memfmt.weight "bn.bias" : tensor<4xf32>
  %v = memfmt.weight "bn.running_var" : tensor<4xf32>
  // expected-error @+1 {{memfmt-training-forward: the batch norm's running_mean is not a memfmt.weight; training updates the running statistics in the model state, so they must be parameters}}
  %n = memfmt.batch_norm %x, %g, %b, %m, %v
      : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x3x3xf32>
  %y = memfmt.weight "y" : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// A batch norm already in training mode.
func.func @training(%x: tensor<2x4x3x3xf32>) -> tensor<2x5xf32> {
  %g = memfmt.weight "bn.weight" : tensor<4xf32>
  %b = memfmt.weight "bn.bias" : tensor<4xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<4xf32>
  %v = memfmt.weight "bn.running_var" : tensor<4xf32>
  // expected-error @+1 {{memfmt-training-forward: the batch norm is already in training mode (training = true); the pass expects an inference forward}}
  %n = memfmt.batch_norm %x, %g, %b, %m, %v {training = true}
      : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x3x3xf32>
  %y = memfmt.weight "y" : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Two batch norms updating one running statistic.
func.func @shared(%x: tensor<2x4x3x3xf32>) -> tensor<2x5xf32> {
  %g = memfmt.weight "bn.weight" : tensor<4xf32>
  %b = memfmt.weight "bn.bias" : tensor<4xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<4xf32>
  %v = memfmt.weight "bn.running_var" : tensor<4xf32>
  %v2 = memfmt.weight "bn2.running_var" : tensor<4xf32>
  // expected-note @+1 {{the other batch norm}}
  %n = memfmt.batch_norm %x, %g, %b, %m, %v
      : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x3x3xf32>
  // expected-error @+1 {{memfmt-training-forward: running statistic 'bn.running_mean' is also updated by another batch norm; each running statistic is assigned once per step}}
  %n2 = memfmt.batch_norm %n, %g, %b, %m, %v2
      : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<2x4x3x3xf32>
  %y = memfmt.weight "y" : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// One value per channel: training's unbiased variance divides by n - 1.
func.func @one_value(%x: tensor<1x4x1x1xf32>) -> tensor<2x5xf32> {
  %g = memfmt.weight "bn.weight" : tensor<4xf32>
  %b = memfmt.weight "bn.bias" : tensor<4xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<4xf32>
  %v = memfmt.weight "bn.running_var" : tensor<4xf32>
  // expected-error @+1 {{memfmt-training-forward: the batch norm sees 1 value per channel (input 'tensor<1x4x1x1xf32>'); training needs more (the running variance divides by n - 1): use a larger batch or input}}
  %n = memfmt.batch_norm %x, %g, %b, %m, %v
      : tensor<1x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<1x4x1x1xf32>
  %y = memfmt.weight "y" : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// A function that is already a training step.
func.func @again(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> tensor<2x5xf32> {
  // expected-error @+1 {{memfmt-training-forward: @again is already a training step (it has a loss or updates model state)}}
  %l = memfmt.cross_entropy_loss %x, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %x : tensor<2x5xf32>
}

// -----

// A model fused for inference.
func.func @fused(%x: tensor<2x3x4x4xf32>) -> tensor<2x5xf32> {
  %w = memfmt.weight "conv.weight" : tensor<4x3x1x1xf32>
  %g = memfmt.weight "bn.weight" : tensor<4xf32>
  %b = memfmt.weight "bn.bias" : tensor<4xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<4xf32>
  %v = memfmt.weight "bn.running_var" : tensor<4xf32>
  // expected-error @+1 {{memfmt-training-forward: a batch norm was folded into a convolution for inference (memfmt-fuse-conv); run the pass on the unfused model}}
  %fw, %fb = memfmt.fold_batch_norm %w, %g, %b, %m, %v
      : tensor<4x3x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32> -> tensor<4x3x1x1xf32>, tensor<4xf32>
  %y = memfmt.weight "y" : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// More than one block (a branch of an unregistered dialect makes two).
// expected-error @+1 {{memfmt-training-forward: @blocks has more than one block; a model's forward is one block of ops}}
func.func @blocks(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  "test.br"() [^next] : () -> ()
^next:
  return %x : tensor<2x5xf32>
}
