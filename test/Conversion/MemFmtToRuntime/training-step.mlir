// RUN: memfmt-opt %s -split-input-file --memfmt-plan-memory | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-plan-memory | memfmt-opt - -split-input-file --convert-memfmt-to-runtime | FileCheck %s --check-prefix=LOWERED

// A hand-written training step (conv -> native_batch_norm -> relu ->
// max_pool2d_with_indices -> adaptive_avg_pool2d -> flatten -> linear ->
// cross_entropy_loss, its backward, SGD with momentum), NCHW. Every
// parameter, momentum buffer and running statistic is updated in its own
// weights-blob slot by the op that computes it (no copy); the loss
// gradient's seed is filled once at load; the input gradient of the
// convolution, masked off and unused, has no buffer.
// CHECK-LABEL: func.func @step
// CHECK: memfmt.weight "conv1.weight" {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 432>]}
// CHECK: memfmt.weight "conv1.weight.momentum_buffer" {memfmt.buffers = [#memfmt.buffer<weights, offset = 448, bytes = 432>], zero_init}
// CHECK: memfmt.weight "bn1.weight" {memfmt.buffers = [#memfmt.buffer<weights, offset = 896, bytes = 16>]}
// CHECK: memfmt.weight "bn1.running_mean" {memfmt.buffers = [#memfmt.buffer<weights, offset = 1152, bytes = 16>]}
// CHECK: memfmt.weight "bn1.running_var" {memfmt.buffers = [#memfmt.buffer<weights, offset = 1216, bytes = 16>]}
// CHECK: memfmt.weight "fc.weight" {memfmt.buffers = [#memfmt.buffer<weights, offset = 1280, bytes = 48>]}
// CHECK: memfmt.native_batch_norm {{.+}} {memfmt.buffers = [#memfmt.buffer<arena, {{.+}}>, #memfmt.buffer<arena, {{.+}}>, #memfmt.buffer<arena, {{.+}}>, #memfmt.buffer<weights, offset = 1152, bytes = 16>, #memfmt.buffer<weights, offset = 1216, bytes = 16>]}
// CHECK: %[[SEED:.+]] = arith.constant {memfmt.buffers = [#memfmt.buffer<weights, offset = 1536, bytes = 4>], memfmt.load_time} dense<1.000000e+00> : tensor<f32>
// CHECK: memfmt.cross_entropy_loss_backward %[[SEED]]
// CHECK: memfmt.convolution_backward {{.+}} {memfmt.buffers = [unit, #memfmt.buffer<arena, offset = {{[0-9]+}}, bytes = 432>, unit], output_mask = array<i1: false, true, false>
// CHECK: memfmt.sgd_update {{.+}} {lr = {{.+}}, memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 432>, #memfmt.buffer<weights, offset = 448, bytes = 432>]
// CHECK: memfmt.sgd_update {{.+}} {lr = {{.+}}, memfmt.buffers = [#memfmt.buffer<weights, offset = 896, bytes = 16>, #memfmt.buffer<weights, offset = 960, bytes = 16>]
// CHECK: memfmt.sgd_update {{.+}} {lr = {{.+}}, memfmt.buffers = [#memfmt.buffer<weights, offset = 1024, bytes = 16>, #memfmt.buffer<weights, offset = 1088, bytes = 16>]
// CHECK: memfmt.sgd_update {{.+}} {lr = {{.+}}, memfmt.buffers = [#memfmt.buffer<weights, offset = 1280, bytes = 48>, #memfmt.buffer<weights, offset = 1344, bytes = 48>]
// CHECK: memfmt.sgd_update {{.+}} {lr = {{.+}}, memfmt.buffers = [#memfmt.buffer<weights, offset = 1408, bytes = 12>, #memfmt.buffer<weights, offset = 1472, bytes = 12>]
// CHECK: memfmt.assign_weight "bn1.running_mean", %{{.+}} {memfmt.state_buffer = #memfmt.buffer<weights, offset = 1152, bytes = 16>}
// CHECK: memfmt.assign_weight "conv1.weight", %{{.+}} {memfmt.state_buffer = #memfmt.buffer<weights, offset = 0, bytes = 432>}
// The seed is filled in memfmt_prepare; the forward function calls each
// kernel once and copies nothing but the loss into the caller's output.
// LOWERED-LABEL: module attributes {memfmt.arena_bytes = {{[0-9]+}} : i64, memfmt.kernel_calls = 21 : i64
// LOWERED-LABEL: func.func @memfmt_prepare
// LOWERED: call @memfmt_fill_f32
// LOWERED-LABEL: func.func @memfmt_forward
// LOWERED-NOT: call @memfmt_fill_f32
// LOWERED: call @memfmt_native_batch_norm_f32
// LOWERED: call @memfmt_cross_entropy_loss_f32
// LOWERED: call @memfmt_cross_entropy_loss_backward_f32
// LOWERED: call @memfmt_linear_backward_f32
// LOWERED: call @memfmt_adaptive_avg_pool2d_backward_f32
// LOWERED: call @memfmt_max_pool2d_with_indices_backward_f32
// LOWERED: call @memfmt_threshold_backward_f32
// LOWERED: call @memfmt_native_batch_norm_backward_f32
// LOWERED: call @memfmt_convolution_backward_f32
// LOWERED-COUNT-5: call @memfmt_sgd_update_f32
// LOWERED-NOT: call @memfmt_copy_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED-NOT: call @memfmt_
// LOWERED: return
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

