// RUN: memfmt-opt %s --canonicalize | FileCheck %s

// The reshape - permute - reshape an exporter writes for a channel shuffle
// is memfmt.channel_shuffle (3-D and 4-D).
// CHECK-LABEL: func.func @channel_shuffle(
// CHECK-NEXT: %[[A:.+]] = memfmt.channel_shuffle %arg0 {groups = 3 : i64} : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
// CHECK-NEXT: %[[B:.+]] = memfmt.channel_shuffle %arg1 {groups = 2 : i64} : tensor<1x4x7xf32> -> tensor<1x4x7xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @channel_shuffle(%x: tensor<2x6x5x3xf32>, %y: tensor<1x4x7xf32>) -> (tensor<2x6x5x3xf32>, tensor<1x4x7xf32>) {
  %a = memfmt.reshape %x : tensor<2x6x5x3xf32> -> tensor<2x3x2x5x3xf32>
  %b = memfmt.permute %a {dims = array<i64: 0, 2, 1, 3, 4>} : tensor<2x3x2x5x3xf32> -> tensor<2x2x3x5x3xf32>
  %c = memfmt.reshape %b : tensor<2x2x3x5x3xf32> -> tensor<2x6x5x3xf32>
  %d = memfmt.reshape %y : tensor<1x4x7xf32> -> tensor<1x2x2x7xf32>
  %e = memfmt.permute %d {dims = array<i64: 0, 2, 1, 3>} : tensor<1x2x2x7xf32> -> tensor<1x2x2x7xf32>
  %f = memfmt.reshape %e : tensor<1x2x2x7xf32> -> tensor<1x4x7xf32>
  return %c, %f : tensor<2x6x5x3xf32>, tensor<1x4x7xf32>
}

// Not a channel shuffle: another permutation, a split of the batch, and a
// permute with another user.
// CHECK-LABEL: func.func @not_shuffles(
// CHECK-NOT: memfmt.channel_shuffle
// CHECK: return
func.func @not_shuffles(%x: tensor<2x6x5x3xf32>) -> (tensor<2x6x5x3xf32>, tensor<2x6x5x3xf32>, tensor<2x6x5x3xf32>, tensor<2x2x3x5x3xf32>) {
  %a = memfmt.reshape %x : tensor<2x6x5x3xf32> -> tensor<2x3x2x5x3xf32>
  %b = memfmt.permute %a {dims = array<i64: 0, 2, 1, 4, 3>} : tensor<2x3x2x5x3xf32> -> tensor<2x2x3x3x5xf32>
  %c = memfmt.reshape %b : tensor<2x2x3x3x5xf32> -> tensor<2x6x5x3xf32>
  %d = memfmt.reshape %x : tensor<2x6x5x3xf32> -> tensor<1x2x6x5x3xf32>
  %e = memfmt.permute %d {dims = array<i64: 0, 2, 1, 3, 4>} : tensor<1x2x6x5x3xf32> -> tensor<1x6x2x5x3xf32>
  %f = memfmt.reshape %e : tensor<1x6x2x5x3xf32> -> tensor<2x6x5x3xf32>
  %g = memfmt.reshape %x : tensor<2x6x5x3xf32> -> tensor<2x3x2x5x3xf32>
  %h = memfmt.permute %g {dims = array<i64: 0, 2, 1, 3, 4>} : tensor<2x3x2x5x3xf32> -> tensor<2x2x3x5x3xf32>
  %i = memfmt.reshape %h : tensor<2x2x3x5x3xf32> -> tensor<2x6x5x3xf32>
  return %c, %f, %i, %h : tensor<2x6x5x3xf32>, tensor<2x6x5x3xf32>, tensor<2x6x5x3xf32>, tensor<2x2x3x5x3xf32>
}

