// RUN: memfmt-opt %s -split-input-file --memfmt-fuse-conv | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-fuse-conv="fold-batch-norm=false" | FileCheck %s --check-prefix=NOFOLD
// RUN: memfmt-opt %s -split-input-file --memfmt-fuse-conv="fuse-epilogues=false" | FileCheck %s --check-prefix=NOEPI
// The fused IR still goes through the channels-last pipeline and lowers.
// RUN: memfmt-opt %s -split-input-file --memfmt-fuse-conv --memfmt-channels-last --memfmt-verify-layouts="contiguous-operands=true" | FileCheck %s --check-prefix=CL

// A ResNet bottleneck tail: conv+bn+relu, conv+bn, the shortcut conv+bn,
// add, relu. Every batch norm folds into its conv's parameters (computed at
// load), and the add and relus become conv epilogues.
// CHECK-LABEL: func.func @block(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x8x6x6xf32>
// CHECK: %[[W1:.+]], %[[B1:.+]] = memfmt.fold_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {eps = 1.000000e-03 : f64}
// CHECK: %[[Y1:.+]] = memfmt.fused_conv2d %[[X]], %[[W1]] bias %[[B1]] {padding = array<i64: 1, 1>, relu = true}
// CHECK: %[[W2:.+]], %[[B2:.+]] = memfmt.fold_batch_norm
// CHECK: %[[Y2:.+]] = memfmt.conv2d %[[Y1]], %[[W2]], %[[B2]]
// CHECK: %[[W3:.+]], %[[B3:.+]] = memfmt.fold_batch_norm
// CHECK: %[[Y:.+]] = memfmt.fused_conv2d %[[X]], %[[W3]] bias %[[B3]] residual %[[Y2]] {relu = true}
// CHECK-NOT: memfmt.batch_norm
// CHECK-NOT: memfmt.add
// CHECK-NOT: memfmt.relu
// CHECK: return %[[Y]]
// NOFOLD-LABEL: func.func @block(
// NOFOLD-NOT: memfmt.fold_batch_norm
// NOFOLD: memfmt.batch_norm
// NOEPI-LABEL: func.func @block(
// NOEPI-NOT: memfmt.fused_conv2d
// NOEPI: memfmt.fold_batch_norm
// CL-LABEL: func.func @block(
// CL: memfmt.fold_batch_norm {{.*}} -> tensor<8x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>, tensor<8xf32>
// CL: memfmt.fused_conv2d {{.*}} -> tensor<1x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
func.func @block(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %w1 = memfmt.weight "conv1.weight" : tensor<8x8x3x3xf32>
  %g1 = memfmt.weight "bn1.weight" : tensor<8xf32>
  %b1 = memfmt.weight "bn1.bias" : tensor<8xf32>
  %m1 = memfmt.weight "bn1.running_mean" : tensor<8xf32>
  %v1 = memfmt.weight "bn1.running_var" : tensor<8xf32>
  %0 = memfmt.conv2d %x, %w1 {padding = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = memfmt.batch_norm %0, %g1, %b1, %m1, %v1 {eps = 1.0e-3 : f64} : tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x8x6x6xf32>
  %2 = memfmt.relu %1 : tensor<1x8x6x6xf32> -> tensor<1x8x6x6xf32>
  %w2 = memfmt.weight "conv2.weight" : tensor<8x8x1x1xf32>
  %3 = memfmt.conv2d %2, %w2 : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %4 = memfmt.batch_norm %3, %g1, %b1, %m1, %v1 : tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x8x6x6xf32>
  %w3 = memfmt.weight "down.weight" : tensor<8x8x1x1xf32>
  %5 = memfmt.conv2d %x, %w3 : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %6 = memfmt.batch_norm %5, %g1, %b1, %m1, %v1 : tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x8x6x6xf32>
  %7 = memfmt.add %4, %6 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32> -> tensor<1x8x6x6xf32>
  %8 = memfmt.relu %7 : tensor<1x8x6x6xf32> -> tensor<1x8x6x6xf32>
  return %8 : tensor<1x8x6x6xf32>
}

// -----

// Nothing fuses where it would change what is computed: a conv used twice,
// a training batch norm, statistics that are not parameters, an add that
// broadcasts.
// CHECK-LABEL: func.func @no_fusion(
// CHECK-NOT: memfmt.fused_conv2d
// CHECK-NOT: memfmt.fold_batch_norm
// CHECK: return
func.func @no_fusion(%x: tensor<1x4x5x5xf32>, %stats: tensor<4xf32>, %c: tensor<1x4x1x1xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %w = memfmt.weight "w" : tensor<4x4x1x1xf32>
  %g = memfmt.weight "g" : tensor<4xf32>
  %0 = memfmt.conv2d %x, %w : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %1 = memfmt.relu %0 : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %2 = memfmt.conv2d %x, %w : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %3 = memfmt.batch_norm %2, %g, %g, %g, %g {training = true} : tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x5x5xf32>
  %4 = memfmt.conv2d %x, %w : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %5 = memfmt.batch_norm %4, %g, %g, %stats, %g : tensor<1x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x5x5xf32>
  %6 = memfmt.conv2d %x, %w : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %7 = memfmt.add %6, %c : tensor<1x4x5x5xf32>, tensor<1x4x1x1xf32> -> tensor<1x4x5x5xf32>
  return %1, %3, %5, %7, %0 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}

// -----

// A 1-D bias added to a bias-free linear (ConvNeXt's MatMul then Add, on
// N-D input through a reshape) becomes the linear's bias, in either operand
// order; a bias of another size, or a linear used twice, stays an add.
// CHECK-LABEL: func.func @linear_bias(
// CHECK: %[[B:.+]] = memfmt.weight "fc.bias" : tensor<6xf32>
// CHECK: %[[L:.+]] = memfmt.linear %{{.+}}, %{{.+}}, %[[B]] : (tensor<15x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<15x6xf32>
// CHECK-NEXT: %[[R:.+]] = memfmt.reshape %[[L]] : tensor<15x6xf32> -> tensor<1x5x3x6xf32>
// CHECK: %[[L2:.+]] = memfmt.linear %{{.+}}, %{{.+}}, %[[B]] : (tensor<15x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<15x6xf32>
// CHECK: %[[U:.+]] = memfmt.linear %{{.+}}, %{{.+}} : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
// CHECK: memfmt.add %[[U]], %arg1
// CHECK: return %[[R]], %[[L2]]
func.func @linear_bias(%x: tensor<15x4xf32>, %other: tensor<15x6xf32>) -> (tensor<1x5x3x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>) {
  %w = memfmt.weight "fc.weight" : tensor<6x4xf32>
  %0 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %1 = memfmt.reshape %0 : tensor<15x6xf32> -> tensor<1x5x3x6xf32>
  %b = memfmt.weight "fc.bias" : tensor<6xf32>
  %2 = memfmt.add %b, %1 : tensor<6xf32>, tensor<1x5x3x6xf32> -> tensor<1x5x3x6xf32>
  %3 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %4 = memfmt.add %3, %b : tensor<15x6xf32>, tensor<6xf32> -> tensor<15x6xf32>
  %5 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %6 = memfmt.add %5, %other : tensor<15x6xf32>, tensor<15x6xf32> -> tensor<15x6xf32>
  return %2, %4, %6, %5 : tensor<1x5x3x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>
}

// -----

// A linear layer's activation becomes its epilogue: ConvNeXt's MatMul, Add
// and GELU (through the reshape of N-D input) after the bias folds in, a 2-D
// hardswish with its linear, hardsigmoid with its parameters. A linear used
// twice, one whose activation is not alone, and a bias added after an
// activation stay as they are.
// CHECK-LABEL: func.func @linear_activation(
// CHECK: %[[L:.+]] = memfmt.linear %{{.+}}, %{{.+}}, %{{.+}} {activation = "gelu"} : (tensor<15x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<15x6xf32>
// CHECK-NEXT: %[[R:.+]] = memfmt.reshape %[[L]] : tensor<15x6xf32> -> tensor<1x5x3x6xf32>
// CHECK: %[[H:.+]] = memfmt.linear %{{.+}}, %{{.+}} {activation = "hardswish"}
// CHECK: %[[S:.+]] = memfmt.linear %{{.+}}, %{{.+}} {activation = "hardsigmoid", activation_alpha = 2.000000e-01 : f64, activation_beta = 5.000000e-01 : f64}
// CHECK: %[[U:.+]] = memfmt.linear %arg0, %{{.+}} : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
// CHECK-NEXT: %[[G:.+]] = memfmt.gelu %[[U]]
// CHECK: return %[[R]], %[[H]], %[[S]], %[[G]], %[[U]]
// NOEPI-LABEL: func.func @linear_activation(
// NOEPI-NOT: activation
// NOEPI: return
func.func @linear_activation(%x: tensor<15x4xf32>) -> (tensor<1x5x3x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>) {
  %w = memfmt.weight "fc.weight" : tensor<6x4xf32>
  %b = memfmt.weight "fc.bias" : tensor<6xf32>
  %0 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %1 = memfmt.reshape %0 : tensor<15x6xf32> -> tensor<1x5x3x6xf32>
  %2 = memfmt.add %1, %b : tensor<1x5x3x6xf32>, tensor<6xf32> -> tensor<1x5x3x6xf32>
  %3 = memfmt.gelu %2 : tensor<1x5x3x6xf32> -> tensor<1x5x3x6xf32>
  %4 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %5 = memfmt.hardswish %4 : tensor<15x6xf32> -> tensor<15x6xf32>
  %6 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %7 = memfmt.hardsigmoid %6 {alpha = 2.000000e-01 : f64, beta = 5.000000e-01 : f64} : tensor<15x6xf32> -> tensor<15x6xf32>
  %8 = memfmt.linear %x, %w : (tensor<15x4xf32>, tensor<6x4xf32>) -> tensor<15x6xf32>
  %9 = memfmt.gelu %8 : tensor<15x6xf32> -> tensor<15x6xf32>
  return %3, %5, %7, %9, %8 : tensor<1x5x3x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>, tensor<15x6xf32>
}

// -----

// The activations of MobileNet, EfficientNet and ConvNeXt after a
// convolution become its epilogue: ReLU6 (clamp), hardswish, silu, a
// hardsigmoid with its parameters, gelu (tanh form), after a residual too;
// a conv whose output has another user keeps its activation apart.
// CHECK-LABEL: func.func @activations(
// CHECK: memfmt.fused_conv2d %arg0, %{{.+}} {activation = "clamp", activation_alpha = 0.000000e+00 : f64, activation_beta = 6.000000e+00 : f64, groups = 4 : i64, padding = array<i64: 1, 1>}
// CHECK: memfmt.fused_conv2d %{{.+}}, %{{.+}} {activation = "hardswish"}
// CHECK: memfmt.fused_conv2d %{{.+}}, %{{.+}} residual %arg0 {activation = "silu"}
// CHECK: memfmt.fused_conv2d %{{.+}}, %{{.+}} {activation = "hardsigmoid", activation_alpha = 2.000000e-01 : f64, activation_beta = 5.000000e-01 : f64}
// CHECK: memfmt.fused_conv2d %{{.+}}, %{{.+}} {activation = "gelu_tanh"}
// CHECK: %[[SHARED:.+]] = memfmt.conv2d
// CHECK: memfmt.sigmoid %[[SHARED]]
// NOEPI-LABEL: func.func @activations(
// NOEPI-NOT: memfmt.fused_conv2d
func.func @activations(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %dw = memfmt.weight "dw" : tensor<4x1x3x3xf32>
  %pw = memfmt.weight "pw" : tensor<4x4x1x1xf32>
  %0 = memfmt.conv2d %x, %dw {groups = 4 : i64, padding = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %1 = memfmt.clamp %0 {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %2 = memfmt.conv2d %1, %pw : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %3 = memfmt.hardswish %2 : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %4 = memfmt.conv2d %3, %pw : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %5 = memfmt.add %4, %x : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %6 = memfmt.silu %5 : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %7 = memfmt.conv2d %6, %pw : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %8 = memfmt.hardsigmoid %7 {alpha = 0.2 : f64} : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %9 = memfmt.conv2d %8, %pw : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %10 = memfmt.gelu %9 {approximate = "tanh"} : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %11 = memfmt.conv2d %10, %pw : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %12 = memfmt.sigmoid %11 : tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  %13 = memfmt.add %12, %11 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32> -> tensor<1x4x5x5xf32>
  return %10, %13 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}
