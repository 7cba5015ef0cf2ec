// RUN: memfmt-opt %s --memfmt-convert-precision="precision=bf16" | FileCheck %s
// RUN: memfmt-opt %s --memfmt-convert-precision="precision=bf16" --memfmt-convert-precision="precision=bf16" | FileCheck %s

// A training step in mixed precision (memfmt-compile --train --precision
// bf16), as automatic mixed precision computes it: the activations and
// their gradients are bf16; the model state the step assigns (the master
// weights, momentum buffers and running statistics) stays f32 and each
// weight a bf16 op reads is rounded once, shared by the forward op and its
// gradient; what the ops declare f32 (MixedPrecisionOpInterface: batch-norm
// parameters and statistics, weight gradients, the loss, the SGD update)
// stays f32; the logits are widened once for the loss and its gradient,
// whose f32 result is rounded once for the linear layer's gradient; the
// loss gradient's seed (a constant) keeps its type. Running the pass twice
// changes nothing.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:.+]]: tensor<2x3x8x8xf32>, %[[T:.+]]: tensor<2xi64>) -> tensor<f32>
// CHECK: %[[XB:.+]] = memfmt.to %[[X]] {dtype = bf16} : tensor<2x3x8x8xf32>
// CHECK: %[[CW:.+]] = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[CWB:.+]] = memfmt.to %[[CW]] {dtype = bf16} : tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[CWM:.+]] = memfmt.weight "conv1.weight.momentum_buffer" {zero_init} : tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[BW:.+]] = memfmt.weight "bn1.weight" : tensor<4xf32>
// CHECK-NOT: memfmt.to
// CHECK: %[[FW:.+]] = memfmt.weight "fc.weight" : tensor<3x4xf32>
// CHECK-NEXT: %[[FWB:.+]] = memfmt.to %[[FW]] {dtype = bf16} : tensor<3x4xf32>
// CHECK: %[[FB:.+]] = memfmt.weight "fc.bias" : tensor<3xf32>
// CHECK-NEXT: %[[FBB:.+]] = memfmt.to %[[FB]] {dtype = bf16} : tensor<3xf32>
// CHECK: %[[Y:.+]] = memfmt.conv2d %[[XB]], %[[CWB]] {{.*}} -> tensor<2x4x8x8xbf16>
// CHECK: %[[N:.+]], %[[MEAN:.+]], %[[INVSTD:.+]], %[[RM:.+]], %[[RV:.+]] = memfmt.native_batch_norm %[[Y]], %[[BW]], {{.*}} : (tensor<2x4x8x8xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: memfmt.relu %[[N]] : tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xbf16>
// CHECK: memfmt.max_pool2d_with_indices {{.*}} -> tensor<2x4x4x4xbf16>, tensor<2x4x4x4xi64>
// CHECK: %[[L:.+]] = memfmt.linear %{{.+}}, %[[FWB]], %[[FBB]] : (tensor<2x4xbf16>, tensor<3x4xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[LF:.+]] = memfmt.to %[[L]] {dtype = f32} : tensor<2x3xbf16>
// CHECK-NEXT: %[[LOSS:.+]] = memfmt.cross_entropy_loss %[[LF]], %[[T]] : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GL:.+]] = memfmt.cross_entropy_loss_backward %[[ONE]], %[[LF]], %[[T]] : (tensor<f32>, tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[GLB:.+]] = memfmt.to %[[GL]] {dtype = bf16} : tensor<2x3xf32>
// CHECK-NEXT: %{{.+}}, %[[GFW:.+]], %[[GFB:.+]] = memfmt.linear_backward %{{.+}}, %[[GLB]], %[[FWB]] {{.*}} -> (tensor<2x4xbf16>, tensor<3x4xf32>, tensor<3xf32>)
// CHECK: memfmt.threshold_backward {{.*}} : (tensor<2x4x8x8xbf16>, tensor<2x4x8x8xbf16>) -> tensor<2x4x8x8xbf16>
// CHECK: %{{.+}}, %[[GBW:.+]], %[[GBB:.+]] = memfmt.native_batch_norm_backward %{{.+}}, %[[Y]], %[[BW]], %[[MEAN]], %[[INVSTD]] {{.*}} -> (tensor<2x4x8x8xbf16>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %{{.+}}, %[[GCW:.+]], %{{.+}} = memfmt.convolution_backward %{{.+}}, %[[XB]], %[[CWB]] {{.*}} -> (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xf32>, tensor<4xf32>)
// CHECK: %[[CW1:.+]], %[[CWM1:.+]] = memfmt.sgd_update %[[CW]], %[[GCW]], %[[CWM]] {{.*}} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
// CHECK: memfmt.sgd_update %[[BW]], %[[GBW]]
// CHECK: memfmt.sgd_update %{{.+}}, %[[GBB]]
// CHECK: memfmt.sgd_update %[[FW]], %[[GFW]]
// CHECK: memfmt.sgd_update %[[FB]], %[[GFB]]
// CHECK: memfmt.assign_weight "bn1.running_mean", %[[RM]] : tensor<4xf32>
// CHECK: memfmt.assign_weight "conv1.weight", %[[CW1]] : tensor<4x3x3x3xf32>
// CHECK: return %[[LOSS]] : tensor<f32>
func.func @step(%x: tensor<2x3x8x8xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %cw = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32>
  %cwm = memfmt.weight "conv1.weight.momentum_buffer" {zero_init} : tensor<4x3x3x3xf32>
  %bw = memfmt.weight "bn1.weight" : tensor<4xf32>
  %bwm = memfmt.weight "bn1.weight.momentum_buffer" {zero_init} : tensor<4xf32>
  %bb = memfmt.weight "bn1.bias" : tensor<4xf32>
  %bbm = memfmt.weight "bn1.bias.momentum_buffer" {zero_init} : tensor<4xf32>
  %rm = memfmt.weight "bn1.running_mean" : tensor<4xf32>
  %rv = memfmt.weight "bn1.running_var" : tensor<4xf32>
  %fw = memfmt.weight "fc.weight" : tensor<3x4xf32>
  %fwm = memfmt.weight "fc.weight.momentum_buffer" {zero_init} : tensor<3x4xf32>
  %fb = memfmt.weight "fc.bias" : tensor<3xf32>
  %fbm = memfmt.weight "fc.bias.momentum_buffer" {zero_init} : tensor<3xf32>
  %y = memfmt.conv2d %x, %cw {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %n, %mean, %invstd, %rm1, %rv1 = memfmt.native_batch_norm %y, %bw, %bb, %rm, %rv {eps = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %r = memfmt.relu %n : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p, %i = memfmt.max_pool2d_with_indices %r {kernel_size = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
  %a = memfmt.adaptive_avg_pool2d %p {output_size = array<i64: 1, 1>} : tensor<2x4x4x4xf32> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %l = memfmt.linear %f, %fw, %fb : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %loss = memfmt.cross_entropy_loss %l, %t : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %gl = memfmt.cross_entropy_loss_backward %one, %l, %t : (tensor<f32>, tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %gf, %gfw, %gfb = memfmt.linear_backward %f, %gl, %fw {output_mask = array<i1: true, true, true>} : (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>)
  %ga = memfmt.reshape %gf : tensor<2x4xf32> -> tensor<2x4x1x1xf32>
  %gp = memfmt.adaptive_avg_pool2d_backward %ga, %p : (tensor<2x4x1x1xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %gr = memfmt.max_pool2d_with_indices_backward %gp, %r, %i {kernel_size = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x4x4xi64>) -> tensor<2x4x8x8xf32>
  %gn = memfmt.threshold_backward %gr, %r {threshold = 0.0 : f64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %gy, %gbw, %gbb = memfmt.native_batch_norm_backward %gn, %y, %bw, %mean, %invstd {output_mask = array<i1: true, true, true>} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %gx, %gcw, %gcb = memfmt.convolution_backward %gy, %x, %cw {padding = array<i64: 1, 1>, output_mask = array<i1: false, true, false>} : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  %cw1, %cwm1 = memfmt.sgd_update %cw, %gcw, %cwm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
  %bw1, %bwm1 = memfmt.sgd_update %bw, %gbw, %bwm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %bb1, %bbm1 = memfmt.sgd_update %bb, %gbb, %bbm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %fw1, %fwm1 = memfmt.sgd_update %fw, %gfw, %fwm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  %fb1, %fbm1 = memfmt.sgd_update %fb, %gfb, %fbm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  memfmt.assign_weight "bn1.running_mean", %rm1 : tensor<4xf32>
  memfmt.assign_weight "bn1.running_var", %rv1 : tensor<4xf32>
  memfmt.assign_weight "conv1.weight", %cw1 : tensor<4x3x3x3xf32>
  memfmt.assign_weight "conv1.weight.momentum_buffer", %cwm1 : tensor<4x3x3x3xf32>
  memfmt.assign_weight "bn1.weight", %bw1 : tensor<4xf32>
  memfmt.assign_weight "bn1.weight.momentum_buffer", %bwm1 : tensor<4xf32>
  memfmt.assign_weight "bn1.bias", %bb1 : tensor<4xf32>
  memfmt.assign_weight "bn1.bias.momentum_buffer", %bbm1 : tensor<4xf32>
  memfmt.assign_weight "fc.weight", %fw1 : tensor<3x4xf32>
  memfmt.assign_weight "fc.weight.momentum_buffer", %fwm1 : tensor<3x4xf32>
  memfmt.assign_weight "fc.bias", %fb1 : tensor<3xf32>
  memfmt.assign_weight "fc.bias.momentum_buffer", %fbm1 : tensor<3xf32>
  return %loss : tensor<f32>
}
