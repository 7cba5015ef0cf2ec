// RUN: memfmt-opt %s -split-input-file --memfmt-tile-batch="cache-bytes=5000" | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-tile-batch="cache-bytes=0" | FileCheck %s --check-prefix=OFF
// RUN: memfmt-opt %s -split-input-file --memfmt-tile-batch="sub-batch=2" | FileCheck %s --check-prefix=FORCED
// The tiled IR plans: each sample's convolution output takes the buffer of
// the one before, and the arena is 1664 bytes instead of 9216 untiled (the
// sub-batches of the input are views of it).
// RUN: memfmt-opt %s -split-input-file --memfmt-tile-batch="sub-batch=1" --memfmt-plan-memory | FileCheck %s --check-prefix=PLAN

// A channels-last stem at batch 4: the convolution, relu and pooling (each
// spanning more than 5000 bytes of activations) run two samples at a time on
// slices of the argument, and their pieces are concatenated for the
// flatten and the linear layer, which fit and run on the whole batch. The
// weights are shared; every type keeps its strides.
// CHECK-LABEL: func.func @stem(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
// CHECK-SAME: attributes {memfmt.batch_tiling = {batch = 4 : i64, ops = 3 : i64, sub_batch = 2 : i64}}
// CHECK: %[[W:.+]] = memfmt.weight "conv.weight"
// CHECK: %[[S0:.+]] = memfmt.slice %[[X]] {dim = 0 : i64, end = 2 : i64, start = 0 : i64} : tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>> -> tensor<2x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
// CHECK: %[[C0:.+]] = memfmt.conv2d %[[S0]], %[[W]] {{.*}} -> tensor<2x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
// CHECK: %[[R0:.+]] = memfmt.relu %[[C0]] : {{.*}} -> tensor<2x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
// CHECK: %[[P0:.+]] = memfmt.max_pool2d %[[R0]] {{.*}} -> tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
// CHECK: %[[S1:.+]] = memfmt.slice %[[X]] {dim = 0 : i64, end = 4 : i64, start = 2 : i64}
// CHECK: %[[C1:.+]] = memfmt.conv2d %[[S1]], %[[W]]
// CHECK: %[[R1:.+]] = memfmt.relu %[[C1]]
// CHECK: %[[P1:.+]] = memfmt.max_pool2d %[[R1]]
// CHECK: %[[P:.+]] = memfmt.cat %[[P0]], %[[P1]] : {{.*}} -> tensor<4x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
// CHECK-NOT: memfmt.slice
// CHECK: %[[F:.+]] = memfmt.flatten %[[P]] {{.*}} -> tensor<4x72xf32>
// CHECK: %[[Y:.+]] = memfmt.linear %[[F]], {{.*}} -> tensor<4x10xf32>
// CHECK: return %[[Y]]
// OFF-LABEL: func.func @stem(
// OFF-NOT: memfmt.slice
// OFF-NOT: memfmt.cat
// With sub-batch=2 every op that computes each sample alone is tiled, up
// to the result.
// FORCED-LABEL: func.func @stem(
// FORCED-COUNT-2: memfmt.linear {{.*}} -> tensor<2x10xf32>
// FORCED: %[[Y:.+]] = memfmt.cat {{.*}} -> tensor<4x10xf32>
// FORCED: return %[[Y]]
// The sub-batches of the input are views of it (no arena bytes, no copy).
// PLAN: memfmt.arena_bytes = 1664
// PLAN-LABEL: func.func @stem(
// PLAN: memfmt.slice %arg0 {dim = 0 : i64, end = 1 : i64, memfmt.buffers = [#memfmt.buffer<input 0, offset = 0, bytes = 1152>]
// PLAN: memfmt.slice %arg0 {dim = 0 : i64, end = 4 : i64, memfmt.buffers = [#memfmt.buffer<input 0, offset = 3456, bytes = 1152>]
// PLAN-COUNT-4: memfmt.conv2d {{.*}}memfmt.buffers = [#memfmt.buffer<arena, offset = [[AT:[0-9]+]], bytes = 1152>]
func.func @stem(%x: tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>) -> tensor<4x10xf32> {
  %w = memfmt.weight "conv.weight" : tensor<8x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
  %fw = memfmt.weight "fc.weight" : tensor<10x72xf32>
  %fb = memfmt.weight "fc.bias" : tensor<10xf32>
  %0 = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>, tensor<8x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>) -> tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
  %1 = memfmt.relu %0 : tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>> -> tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>
  %2 = memfmt.max_pool2d %1 {kernel_size = array<i64: 2, 2>} : tensor<4x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>> -> tensor<4x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
  %3 = memfmt.flatten %2 {start_dim = 1 : i64} : tensor<4x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>> -> tensor<4x72xf32>
  %4 = memfmt.linear %3, %fw, %fb : (tensor<4x72xf32>, tensor<10x72xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return %4 : tensor<4x10xf32>
}

