// RUN: memfmt-opt %s --memfmt-differentiate="loss-scale=1024" --memfmt-apply-sgd="loss-scale-growth-interval=3" | FileCheck %s
// RUN: memfmt-opt %s --memfmt-differentiate="loss-scale=1024" --memfmt-apply-sgd | memfmt-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: memfmt-opt %s --memfmt-differentiate="loss-scale=1024" --memfmt-apply-sgd --convert-memfmt-to-runtime | FileCheck %s --check-prefix=LOWER
// RUN: not memfmt-opt %s --memfmt-differentiate="loss-scale=-1" 2>&1 | FileCheck %s --check-prefix=BAD-SCALE
// RUN: not memfmt-opt %s --memfmt-differentiate="loss-scale=1024" --memfmt-apply-sgd="loss-scale-backoff-factor=1" 2>&1 | FileCheck %s --check-prefix=BAD-BACKOFF

// Dynamic loss scaling (GradScaler): memfmt-differentiate seeds the sweep
// with the scale (memfmt.loss_scale of the model state grad_scaler.scale,
// 1024 until the scaler sets it) instead of 1, and memfmt-apply-sgd
// averages and unscales every gradient, chaining the non-finite flag
// through all of them, before the first update; each update and the scale's
// update read the flag, and both scaler states are assigned back.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: -> tensor<f32> {
// CHECK: %[[STATE:.+]] = memfmt.weight "grad_scaler.scale" {zero_init} : tensor<f32>
// CHECK-NEXT: %[[SCALE:.+]] = memfmt.loss_scale %[[STATE]] {init_scale = 1.024000e+03 : f64} : tensor<f32>
// CHECK-NEXT: memfmt.cross_entropy_loss_backward %[[SCALE]],
// CHECK: %[[GW:.+]] = memfmt.all_reduce %{{.+}} {reduce_op = "avg"} : tensor<5x4xf32>
// CHECK-NEXT: %[[UW:.+]], %[[INF1:.+]] = memfmt.unscale_gradient %[[GW]], %[[SCALE]] : (tensor<5x4xf32>, tensor<f32>) -> (tensor<5x4xf32>, tensor<f32>)
// CHECK-NEXT: %[[GB:.+]] = memfmt.all_reduce %{{.+}} {reduce_op = "avg"} : tensor<5xf32>
// CHECK-NEXT: %[[UB:.+]], %[[INF2:.+]] = memfmt.unscale_gradient %[[GB]], %[[SCALE]] found_inf %[[INF1]] : (tensor<5xf32>, tensor<f32>, tensor<f32>) -> (tensor<5xf32>, tensor<f32>)
// CHECK: memfmt.sgd_update %{{.+}}, %[[UW]], %{{.+}} found_inf %[[INF2]] {
// CHECK: memfmt.sgd_update %{{.+}}, %[[UB]], %{{.+}} found_inf %[[INF2]] {
// CHECK: %[[TRACKER:.+]] = memfmt.weight "grad_scaler.growth_tracker" {zero_init} : tensor<i64>
// CHECK-NEXT: %[[NEXT:.+]], %[[NEXTT:.+]] = memfmt.update_loss_scale %[[SCALE]], %[[TRACKER]], %[[INF2]] {growth_interval = 3 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
// CHECK-NEXT: memfmt.assign_weight "grad_scaler.scale", %[[NEXT]] : tensor<f32>
// CHECK-NEXT: memfmt.assign_weight "grad_scaler.growth_tracker", %[[NEXTT]] : tensor<i64>
// CHECK-NEXT: return %{{.+}} : tensor<f32>

// ROUNDTRIP-LABEL: func.func @step(
// ROUNDTRIP: memfmt.loss_scale
// ROUNDTRIP: memfmt.unscale_gradient
// ROUNDTRIP: memfmt.update_loss_scale

// Each op is one runtime call; the two updates read the flag
// (has_found_inf = 1, the last argument).
// LOWER-LABEL: func.func @memfmt_forward
// LOWER: call @memfmt_loss_scale_f32(
// LOWER: call @memfmt_unscale_gradient_f32({{.+}}, %c0_i64{{[_0-9]*}})
// LOWER: call @memfmt_unscale_gradient_f32({{.+}}, %c1_i64{{[_0-9]*}})
// LOWER: call @memfmt_sgd_update_f32({{.+}}, %c1_i64{{[_0-9]*}})
// LOWER: call @memfmt_sgd_update_f32({{.+}}, %c1_i64{{[_0-9]*}})
// LOWER: call @memfmt_update_loss_scale_f32(

// BAD-SCALE: error: 'func.func' op memfmt-differentiate: loss-scale=-1 must be 0 (none) or a positive f32 value
// BAD-BACKOFF: error: memfmt-apply-sgd: loss-scale-backoff-factor=1 must lie in (0, 1) (GradScaler checks < 1)
func.func @step(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  %y = memfmt.linear %x, %w, %b
      : (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
