// RUN: memfmt-opt %s -split-input-file --memfmt-plan-memory | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-plan-memory | memfmt-opt - -split-input-file --convert-memfmt-to-runtime | FileCheck %s --check-prefix=LOWERED

// A value that cannot be computed in the state's slot (the relu that could
// is not the slot's last reader: the add reads the old value after it) is
// copied into the slot once, at the assignment, after every read.
// CHECK-LABEL: func.func @copy_after_last_read
// CHECK: memfmt.weight "a" {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 16>]}
// CHECK: memfmt.relu %{{.+}} {memfmt.buffers = [#memfmt.buffer<arena, offset = [[R:[0-9]+]], bytes = 16>]}
// CHECK: memfmt.assign_weight "a", %{{.+}} {memfmt.state_buffer = #memfmt.buffer<weights, offset = 0, bytes = 16>}
// LOWERED-LABEL: func.func @memfmt_forward
// LOWERED: call @memfmt_relu_f32
// LOWERED: call @memfmt_add_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED-NOT: call @memfmt_
// LOWERED: return
func.func @copy_after_last_read(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = memfmt.weight "a" : tensor<4xf32>
  %r = memfmt.relu %w : tensor<4xf32> -> tensor<4xf32>
  %s = memfmt.add %w, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  memfmt.assign_weight "a", %r : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// An op that may compute in place and is the slot's last reader writes the
// state's slot directly: no copy.
// CHECK-LABEL: func.func @in_place
// CHECK: memfmt.relu %{{.+}} {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 16>]}
// LOWERED-LABEL: func.func @memfmt_forward
// LOWERED: call @memfmt_add_f32
// LOWERED: call @memfmt_relu_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED-NOT: call @memfmt_
// LOWERED: return
func.func @in_place(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = memfmt.weight "a" : tensor<4xf32>
  %s = memfmt.add %w, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %r = memfmt.relu %w : tensor<4xf32> -> tensor<4xf32>
  memfmt.assign_weight "a", %r : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// An assigned weight changes every run: the re-lay that reads it is not
// run once at load (the other weight's is), and its slot is not reused.
// CHECK-LABEL: func.func @assigned_not_folded
// CHECK: %[[A:.+]] = memfmt.weight "a" {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 64>]}
// CHECK: %[[B:.+]] = memfmt.weight "b" {memfmt.buffers = [#memfmt.buffer<weights, offset = 64, bytes = 64>]}
// CHECK: memfmt.contiguous %[[A]] {memfmt.buffers = [#memfmt.buffer<arena, {{.+}}>], memory_format = #memfmt.memory_format<channels_last>}
// CHECK: memfmt.contiguous %[[B]] {memfmt.buffers = [#memfmt.buffer<weights, offset = 128, bytes = 64>], memfmt.load_time, memory_format = #memfmt.memory_format<channels_last>}
// LOWERED-LABEL: func.func @memfmt_prepare
// LOWERED: call @memfmt_copy_f32
// LOWERED-NOT: call @memfmt_
// LOWERED-LABEL: func.func @memfmt_forward
// LOWERED: call @memfmt_copy_f32
// LOWERED: call @memfmt_add_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED: call @memfmt_copy_f32
// LOWERED-NOT: call @memfmt_
// LOWERED: return
#cl = #memfmt.strides<[8, 1, 4, 2]>
func.func @assigned_not_folded(%x: tensor<2x2x2x2xf32>) -> tensor<2x2x2x2xf32, #cl> {
  %a = memfmt.weight "a" : tensor<2x2x2x2xf32>
  %b = memfmt.weight "b" : tensor<2x2x2x2xf32>
  %ca = memfmt.contiguous %a {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x2x2x2xf32>
  %cb = memfmt.contiguous %b {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x2x2x2xf32>
  %s = memfmt.add %ca, %cb : tensor<2x2x2x2xf32, #cl>, tensor<2x2x2x2xf32, #cl> -> tensor<2x2x2x2xf32, #cl>
  memfmt.assign_weight "a", %x : tensor<2x2x2x2xf32>
  return %s : tensor<2x2x2x2xf32, #cl>
}

// -----

// A state that no memfmt.weight reads (as after canonicalization erased a
// read whose value nothing used) is declared by its assignment: the plan
// gives it a zero_init slot of the assigned type at the top of the body, and
// the assignment copies the relu into it.
// CHECK-LABEL: func.func @unread_state
// CHECK-NEXT: memfmt.weight "s" {memfmt.buffers = [#memfmt.buffer<weights, offset = 0, bytes = 16>], zero_init} : tensor<4xf32>
// CHECK-NEXT: memfmt.relu
// CHECK-NEXT: memfmt.assign_weight "s", %{{.+}} {memfmt.state_buffer = #memfmt.buffer<weights, offset = 0, bytes = 16>}
// LOWERED-LABEL: func.func @memfmt_forward
// LOWERED: call @memfmt_relu_f32
// LOWERED: call @memfmt_copy_f32
func.func @unread_state(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = memfmt.relu %x : tensor<4xf32> -> tensor<4xf32>
  memfmt.assign_weight "s", %r : tensor<4xf32>
  return %x : tensor<4xf32>
}
