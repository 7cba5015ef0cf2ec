// RUN: memfmt-opt %s -split-input-file --memfmt-differentiate | FileCheck %s

// memfmt-differentiate builds the reverse sweep of a loss from the ops'
// VJPs: the function returns the loss, then one gradient per trainable
// weight marked with the weight's name; gradients nothing needs (the
// input's) are never computed.

// Linear + loss: the seed, the loss's backward, linear_backward with
// grad_input masked off (the input is no weight), and the two gradients.
// CHECK-LABEL: func.func @linear_loss(
// CHECK-SAME: -> (tensor<f32>, tensor<5x4xf32> {memfmt.gradient_of = "fc.weight"}, tensor<5xf32> {memfmt.gradient_of = "fc.bias"})
// CHECK: %[[W:.+]] = memfmt.weight "fc.weight"
// CHECK: %[[Y:.+]] = memfmt.linear
// CHECK: %[[L:.+]] = memfmt.cross_entropy_loss %[[Y]], %arg1
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[GY:.+]] = memfmt.cross_entropy_loss_backward %[[ONE]], %[[Y]], %arg1
// CHECK: %{{.+}}, %[[GW:.+]], %[[GB:.+]] = memfmt.linear_backward %arg0, %[[GY]], %[[W]] {output_mask = array<i1: false, true, true>}
// CHECK: return %[[L]], %[[GW]], %[[GB]]
func.func @linear_loss(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  %y = memfmt.linear %x, %w, %b : (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
