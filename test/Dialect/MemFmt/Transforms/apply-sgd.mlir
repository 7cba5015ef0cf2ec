// RUN: memfmt-opt %s -split-input-file --memfmt-apply-sgd | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-apply-sgd="lr=0.5 momentum=0 weight-decay=0" | FileCheck %s --check-prefix=PLAIN
// RUN: memfmt-opt %s -split-input-file --memfmt-apply-sgd="momentum=0.8 nesterov=true" | FileCheck %s --check-prefix=NESTEROV
// RUN: memfmt-opt %s -split-input-file --memfmt-apply-sgd="dampening=0.25" | FileCheck %s --check-prefix=DAMPENING

// memfmt-apply-sgd replaces the gradient results memfmt-differentiate
// marks with memfmt.gradient_of by SGD updates of the parameters, at the end
// of the function, after every read of the parameters.

// Defaults (torchvision's recipe: lr 0.1, momentum 0.9, weight decay 1e-4):
// the gradient averaged over the data-parallel replicas, a zero-initialised
// momentum buffer per parameter, sgd_update of the average, and the new
// parameter and buffer assigned; the loss stays the only result.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: -> tensor<f32> {
// CHECK: %[[W:.+]] = memfmt.weight "fc.weight" : tensor<5x4xf32>
// CHECK: %[[B:.+]] = memfmt.weight "fc.bias" : tensor<5xf32>
// CHECK: %[[GI:.+]], %[[GW:.+]], %[[GB:.+]] = memfmt.linear_backward
// CHECK: %[[GWM:.+]] = memfmt.all_reduce %[[GW]] {reduce_op = "avg"} : tensor<5x4xf32>
// CHECK-NEXT: %[[GBM:.+]] = memfmt.all_reduce %[[GB]] {reduce_op = "avg"} : tensor<5xf32>
// CHECK: %[[WBUF:.+]] = memfmt.weight "fc.weight.momentum_buffer" {zero_init} : tensor<5x4xf32>
// CHECK: %[[W1:.+]], %[[WBUF1:.+]] = memfmt.sgd_update %[[W]], %[[GWM]], %[[WBUF]] {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-04 : f64} : (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>)
// CHECK: memfmt.assign_weight "fc.weight", %[[W1]] : tensor<5x4xf32>
// CHECK: memfmt.assign_weight "fc.weight.momentum_buffer", %[[WBUF1]] : tensor<5x4xf32>
// CHECK: %[[BBUF:.+]] = memfmt.weight "fc.bias.momentum_buffer" {zero_init} : tensor<5xf32>
// CHECK: %[[B1:.+]], %[[BBUF1:.+]] = memfmt.sgd_update %[[B]], %[[GBM]], %[[BBUF]]
// CHECK: memfmt.assign_weight "fc.bias", %[[B1]] : tensor<5xf32>
// CHECK: memfmt.assign_weight "fc.bias.momentum_buffer", %[[BBUF1]] : tensor<5xf32>
// CHECK-NEXT: return %{{.+}} : tensor<f32>
// Without momentum there is no buffer: the gradient stands in for it and
// nothing assigns a buffer.
// PLAIN-LABEL: func.func @step(
// PLAIN-NOT: .momentum_buffer"
// PLAIN: %[[GW:.+]] = memfmt.all_reduce
// PLAIN: %[[W1:.+]], %{{.+}} = memfmt.sgd_update %[[W:.+]], %[[GW]], %[[GW]] {lr = 5.000000e-01 : f64}
// PLAIN-NEXT: memfmt.assign_weight "fc.weight", %[[W1]]
// PLAIN-NOT: .momentum_buffer"
// PLAIN: return
// NESTEROV-LABEL: func.func @step(
// NESTEROV: memfmt.sgd_update {{.*}}momentum = 8.000000e-01 : f64, nesterov = true
// NESTEROV-NOT: optimizer.step
// Dampening with momentum: torch's first step sets the buffer to the
// undamped gradient, so every update reads the step count (model state,
// zero at first) and, after the last update, the count goes up by one.
// DAMPENING-LABEL: func.func @step(
// DAMPENING: %[[STEP:.+]] = memfmt.weight "optimizer.step" {zero_init} : tensor<i64>
// DAMPENING: memfmt.sgd_update %{{.+}}, %{{.+}}, %{{.+}} step %[[STEP]] {dampening = 2.500000e-01 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-04 : f64} : (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>, tensor<i64>)
// DAMPENING: memfmt.sgd_update %{{.+}}, %{{.+}}, %{{.+}} step %[[STEP]] {dampening
// DAMPENING: memfmt.assign_weight "fc.bias.momentum_buffer"
// DAMPENING-NEXT: %[[NEXT:.+]] = memfmt.increment %[[STEP]] : tensor<i64>
// DAMPENING-NEXT: memfmt.assign_weight "optimizer.step", %[[NEXT]] : tensor<i64>
// DAMPENING-NEXT: return %{{.+}} : tensor<f32>
func.func @step(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> (tensor<f32>, tensor<5x4xf32> {memfmt.gradient_of = "fc.weight"}, tensor<5xf32> {memfmt.gradient_of = "fc.bias"}) {
  %w = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  %y = memfmt.linear %x, %w, %b
      : (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %gy = memfmt.cross_entropy_loss_backward %one, %y, %t
      : (tensor<f32>, tensor<2x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  %gi, %gw, %gb = memfmt.linear_backward %x, %gy, %w
      {output_mask = array<i1: false, true, true>}
      : (tensor<2x4xf32>, tensor<2x5xf32>, tensor<5x4xf32>)
      -> (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>)
  return %l, %gw, %gb : tensor<f32>, tensor<5x4xf32>, tensor<5xf32>
}

// -----

// A function without gradient results is left as it is.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: memfmt.sgd_update
// CHECK: return
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
