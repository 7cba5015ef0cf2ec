// RUN: memfmt-opt %s -canonicalize | FileCheck %s

// Canonicalization of the memfmt ops: memfmt.contiguous folds away when it
// changes nothing (L8: values never change, only strides), conversions that
// move bytes stay, and dead ops (all memfmt ops are Pure) are erased.

// contiguous to the type the value already has is the identity.
// CHECK-LABEL: func.func @contiguous_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return %[[X]]
func.func @contiguous_same_type(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %y = memfmt.contiguous %x : tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32>
}

// channels_last of a value that is already channels-last is the identity.
// CHECK-LABEL: func.func @channels_last_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return %[[X]]
func.func @channels_last_same_type(%x: tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>) -> tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>> {
  %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
  return %y : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
}

// A round trip NCHW -> channels-last -> NCHW gives back the original value,
// and the dead inner conversion goes too.
// CHECK-LABEL: func.func @round_trip_nchw
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return %[[X]]
func.func @round_trip_nchw(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %cl = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
  %y = memfmt.contiguous %cl : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
  return %y : tensor<1x3x8x8xf32>
}

// The round trip the other way (channels-last -> NCHW -> channels-last).
// CHECK-LABEL: func.func @round_trip_channels_last
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>)
// CHECK-NOT: memfmt.contiguous
// CHECK: return %[[X]]
func.func @round_trip_channels_last(%x: tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>) -> tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>> {
  %c = memfmt.contiguous %x : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
  %y = memfmt.contiguous %c {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
}

// A round trip whose middle value has another user: the outer conversion
// folds, the inner one stays for that user.
// CHECK-LABEL: func.func @round_trip_shared
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>)
// CHECK: %[[CL:.+]] = memfmt.contiguous %[[X]] {memory_format = #memfmt.memory_format<channels_last>}
// CHECK-NOT: memfmt.contiguous
// CHECK: return %[[X]], %[[CL]]
func.func @round_trip_shared(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>) {
  %cl = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
  %y = memfmt.contiguous %cl : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
  return %y, %cl : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
}

