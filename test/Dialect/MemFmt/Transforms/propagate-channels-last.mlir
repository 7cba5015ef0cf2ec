// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last --memfmt-verify-layouts | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last="inputs=channels-last" --memfmt-verify-layouts | FileCheck %s --check-prefix=DECLARED
// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last="inputs=keep weights=keep" --memfmt-verify-layouts | FileCheck %s --check-prefix=KEEP
// RUN: memfmt-opt %s -split-input-file --memfmt-propagate-channels-last="outputs=channels-last" --memfmt-verify-layouts | FileCheck %s --check-prefix=CLOUT

// inputs=convert: one conversion at entry, relu runs channels-last (L5), and
// outputs=keep converts the result back to the declared format.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[X:.+]]: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK: %[[C:.+]] = memfmt.contiguous %[[X]] {memfmt.reason = "inputs=convert{{.*}}", memory_format = #memfmt.memory_format<channels_last>}
// CHECK: %[[R:.+]] = memfmt.relu %[[C]] : {{.*}} -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// CHECK: %[[B:.+]] = memfmt.contiguous %[[R]] {memfmt.reason = "outputs=keep{{.*}}"}
// CHECK: return %[[B]] : tensor<2x3x4x5xf32>
// inputs=channels-last: the signature changes, no conversion at entry.
// DECLARED-LABEL: func.func @elementwise(
// DECLARED-SAME: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x3x4x5xf32>
// DECLARED-NEXT: memfmt.relu
// DECLARED-NEXT: memfmt.contiguous
// DECLARED-NEXT: return
// inputs=keep: nothing to propagate, nothing inserted.
// KEEP-LABEL: func.func @elementwise(
// KEEP-NEXT: memfmt.relu %{{.+}} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
// KEEP-NEXT: return
// outputs=channels-last: the result leaves channels-last.
// CLOUT-LABEL: func.func @elementwise(
// CLOUT-SAME: -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// CLOUT-NOT: memfmt.reason = "outputs=keep
// CLOUT: return
func.func @elementwise(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = memfmt.relu %x : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// L5 join is order-independent: add(cl, nchw) and add(nchw, cl) are both
// channels-last.
// KEEP-LABEL: func.func @add_both_orders(
// KEEP: memfmt.add %{{.+}}, %{{.+}} : {{.*}} -> tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
// KEEP: memfmt.add %{{.+}}, %{{.+}} : {{.*}} -> tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
func.func @add_both_orders(%cl: tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>,
                           %nchw: tensor<2x8x3x3xf32>)
    -> (tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>) {
  %0 = memfmt.add %cl, %nchw : tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>, tensor<2x8x3x3xf32> -> tensor<2x8x3x3xf32>
  %1 = memfmt.add %nchw, %cl : tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>> -> tensor<2x8x3x3xf32>
  return %0, %1 : tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>
}

// -----

// PyTorch's conv rule: a channels-last weight with an NCHW input gives a
// channels-last output, and so does everything downstream.
// KEEP-LABEL: func.func @conv_cl_weight_nchw_input(
// KEEP: memfmt.conv2d {{.*}} -> tensor<1x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
// KEEP: memfmt.batch_norm {{.*}} -> tensor<1x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
// KEEP: memfmt.contiguous {{.*}}outputs=keep
func.func @conv_cl_weight_nchw_input(%x: tensor<1x3x8x8xf32>, %p: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %w = memfmt.weight "w" : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %0 = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) -> tensor<1x4x6x6xf32>
  %1 = memfmt.batch_norm %0, %p, %p, %p, %p : tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}

// -----

