// RUN: memfmt-opt %s -split-input-file --memfmt-fuse-training | FileCheck %s

// memfmt-fuse-training on hand-written training ops: what fuses, and each
// case that must not (it would compute something else, or compute a value
// twice).

!T = tensor<2x3x4x4xf32>
!V = tensor<3xf32>

// relu(bn), relu(r + bn) (the residual as the add's first operand), and
// relu's gradient into the backward of the batch norm it follows.
// CHECK-LABEL: func.func @fuse(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4x4xf32>, %[[R:[^:]+]]: tensor<2x3x4x4xf32>, %[[V:[^:]+]]: tensor<3xf32>, %[[G:[^:]+]]: tensor<2x3x4x4xf32>
// CHECK: %[[Y:.+]], %[[M:[^,]+]], %[[I:[^,]+]], %{{.+}}, %{{.+}} = memfmt.native_batch_norm %[[X]], %[[V]], %[[V]], %[[V]], %[[V]] {relu = true}
// CHECK: %[[Z:.+]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = memfmt.native_batch_norm %[[Y]], %[[V]], %[[V]], %[[V]], %[[V]] residual %[[R]] {relu = true}
// CHECK: %[[GI:.+]], %{{.+}}, %{{.+}} = memfmt.native_batch_norm_backward %[[G]], %[[X]], %[[V]], %[[M]], %[[I]] output %[[Y]] {output_mask = array<i1: true, true, true>, relu = true}
// CHECK-NOT: memfmt.relu
// CHECK-NOT: memfmt.add
// CHECK-NOT: memfmt.threshold_backward
// CHECK: return %[[Z]], %[[GI]]
func.func @fuse(%x: !T, %r: !T, %v: !V, %g: !T) -> (!T, !T) {
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %a = memfmt.relu %y#0 : !T -> !T
  %z:5 = memfmt.native_batch_norm %a, %v, %v, %v, %v : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %s = memfmt.add %r, %z#0 : !T, !T -> !T
  %b = memfmt.relu %s : !T -> !T
  %m = memfmt.threshold_backward %g, %a : (!T, !T) -> !T
  %gi:3 = memfmt.native_batch_norm_backward %m, %x, %v, %y#1, %y#2 {output_mask = array<i1: true, true, true>} : (!T, !T, !V, !V, !V) -> (!T, !V, !V)
  return %b, %gi#0 : !T, !T
}

// -----

!T = tensor<2x3x4x4xf32>
!V = tensor<3xf32>

// A batch norm output used twice (the relu would be computed into it and the
// other user would see it), an add that broadcasts, and relu of a relu-fused
// batch norm stay as they are.
// CHECK-LABEL: func.func @no_fusion(
// CHECK: memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK: memfmt.relu
// CHECK: memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK: memfmt.add
// CHECK: memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {relu = true}
// CHECK: memfmt.relu
func.func @no_fusion(%x: !T, %c: tensor<2x3x1x1xf32>, %v: !V) -> (!T, !T, !T, !T) {
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %a = memfmt.relu %y#0 : !T -> !T
  %z:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %s = memfmt.add %z#0, %c : !T, tensor<2x3x1x1xf32> -> !T
  %w:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %b = memfmt.relu %w#0 : !T -> !T
  %d = memfmt.relu %b : !T -> !T
  return %a, %y#0, %s, %d : !T, !T, !T, !T
}

// -----

!T = tensor<2x3x4x4xf32>
!V = tensor<3xf32>

// The residual is computed after the batch norm and a used value is computed
// from its statistics in between: the fused op could not stand at the add
// with that value before it, so nothing fuses.
// CHECK-LABEL: func.func @statistic_used_between(
// CHECK: memfmt.native_batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK: memfmt.relu %{{.+}} : tensor<3xf32>
// CHECK: memfmt.add
func.func @statistic_used_between(%x: !T, %v: !V) -> (!T, !V) {
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %m = memfmt.relu %y#1 : !V -> !V
  %r = memfmt.relu %x : !T -> !T
  %s = memfmt.add %y#0, %r : !T, !T -> !T
  return %s, %m : !T, !V
}

// -----

!T = tensor<2x3x4x4xf32>
!V = tensor<3xf32>

// relu's gradient stays separate where it is not relu's (threshold 0.5),
// where the backward is another batch norm's, and where the masked gradient
// has a second use.
// CHECK-LABEL: func.func @no_backward_fusion(
// CHECK-COUNT-3: memfmt.threshold_backward
// CHECK-NOT: relu = true}
// CHECK: return
func.func @no_backward_fusion(%x: !T, %x2: !T, %v: !V, %g: !T) -> (!T, !T, !T, !T, !T) {
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v {relu = true} : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %m1 = memfmt.threshold_backward %g, %y#0 {threshold = 0.5 : f64} : (!T, !T) -> !T
  %a:3 = memfmt.native_batch_norm_backward %m1, %x, %v, %y#1, %y#2 {output_mask = array<i1: true, true, true>} : (!T, !T, !V, !V, !V) -> (!T, !V, !V)
  %m2 = memfmt.threshold_backward %g, %y#0 : (!T, !T) -> !T
  %b:3 = memfmt.native_batch_norm_backward %m2, %x2, %v, %y#1, %y#2 {output_mask = array<i1: true, true, true>} : (!T, !T, !V, !V, !V) -> (!T, !V, !V)
  %m3 = memfmt.threshold_backward %g, %y#0 : (!T, !T) -> !T
  %c:3 = memfmt.native_batch_norm_backward %m3, %x, %v, %y#1, %y#2 {output_mask = array<i1: true, true, true>} : (!T, !T, !V, !V, !V) -> (!T, !V, !V)
  return %a#0, %b#0, %c#0, %m3, %y#0 : !T, !T, !T, !T, !T
}
