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

// -----

!T = tensor<2x3x4x4xf32>
!V = tensor<3xf32>

// The sum of a value's two gradients (a residual block's input) and the mask
// of the relu that made the value are one pass: threshold_backward takes the
// add's second operand as its addend.
// CHECK-LABEL: func.func @gradient_sum(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4x4xf32>, %[[B:[^:]+]]: tensor<2x3x4x4xf32>, %[[Y:[^:]+]]: tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[M:.+]] = memfmt.threshold_backward %[[A]], %[[Y]] addend %[[B]] {threshold = 2.500000e-01 : f64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: return %[[M]]
func.func @gradient_sum(%a: !T, %b: !T, %y: !T) -> !T {
  %s = memfmt.add %a, %b : !T, !T -> !T
  %m = memfmt.threshold_backward %s, %y {threshold = 0.25 : f64} : (!T, !T) -> !T
  return %m : !T
}

// -----

!T = tensor<2x3x4x4xf32>
!P = tensor<2x3x1x1xf32>
!L = tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>

// The sum stays an add where it has another use, where an operand is
// broadcast, and where the operands' layouts differ from the gradient's.
// CHECK-LABEL: func.func @no_gradient_sum(
// CHECK-COUNT-3: memfmt.add
// CHECK-NOT: addend
// CHECK: return
func.func @no_gradient_sum(%a: !T, %b: !T, %y: !T, %p: !P, %l: !L) -> (!T, !T, !T, !T) {
  %s = memfmt.add %a, %b : !T, !T -> !T
  %m = memfmt.threshold_backward %s, %y : (!T, !T) -> !T
  %t = memfmt.add %a, %p : !T, !P -> !T
  %n = memfmt.threshold_backward %t, %y : (!T, !T) -> !T
  %u = memfmt.add %l, %a : !L, !T -> !T
  %o = memfmt.threshold_backward %u, %y : (!T, !T) -> !T
  return %m, %n, %o, %s : !T, !T, !T, !T
}

// -----

!T = tensor<2x3x4x4xf32>
!V = tensor<3xf32>

// A threshold_backward with an addend stays out of the batch norm backward
// (whose kernel has no addend).
// CHECK-LABEL: func.func @sum_stays_out_of_backward(
// CHECK: memfmt.threshold_backward %{{.+}}, %{{.+}} addend
// CHECK: memfmt.native_batch_norm_backward
// CHECK-NOT: relu = true}
// CHECK: return
func.func @sum_stays_out_of_backward(%x: !T, %v: !V, %g: !T, %h: !T) -> !T {
  %y:5 = memfmt.native_batch_norm %x, %v, %v, %v, %v {relu = true} : (!T, !V, !V, !V, !V) -> (!T, !V, !V, !V, !V)
  %m = memfmt.threshold_backward %g, %y#0 addend %h : (!T, !T, !T) -> !T
  %a:3 = memfmt.native_batch_norm_backward %m, %x, %v, %y#1, %y#2 {output_mask = array<i1: true, true, true>} : (!T, !T, !V, !V, !V) -> (!T, !V, !V)
  return %a#0 : !T
}