// -----

// The tiled ops end where the weights they read again per sub-batch
// outgrow the budget: the first convolution's 2304 bytes fit in 5000, not
// with the second one's 6400. The first runs two samples at a time.
// CHECK-LABEL: func.func @weights_cut(
// CHECK-COUNT-2: memfmt.conv2d {{.*}} -> tensor<2x8x6x6xf32>
// CHECK: %[[A:.+]] = memfmt.cat {{.*}} -> tensor<4x8x6x6xf32>
// CHECK: memfmt.conv2d %[[A]], {{.*}} -> tensor<4x8x6x6xf32>
func.func @weights_cut(%x: tensor<4x8x6x6xf32>) -> tensor<4x8x6x6xf32> {
  %w1 = memfmt.weight "conv1.weight" : tensor<8x8x3x3xf32>
  %w2 = memfmt.weight "conv2.weight" : tensor<8x8x5x5xf32>
  %0 = memfmt.conv2d %x, %w1 {padding = array<i64: 1, 1>} : (tensor<4x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<4x8x6x6xf32>
  %1 = memfmt.conv2d %0, %w2 {padding = array<i64: 2, 2>} : (tensor<4x8x6x6xf32>, tensor<8x8x5x5xf32>) -> tensor<4x8x6x6xf32>
  return %1 : tensor<4x8x6x6xf32>
}

// -----

// A softmax over the batch mixes samples: only the relu before it is tiled.
// FORCED-LABEL: func.func @batch_softmax(
// FORCED-COUNT-2: memfmt.relu {{.*}} -> tensor<2x3x5x5xf32>
// FORCED: %[[R:.+]] = memfmt.cat
// FORCED: %[[S:.+]] = memfmt.softmax %[[R]] {dim = 0 : i64} {{.*}} -> tensor<4x3x5x5xf32>
// FORCED: memfmt.relu %[[S]] : {{.*}} -> tensor<4x3x5x5xf32>
func.func @batch_softmax(%x: tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  %0 = memfmt.relu %x : tensor<4x3x5x5xf32> -> tensor<4x3x5x5xf32>
  %1 = memfmt.softmax %0 {dim = 0 : i64} : tensor<4x3x5x5xf32> -> tensor<4x3x5x5xf32>
  %2 = memfmt.relu %1 : tensor<4x3x5x5xf32> -> tensor<4x3x5x5xf32>
  return %2 : tensor<4x3x5x5xf32>
}

// -----

// A squeeze-excite scale [1, C, 1, 1] is shared by every sample; a constant
// indexed by sample ([N, C, H, W], added to the activations) would need
// slicing too, so the tiled ops stop before it.
// FORCED-LABEL: func.func @operands(
// FORCED: %[[S:.+]] = memfmt.weight "scale"
// FORCED: %[[B:.+]] = memfmt.weight "per_sample"
// FORCED-COUNT-2: memfmt.mul %{{.+}}, %[[S]] : tensor<2x3x5x5xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x5x5xf32>
// FORCED: %[[M:.+]] = memfmt.cat
// FORCED: memfmt.add %[[M]], %[[B]] : tensor<4x3x5x5xf32>, tensor<4x3x5x5xf32> -> tensor<4x3x5x5xf32>
func.func @operands(%x: tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  %s = memfmt.weight "scale" : tensor<1x3x1x1xf32>
  %b = memfmt.weight "per_sample" : tensor<4x3x5x5xf32>
  %0 = memfmt.mul %x, %s : tensor<4x3x5x5xf32>, tensor<1x3x1x1xf32> -> tensor<4x3x5x5xf32>
  %1 = memfmt.add %0, %b : tensor<4x3x5x5xf32>, tensor<4x3x5x5xf32> -> tensor<4x3x5x5xf32>
  return %1 : tensor<4x3x5x5xf32>
}

// -----

// A batch of one has nothing to tile, whatever the sub-batch asked for.
// FORCED-LABEL: func.func @one_sample(
// FORCED-NOT: memfmt.slice
// FORCED: memfmt.relu %{{.+}} : tensor<1x3x5x5xf32>
func.func @one_sample(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = memfmt.relu %x : tensor<1x3x5x5xf32> -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}
