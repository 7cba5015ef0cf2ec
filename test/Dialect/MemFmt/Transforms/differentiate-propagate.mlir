// RUN: memfmt-opt %s --memfmt-differentiate --memfmt-channels-last="outputs=channels-last" --memfmt-verify-layouts | FileCheck %s --check-prefixes=CHECK,GRAD
// RUN: memfmt-opt %s --memfmt-differentiate --memfmt-channels-last="inputs=channels-last outputs=channels-last" --memfmt-verify-layouts | FileCheck %s --check-prefixes=CLIN,GRAD
// RUN: memfmt-opt %s --memfmt-differentiate --memfmt-channels-last="inputs=keep weights=keep" --memfmt-verify-layouts | FileCheck %s --check-prefix=NCHW
// RUN: memfmt-opt %s --memfmt-channels-last="outputs=channels-last" | FileCheck %s --check-prefix=FWD

// L9 end to end: memfmt-differentiate on the NCHW forward of a small ResNet
// (stem, max pool, an identity block, a downsampling block, head), then the
// channels-last pipeline over the whole training graph. Every 4-D gradient
// and every gradient sum comes out channels-last and the backward adds no
// runtime conversion: with inputs=convert the only one is the input's, as
// in the forward alone (FWD); with channels-last input there is none.

