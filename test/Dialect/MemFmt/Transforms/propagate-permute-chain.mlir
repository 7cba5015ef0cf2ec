// RUN: memfmt-opt %s --memfmt-propagate-channels-last=inputs=keep --memfmt-verify-layouts | FileCheck %s

// A permute of a permute whose own source changed format: the second takes
// the strides the first is re-inferred with (channels-last here), not those
// computed from the first's declared type (which give contiguous), so the
// cat it feeds is channels-last by L5 (the join) and the layouts verify. A
// training step builds such chains: the gradient of a permute of a
// channels-last value is the inverse permute of a gradient typed before
// propagation.
// CHECK-LABEL: func.func @permute_of_permute(
// CHECK: %[[C:.+]] = memfmt.conv2d {{.*}} -> tensor<2x2x1x8xf32, #memfmt.strides<[16, 1, 16, 2]>>
// CHECK: %[[P:.+]] = memfmt.permute %[[C]] {{.*}} -> tensor<2x8x1x2xf32, #memfmt.strides<[16, 2, 16, 1]>>
// CHECK: %[[Q:.+]] = memfmt.permute %[[P]] {{.*}} -> tensor<2x2x1x8xf32, #memfmt.strides<[16, 1, 16, 2]>>
// CHECK: memfmt.cat %[[Q]], %arg1 {dim = 1 : i64} : tensor<2x2x1x8xf32, #memfmt.strides<[16, 1, 16, 2]>>, tensor<2x2x1x8xf32> -> tensor<2x4x1x8xf32, #memfmt.strides<[32, 1, 32, 4]>>
func.func @permute_of_permute(%x: tensor<2x3x1x8xf32, #memfmt.strides<[24, 1, 24, 3]>>, %d: tensor<2x2x1x8xf32>) -> tensor<2x4x1x8xf32> {
  %w = memfmt.weight "conv.weight" : tensor<2x3x1x1xf32>
  %c = memfmt.conv2d %x, %w : (tensor<2x3x1x8xf32, #memfmt.strides<[24, 1, 24, 3]>>, tensor<2x3x1x1xf32>) -> tensor<2x2x1x8xf32>
  %p = memfmt.permute %c {dims = array<i64: 0, 3, 2, 1>} : tensor<2x2x1x8xf32> -> tensor<2x8x1x2xf32, #memfmt.strides<[16, 1, 16, 8]>>
  %q = memfmt.permute %p {dims = array<i64: 0, 3, 2, 1>} : tensor<2x8x1x2xf32, #memfmt.strides<[16, 1, 16, 8]>> -> tensor<2x2x1x8xf32>
  %r = memfmt.cat %q, %d {dim = 1 : i64} : tensor<2x2x1x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x4x1x8xf32>
  return %r : tensor<2x4x1x8xf32>
}