// weights=channels-last: each 4-D parameter gets a conversion right after it
// (memfmt-fold-conversions turns it into a re-laid parameter); grouped
// convolution propagates like any other.
// CHECK-LABEL: func.func @grouped_conv_weights(
// CHECK: %[[W:.+]] = memfmt.weight "w" : tensor<8x2x3x3xf32>
// CHECK-NEXT: %[[WC:.+]] = memfmt.contiguous %[[W]] {memfmt.reason = "weights=channels-last{{.*}}", memory_format = #memfmt.memory_format<channels_last>}
// CHECK: memfmt.conv2d %{{.+}}, %[[WC]] {groups = 4 : i64{{.*}}} : {{.*}} -> tensor<2x8x5x5xf32, #memfmt.strides<[200, 1, 40, 8]>>
// KEEP-LABEL: func.func @grouped_conv_weights(
// KEEP-NOT: memfmt.contiguous
// KEEP: return
func.func @grouped_conv_weights(%x: tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32> {
  %w = memfmt.weight "w" : tensor<8x2x3x3xf32>
  %0 = memfmt.conv2d %x, %w {groups = 4 : i64, padding = array<i64: 1, 1>} : (tensor<2x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x5x5xf32>
  return %0 : tensor<2x8x5x5xf32>
}

// -----

// max_pool2d_with_indices: both results channels-last, as in PyTorch.
// DECLARED-LABEL: func.func @pool_indices(
// DECLARED: memfmt.max_pool2d_with_indices {{.*}} -> tensor<1x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>, tensor<1x8x3x3xi64, #memfmt.strides<[72, 1, 24, 8]>>
func.func @pool_indices(%x: tensor<1x8x6x6xf32>) -> (tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>) {
  %0, %1 = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>} : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>
  return %0, %1 : tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>
}

// -----

// Pooling, cat and chunk along the batch all propagate; the 2-D linear and
// the flatten result are untouched.
// DECLARED-LABEL: func.func @pools_cat_chunk(
// DECLARED: memfmt.avg_pool2d {{.*}} -> tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// DECLARED: memfmt.max_pool2d {{.*}} -> tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// DECLARED: memfmt.cat {{.*}} -> tensor<4x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// DECLARED: memfmt.chunk {{.*}} -> tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>, tensor<2x4x3x3xf32, #memfmt.strides<[36, 1, 12, 4]>>
// DECLARED: memfmt.adaptive_avg_pool2d {{.*}} -> tensor<2x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>
// DECLARED: memfmt.flatten {{.*}} -> tensor<2x4xf32>
// DECLARED: memfmt.linear {{.*}} -> tensor<2x5xf32>
func.func @pools_cat_chunk(%x: tensor<2x4x6x6xf32>, %w: tensor<5x4xf32>) -> tensor<2x5xf32> {
  %0 = memfmt.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x4x6x6xf32> -> tensor<2x4x3x3xf32>
  %1 = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x4x6x6xf32> -> tensor<2x4x3x3xf32>
  %2 = memfmt.cat %0, %1 {dim = 0 : i64} : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<4x4x3x3xf32>
  %3:2 = memfmt.chunk %2 {chunks = 2 : i64} : tensor<4x4x3x3xf32> -> tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
  %4 = memfmt.adaptive_avg_pool2d %3#1 {output_size = array<i64: 1, 1>} : tensor<2x4x3x3xf32> -> tensor<2x4x1x1xf32>
  %5 = memfmt.flatten %4 {start_dim = 1 : i64} : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %6 = memfmt.linear %5, %w : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  return %6 : tensor<2x5xf32>
}

// -----

// L6: preserve_format results follow their operand; explicit formats do not.
// DECLARED-LABEL: func.func @preserve_format(
// DECLARED: memfmt.clone %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// DECLARED: memfmt.empty_like %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// DECLARED: memfmt.to %{{.+}} {dtype = f16} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
// DECLARED: %[[C:.+]] = memfmt.clone %{{.+}} {memory_format = #memfmt.memory_format<contiguous>}
// DECLARED: return %{{.+}}, %{{.+}}, %{{.+}}, %[[C]] :
func.func @preserve_format(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf16>, tensor<2x3x4x5xf32>) {
  %0 = memfmt.clone %x : tensor<2x3x4x5xf32>
  %1 = memfmt.empty_like %x : tensor<2x3x4x5xf32>
  %2 = memfmt.to %x {dtype = f16} : tensor<2x3x4x5xf32>
  %3 = "memfmt.clone"(%x) <{memory_format = #memfmt.memory_format<contiguous>}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %0, %1, %2, %3 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf16>, tensor<2x3x4x5xf32>
}

// -----

// An op that does not declare how it treats layouts gets its operand back in
// the type it had.
// DECLARED-LABEL: func.func @opaque_user(
// DECLARED: %[[R:.+]] = memfmt.relu
// DECLARED: %[[B:.+]] = memfmt.contiguous %[[R]] {memfmt.reason = "the user does not declare how it treats layouts"}
// DECLARED: call @external(%[[B]]) : (tensor<1x2x3x3xf32>) -> ()
func.func private @external(tensor<1x2x3x3xf32>)
func.func @opaque_user(%x: tensor<1x2x3x3xf32>) {
  %0 = memfmt.relu %x : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  func.call @external(%0) : (tensor<1x2x3x3xf32>) -> ()
  return
}

// -----

// Edge shapes: N=1, C=1 and H=W=1 get channels-last strides too (for C=1 and
// H=W=1 they are the same bytes, L3, which memfmt-fold-conversions uses).
// DECLARED-LABEL: func.func @edge_shapes(
// DECLARED-SAME: tensor<1x1x5x7xf32, #memfmt.strides<[35, 1, 7, 1]>>
// DECLARED-SAME: tensor<3x6x1x1xf32, #memfmt.strides<[6, 1, 6, 6]>>
// DECLARED: memfmt.relu {{.*}} -> tensor<1x1x5x7xf32, #memfmt.strides<[35, 1, 7, 1]>>
// DECLARED: memfmt.relu {{.*}} -> tensor<3x6x1x1xf32, #memfmt.strides<[6, 1, 6, 6]>>
func.func @edge_shapes(%a: tensor<1x1x5x7xf32>, %b: tensor<3x6x1x1xf32>) -> (tensor<1x1x5x7xf32>, tensor<3x6x1x1xf32>) {
  %0 = memfmt.relu %a : tensor<1x1x5x7xf32> -> tensor<1x1x5x7xf32>
  %1 = memfmt.relu %b : tensor<3x6x1x1xf32> -> tensor<3x6x1x1xf32>
  return %0, %1 : tensor<1x1x5x7xf32>, tensor<3x6x1x1xf32>
}

// -----

// 5-D tensors use channels_last_3d (C < W < H < D < N).
// DECLARED-LABEL: func.func @channels_last_3d(
// DECLARED: memfmt.relu {{.*}} -> tensor<2x3x4x5x6xf32, #memfmt.strides<[360, 1, 90, 18, 3]>>
func.func @channels_last_3d(%x: tensor<2x3x4x5x6xf32>) -> tensor<2x3x4x5x6xf32> {
  %0 = memfmt.relu %x : tensor<2x3x4x5x6xf32> -> tensor<2x3x4x5x6xf32>
  return %0 : tensor<2x3x4x5x6xf32>
}
