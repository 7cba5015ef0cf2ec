// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last="outputs=channels-last" --memfmt-verify-layouts | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last="weights=keep" --memfmt-verify-layouts | FileCheck %s --check-prefix=KEEPW
// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last="inputs=keep weights=keep" --memfmt-verify-layouts | FileCheck %s --check-prefix=NCHW
// RUN: memfmt-opt %s -split-input-file --memfmt-channels-last="outputs=channels-last" --memfmt-verify-layouts | FileCheck %s --check-prefix=PIPE
// RUN: memfmt-opt %s -split-input-file --memfmt-channels-last="inputs=keep weights=keep" --memfmt-verify-layouts | FileCheck %s --check-prefix=NCHW

// memfmt-propagate-channels-last over a hand-written training step (conv ->
// training batch norm -> relu -> residual add -> max pool -> adaptive pool ->
// flatten -> linear -> loss, the backward ops in reverse, sgd_update), read
// through the training ops' declarations only. L9: every gradient has its
// primal's format; a weight's gradient has the weight's. The backward adds
// no conversion: the pipeline leaves exactly the forward's one (the input's).

// Channels-last activations and weights: every 4-D gradient is channels-last,
// the residual's gradients are summed channels-last, and the pipeline keeps
// only the input's conversion.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[X:.+]] = memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// CHECK: memfmt.native_batch_norm {{.*}} -> (tensor<2x4x7x7xf32, #memfmt.strides<[196, 1, 28, 4]>>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: memfmt.cross_entropy_loss_backward {{.*}} -> tensor<2x5xf32>
// CHECK: memfmt.linear_backward {{.*}} -> (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>)
// CHECK: memfmt.adaptive_avg_pool2d_backward {{.*}} -> tensor<2x4x4x4xf32, #memfmt.strides<[64, 1, 16, 4]>>
// CHECK: memfmt.max_pool2d_with_indices_backward {{.*}} -> tensor<2x4x7x7xf32, #memfmt.strides<[196, 1, 28, 4]>>
// CHECK: memfmt.threshold_backward {{.*}} -> tensor<2x4x7x7xf32, #memfmt.strides<[196, 1, 28, 4]>>
// CHECK: memfmt.native_batch_norm_backward {{.*}} -> (tensor<2x4x7x7xf32, #memfmt.strides<[196, 1, 28, 4]>>, tensor<4xf32>, tensor<4xf32>)
// CHECK: memfmt.add {{.*}} -> tensor<2x4x7x7xf32, #memfmt.strides<[196, 1, 28, 4]>>
// CHECK: memfmt.convolution_backward %{{.+}}, %[[X]], {{.*}} -> (tensor<2x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4xf32>)
// CHECK: memfmt.sgd_update {{.*}} -> (tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>)
// CHECK: memfmt.sgd_update {{.*}} -> (tensor<5x4xf32>, tensor<5x4xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return
// Channels-last activations, NCHW weights (weights=keep): grad_weight and the
// SGD state stay NCHW (L9), so the input's conversion is the only one.
// KEEPW-LABEL: func.func @train_step(
// KEEPW: memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// KEEPW-NOT: memfmt.contiguous
// KEEPW: memfmt.threshold_backward {{.*}} -> tensor<2x4x7x7xf32, #memfmt.strides<[196, 1, 28, 4]>>
// KEEPW: memfmt.convolution_backward {{.*}} -> (tensor<2x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>, tensor<4x3x3x3xf32>, tensor<4xf32>)
// KEEPW-NOT: memfmt.contiguous
// KEEPW: memfmt.sgd_update {{.*}} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
// KEEPW-NOT: memfmt.contiguous
// KEEPW: return
// With inputs=keep weights=keep (NCHW prefix) nothing becomes channels-last
// and no conversion appears.
// NCHW-LABEL: func.func @train_step(
// NCHW-NOT: memfmt.contiguous
// NCHW-NOT: #memfmt.strides
// NCHW: return
// The pipeline folds the parameter re-lays into the parameters: one
// conversion, the input's, as in the forward.
// PIPE-LABEL: func.func @train_step(
// PIPE: memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// PIPE-NOT: memfmt.contiguous
// PIPE: memfmt.convolution_backward {{.*}} -> (tensor<2x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4xf32>)
// PIPE-NOT: memfmt.contiguous
// PIPE: return
func.func @train_step(%x: tensor<2x3x7x7xf32>, %t: tensor<2xi64>) -> (tensor<f32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) {
  %w = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32>
  %wbuf = memfmt.weight "momentum_buffer.conv1.weight" : tensor<4x3x3x3xf32>
  %g = memfmt.weight "bn1.weight" : tensor<4xf32>
  %b = memfmt.weight "bn1.bias" : tensor<4xf32>
  %rm = memfmt.weight "bn1.running_mean" : tensor<4xf32>
  %rv = memfmt.weight "bn1.running_var" : tensor<4xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %fb = memfmt.weight "fc.bias" : tensor<5xf32>
  %fbuf = memfmt.weight "momentum_buffer.fc.weight" : tensor<5x4xf32>
  %c = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x7x7xf32>
  %bn, %mean, %invstd, %rm1, %rv1 = memfmt.native_batch_norm %c, %g, %b, %rm, %rv : (tensor<2x4x7x7xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x7x7xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %r = memfmt.relu %bn : tensor<2x4x7x7xf32> -> tensor<2x4x7x7xf32>
  %s = memfmt.add %r, %c : tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32> -> tensor<2x4x7x7xf32>
  %p, %idx = memfmt.max_pool2d_with_indices %s {kernel_size = array<i64: 2, 2>, ceil_mode = true} : tensor<2x4x7x7xf32> -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
  %a = memfmt.adaptive_avg_pool2d %p {output_size = array<i64: 1, 1>} : tensor<2x4x4x4xf32> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %logits = memfmt.linear %f, %fw, %fb : (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %loss = memfmt.cross_entropy_loss %logits, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %glogits = memfmt.cross_entropy_loss_backward %one, %logits, %t : (tensor<f32>, tensor<2x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  %gf, %gfw, %gfb = memfmt.linear_backward %f, %glogits, %fw {output_mask = array<i1: true, true, true>} : (tensor<2x4xf32>, tensor<2x5xf32>, tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>)
  %ga = memfmt.reshape %gf : tensor<2x4xf32> -> tensor<2x4x1x1xf32>
  %gp = memfmt.adaptive_avg_pool2d_backward %ga, %p : (tensor<2x4x1x1xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %gs = memfmt.max_pool2d_with_indices_backward %gp, %s, %idx {kernel_size = array<i64: 2, 2>, ceil_mode = true} : (tensor<2x4x4x4xf32>, tensor<2x4x7x7xf32>, tensor<2x4x4x4xi64>) -> tensor<2x4x7x7xf32>
  %gbn = memfmt.threshold_backward %gs, %r : (tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32>
  %gc1, %gg, %gb = memfmt.native_batch_norm_backward %gbn, %c, %g, %mean, %invstd {output_mask = array<i1: true, true, true>} : (tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x7x7xf32>, tensor<4xf32>, tensor<4xf32>)
  %gc = memfmt.add %gc1, %gs : tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32> -> tensor<2x4x7x7xf32>
  %gx, %gw, %gcb = memfmt.convolution_backward %gc, %x, %w {padding = array<i64: 1, 1>, output_mask = array<i1: false, true, false>} : (tensor<2x4x7x7xf32>, tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  %w1, %wbuf1 = memfmt.sgd_update %w, %gw, %wbuf {lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 1.0e-4 : f64} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
  %fw1, %fbuf1 = memfmt.sgd_update %fw, %gfw, %fbuf {lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 1.0e-4 : f64} : (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>)
  return %loss, %w1, %wbuf1, %rm1, %rv1, %fw1, %fbuf1 : tensor<f32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5x4xf32>, tensor<5x4xf32>
}

// -----

// Edge shapes: N=1, one input channel (the input and the first weight are
// in both formats, L3), a grouped 1x1 convolution, H=W=1 after pooling.
// CHECK-LABEL: func.func @train_step_edges(
// CHECK: memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// CHECK: memfmt.avg_pool2d_backward {{.*}} -> tensor<1x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>>
// CHECK: memfmt.convolution_backward {{.*}}groups = 2 : i64{{.*}} -> (tensor<1x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>>, tensor<2x1x1x1xf32>, tensor<2xf32>)
// CHECK: memfmt.convolution_backward {{.*}} -> (tensor<1x1x5x5xf32, #memfmt.strides<[25, 1, 5, 1]>>, tensor<2x1x3x3xf32, #memfmt.strides<[9, 1, 3, 1]>>, tensor<2xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return
// KEEPW-LABEL: func.func @train_step_edges(
// KEEPW: memfmt.contiguous %arg0
// KEEPW-NOT: memfmt.contiguous
// KEEPW: memfmt.sgd_update {{.*}} -> (tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>)
// KEEPW-NOT: memfmt.contiguous
// KEEPW: return
// NCHW-LABEL: func.func @train_step_edges(
// NCHW-NOT: memfmt.contiguous
// NCHW-NOT: #memfmt.strides
// NCHW: return
// PIPE-LABEL: func.func @train_step_edges(
// PIPE: memfmt.contiguous %arg0
// PIPE-NOT: memfmt.contiguous
// PIPE: return
func.func @train_step_edges(%x: tensor<1x1x5x5xf32>, %t: tensor<1xi64>) -> (tensor<f32>, tensor<2x1x3x3xf32>, tensor<2x1x1x1xf32>) {
  %w1 = memfmt.weight "conv1.weight" : tensor<2x1x3x3xf32>
  %w2 = memfmt.weight "conv2.weight" : tensor<2x1x1x1xf32>
  %c1 = memfmt.conv2d %x, %w1 {stride = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %c2 = memfmt.conv2d %c1, %w2 {groups = 2 : i64} : (tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a = memfmt.avg_pool2d %c2 {kernel_size = array<i64: 2, 2>} : tensor<1x2x2x2xf32> -> tensor<1x2x1x1xf32>
  %f = memfmt.reshape %a : tensor<1x2x1x1xf32> -> tensor<1x2xf32>
  %loss = memfmt.cross_entropy_loss %f, %t : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %gf = memfmt.cross_entropy_loss_backward %one, %f, %t : (tensor<f32>, tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  %ga = memfmt.reshape %gf : tensor<1x2xf32> -> tensor<1x2x1x1xf32>
  %gc2 = memfmt.avg_pool2d_backward %ga, %c2 {kernel_size = array<i64: 2, 2>} : (tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %gc1, %gw2, %gb2 = memfmt.convolution_backward %gc2, %c1, %w2 {groups = 2 : i64, output_mask = array<i1: true, true, false>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>)
  %gx, %gw1, %gb1 = memfmt.convolution_backward %gc1, %x, %w1 {stride = array<i64: 2, 2>, output_mask = array<i1: false, true, false>} : (tensor<1x2x2x2xf32>, tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>) -> (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>)
  %w1n, %b1n = memfmt.sgd_update %w1, %gw1, %w1 {lr = 0.1 : f64} : (tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) -> (tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>)
  %w2n, %b2n = memfmt.sgd_update %w2, %gw2, %w2 {lr = 0.1 : f64} : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>)
  return %loss, %w1n, %w2n : tensor<f32>, tensor<2x1x3x3xf32>, tensor<2x1x1x1xf32>
}
