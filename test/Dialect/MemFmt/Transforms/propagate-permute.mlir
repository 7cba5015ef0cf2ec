// RUN: memfmt-opt %s --memfmt-channels-last --memfmt-verify-layouts | FileCheck %s
// RUN: memfmt-opt %s --memfmt-channels-last --memfmt-report=format=json 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// ConvNeXt's block in channels-last: the permute to [N, H, W, C] of a
// channels-last tensor is the contiguous [N, H, W, C] (a view, L3 in
// spirit), the layer norm and the Linear layers run on it, and the permute
// back is channels-last again: no conversion but the input's, and the
// residual add stays channels-last (L5).
// CHECK-LABEL: func.func @convnext_block(
// CHECK: %[[IN:.+]] = memfmt.contiguous %arg0 {{.*}}channels_last
// CHECK: %[[DW:.+]] = memfmt.conv2d %[[IN]], {{.*}} -> tensor<1x8x5x3xf32, #memfmt.strides<[120, 1, 24, 8]>>
// CHECK: %[[NHWC:.+]] = memfmt.permute %[[DW]] {dims = array<i64: 0, 2, 3, 1>} : tensor<1x8x5x3xf32, #memfmt.strides<[120, 1, 24, 8]>> -> tensor<1x5x3x8xf32>
// CHECK: memfmt.layer_norm %[[NHWC]] {{.*}} -> tensor<1x5x3x8xf32>
// CHECK: %[[BACK:.+]] = memfmt.permute %{{.+}} {dims = array<i64: 0, 3, 1, 2>} : tensor<1x5x3x8xf32> -> tensor<1x8x5x3xf32, #memfmt.strides<[120, 1, 24, 8]>>
// CHECK: memfmt.add %[[BACK]], %[[IN]] : {{.*}} -> tensor<1x8x5x3xf32, #memfmt.strides<[120, 1, 24, 8]>>
// CHECK-NOT: memfmt.contiguous %{{.*}}channels_last
// CHECK: memfmt.contiguous
// CHECK-NEXT: return
func.func @convnext_block(%x: tensor<1x8x5x3xf32>, %dw: tensor<8x1x3x3xf32>,
                          %g: tensor<8xf32>, %w1: tensor<16x8xf32>,
                          %w2: tensor<8x16xf32>) -> tensor<1x8x5x3xf32> {
  %c = memfmt.conv2d %x, %dw {groups = 8 : i64, padding = array<i64: 1, 1>} : (tensor<1x8x5x3xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x5x3xf32>
  %p = memfmt.permute %c {dims = array<i64: 0, 2, 3, 1>} : tensor<1x8x5x3xf32> -> tensor<1x5x3x8xf32>
  %n = memfmt.layer_norm %p weight %g bias %g {normalized_shape = array<i64: 8>, eps = 1.0e-6 : f64} : tensor<1x5x3x8xf32> weight tensor<8xf32> bias tensor<8xf32> -> tensor<1x5x3x8xf32>
  %r = memfmt.reshape %n : tensor<1x5x3x8xf32> -> tensor<15x8xf32>
  %l1 = memfmt.linear %r, %w1 : (tensor<15x8xf32>, tensor<16x8xf32>) -> tensor<15x16xf32>
  %a = memfmt.gelu %l1 : tensor<15x16xf32> -> tensor<15x16xf32>
  %l2 = memfmt.linear %a, %w2 : (tensor<15x16xf32>, tensor<8x16xf32>) -> tensor<15x8xf32>
  %b = memfmt.reshape %l2 : tensor<15x8xf32> -> tensor<1x5x3x8xf32>
  %q = memfmt.permute %b {dims = array<i64: 0, 3, 1, 2>} : tensor<1x5x3x8xf32> -> tensor<1x8x5x3xf32>
  %y = memfmt.add %q, %x : tensor<1x8x5x3xf32>, tensor<1x8x5x3xf32> -> tensor<1x8x5x3xf32>
  return %y : tensor<1x8x5x3xf32>
}

// A permute whose permuted strides are no memory format copies into a
// contiguous result; so does the first permute of an NCHW tensor.
// CHECK-LABEL: func.func @permute_copies(
// CHECK: memfmt.permute %{{.+}} {dims = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x4x3x5xf32>
// CHECK: memfmt.permute %arg1 {dims = array<i64: 1, 0>} : tensor<3x7xf32> -> tensor<7x3xf32>
func.func @permute_copies(%x: tensor<2x3x4x5xf32>, %m: tensor<3x7xf32>) -> (tensor<2x4x3x5xf32>, tensor<7x3xf32>) {
  %r = memfmt.relu %x : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  %p = memfmt.permute %r {dims = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x5xf32> -> tensor<2x4x3x5xf32>
  %t = memfmt.permute %m {dims = array<i64: 1, 0>} : tensor<3x7xf32> -> tensor<7x3xf32>
  return %p, %t : tensor<2x4x3x5xf32>, tensor<7x3xf32>
}

// ShuffleNet: the channel shuffle an exporter writes (reshape to
// [N, g, C/g, H, W], swap dims 1 and 2, reshape back) becomes
// memfmt.channel_shuffle, which keeps channels-last (L5): no conversion for
// its reshapes (L7), and the chunk (two slices) stays channels-last too.
// CHECK-LABEL: func.func @shuffle(
// CHECK-NOT: memfmt.reshape
// CHECK: memfmt.channel_shuffle %{{.+}} {groups = 2 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>
// CHECK: memfmt.slice %{{.+}} -> tensor<2x3x5x3xf32, #memfmt.strides<[45, 1, 9, 3]>>
// CHECK: memfmt.slice %{{.+}} -> tensor<2x3x5x3xf32, #memfmt.strides<[45, 1, 9, 3]>>
// CHECK-NOT: memfmt.contiguous %{{.*}}channels_last
// CHECK: memfmt.contiguous
// CHECK-NEXT: return
func.func @shuffle(%x: tensor<2x6x5x3xf32>) -> tensor<2x6x5x3xf32> {
  %c = memfmt.relu %x : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  %a = memfmt.reshape %c : tensor<2x6x5x3xf32> -> tensor<2x2x3x5x3xf32>
  %b = memfmt.permute %a {dims = array<i64: 0, 2, 1, 3, 4>} : tensor<2x2x3x5x3xf32> -> tensor<2x3x2x5x3xf32>
  %d = memfmt.reshape %b : tensor<2x3x2x5x3xf32> -> tensor<2x6x5x3xf32>
  %s1 = memfmt.slice %d {dim = 1 : i64, start = 0 : i64, end = 3 : i64} : tensor<2x6x5x3xf32> -> tensor<2x3x5x3xf32>
  %s2 = memfmt.slice %d {dim = 1 : i64, start = 3 : i64, end = 6 : i64} : tensor<2x6x5x3xf32> -> tensor<2x3x5x3xf32>
  %e = memfmt.relu %s2 : tensor<2x3x5x3xf32> -> tensor<2x3x5x3xf32>
  %f = memfmt.cat %s1, %e {dim = 1 : i64} : tensor<2x3x5x3xf32>, tensor<2x3x5x3xf32> -> tensor<2x6x5x3xf32>
  return %f : tensor<2x6x5x3xf32>
}

// A softmax over the channels of a channels-last tensor keeps channels-last
// (L5): its kernel reads each row of C elements with the channel stride.
// CHECK-LABEL: func.func @softmax_channels(
// CHECK: memfmt.softmax %{{.+}} {dim = 1 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>
// CHECK-NOT: memfmt.contiguous %{{.*}}channels_last
// CHECK: memfmt.contiguous
// CHECK-NEXT: return
func.func @softmax_channels(%x: tensor<2x6x5x3xf32>) -> tensor<2x6x5x3xf32> {
  %c = memfmt.relu %x : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  %s = memfmt.softmax %c {dim = 1 : i64} : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  %r = memfmt.relu %s : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  return %r : tensor<2x6x5x3xf32>
}

// REPORT: "permute_bytes_per_run": 1128,
// REPORT: "permute_copies": 2,
// REPORT: "permute_views": 2,
// REPORT: "runtime_conversions": 7