// Permutes compose; the identity permutation folds away.
// CHECK-LABEL: func.func @compose(
// CHECK-NEXT: %[[P:.+]] = memfmt.permute %arg0 {dims = array<i64: 0, 3, 1, 2>} : tensor<2x3x4x5xf32> -> tensor<2x5x3x4xf32>
// CHECK-NEXT: return %arg0, %[[P]]
func.func @compose(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x5x3x4xf32>) {
  %a = memfmt.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = memfmt.permute %a {dims = array<i64: 0, 3, 1, 2>} : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  %c = memfmt.permute %a {dims = array<i64: 0, 2, 3, 1>} : tensor<2x4x5x3xf32> -> tensor<2x5x3x4xf32>
  %d = memfmt.permute %c {dims = array<i64: 0, 1, 2, 3>} : tensor<2x5x3x4xf32> -> tensor<2x5x3x4xf32>
  return %b, %d : tensor<2x3x4x5xf32>, tensor<2x5x3x4xf32>
}

// A permute of a reshape that only merges dims permutes first and reshapes
// after: ViT's `x.flatten(2).transpose(1, 2)` becomes the NCHW -> NHWC
// permute (a view of a channels-last x) and a reshape of its contiguous
// result; size-1 dims travel with their runs.
// CHECK-LABEL: func.func @permute_before_merge(
// CHECK-NEXT: %[[P:.+]] = memfmt.permute %arg0 {dims = array<i64: 0, 2, 3, 1>} : tensor<2x8x3x5xf32> -> tensor<2x3x5x8xf32>
// CHECK-NEXT: %[[R:.+]] = memfmt.reshape %[[P]] : tensor<2x3x5x8xf32> -> tensor<2x15x8xf32>
// CHECK-NEXT: %[[Q:.+]] = memfmt.permute %arg1 {dims = array<i64: 2, 3, 0, 1>} : tensor<1x8x1x5xf32> -> tensor<1x5x1x8xf32>
// CHECK-NEXT: %[[S:.+]] = memfmt.reshape %[[Q]] : tensor<1x5x1x8xf32> -> tensor<5x8xf32>
// CHECK-NEXT: return %[[R]], %[[S]]
func.func @permute_before_merge(%x: tensor<2x8x3x5xf32>, %y: tensor<1x8x1x5xf32>) -> (tensor<2x15x8xf32>, tensor<5x8xf32>) {
  %r = memfmt.reshape %x : tensor<2x8x3x5xf32> -> tensor<2x8x15xf32>
  %p = memfmt.permute %r {dims = array<i64: 0, 2, 1>} : tensor<2x8x15xf32> -> tensor<2x15x8xf32>
  %s = memfmt.reshape %y : tensor<1x8x1x5xf32> -> tensor<8x5xf32>
  %q = memfmt.permute %s {dims = array<i64: 1, 0>} : tensor<8x5xf32> -> tensor<5x8xf32>
  return %p, %q : tensor<2x15x8xf32>, tensor<5x8xf32>
}

// Not when the reshape splits a dim or has another use.
// CHECK-LABEL: func.func @permute_after_split(
// CHECK-NEXT: memfmt.reshape %arg0 : tensor<2x8x15xf32> -> tensor<2x2x4x15xf32>
// CHECK-NEXT: memfmt.permute
// CHECK-NEXT: memfmt.reshape %arg0 : tensor<2x8x15xf32> -> tensor<2x120xf32>
// CHECK-NEXT: memfmt.permute
// CHECK-NEXT: memfmt.relu
// CHECK-NEXT: return
func.func @permute_after_split(%x: tensor<2x8x15xf32>) -> (tensor<2x15x2x4xf32>, tensor<120x2xf32>, tensor<2x120xf32>) {
  %r = memfmt.reshape %x : tensor<2x8x15xf32> -> tensor<2x2x4x15xf32>
  %p = memfmt.permute %r {dims = array<i64: 0, 3, 1, 2>} : tensor<2x2x4x15xf32> -> tensor<2x15x2x4xf32>
  %s = memfmt.reshape %x : tensor<2x8x15xf32> -> tensor<2x120xf32>
  %q = memfmt.permute %s {dims = array<i64: 1, 0>} : tensor<2x120xf32> -> tensor<120x2xf32>
  %u = memfmt.relu %s : tensor<2x120xf32> -> tensor<2x120xf32>
  return %p, %q, %u : tensor<2x15x2x4xf32>, tensor<120x2xf32>, tensor<2x120xf32>
}
