// RUN: memfmt-opt %s -split-input-file --memfmt-plan-memory | FileCheck %s
// The printed plan parses back, and the lowering takes it as it is.
// RUN: memfmt-opt %s -split-input-file --memfmt-plan-memory | memfmt-opt - -split-input-file --convert-memfmt-to-runtime | FileCheck %s --check-prefix=LOWERED

// Aliasing: an L3 conversion (Nx8x1x1 is both contiguous and channels-last)
// and the flatten of the contiguous result move no bytes; both take the
// pooling result's buffer.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 576 : i64, memfmt.peak_live_bytes = 576 : i64, memfmt.weights_bytes = 0 : i64}
// CHECK: %arg0: tensor<{{.+}}> {memfmt.buffer = #memfmt.buffer<input 0, offset = 0, bytes = 512>}
// CHECK: memfmt.relu %arg0 {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 512>]}
// CHECK: memfmt.adaptive_avg_pool2d %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 512, bytes = 32>]
// CHECK: memfmt.contiguous %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 512, bytes = 32>]
// CHECK: memfmt.flatten %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 512, bytes = 32>]
// LOWERED-LABEL: module attributes {memfmt.arena_bytes = 576 : i64, memfmt.kernel_calls = 3 : i64
#cl = #memfmt.strides<[128, 1, 32, 8]>
func.func @aliases(%x: tensor<1x8x4x4xf32, #cl>) -> tensor<1x8xf32> {
  %r = memfmt.relu %x : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %p = memfmt.adaptive_avg_pool2d %r {output_size = array<i64: 1, 1>} : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x1x1xf32, #memfmt.strides<[8, 1, 8, 8]>>
  %c = memfmt.contiguous %p : tensor<1x8x1x1xf32, #memfmt.strides<[8, 1, 8, 8]>>
  %f = memfmt.flatten %c {start_dim = 1 : i64} : tensor<1x8x1x1xf32> -> tensor<1x8xf32>
  return %f : tensor<1x8xf32>
}

// -----

// In-place sharing: the bottleneck's residual %r dies at the last
// convolution, which sums it in place, so %y takes %r's buffer (offset 0)
// and the block needs two slots, not three.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 1024 : i64, memfmt.peak_live_bytes = 1024 : i64, memfmt.weights_bytes = 256 : i64}
// CHECK: %[[R:.+]] = memfmt.relu %arg0 {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 512>]}
// CHECK: %[[A:.+]] = memfmt.fused_conv2d %[[R]], %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 512, bytes = 512>]
// CHECK: memfmt.fused_conv2d %[[A]], %{{.+}} residual %[[R]] {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 512>]
// LOWERED-LABEL: module attributes {memfmt.arena_bytes = 1024 : i64, memfmt.kernel_calls = 4 : i64
#cl = #memfmt.strides<[128, 1, 32, 8]>
#w = #memfmt.strides<[8, 1, 8, 8]>
func.func @bottleneck(%x: tensor<1x8x4x4xf32, #cl>) -> tensor<1x8x4x4xf32, #cl> {
  %w = memfmt.weight "w" : tensor<8x8x1x1xf32, #w>
  %r = memfmt.relu %x : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %a = memfmt.fused_conv2d %r, %w {relu = true} : tensor<1x8x4x4xf32, #cl>, tensor<8x8x1x1xf32, #w> -> tensor<1x8x4x4xf32, #cl>
  %y = memfmt.fused_conv2d %a, %w residual %r {relu = true} : tensor<1x8x4x4xf32, #cl>, tensor<8x8x1x1xf32, #w> residual tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  return %y : tensor<1x8x4x4xf32, #cl>
}

// -----

