// RUN: memfmt-opt %s -split-input-file --convert-memfmt-to-runtime | FileCheck %s

// Buffer sharing in the memory plan: a result takes the arena buffer of an
// operand whose last use is its op, where the kernel computes in place.
// The bottleneck's residual %r dies at the last convolution, which sums it
// in place (no copy into a fresh output): %r, %a and %y need two slots,
// not three, and %y's view starts where %r's does.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 1024 : i64, memfmt.kernel_calls = 4 : i64, memfmt.peak_live_bytes = 1024 : i64
// CHECK: func.func @memfmt_forward(%{{.+}}: !llvm.ptr, %[[ARENA:[^:]+]]: memref<?xi8>
// CHECK: call @memfmt_relu_f32
// CHECK: call @memfmt_conv2d_f32
// CHECK: memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<128xf32>
// CHECK-NOT: memref.view %[[ARENA]]
// CHECK: call @memfmt_conv2d_f32
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

// The residual is read again later: its buffer stays, so %y gets a third
// slot.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 1536 : i64, memfmt.kernel_calls = 5 : i64, memfmt.peak_live_bytes = 1536 : i64
#cl = #memfmt.strides<[128, 1, 32, 8]>
#w = #memfmt.strides<[8, 1, 8, 8]>
func.func @residual_read_later(%x: tensor<1x8x4x4xf32, #cl>) -> (tensor<1x8x4x4xf32, #cl>, tensor<1x8x4x4xf32, #cl>) {
  %w = memfmt.weight "w" : tensor<8x8x1x1xf32, #w>
  %r = memfmt.relu %x : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %a = memfmt.fused_conv2d %r, %w {relu = true} : tensor<1x8x4x4xf32, #cl>, tensor<8x8x1x1xf32, #w> -> tensor<1x8x4x4xf32, #cl>
  %y = memfmt.fused_conv2d %a, %w residual %r {relu = true} : tensor<1x8x4x4xf32, #cl>, tensor<8x8x1x1xf32, #w> residual tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  return %y, %r : tensor<1x8x4x4xf32, #cl>, tensor<1x8x4x4xf32, #cl>
}

// -----

// A convolution never writes over its own input: the residual here is the
// input too, so the output gets a slot of its own (offset 512).
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 1024 : i64, memfmt.kernel_calls = 3 : i64, memfmt.peak_live_bytes = 1024 : i64
// CHECK: func.func @memfmt_forward(%{{.+}}: !llvm.ptr, %[[ARENA:[^:]+]]: memref<?xi8>
// CHECK: call @memfmt_relu_f32
// CHECK: memref.view %[[ARENA]][%c512{{(_[0-9]+)?}}][] : memref<?xi8> to memref<128xf32>
// CHECK: call @memfmt_conv2d_f32
#cl = #memfmt.strides<[128, 1, 32, 8]>
#w = #memfmt.strides<[8, 1, 8, 8]>
func.func @residual_is_input(%x: tensor<1x8x4x4xf32, #cl>) -> tensor<1x8x4x4xf32, #cl> {
  %w = memfmt.weight "w" : tensor<8x8x1x1xf32, #w>
  %r = memfmt.relu %x : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %y = memfmt.fused_conv2d %r, %w residual %r : tensor<1x8x4x4xf32, #cl>, tensor<8x8x1x1xf32, #w> residual tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  return %y : tensor<1x8x4x4xf32, #cl>
}

// -----

// Elementwise ops run in place on an operand with the result's type: the
// chain relu -> add(_, itself) -> relu lives in one slot. A broadcast
// operand (%b) or one with other strides (the NCHW copy %n) never gives
// its buffer: %n takes a second slot and %c is computed into %3's.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 1024 : i64, memfmt.kernel_calls = 7 : i64, memfmt.peak_live_bytes = 1024 : i64
#cl = #memfmt.strides<[128, 1, 32, 8]>
func.func @elementwise(%x: tensor<1x8x4x4xf32, #cl>, %b: tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32, #cl> {
  %0 = memfmt.relu %x : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %1 = memfmt.add %0, %0 : tensor<1x8x4x4xf32, #cl>, tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %2 = memfmt.relu %1 : tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %3 = memfmt.add %b, %2 : tensor<1x8x1x1xf32>, tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  %n = memfmt.contiguous %3 : tensor<1x8x4x4xf32, #cl>
  %c = memfmt.add %n, %3 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32, #cl> -> tensor<1x8x4x4xf32, #cl>
  return %c : tensor<1x8x4x4xf32, #cl>
}
