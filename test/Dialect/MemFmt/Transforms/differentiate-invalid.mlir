// RUN: memfmt-opt %s -split-input-file -allow-unregistered-dialect --memfmt-differentiate -verify-diagnostics

// memfmt-differentiate's errors: each is located at the function or the op
// that causes it, and fails the pass (memfmt-opt exits 1).

// A function without a result has no loss.
// expected-error @+1 {{memfmt-differentiate expects a single result, the loss (a 0-d float tensor), but the function has 0 results}}
func.func @no_result(%x: tensor<2x4xf32>) {
  return
}

// -----

// Several results: which one is the loss?
// expected-error @+1 {{memfmt-differentiate expects a single result, the loss (a 0-d float tensor), but the function has 2 results}}
func.func @two_results(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>) {
  %l = memfmt.cross_entropy_loss %x, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<2x5xf32>
}

// -----

// A result that is not 0-d is no loss.
// expected-error @+1 {{memfmt-differentiate expects the result to be the loss, a 0-d float tensor, got 'tensor<2x5xf32>'}}
func.func @not_scalar(%x: tensor<2x4xf32>) -> tensor<2x5xf32> {
  %w = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %y = memfmt.linear %x, %w : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Nor is a 0-d integer tensor.
// expected-error @+1 {{memfmt-differentiate expects the result to be the loss, a 0-d float tensor, got 'tensor<i64>'}}
func.func @integer_result(%x: tensor<i64>) -> tensor<i64> {
  return %x : tensor<i64>
}

// -----

// The loss depends on no parameter: only the input and optimizer state
// (zero_init) reach it.
// expected-error @+1 {{has no trainable weight: no memfmt.weight without zero_init reaches the loss through differentiable operands}}
func.func @no_trainable_weight(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "fc.weight.momentum_buffer" {zero_init} : tensor<5x4xf32>
  %y = memfmt.linear %x, %w : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Running statistics reach the loss only through the batch norm's
// non-differentiable operands: no trainable weight either.
// expected-error @+1 {{has no trainable weight}}
func.func @only_running_stats(%x: tensor<2x4x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %g = memfmt.weight "bn.weight" {zero_init} : tensor<4xf32>
  %b = memfmt.weight "bn.bias" {zero_init} : tensor<4xf32>
  %rm = memfmt.weight "bn.running_mean" : tensor<4xf32>
  %rv = memfmt.weight "bn.running_var" : tensor<4xf32>
  %bn, %m, %i, %rm1, %rv1 = memfmt.native_batch_norm %x, %g, %b, %rm, %rv : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %f = memfmt.flatten %bn {start_dim = 1 : i64} : tensor<2x4x3x3xf32> -> tensor<2x36xf32>
  %l = memfmt.cross_entropy_loss %f, %t : (tensor<2x36xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An op on a path from a weight to the loss without a VJP: the inference
// batch norm (memfmt-training-forward turns it into native_batch_norm).
func.func @no_vjp(%x: tensor<2x4x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<4x4x1x1xf32>
  %g = memfmt.weight "bn.weight" : tensor<4xf32>
  %b = memfmt.weight "bn.bias" : tensor<4xf32>
  %rm = memfmt.weight "bn.running_mean" : tensor<4xf32>
  %rv = memfmt.weight "bn.running_var" : tensor<4xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x3x3xf32>
  // expected-error @+1 {{'memfmt.batch_norm' op lies on a path from a trainable weight to the loss but has no vector-Jacobian product (VjpOpInterface), so memfmt-differentiate cannot build its gradient}}
  %bn = memfmt.batch_norm %c, %g, %b, %rm, %rv : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
  %f = memfmt.flatten %bn {start_dim = 1 : i64} : tensor<2x4x3x3xf32> -> tensor<2x36xf32>
  %l = memfmt.cross_entropy_loss %f, %t : (tensor<2x36xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Plain max_pool2d keeps no indices: its VJP says what to use instead.
func.func @max_pool_without_indices(%x: tensor<2x4x4x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<4x4x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x4x4xf32>
  // expected-error @+1 {{'memfmt.max_pool2d' op has no VJP (it keeps no indices of its maxima): use memfmt.max_pool2d_with_indices, which memfmt-training-forward converts it to}}
  %p = memfmt.max_pool2d %c {kernel_size = array<i64: 2, 2>} : tensor<2x4x4x4xf32> -> tensor<2x4x2x2xf32>
  %f = memfmt.flatten %p {start_dim = 1 : i64} : tensor<2x4x2x2xf32> -> tensor<2x16xf32>
  %l = memfmt.cross_entropy_loss %f, %t : (tensor<2x16xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An op of another dialect on the path is reported by name as well.
func.func @foreign_op(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "w" : tensor<2x5xf32>
  // expected-error @+1 {{'arith.mulf' op lies on a path from a trainable weight to the loss but has no vector-Jacobian product}}
  %y = arith.mulf %x, %w : tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Control flow is not differentiated: the body must be one block.
// expected-error @+1 {{memfmt-differentiate expects a body of one block}}
func.func @two_blocks(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  "test.br"() [^bb1] : () -> ()
^bb1:
  %l = memfmt.cross_entropy_loss %x, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The loss is what func.return returns.
// expected-error @+1 {{memfmt-differentiate expects the body to end in func.return}}
func.func @no_return(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %l = memfmt.cross_entropy_loss %x, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  "test.return"(%l) : (tensor<f32>) -> ()
}