// Liveness: %a dies at %b's op and %b at %c's, so %c (a conv, never in
// place) reuses %a's offset 0 while %b sits at 4096.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 8192 : i64, memfmt.peak_live_bytes = 8192 : i64, memfmt.weights_bytes = 4096 : i64}
// CHECK: memfmt.conv2d %arg0, %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 4096>]}
// CHECK: memfmt.conv2d %{{.+}}, %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 4096, bytes = 4096>]}
// CHECK: memfmt.conv2d %{{.+}}, %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 4096>]}
func.func @reuse(%x: tensor<1x32x4x8xf32>) -> tensor<1x32x4x8xf32> {
  %w = memfmt.weight "w" : tensor<32x32x1x1xf32>
  %a = memfmt.conv2d %x, %w : (tensor<1x32x4x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x8xf32>
  %b = memfmt.conv2d %a, %w : (tensor<1x32x4x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x8xf32>
  %c = memfmt.conv2d %b, %w : (tensor<1x32x4x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x4x8xf32>
  return %c : tensor<1x32x4x8xf32>
}

// -----

// Alignment: every buffer starts at a multiple of 64 bytes
// (MEMFMT_MODEL_BUFFER_ALIGNMENT), in the arena and in the weights blob:
// 12-byte values take 64-byte slots.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 128 : i64, memfmt.peak_live_bytes = 128 : i64, memfmt.weights_bytes = 128 : i64}
// CHECK: memfmt.weight "a" {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 12>]}
// CHECK: memfmt.weight "b" {memfmt.buffers = [#memfmt.buffer<weights, offset = 64, bytes = 12>]}
// CHECK: memfmt.add %arg0, %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 12>]}
// CHECK: memfmt.add %arg0, %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 64, bytes = 12>]}
func.func @alignment(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %a = memfmt.weight "a" : tensor<3xf32>
  %b = memfmt.weight "b" : tensor<3xf32>
  %0 = memfmt.add %x, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %1 = memfmt.add %x, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Load-time ops: a batch norm folded into a convolution's weight runs once,
// in memfmt_prepare. The folded weight overwrites the weight it replaces
// (nothing else reads it); the folded bias takes a slot after the
// parameters.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 64 : i64, memfmt.peak_live_bytes = 64 : i64, memfmt.weights_bytes = 384 : i64}
// CHECK: memfmt.weight "w" {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 64>]}
// CHECK: memfmt.weight "var" {memfmt.buffers = [#memfmt.buffer<weights, offset = 256, bytes = 16>]}
// CHECK: memfmt.fold_batch_norm {{.+}} {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 64>, #memfmt.buffer<weights, offset = 320, bytes = 16>], memfmt.load_time}
// CHECK: memfmt.fused_conv2d {{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 64>]}
// CHECK-NOT: memfmt.load_time
// LOWERED-LABEL: module attributes {memfmt.arena_bytes = 64 : i64, memfmt.kernel_calls = 3 : i64
// LOWERED: func.func @memfmt_prepare(
// LOWERED: call @memfmt_fold_batch_norm_f32
// LOWERED: func.func @memfmt_forward(
// LOWERED-NOT: call @memfmt_fold_batch_norm_f32
// LOWERED: call @memfmt_conv2d_f32
func.func @fold(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %w = memfmt.weight "w" : tensor<4x4x1x1xf32>
  %g = memfmt.weight "gamma" : tensor<4xf32>
  %b = memfmt.weight "beta" : tensor<4xf32>
  %m = memfmt.weight "mean" : tensor<4xf32>
  %v = memfmt.weight "var" : tensor<4xf32>
  %fw, %fb = memfmt.fold_batch_norm %w, %g, %b, %m, %v {eps = 1.0e-05 : f64} : tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x4x1x1xf32>, tensor<4xf32>
  %y = memfmt.fused_conv2d %x, %fw bias %fb : tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32> bias tensor<4xf32> -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}

// -----

// Views: a batch slice of a sample-major tensor lies inside it (the input's
// second sample starts 48 bytes in; the activation's last two samples 96
// bytes into its buffer), and the lowering copies nothing for it. A channel
// slice of a channels-last tensor (other strides) stays a copy.
// CHECK-LABEL: func.func @slice_views(
// CHECK: memfmt.slice %arg0 {{{.+}}memfmt.buffers = [#memfmt.buffer<input 0, offset = 48, bytes = 48>]
// CHECK: %[[R:.+]] = memfmt.relu %arg0 {memfmt.buffers = [#memfmt.buffer<arena, offset = 0, bytes = 192>]}
// CHECK: memfmt.slice %[[R]] {{{.+}}memfmt.buffers = [#memfmt.buffer<arena, offset = 96, bytes = 96>]
// CHECK: memfmt.slice %arg1 {{{.+}}memfmt.buffers = [#memfmt.buffer<arena, offset = 192, bytes = 32>]
// Two relus, the channel slice's copy and the three outputs' copies.
// LOWERED-LABEL: module attributes {memfmt.arena_bytes = 320 : i64, memfmt.kernel_calls = 6 : i64
// LOWERED: func.func @memfmt_forward(
// LOWERED: call @memfmt_relu_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED: call @memfmt_relu_f32
func.func @slice_views(%x: tensor<4x3x2x2xf32>, %c: tensor<1x4x2x2xf32, #memfmt.strides<[16, 1, 8, 4]>>) -> (tensor<1x3x2x2xf32>, tensor<2x3x2x2xf32>, tensor<1x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>>) {
  %s = memfmt.slice %x {dim = 0 : i64, start = 1 : i64, end = 2 : i64} : tensor<4x3x2x2xf32> -> tensor<1x3x2x2xf32>
  %r = memfmt.relu %x : tensor<4x3x2x2xf32> -> tensor<4x3x2x2xf32>
  %t = memfmt.slice %r {dim = 0 : i64, start = 2 : i64, end = 4 : i64} : tensor<4x3x2x2xf32> -> tensor<2x3x2x2xf32>
  %u = memfmt.slice %c {dim = 1 : i64, start = 1 : i64, end = 3 : i64} : tensor<1x4x2x2xf32, #memfmt.strides<[16, 1, 8, 4]>> -> tensor<1x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>>
  %v = memfmt.relu %s : tensor<1x3x2x2xf32> -> tensor<1x3x2x2xf32>
  return %v, %t, %u : tensor<1x3x2x2xf32>, tensor<2x3x2x2xf32>, tensor<1x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>>
}