// CHECK-LABEL: func.func @resnet_step(
// CHECK: memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.convolution_backward {{.*}} -> (tensor<2x16x4x4xf32, #memfmt.strides<[256, 1, 64, 16]>>, tensor<16x16x3x3xf32, #memfmt.strides<[144, 1, 48, 16]>>, tensor<16xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.add {{.*}} -> tensor<2x8x8x8xf32, #memfmt.strides<[512, 1, 64, 8]>>
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.max_pool2d_with_indices_backward {{.*}} -> tensor<2x8x16x16xf32, #memfmt.strides<[2048, 1, 128, 8]>>
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.convolution_backward {{.*}} {output_mask = array<i1: false, true, false>, padding = array<i64: 1, 1>} : {{.*}} -> (tensor<2x3x16x16xf32, #memfmt.strides<[768, 1, 48, 3]>>, tensor<8x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>, tensor<8xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return

// No backward op or gradient sum has an NCHW 4-D result.
// GRAD-NOT: {{(_backward|memfmt.add) .* -> \(?tensor<2x[0-9]+x[0-9]+x[0-9]+xf32>}}

// CLIN-LABEL: func.func @resnet_step(
// CLIN-NOT: memfmt.contiguous
// CLIN: return

// NCHW-LABEL: func.func @resnet_step(
// NCHW-NOT: memfmt.contiguous
// NCHW-NOT: #memfmt.strides
// NCHW: return

// FWD-LABEL: func.func @resnet_step(
// FWD: memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// FWD-NOT: memfmt.contiguous
// FWD: return

func.func @resnet_step(%x: tensor<2x3x16x16xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %conv1_weight = memfmt.weight "conv1.weight" : tensor<8x3x3x3xf32>
  %bn1_weight = memfmt.weight "bn1.weight" : tensor<8xf32>
  %bn1_bias = memfmt.weight "bn1.bias" : tensor<8xf32>
  %bn1_running_mean = memfmt.weight "bn1.running_mean" : tensor<8xf32>
  %bn1_running_var = memfmt.weight "bn1.running_var" : tensor<8xf32>
  %layer1_0_conv1_weight = memfmt.weight "layer1.0.conv1.weight" : tensor<8x8x3x3xf32>
  %layer1_0_bn1_weight = memfmt.weight "layer1.0.bn1.weight" : tensor<8xf32>
  %layer1_0_bn1_bias = memfmt.weight "layer1.0.bn1.bias" : tensor<8xf32>
  %layer1_0_bn1_running_mean = memfmt.weight "layer1.0.bn1.running_mean" : tensor<8xf32>
  %layer1_0_bn1_running_var = memfmt.weight "layer1.0.bn1.running_var" : tensor<8xf32>
  %layer1_0_conv2_weight = memfmt.weight "layer1.0.conv2.weight" : tensor<8x8x3x3xf32>
  %layer1_0_bn2_weight = memfmt.weight "layer1.0.bn2.weight" : tensor<8xf32>
  %layer1_0_bn2_bias = memfmt.weight "layer1.0.bn2.bias" : tensor<8xf32>
  %layer1_0_bn2_running_mean = memfmt.weight "layer1.0.bn2.running_mean" : tensor<8xf32>
  %layer1_0_bn2_running_var = memfmt.weight "layer1.0.bn2.running_var" : tensor<8xf32>
  %layer2_0_conv1_weight = memfmt.weight "layer2.0.conv1.weight" : tensor<16x8x3x3xf32>
  %layer2_0_bn1_weight = memfmt.weight "layer2.0.bn1.weight" : tensor<16xf32>
  %layer2_0_bn1_bias = memfmt.weight "layer2.0.bn1.bias" : tensor<16xf32>
  %layer2_0_bn1_running_mean = memfmt.weight "layer2.0.bn1.running_mean" : tensor<16xf32>
  %layer2_0_bn1_running_var = memfmt.weight "layer2.0.bn1.running_var" : tensor<16xf32>
  %layer2_0_conv2_weight = memfmt.weight "layer2.0.conv2.weight" : tensor<16x16x3x3xf32>
  %layer2_0_bn2_weight = memfmt.weight "layer2.0.bn2.weight" : tensor<16xf32>
  %layer2_0_bn2_bias = memfmt.weight "layer2.0.bn2.bias" : tensor<16xf32>
  %layer2_0_bn2_running_mean = memfmt.weight "layer2.0.bn2.running_mean" : tensor<16xf32>
  %layer2_0_bn2_running_var = memfmt.weight "layer2.0.bn2.running_var" : tensor<16xf32>
  %layer2_0_downsample_0_weight = memfmt.weight "layer2.0.downsample.0.weight" : tensor<16x8x1x1xf32>
  %layer2_0_downsample_1_weight = memfmt.weight "layer2.0.downsample.1.weight" : tensor<16xf32>
  %layer2_0_downsample_1_bias = memfmt.weight "layer2.0.downsample.1.bias" : tensor<16xf32>
  %layer2_0_downsample_1_running_mean = memfmt.weight "layer2.0.downsample.1.running_mean" : tensor<16xf32>
  %layer2_0_downsample_1_running_var = memfmt.weight "layer2.0.downsample.1.running_var" : tensor<16xf32>
  %fc_weight = memfmt.weight "fc.weight" : tensor<10x16xf32>
  %fc_bias = memfmt.weight "fc.bias" : tensor<10xf32>
  %v1 = memfmt.conv2d %x, %conv1_weight {padding = array<i64: 1, 1>} : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x16x16xf32>
  %v2, %v2m, %v2i, %v2rm, %v2rv = memfmt.native_batch_norm %v1, %bn1_weight, %bn1_bias, %bn1_running_mean, %bn1_running_var : (tensor<2x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  memfmt.assign_weight "bn1.running_mean", %v2rm : tensor<8xf32>
  memfmt.assign_weight "bn1.running_var", %v2rv : tensor<8xf32>
  %v3 = memfmt.relu %v2 : tensor<2x8x16x16xf32> -> tensor<2x8x16x16xf32>
  %v4, %v4i = memfmt.max_pool2d_with_indices %v3 {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x8x16x16xf32> -> tensor<2x8x8x8xf32>, tensor<2x8x8x8xi64>
  %v5 = memfmt.conv2d %v4, %layer1_0_conv1_weight {padding = array<i64: 1, 1>} : (tensor<2x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x8x8xf32>
  %v6, %v6m, %v6i, %v6rm, %v6rv = memfmt.native_batch_norm %v5, %layer1_0_bn1_weight, %layer1_0_bn1_bias, %layer1_0_bn1_running_mean, %layer1_0_bn1_running_var : (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  memfmt.assign_weight "layer1.0.bn1.running_mean", %v6rm : tensor<8xf32>
  memfmt.assign_weight "layer1.0.bn1.running_var", %v6rv : tensor<8xf32>
  %v7 = memfmt.relu %v6 : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %v8 = memfmt.conv2d %v7, %layer1_0_conv2_weight {padding = array<i64: 1, 1>} : (tensor<2x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x8x8xf32>
  %v9, %v9m, %v9i, %v9rm, %v9rv = memfmt.native_batch_norm %v8, %layer1_0_bn2_weight, %layer1_0_bn2_bias, %layer1_0_bn2_running_mean, %layer1_0_bn2_running_var : (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  memfmt.assign_weight "layer1.0.bn2.running_mean", %v9rm : tensor<8xf32>
  memfmt.assign_weight "layer1.0.bn2.running_var", %v9rv : tensor<8xf32>
  %v10 = memfmt.add %v9, %v4 : tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %v11 = memfmt.relu %v10 : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
  %v12 = memfmt.conv2d %v11, %layer2_0_conv1_weight {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<2x8x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x4x4xf32>
  %v13, %v13m, %v13i, %v13rm, %v13rv = memfmt.native_batch_norm %v12, %layer2_0_bn1_weight, %layer2_0_bn1_bias, %layer2_0_bn1_running_mean, %layer2_0_bn1_running_var : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  memfmt.assign_weight "layer2.0.bn1.running_mean", %v13rm : tensor<16xf32>
  memfmt.assign_weight "layer2.0.bn1.running_var", %v13rv : tensor<16xf32>
  %v14 = memfmt.relu %v13 : tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  %v15 = memfmt.conv2d %v14, %layer2_0_conv2_weight {padding = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x4x4xf32>
  %v16, %v16m, %v16i, %v16rm, %v16rv = memfmt.native_batch_norm %v15, %layer2_0_bn2_weight, %layer2_0_bn2_bias, %layer2_0_bn2_running_mean, %layer2_0_bn2_running_var : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  memfmt.assign_weight "layer2.0.bn2.running_mean", %v16rm : tensor<16xf32>
  memfmt.assign_weight "layer2.0.bn2.running_var", %v16rv : tensor<16xf32>
  %v17 = memfmt.conv2d %v11, %layer2_0_downsample_0_weight {stride = array<i64: 2, 2>} : (tensor<2x8x8x8xf32>, tensor<16x8x1x1xf32>) -> tensor<2x16x4x4xf32>
  %v18, %v18m, %v18i, %v18rm, %v18rv = memfmt.native_batch_norm %v17, %layer2_0_downsample_1_weight, %layer2_0_downsample_1_bias, %layer2_0_downsample_1_running_mean, %layer2_0_downsample_1_running_var : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  memfmt.assign_weight "layer2.0.downsample.1.running_mean", %v18rm : tensor<16xf32>
  memfmt.assign_weight "layer2.0.downsample.1.running_var", %v18rv : tensor<16xf32>
  %v19 = memfmt.add %v16, %v18 : tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  %v20 = memfmt.relu %v19 : tensor<2x16x4x4xf32> -> tensor<2x16x4x4xf32>
  %v21 = memfmt.adaptive_avg_pool2d %v20 {output_size = array<i64: 1, 1>} : tensor<2x16x4x4xf32> -> tensor<2x16x1x1xf32>
  %v22 = memfmt.flatten %v21 {start_dim = 1 : i64} : tensor<2x16x1x1xf32> -> tensor<2x16xf32>
  %v23 = memfmt.linear %v22, %fc_weight, %fc_bias : (tensor<2x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %loss = memfmt.cross_entropy_loss %v23, %t : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