// A conversion that moves bytes (NCHW -> channels-last) stays.
// CHECK-LABEL: func.func @conversion_moves_bytes
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>)
// CHECK: %[[Y:.+]] = memfmt.contiguous %[[X]] {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
// CHECK: return %[[Y]]
func.func @conversion_moves_bytes(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>> {
  %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>
}

// A chain of two conversions that is no round trip (permuted -> NCHW ->
// channels-last) keeps both: the outer one still moves bytes.
// CHECK-LABEL: func.func @chain_not_round_trip
// CHECK: %[[C:.+]] = memfmt.contiguous %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
// CHECK: %[[Y:.+]] = memfmt.contiguous %[[C]] {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
// CHECK: return %[[Y]]
func.func @chain_not_round_trip(%x: tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> {
  %c = memfmt.contiguous %x : tensor<2x3x4x5xf32, #memfmt.strides<[20, 40, 5, 1]>>
  %y = memfmt.contiguous %c {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  return %y : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
}

// An L3 conversion (Nx2048x1x1: same bytes) changes the type's encoding, so
// canonicalization keeps it rather than drop the encoding; removing it is
// memfmt-fold-conversions' job.
// CHECK-LABEL: func.func @same_bytes_keeps_encoding
// CHECK: %[[Y:.+]] = memfmt.contiguous %{{.+}} : tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
// CHECK: return %[[Y]] : tensor<8x2048x1x1xf32>
func.func @same_bytes_keeps_encoding(%x: tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>) -> tensor<8x2048x1x1xf32> {
  %y = memfmt.contiguous %x : tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
  return %y : tensor<8x2048x1x1xf32>
}

// Dead pure ops are erased: parameters, compute and conversions alike.
// CHECK-LABEL: func.func @dead_ops
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>)
// CHECK-NOT: memfmt.
// CHECK: return %[[X]]
func.func @dead_ops(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %w = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32>
  %c = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = memfmt.relu %c : tensor<1x4x6x6xf32> -> tensor<1x4x6x6xf32>
  %cl = memfmt.contiguous %r {memory_format = #memfmt.memory_format<channels_last>} : tensor<1x4x6x6xf32>
  %e = memfmt.empty_like %x : tensor<1x3x8x8xf32>
  %k:2 = memfmt.chunk %x {chunks = 2 : i64, dim = 2 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32>
  return %x : tensor<1x3x8x8xf32>
}

// Live ops stay.
// CHECK-LABEL: func.func @live_ops
// CHECK: memfmt.weight
// CHECK: memfmt.conv2d
// CHECK: memfmt.relu
func.func @live_ops(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = memfmt.weight "conv1.weight" : tensor<4x3x3x3xf32>
  %c = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = memfmt.relu %c : tensor<1x4x6x6xf32> -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// x * sigmoid(x), in either order, is silu(x); a broadcast gate (a
// squeeze-excite sigmoid of another value) stays a mul.
// CHECK-LABEL: func.func @silu(
// CHECK-NEXT: %[[A:.+]] = memfmt.silu %arg0 : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
// CHECK-NEXT: %[[B:.+]] = memfmt.silu %[[A]]
// CHECK-NEXT: %[[G:.+]] = memfmt.sigmoid %arg1
// CHECK-NEXT: %[[C:.+]] = memfmt.mul %[[B]], %[[G]]
// CHECK-NEXT: return %[[C]]
func.func @silu(%x: tensor<1x4x3x3xf32>, %s: tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32> {
  %0 = memfmt.sigmoid %x : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  %1 = memfmt.mul %x, %0 : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  %2 = memfmt.sigmoid %1 : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  %3 = memfmt.mul %2, %1 : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  %4 = memfmt.sigmoid %s : tensor<1x4x1x1xf32> -> tensor<1x4x1x1xf32>
  %5 = memfmt.mul %3, %4 : tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32> -> tensor<1x4x3x3xf32>
  return %5 : tensor<1x4x3x3xf32>
}

// The gradients of disjoint slices of one tensor (slice_backward pads each
// with zeros) add up to one cat of the pieces: a ViT's q, k, v split along
// the last dim, accumulated pairwise. A gap takes a zero piece that spans it
// exactly.
// CHECK-LABEL: func.func @disjoint_slice_gradients(
// CHECK-NEXT: %[[C:.+]] = memfmt.cat %arg0, %arg1, %arg2 {dim = 2 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x12xf32>
// CHECK-NEXT: return %[[C]]
func.func @disjoint_slice_gradients(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x3x12xf32> {
  %z4 = arith.constant dense<0.0> : tensor<2x3x4xf32>
  %z8 = arith.constant dense<0.0> : tensor<2x3x8xf32>
  %gq = memfmt.cat %q, %z8 {dim = 2 : i64} : tensor<2x3x4xf32>, tensor<2x3x8xf32> -> tensor<2x3x12xf32>
  %gk = memfmt.cat %z4, %k, %z4 {dim = -1 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %gv = memfmt.cat %z8, %v {dim = 2 : i64} : tensor<2x3x8xf32>, tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %0 = memfmt.add %gq, %gk : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  %1 = memfmt.add %gv, %0 : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  return %1 : tensor<2x3x12xf32>
}

// Overlapping values, a gap no zero piece spans exactly, and cats along
// different dims stay sums.
// CHECK-LABEL: func.func @cats_that_stay_sums(
// CHECK-COUNT-3: memfmt.add
// CHECK-NOT: memfmt.add
func.func @cats_that_stay_sums(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %c: tensor<2x8xf32>) -> (tensor<2x12xf32>, tensor<2x12xf32>, tensor<4x8xf32>) {
  %z4 = arith.constant dense<0.0> : tensor<2x4xf32>
  %z8 = arith.constant dense<0.0> : tensor<2x8xf32>
  %za = arith.constant dense<0.0> : tensor<4x4xf32>
  %x = memfmt.cat %c, %z4 {dim = 1 : i64} : tensor<2x8xf32>, tensor<2x4xf32> -> tensor<2x12xf32>
  %y = memfmt.cat %z4, %c {dim = 1 : i64} : tensor<2x4xf32>, tensor<2x8xf32> -> tensor<2x12xf32>
  %overlap = memfmt.add %x, %y : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %p = memfmt.cat %a, %z8 {dim = 1 : i64} : tensor<2x4xf32>, tensor<2x8xf32> -> tensor<2x12xf32>
  %q = memfmt.cat %z8, %b {dim = 1 : i64} : tensor<2x8xf32>, tensor<2x4xf32> -> tensor<2x12xf32>
  %gap = memfmt.add %p, %q : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %r = memfmt.cat %a, %b {dim = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  %s = memfmt.cat %za, %r {dim = 1 : i64} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
  %t = memfmt.cat %a, %b {dim = 1 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
  %u = memfmt.cat %t, %t {dim = 0 : i64} : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<4x8xf32>
  %dims = memfmt.add %s, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %overlap, %gap, %dims : tensor<2x12xf32>, tensor<2x12xf32>, tensor<4x8xf32>
}