// -----

// The same step in channels-last (activations and the convolution weight,
// its gradient and momentum buffer): the same in-place updates.
// CHECK-LABEL: func.func @step
// CHECK: memfmt.native_batch_norm {{.+}} {memfmt.buffers = [#memfmt.buffer<arena, {{.+}}>, #memfmt.buffer<arena, {{.+}}>, #memfmt.buffer<arena, {{.+}}>, #memfmt.buffer<weights, offset = 1152, bytes = 16>, #memfmt.buffer<weights, offset = 1216, bytes = 16>]}
// CHECK: arith.constant {memfmt.buffers = [#memfmt.buffer<weights, offset = 1536, bytes = 4>], memfmt.load_time} dense<1.000000e+00> : tensor<f32>
// CHECK: memfmt.convolution_backward {{.+}} {memfmt.buffers = [unit, #memfmt.buffer<arena, offset = {{[0-9]+}}, bytes = 432>, unit], output_mask = array<i1: false, true, false>
// CHECK-SAME: -> (tensor<2x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4xf32>)
// CHECK: memfmt.sgd_update {{.+}} {lr = {{.+}}, memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 432>, #memfmt.buffer<weights, offset = 448, bytes = 432>]
// CHECK-SAME: tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
// LOWERED-LABEL: module attributes {memfmt.arena_bytes = {{[0-9]+}} : i64, memfmt.kernel_calls = 21 : i64
// LOWERED-LABEL: func.func @memfmt_forward
// LOWERED-COUNT-5: call @memfmt_sgd_update_f32
// LOWERED-NOT: call @memfmt_copy_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED-NOT: call @memfmt_
// LOWERED: return
#xcl = #memfmt.strides<[192, 1, 24, 3]>
#acl = #memfmt.strides<[256, 1, 32, 4]>
#pcl = #memfmt.strides<[64, 1, 16, 4]>
#wcl = #memfmt.strides<[27, 1, 9, 3]>
func.func @step(%x: tensor<2x3x8x8xf32, #xcl>, %t: tensor<2xi64>) -> tensor<f32> {
  %cw = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32, #wcl>
  %cwm = memfmt.weight "conv1.weight.momentum_buffer" {zero_init} : tensor<4x3x3x3xf32, #wcl>
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
  %y = memfmt.conv2d %x, %cw {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32, #xcl>, tensor<4x3x3x3xf32, #wcl>) -> tensor<2x4x8x8xf32, #acl>
  %n, %mean, %invstd, %rm1, %rv1 = memfmt.native_batch_norm %y, %bw, %bb, %rm, %rv {eps = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : (tensor<2x4x8x8xf32, #acl>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32, #acl>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %r = memfmt.relu %n : tensor<2x4x8x8xf32, #acl> -> tensor<2x4x8x8xf32, #acl>
  %p, %i = memfmt.max_pool2d_with_indices %r {kernel_size = array<i64: 2, 2>} : tensor<2x4x8x8xf32, #acl> -> tensor<2x4x4x4xf32, #pcl>, tensor<2x4x4x4xi64, #pcl>
  %a = memfmt.adaptive_avg_pool2d %p {output_size = array<i64: 1, 1>} : tensor<2x4x4x4xf32, #pcl> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %l = memfmt.linear %f, %fw, %fb : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %loss = memfmt.cross_entropy_loss %l, %t : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %gl = memfmt.cross_entropy_loss_backward %one, %l, %t : (tensor<f32>, tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %gf, %gfw, %gfb = memfmt.linear_backward %f, %gl, %fw {output_mask = array<i1: true, true, true>} : (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>)
  %ga = memfmt.reshape %gf : tensor<2x4xf32> -> tensor<2x4x1x1xf32>
  %gp = memfmt.adaptive_avg_pool2d_backward %ga, %p : (tensor<2x4x1x1xf32>, tensor<2x4x4x4xf32, #pcl>) -> tensor<2x4x4x4xf32, #pcl>
  %gr = memfmt.max_pool2d_with_indices_backward %gp, %r, %i {kernel_size = array<i64: 2, 2>} : (tensor<2x4x4x4xf32, #pcl>, tensor<2x4x8x8xf32, #acl>, tensor<2x4x4x4xi64, #pcl>) -> tensor<2x4x8x8xf32, #acl>
  %gn = memfmt.threshold_backward %gr, %r {threshold = 0.0 : f64} : (tensor<2x4x8x8xf32, #acl>, tensor<2x4x8x8xf32, #acl>) -> tensor<2x4x8x8xf32, #acl>
  %gy, %gbw, %gbb = memfmt.native_batch_norm_backward %gn, %y, %bw, %mean, %invstd {output_mask = array<i1: true, true, true>} : (tensor<2x4x8x8xf32, #acl>, tensor<2x4x8x8xf32, #acl>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32, #acl>, tensor<4xf32>, tensor<4xf32>)
  %gx, %gcw, %gcb = memfmt.convolution_backward %gy, %x, %cw {padding = array<i64: 1, 1>, output_mask = array<i1: false, true, false>} : (tensor<2x4x8x8xf32, #acl>, tensor<2x3x8x8xf32, #xcl>, tensor<4x3x3x3xf32, #wcl>) -> (tensor<2x3x8x8xf32, #xcl>, tensor<4x3x3x3xf32, #wcl>, tensor<4xf32>)
  %cw1, %cwm1 = memfmt.sgd_update %cw, %gcw, %cwm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<4x3x3x3xf32, #wcl>, tensor<4x3x3x3xf32, #wcl>, tensor<4x3x3x3xf32, #wcl>) -> (tensor<4x3x3x3xf32, #wcl>, tensor<4x3x3x3xf32, #wcl>)
  %bw1, %bwm1 = memfmt.sgd_update %bw, %gbw, %bwm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %bb1, %bbm1 = memfmt.sgd_update %bb, %gbb, %bbm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %fw1, %fwm1 = memfmt.sgd_update %fw, %gfw, %fwm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  %fb1, %fbm1 = memfmt.sgd_update %fb, %gfb, %fbm {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-04 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  memfmt.assign_weight "bn1.running_mean", %rm1 : tensor<4xf32>
  memfmt.assign_weight "bn1.running_var", %rv1 : tensor<4xf32>
  memfmt.assign_weight "conv1.weight", %cw1 : tensor<4x3x3x3xf32, #wcl>
  memfmt.assign_weight "conv1.weight.momentum_buffer", %cwm1 : tensor<4x3x3x3xf32, #wcl>
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
