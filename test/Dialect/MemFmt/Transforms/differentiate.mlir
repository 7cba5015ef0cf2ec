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

// -----

// A ResNet stem and head: conv -> training batch norm -> relu -> max pool
// (with indices) -> avg pool -> adaptive pool -> flatten -> linear -> loss.
// Every backward op in reverse order; the batch norm's backward reads the
// saved statistics; the running statistics are no trainable weights (their
// assignments stay, they get no gradient); the stem's grad_input is masked
// off and nothing else computes the input's gradient.
// CHECK-LABEL: func.func @stem_and_head(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x8x8xf32>
// CHECK-SAME: -> (tensor<f32>, tensor<4x3x3x3xf32> {memfmt.gradient_of = "conv1.weight"}, tensor<4xf32> {memfmt.gradient_of = "bn1.weight"}, tensor<4xf32> {memfmt.gradient_of = "bn1.bias"}, tensor<5x4xf32> {memfmt.gradient_of = "fc.weight"}, tensor<5xf32> {memfmt.gradient_of = "fc.bias"})
// CHECK: %[[W:.+]] = memfmt.weight "conv1.weight"
// CHECK: %[[G:.+]] = memfmt.weight "bn1.weight"
// CHECK: %[[C:.+]] = memfmt.conv2d %[[X]], %[[W]]
// CHECK: %[[BN:.+]], %[[MEAN:.+]], %[[INVSTD:.+]], %{{.+}}, %{{.+}} = memfmt.native_batch_norm %[[C]], %[[G]]
// CHECK: memfmt.assign_weight "bn1.running_mean"
// CHECK: memfmt.assign_weight "bn1.running_var"
// CHECK: %[[R:.+]] = memfmt.relu %[[BN]]
// CHECK: %[[P:.+]], %[[IDX:.+]] = memfmt.max_pool2d_with_indices %[[R]]
// CHECK: %[[AP:.+]] = memfmt.avg_pool2d %[[P]]
// CHECK: %[[A:.+]] = memfmt.adaptive_avg_pool2d %[[AP]]
// CHECK: %[[F:.+]] = memfmt.flatten %[[A]]
// CHECK: %[[LOGITS:.+]] = memfmt.linear %[[F]]
// CHECK: %[[LOSS:.+]] = memfmt.cross_entropy_loss %[[LOGITS]]
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[GLOGITS:.+]] = memfmt.cross_entropy_loss_backward %[[ONE]], %[[LOGITS]]
// CHECK: %[[GF:.+]], %[[GFW:.+]], %[[GFB:.+]] = memfmt.linear_backward %[[F]], %[[GLOGITS]], %{{.+}} {output_mask = array<i1: true, true, true>}
// CHECK: %[[GA:.+]] = memfmt.reshape %[[GF]] : tensor<2x4xf32> -> tensor<2x4x1x1xf32>
// CHECK: %[[GAP:.+]] = memfmt.adaptive_avg_pool2d_backward %[[GA]], %[[AP]]
// CHECK: %[[GP:.+]] = memfmt.avg_pool2d_backward %[[GAP]], %[[P]] {kernel_size = array<i64: 2, 2>}
// CHECK: %[[GR:.+]] = memfmt.max_pool2d_with_indices_backward %[[GP]], %[[R]], %[[IDX]] {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// CHECK: %[[GBN:.+]] = memfmt.threshold_backward %[[GR]], %[[R]] :
// CHECK: %[[GC:.+]], %[[GG:.+]], %[[GB:.+]] = memfmt.native_batch_norm_backward %[[GBN]], %[[C]], %[[G]], %[[MEAN]], %[[INVSTD]] {eps = 1.000000e-03 : f64, output_mask = array<i1: true, true, true>}
// CHECK: %{{.+}}, %[[GW:.+]], %{{.+}} = memfmt.convolution_backward %[[GC]], %[[X]], %[[W]] {output_mask = array<i1: false, true, false>, padding = array<i64: 1, 1>}
// CHECK-NOT: memfmt.
// CHECK: return %[[LOSS]], %[[GW]], %[[GG]], %[[GB]], %[[GFW]], %[[GFB]]
func.func @stem_and_head(%x: tensor<2x3x8x8xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32>
  %g = memfmt.weight "bn1.weight" : tensor<4xf32>
  %b = memfmt.weight "bn1.bias" : tensor<4xf32>
  %rm = memfmt.weight "bn1.running_mean" : tensor<4xf32>
  %rv = memfmt.weight "bn1.running_var" : tensor<4xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %fb = memfmt.weight "fc.bias" : tensor<5xf32>
  %c = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %bn, %mean, %invstd, %rm1, %rv1 = memfmt.native_batch_norm %c, %g, %b, %rm, %rv {eps = 1.0e-03 : f64} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  memfmt.assign_weight "bn1.running_mean", %rm1 : tensor<4xf32>
  memfmt.assign_weight "bn1.running_var", %rv1 : tensor<4xf32>
  %r = memfmt.relu %bn : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p, %idx = memfmt.max_pool2d_with_indices %r {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
  %ap = memfmt.avg_pool2d %p {kernel_size = array<i64: 2, 2>} : tensor<2x4x4x4xf32> -> tensor<2x4x2x2xf32>
  %a = memfmt.adaptive_avg_pool2d %ap {output_size = array<i64: 1, 1>} : tensor<2x4x2x2xf32> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %logits = memfmt.linear %f, %fw, %fb : (tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %loss = memfmt.cross_entropy_loss %logits, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A residual block with a grouped convolution (4 padding values): the
// residual %r1 feeds conv2 and the add, so its two gradients are summed
// with memfmt.add before relu's backward; conv2 has groups = 2 and its
// padding in its backward; fc has no bias, so no bias gradient is built.
// CHECK-LABEL: func.func @residual_block(
// CHECK-SAME: -> (tensor<f32>, tensor<4x4x3x3xf32> {memfmt.gradient_of = "conv1.weight"}, tensor<4x2x3x3xf32> {memfmt.gradient_of = "conv2.weight"}, tensor<5x4xf32> {memfmt.gradient_of = "fc.weight"})
// CHECK: %[[R1:.+]] = memfmt.relu
// CHECK: %[[S:.+]] = memfmt.add
// CHECK: %[[R2:.+]] = memfmt.relu %[[S]]
// CHECK: memfmt.linear_backward {{.*}} {output_mask = array<i1: true, true, false>}
// CHECK: %[[GR2:.+]] = memfmt.adaptive_avg_pool2d_backward
// CHECK: %[[GS:.+]] = memfmt.threshold_backward %[[GR2]], %[[R2]]
// CHECK: %[[GR1A:.+]], %[[GW2:.+]], %{{.+}} = memfmt.convolution_backward %[[GS]], %[[R1]], %{{.+}} {groups = 2 : i64, output_mask = array<i1: true, true, false>, padding = array<i64: 1, 1, 1, 1>}
// CHECK: %[[GR1:.+]] = memfmt.add %[[GS]], %[[GR1A]] : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
// CHECK: %[[GC1:.+]] = memfmt.threshold_backward %[[GR1]], %[[R1]]
// CHECK: %{{.+}}, %[[GW1:.+]], %{{.+}} = memfmt.convolution_backward %[[GC1]], %arg0, %{{.+}} {output_mask = array<i1: false, true, false>, padding = array<i64: 1, 1>}
// CHECK: return %{{.+}}, %[[GW1]], %[[GW2]], %{{.+}} :
func.func @residual_block(%x: tensor<2x4x6x6xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w1 = memfmt.weight "conv1.weight" : tensor<4x4x3x3xf32>
  %w2 = memfmt.weight "conv2.weight" : tensor<4x2x3x3xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %c1 = memfmt.conv2d %x, %w1 {padding = array<i64: 1, 1>} : (tensor<2x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  %r1 = memfmt.relu %c1 : tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  %c2 = memfmt.conv2d %r1, %w2 {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<2x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32>
  %s = memfmt.add %c2, %r1 : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  %r2 = memfmt.relu %s : tensor<2x4x6x6xf32> -> tensor<2x4x6x6xf32>
  %a = memfmt.adaptive_avg_pool2d %r2 {output_size = array<i64: 1, 1>} : tensor<2x4x6x6xf32> -> tensor<2x4x1x1xf32>
  %f = memfmt.flatten %a {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %logits = memfmt.linear %f, %fw : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %loss = memfmt.cross_entropy_loss %logits, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Channels-last typed input and weights (L9): every gradient has its
// primal's strides (the backward ops' verifiers check it, and the function
// still verifies); the flatten's inverse reshape gives the Nx4x1x1
// gradient contiguously, which L3 makes the same bytes as the channels-last
// primal, so no conversion is built. The zero_init momentum buffer is no
// trainable weight.
// CHECK-LABEL: func.func @channels_last(
// CHECK-SAME: -> (tensor<f32>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>> {memfmt.gradient_of = "conv1.weight"}, tensor<4xf32> {memfmt.gradient_of = "bn1.weight"}, tensor<4xf32> {memfmt.gradient_of = "bn1.bias"}, tensor<5x4xf32> {memfmt.gradient_of = "fc.weight"})
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.reshape %{{.+}} : tensor<2x4xf32> -> tensor<2x4x1x1xf32>
// CHECK-NEXT: memfmt.adaptive_avg_pool2d_backward {{.*}} -> tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
// CHECK-NEXT: memfmt.threshold_backward {{.*}} -> tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
// CHECK-NEXT: memfmt.native_batch_norm_backward {{.*}} -> (tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: memfmt.add {{.*}} -> tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
// CHECK-NEXT: memfmt.convolution_backward {{.*}} {output_mask = array<i1: false, true, false>, padding = array<i64: 1, 1>} : {{.*}} -> (tensor<2x3x6x6xf32, #memfmt.strides<[108, 1, 18, 3]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<4xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return
func.func @channels_last(%x: tensor<2x3x6x6xf32, #memfmt.strides<[108, 1, 18, 3]>>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %g = memfmt.weight "bn1.weight" : tensor<4xf32>
  %b = memfmt.weight "bn1.bias" : tensor<4xf32>
  %rm = memfmt.weight "bn1.running_mean" : tensor<4xf32>
  %rv = memfmt.weight "bn1.running_var" : tensor<4xf32>
  %buf = memfmt.weight "conv1.weight.momentum_buffer" {zero_init} : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %fw = memfmt.weight "fc.weight" : tensor<5x4xf32>
  %c = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x6x6xf32, #memfmt.strides<[108, 1, 18, 3]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) -> tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
  %bn, %mean, %invstd, %rm1, %rv1 = memfmt.native_batch_norm %c, %g, %b, %rm, %rv : (tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %r = memfmt.relu %bn : tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>> -> tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
  %s = memfmt.add %r, %c : tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>, tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>> -> tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
  %a = memfmt.adaptive_avg_pool2d %s {output_size = array<i64: 1, 1>} : tensor<2x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>> -> tensor<2x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>
  %f = memfmt.flatten %a {start_dim = 1 : i64} : tensor<2x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>> -> tensor<2x4xf32>
  %logits = memfmt.linear %f, %fw : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %loss = memfmt.cross_entropy_loss %logits, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Mixed formats and conversions (L9): the gradient of a conversion is the
// inverse conversion (the weight re-laid channels-last gets its gradient
// back in NCHW, %cn's gradient goes back to channels-last), an add of an
// NCHW and a channels-last operand gives each its own format, the inverse
// reshape of a channels-last (not L3) flatten input converts back to
// channels-last, and a fused conv2d with bias, residual and relu
// differentiates through threshold_backward, convolution_backward (bias
// included) and the residual, whose gradient joins conv's for %c0.
// CHECK-LABEL: func.func @conversions(
// CHECK-SAME: -> (tensor<f32>, tensor<4x4x1x1xf32> {memfmt.gradient_of = "conv0.weight"}, tensor<4x4x3x3xf32> {memfmt.gradient_of = "conv.weight"}, tensor<4xf32> {memfmt.gradient_of = "conv.bias"}, tensor<5x36xf32> {memfmt.gradient_of = "fc.weight"})
// CHECK: %[[C0:.+]] = memfmt.conv2d
// CHECK: %[[WCL:.+]] = memfmt.contiguous
// CHECK: %[[C:.+]] = memfmt.fused_conv2d
// CHECK: %[[GF:.+]], %{{.+}}, %{{.+}} = memfmt.linear_backward
// CHECK: %[[GK0:.+]] = memfmt.reshape %[[GF]] : tensor<2x36xf32> -> tensor<2x4x3x3xf32>
// CHECK: %[[GK:.+]] = memfmt.contiguous %[[GK0]] {memory_format = #memfmt.memory_format<channels_last>}
// CHECK: %[[GCN:.+]] = memfmt.contiguous %[[GK]] : tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// CHECK: %[[GCN2:.+]] = memfmt.contiguous %[[GCN]] {memory_format = #memfmt.memory_format<channels_last>}
// CHECK: %[[GC:.+]] = memfmt.add %[[GK]], %[[GCN2]] : {{.*}} -> tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// CHECK: %[[GPRE:.+]] = memfmt.threshold_backward %[[GC]], %[[C]]
// CHECK: %[[GIN:.+]], %[[GWCL:.+]], %[[GB:.+]] = memfmt.convolution_backward %[[GPRE]], %[[C0]], %[[WCL]] {output_mask = array<i1: true, true, true>, padding = array<i64: 1, 1>}
// CHECK: %[[GRES:.+]] = memfmt.contiguous %[[GPRE]] : tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// CHECK: %[[GC0:.+]] = memfmt.add %[[GIN]], %[[GRES]] : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
// CHECK: %[[GW:.+]] = memfmt.contiguous %[[GWCL]] : tensor<4x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// CHECK: %{{.+}}, %[[GW0:.+]], %{{.+}} = memfmt.convolution_backward %[[GC0]], %arg0, {{.*}} {output_mask = array<i1: false, true, false>}
// CHECK: return %{{.+}}, %[[GW0]], %[[GW]], %[[GB]], %{{.+}} :
func.func @conversions(%x: tensor<2x4x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w0 = memfmt.weight "conv0.weight" : tensor<4x4x1x1xf32>
  %w = memfmt.weight "conv.weight" : tensor<4x4x3x3xf32>
  %b = memfmt.weight "conv.bias" : tensor<4xf32>
  %fw = memfmt.weight "fc.weight" : tensor<5x36xf32>
  %c0 = memfmt.conv2d %x, %w0 : (tensor<2x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x3x3xf32>
  %wcl = memfmt.contiguous %w {memory_format = #memfmt.memory_format<channels_last>} : tensor<4x4x3x3xf32>
  %c = memfmt.fused_conv2d %c0, %wcl bias %b residual %c0 {relu = true, padding = array<i64: 1, 1>} : tensor<2x4x3x3xf32>, tensor<4x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>> bias tensor<4xf32> residual tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
  %cn = memfmt.contiguous %c : tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
  %s = memfmt.add %cn, %c : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>> -> tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
  %k = memfmt.clone %s : tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
  %f = memfmt.flatten %k {start_dim = 1 : i64} : tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>> -> tensor<2x36xf32>
  %logits = memfmt.linear %f, %fw : (tensor<2x36xf32>, tensor<5x36xf32>) -> tensor<2x5xf32>
  %loss = memfmt.cross_entropy_loss %logits, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Two reads of one weight name (and one read used twice) give one gradient,
// the sum of all three; a weight that does not reach the loss, and the
// loss's other operand, get none.
// CHECK-LABEL: func.func @shared_weight(
// CHECK-SAME: -> (tensor<f32>, tensor<2x5xf32> {memfmt.gradient_of = "w"})
// CHECK: %[[G:.+]] = memfmt.cross_entropy_loss_backward
// CHECK: %[[G2:.+]] = memfmt.add %[[G]], %[[G]] : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
// CHECK: %[[G3:.+]] = memfmt.add %[[G2]], %[[G]] : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
// CHECK-NOT: memfmt.
// CHECK: return %{{.+}}, %[[G3]] :
func.func @shared_weight(%t: tensor<2xi64>) -> tensor<f32> {
  %w1 = memfmt.weight "w" : tensor<2x5xf32>
  %w2 = memfmt.weight "w" : tensor<2x5xf32>
  %unused = memfmt.weight "unused" : tensor<2x5xf32>
  %r = memfmt.relu %unused : tensor<2x5xf32> -> tensor<2x5xf32>
  %a = memfmt.add %w1, %w1 : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %s = memfmt.add %a, %w2 : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %l = memfmt.cross_entropy_loss %s, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The ops of MobileNet and EfficientNet blocks after a convolution: ReLU6
// (clamp) and SiLU gradients, a squeeze-excite scale [N, C, 1, 1]
// (hardsigmoid of a pointwise convolution of the pooled activation)
// broadcast by mul over H and W, whose gradient sum_to_size sums back, and a
// layer scale [C, 1, 1] weight, summed over N, H and W. The activation's
// two gradients (through the scale's pooling and through the product) are
// summed.
// CHECK-LABEL: func.func @squeeze_excite(
// CHECK-SAME: -> (tensor<f32>, tensor<4x3x1x1xf32> {memfmt.gradient_of = "conv.weight"}, tensor<4x4x1x1xf32> {memfmt.gradient_of = "se.fc.weight"}, tensor<4x1x1xf32> {memfmt.gradient_of = "scale"}, tensor<5x16xf32> {memfmt.gradient_of = "fc.weight"})
// CHECK: %[[SCALE:.+]] = memfmt.weight "scale"
// CHECK: %[[C:.+]] = memfmt.conv2d %arg0
// CHECK: %[[R6:.+]] = memfmt.clamp %[[C]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: %[[A:.+]] = memfmt.silu %[[R6]]
// CHECK: %[[P:.+]] = memfmt.adaptive_avg_pool2d %[[A]]
// CHECK: %[[Q:.+]] = memfmt.conv2d %[[P]]
// CHECK: %[[S:.+]] = memfmt.hardsigmoid %[[Q]]
// CHECK: %[[M:.+]] = memfmt.mul %[[A]], %[[S]] : tensor<2x4x2x2xf32>, tensor<2x4x1x1xf32> -> tensor<2x4x2x2xf32>
// CHECK: memfmt.mul %[[M]], %[[SCALE]] : tensor<2x4x2x2xf32>, tensor<4x1x1xf32> -> tensor<2x4x2x2xf32>
// CHECK: memfmt.cross_entropy_loss
// CHECK: %[[GL:.+]] = memfmt.reshape
// The layer scale: M's gradient grad * scale, the scale's grad * M summed
// over N, H, W.
// CHECK: %[[GM:.+]] = memfmt.mul %[[GL]], %[[SCALE]] : tensor<2x4x2x2xf32>, tensor<4x1x1xf32> -> tensor<2x4x2x2xf32>
// CHECK: %[[GSCALE_FULL:.+]] = memfmt.mul %[[GL]], %[[M]] : tensor<2x4x2x2xf32>, tensor<2x4x2x2xf32> -> tensor<2x4x2x2xf32>
// CHECK: %[[GSCALE:.+]] = memfmt.sum_to_size %[[GSCALE_FULL]] : tensor<2x4x2x2xf32> -> tensor<4x1x1xf32>
// The squeeze-excite product: A's share grad * S, the scale's grad * A
// summed over H and W.
// CHECK: %[[GA1:.+]] = memfmt.mul %[[GM]], %[[S]] : tensor<2x4x2x2xf32>, tensor<2x4x1x1xf32> -> tensor<2x4x2x2xf32>
// CHECK: %[[GS_FULL:.+]] = memfmt.mul %[[GM]], %[[A]] : tensor<2x4x2x2xf32>, tensor<2x4x2x2xf32> -> tensor<2x4x2x2xf32>
// CHECK: %[[GS:.+]] = memfmt.sum_to_size %[[GS_FULL]] : tensor<2x4x2x2xf32> -> tensor<2x4x1x1xf32>
// CHECK: %[[GQ:.+]] = memfmt.hardsigmoid_backward %[[GS]], %[[Q]] : (tensor<2x4x1x1xf32>, tensor<2x4x1x1xf32>) -> tensor<2x4x1x1xf32>
// CHECK: %[[GP:.+]], %[[GW:.+]], %{{.+}} = memfmt.convolution_backward %[[GQ]], %[[P]]
// CHECK: %[[GA2:.+]] = memfmt.adaptive_avg_pool2d_backward %[[GP]], %[[A]]
// CHECK: %[[GA:.+]] = memfmt.add
// CHECK-SAME: %[[GA2]]
// CHECK: %[[GR6:.+]] = memfmt.silu_backward %[[GA]], %[[R6]]
// CHECK: %[[GC:.+]] = memfmt.clamp_backward %[[GR6]], %[[C]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: %{{.+}}, %[[GCW:.+]], %{{.+}} = memfmt.convolution_backward %[[GC]], %arg0
// CHECK: return %{{.+}}, %[[GCW]], %[[GW]], %[[GSCALE]], %{{.+}}
func.func @squeeze_excite(%x: tensor<2x3x2x2xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %cw = memfmt.weight "conv.weight" : tensor<4x3x1x1xf32>
  %w = memfmt.weight "se.fc.weight" : tensor<4x4x1x1xf32>
  %scale = memfmt.weight "scale" : tensor<4x1x1xf32>
  %fc = memfmt.weight "fc.weight" : tensor<5x16xf32>
  %c = memfmt.conv2d %x, %cw : (tensor<2x3x2x2xf32>, tensor<4x3x1x1xf32>) -> tensor<2x4x2x2xf32>
  %r6 = memfmt.clamp %c {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x4x2x2xf32> -> tensor<2x4x2x2xf32>
  %a = memfmt.silu %r6 : tensor<2x4x2x2xf32> -> tensor<2x4x2x2xf32>
  %p = memfmt.adaptive_avg_pool2d %a {output_size = array<i64: 1, 1>} : tensor<2x4x2x2xf32> -> tensor<2x4x1x1xf32>
  %q = memfmt.conv2d %p, %w : (tensor<2x4x1x1xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x1x1xf32>
  %s = memfmt.hardsigmoid %q : tensor<2x4x1x1xf32> -> tensor<2x4x1x1xf32>
  %m = memfmt.mul %a, %s : tensor<2x4x2x2xf32>, tensor<2x4x1x1xf32> -> tensor<2x4x2x2xf32>
  %l = memfmt.mul %m, %scale : tensor<2x4x2x2xf32>, tensor<4x1x1xf32> -> tensor<2x4x2x2xf32>
  %f = memfmt.flatten %l {start_dim = 1 : i64} : tensor<2x4x2x2xf32> -> tensor<2x16xf32>
  %y = memfmt.linear %f, %fc : (tensor<2x16xf32>, tensor<5x16xf32>) -> tensor<2x5xf32>
  %loss = memfmt.cross_entropy_loss %y, %t : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// sub and div with a broadcast weight: sub's second operand gets -grad (a
// 0-d constant -1 broadcast), div's `-grad * self / (other * other)`, both
// summed to the weight's shape; the first operands get grad and grad / w.
// CHECK-LABEL: func.func @sub_div(
// CHECK: %[[B:.+]] = memfmt.weight "b"
// CHECK: %[[D:.+]] = memfmt.weight "d"
// CHECK: %[[S:.+]] = memfmt.sub %arg0, %[[B]]
// CHECK: %[[Q:.+]] = memfmt.div %[[S]], %[[D]]
// CHECK: %[[GQ:.+]] = memfmt.reshape
// CHECK: %[[GS:.+]] = memfmt.div %[[GQ]], %[[D]] : tensor<2x3x2x2xf32>, tensor<3x1x1xf32> -> tensor<2x3x2x2xf32>
// CHECK: %[[M1:.+]] = arith.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[NEG:.+]] = memfmt.mul %[[GQ]], %[[M1]] : tensor<2x3x2x2xf32>, tensor<f32> -> tensor<2x3x2x2xf32>
// CHECK: %[[NUM:.+]] = memfmt.mul %[[NEG]], %[[S]]
// CHECK: %[[SQ:.+]] = memfmt.mul %[[D]], %[[D]] : tensor<3x1x1xf32>, tensor<3x1x1xf32> -> tensor<3x1x1xf32>
// CHECK: %[[GD_FULL:.+]] = memfmt.div %[[NUM]], %[[SQ]]
// CHECK: %[[GD:.+]] = memfmt.sum_to_size %[[GD_FULL]] : tensor<2x3x2x2xf32> -> tensor<3x1x1xf32>
// CHECK: %[[M2:.+]] = arith.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[NEGS:.+]] = memfmt.mul %[[GS]], %[[M2]]
// CHECK: %[[GB:.+]] = memfmt.sum_to_size %[[NEGS]] : tensor<2x3x2x2xf32> -> tensor<1xf32>
// CHECK: return %{{.+}}, %[[GB]], %[[GD]]
func.func @sub_div(%x: tensor<2x3x2x2xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %b = memfmt.weight "b" : tensor<1xf32>
  %d = memfmt.weight "d" : tensor<3x1x1xf32>
  %s = memfmt.sub %x, %b : tensor<2x3x2x2xf32>, tensor<1xf32> -> tensor<2x3x2x2xf32>
  %q = memfmt.div %s, %d : tensor<2x3x2x2xf32>, tensor<3x1x1xf32> -> tensor<2x3x2x2xf32>
  %f = memfmt.flatten %q {start_dim = 1 : i64} : tensor<2x3x2x2xf32> -> tensor<2x12xf32>
  %loss = memfmt.cross_entropy_loss %f, %t : (tensor<2x12xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// ShuffleNet's and DenseNet's data movement: the channel split (two
// slices), the concatenation, the channel shuffle and a permute. cat's
// operands get their slices of the gradient; a slice's gradient is the
// gradient between zeros (cat with a splat 0); the shuffle's gradient is
// the shuffle with C / groups groups; permute's the inverse permute.
// CHECK-LABEL: func.func @shuffle_block(
// CHECK: %[[C:.+]] = memfmt.conv2d %arg0
// CHECK: %[[A:.+]] = memfmt.slice %[[C]] {dim = 1 : i64, end = 2 : i64, start = 0 : i64}
// CHECK: %[[B:.+]] = memfmt.slice %[[C]] {dim = 1 : i64, end = 6 : i64, start = 2 : i64}
// CHECK: %[[R:.+]] = memfmt.relu %[[B]]
// CHECK: %[[J:.+]] = memfmt.cat %[[A]], %[[R]] {dim = 1 : i64}
// CHECK: %[[S:.+]] = memfmt.channel_shuffle %[[J]] {groups = 2 : i64}
// CHECK: %[[P:.+]] = memfmt.permute %[[S]] {dims = array<i64: 0, 2, 3, 1>}
// CHECK: %[[GP:.+]] = memfmt.reshape
// CHECK: %[[GS:.+]] = memfmt.permute %[[GP]] {dims = array<i64: 0, 3, 1, 2>} : tensor<2x3x3x6xf32> -> tensor<2x6x3x3xf32>
// CHECK: %[[GJ:.+]] = memfmt.channel_shuffle %[[GS]] {groups = 3 : i64} : tensor<2x6x3x3xf32> -> tensor<2x6x3x3xf32>
// CHECK: %[[GA:.+]] = memfmt.slice %[[GJ]] {dim = 1 : i64, end = 2 : i64, start = 0 : i64} : tensor<2x6x3x3xf32> -> tensor<2x2x3x3xf32>
// CHECK: %[[GR:.+]] = memfmt.slice %[[GJ]] {dim = 1 : i64, end = 6 : i64, start = 2 : i64} : tensor<2x6x3x3xf32> -> tensor<2x4x3x3xf32>
// CHECK: %[[GB:.+]] = memfmt.threshold_backward %[[GR]], %[[R]]
// CHECK: %[[Z0:.+]] = arith.constant dense<0.000000e+00> : tensor<2x2x3x3xf32>
// CHECK: %[[GC1:.+]] = memfmt.cat %[[Z0]], %[[GB]] {dim = 1 : i64} : tensor<2x2x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x6x3x3xf32>
// CHECK: %[[Z1:.+]] = arith.constant dense<0.000000e+00> : tensor<2x4x3x3xf32>
// CHECK: %[[GC2:.+]] = memfmt.cat %[[GA]], %[[Z1]] {dim = 1 : i64} : tensor<2x2x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x6x3x3xf32>
// CHECK: %[[GC:.+]] = memfmt.add
// CHECK: memfmt.convolution_backward %[[GC]], %arg0
func.func @shuffle_block(%x: tensor<2x3x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<6x3x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x3x3x3xf32>, tensor<6x3x1x1xf32>) -> tensor<2x6x3x3xf32>
  %a = memfmt.slice %c {dim = 1 : i64, start = 0 : i64, end = 2 : i64} : tensor<2x6x3x3xf32> -> tensor<2x2x3x3xf32>
  %b = memfmt.slice %c {dim = 1 : i64, start = 2 : i64, end = 6 : i64} : tensor<2x6x3x3xf32> -> tensor<2x4x3x3xf32>
  %r = memfmt.relu %b : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %j = memfmt.cat %a, %r {dim = 1 : i64} : tensor<2x2x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x6x3x3xf32>
  %s = memfmt.channel_shuffle %j {groups = 2 : i64} : tensor<2x6x3x3xf32> -> tensor<2x6x3x3xf32>
  %p = memfmt.permute %s {dims = array<i64: 0, 2, 3, 1>} : tensor<2x6x3x3xf32> -> tensor<2x3x3x6xf32>
  %f = memfmt.flatten %p {start_dim = 1 : i64} : tensor<2x3x3x6xf32> -> tensor<2x54xf32>
  %loss = memfmt.cross_entropy_loss %f, %t : (tensor<2x54xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// chunk: the pieces' gradients concatenated, zeros for a piece the loss
// does not read.
// CHECK-LABEL: func.func @chunk(
// CHECK: %[[A:.+]]:3 = memfmt.chunk
// CHECK: %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<2x2x2x2xf32>
// CHECK: memfmt.cat %{{.+}}, %[[Z]], %{{.+}} {dim = 1 : i64} : tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32> -> tensor<2x5x2x2xf32>
func.func @chunk(%x: tensor<2x3x2x2xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<5x3x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x3x2x2xf32>, tensor<5x3x1x1xf32>) -> tensor<2x5x2x2xf32>
  %p:3 = memfmt.chunk %c {chunks = 3 : i64, dim = 1 : i64} : tensor<2x5x2x2xf32> -> tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32>
  %j = memfmt.cat %p#0, %p#2 {dim = 1 : i64} : tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32> -> tensor<2x3x2x2xf32>
  %f = memfmt.flatten %j {start_dim = 1 : i64} : tensor<2x3x2x2xf32> -> tensor<2x12xf32>
  %loss = memfmt.cross_entropy_loss %f, %t : (tensor<2x12xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Attention-style softmax over the last dim of a linear layer's output
// [N, T, T]: its VJP is one softmax_backward of the result gradient and the
// softmax's own result (not its input), whose gradient reaches the linear.
// CHECK-LABEL: func.func @softmax_rows(
// CHECK: %[[L:.+]] = memfmt.linear
// CHECK: %[[S:.+]] = memfmt.softmax %[[L]] {dim = 2 : i64}
// CHECK: %[[GS:.+]] = memfmt.softmax_backward %{{.+}}, %[[S]] {dim = 2 : i64} : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
// CHECK: memfmt.linear_backward %{{.+}}, %[[GS]]
// CHECK: return
func.func @softmax_rows(%x: tensor<2x3x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "proj.weight" : tensor<3x4xf32>
  %l = memfmt.linear %x, %w : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x3xf32>
  %s = memfmt.softmax %l {dim = 2 : i64} : tensor<2x3x3xf32> -> tensor<2x3x3xf32>
  %f = memfmt.flatten %s {start_dim = 1 : i64} : tensor<2x3x3xf32> -> tensor<2x9xf32>
  %loss = memfmt.cross_entropy_loss %f, %t : (tensor<2x9xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// ConvNeXt's layer norm over channels: permute to [N, H, W, C], layer norm
// (weight and bias), permute back. Its VJP is one layer_norm_backward whose
// grad_input flows back through the inverse permute to the convolution; a
// layer norm without parameters asks for grad_input only.
// CHECK-LABEL: func.func @layer_norm_over_channels(
// CHECK: %[[W:.+]] = memfmt.weight "ln.weight"
// CHECK: %[[B:.+]] = memfmt.weight "ln.bias"
// CHECK: %[[C:.+]] = memfmt.conv2d %arg0
// CHECK: %[[P:.+]] = memfmt.permute %[[C]] {dims = array<i64: 0, 2, 3, 1>}
// CHECK: %[[N:.+]] = memfmt.layer_norm %[[P]] weight %[[W]] bias %[[B]]
// CHECK: %[[N2:.+]] = memfmt.layer_norm %[[N]] {
// CHECK: %[[GN2:.+]] = memfmt.permute %{{.+}} {dims = array<i64: 0, 2, 3, 1>}
// CHECK: %[[GN:.+]], %{{.+}}, %{{.+}} = memfmt.layer_norm_backward %[[GN2]], %[[N]] {normalized_shape = array<i64: 4>, output_mask = array<i1: true, false, false>} : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> (tensor<2x3x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[GP:.+]], %[[GW:.+]], %[[GB:.+]] = memfmt.layer_norm_backward %[[GN]], %[[P]], %[[W]] {eps = 9.9999999999999995E-7 : f64, normalized_shape = array<i64: 4>, output_mask = array<i1: true, true, true>}
// CHECK: %[[GC:.+]] = memfmt.permute %[[GP]] {dims = array<i64: 0, 3, 1, 2>}
// CHECK: memfmt.convolution_backward %[[GC]], %arg0
// CHECK: return %{{.+}}, %[[GW]], %[[GB]], %{{.+}}
func.func @layer_norm_over_channels(%x: tensor<2x3x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "ln.weight" : tensor<4xf32>
  %b = memfmt.weight "ln.bias" : tensor<4xf32>
  %k = memfmt.weight "conv.weight" : tensor<4x3x1x1xf32>
  %c = memfmt.conv2d %x, %k : (tensor<2x3x3x3xf32>, tensor<4x3x1x1xf32>) -> tensor<2x4x3x3xf32>
  %p = memfmt.permute %c {dims = array<i64: 0, 2, 3, 1>} : tensor<2x4x3x3xf32> -> tensor<2x3x3x4xf32>
  %n = memfmt.layer_norm %p weight %w bias %b {normalized_shape = array<i64: 4>, eps = 1.0e-06 : f64} : tensor<2x3x3x4xf32> weight tensor<4xf32> bias tensor<4xf32> -> tensor<2x3x3x4xf32>
  %n2 = memfmt.layer_norm %n {normalized_shape = array<i64: 4>} : tensor<2x3x3x4xf32> -> tensor<2x3x3x4xf32>
  %q = memfmt.permute %n2 {dims = array<i64: 0, 3, 1, 2>} : tensor<2x3x3x4xf32> -> tensor<2x4x3x3xf32>
  %f = memfmt.flatten %q {start_dim = 1 : i64} : tensor<2x4x3x3xf32> -> tensor<2x36xf32>
  %loss = memfmt.cross_entropy_loss %f, %t : (tensor<2x36xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A slice with a step (x[:, 1:6:2], YOLO's space-to-depth "Focus" and a
// strided channel pick): its gradient puts each element of `grad` at every
// second position (a unit dim after `dim`, a cat with zeros along it, the
// two merged), cut where the input ends, between zeros (ATen's
// slice_backward).
// CHECK-LABEL: func.func @strided_slice(
// CHECK: %[[S:.+]] = memfmt.slice %[[C:.+]] {dim = 1 : i64, end = 6 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x7x3x3xf32> -> tensor<2x3x3x3xf32>
// CHECK: %[[G:.+]] = memfmt.reshape %{{.+}} : tensor<2x27xf32> -> tensor<2x3x3x3xf32>
// CHECK: %[[COL:.+]] = memfmt.reshape %[[G]] : tensor<2x3x3x3xf32> -> tensor<2x3x1x3x3xf32>
// CHECK: %[[GAP:.+]] = arith.constant dense<0.000000e+00> : tensor<2x3x1x3x3xf32>
// CHECK: %[[SPREAD:.+]] = memfmt.cat %[[COL]], %[[GAP]] {dim = 2 : i64} : tensor<2x3x1x3x3xf32>, tensor<2x3x1x3x3xf32> -> tensor<2x3x2x3x3xf32>
// CHECK: %[[MERGED:.+]] = memfmt.reshape %[[SPREAD]] : tensor<2x3x2x3x3xf32> -> tensor<2x6x3x3xf32>
// CHECK: %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<2x1x3x3xf32>
// CHECK: %[[WHOLE:.+]] = memfmt.cat %[[Z]], %[[MERGED]] {dim = 1 : i64} : tensor<2x1x3x3xf32>, tensor<2x6x3x3xf32> -> tensor<2x7x3x3xf32>
// CHECK: memfmt.convolution_backward %[[WHOLE]], %arg0
//
// A step that overruns the input is cut: x[:, 0:7:3] of 7 channels takes
// 0, 3, 6, and its gradient is 9 positions cut to 7.
// CHECK-LABEL: func.func @strided_slice_to_the_end(
// CHECK: %[[MERGED:.+]] = memfmt.reshape %{{.+}} : tensor<2x3x3x3x3xf32> -> tensor<2x9x3x3xf32>
// CHECK: %[[CUT:.+]] = memfmt.slice %[[MERGED]] {dim = 1 : i64, end = 7 : i64, start = 0 : i64} : tensor<2x9x3x3xf32> -> tensor<2x7x3x3xf32>
// CHECK-NOT: memfmt.cat %[[CUT]]
// CHECK: memfmt.convolution_backward %[[CUT]], %arg0
func.func @strided_slice(%x: tensor<2x4x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<7x4x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x4x3x3xf32>, tensor<7x4x1x1xf32>) -> tensor<2x7x3x3xf32>
  %s = memfmt.slice %c {dim = 1 : i64, start = 1 : i64, end = 6 : i64, step = 2 : i64} : tensor<2x7x3x3xf32> -> tensor<2x3x3x3xf32>
  %f = memfmt.flatten %s {start_dim = 1 : i64} : tensor<2x3x3x3xf32> -> tensor<2x27xf32>
  %l = memfmt.cross_entropy_loss %f, %t : (tensor<2x27xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

func.func @strided_slice_to_the_end(%x: tensor<2x4x3x3xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %w = memfmt.weight "conv.weight" : tensor<7x4x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x4x3x3xf32>, tensor<7x4x1x1xf32>) -> tensor<2x7x3x3xf32>
  %s = memfmt.slice %c {dim = 1 : i64, start = 0 : i64, end = 7 : i64, step = 3 : i64} : tensor<2x7x3x3xf32> -> tensor<2x3x3x3xf32>
  %f = memfmt.flatten %s {start_dim = 1 : i64} : tensor<2x3x3x3xf32> -> tensor<2x27xf32>
  %l = memfmt.cross_entropy_loss %f, %t : (tensor<2x27xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
