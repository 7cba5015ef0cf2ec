// RUN: memfmt-opt %s -split-input-file --memfmt-materialize-contiguous --memfmt-verify-layouts="contiguous-operands=true" | FileCheck %s

// L7: flatten of a channels-last N x 512 x 7 x 7 needs an explicit
// conversion, so fc sees features in NCHW order.
// CHECK-LABEL: func.func @flatten_needs_conversion(
// CHECK-SAME: %[[X:.+]]: tensor
// CHECK: %[[C:.+]] = memfmt.contiguous %[[X]] {memfmt.reason = "L7: memfmt.flatten keeps NCHW meaning and needs a contiguous operand"}
// CHECK: memfmt.flatten %[[C]]
func.func @flatten_needs_conversion(%x: tensor<2x512x7x7xf32, #memfmt.strides<[25088, 1, 3584, 512]>>) -> tensor<2x25088xf32> {
  %0 = memfmt.flatten %x {start_dim = 1 : i64} : tensor<2x512x7x7xf32, #memfmt.strides<[25088, 1, 3584, 512]>> -> tensor<2x25088xf32>
  return %0 : tensor<2x25088xf32>
}

// -----

// L3: channels-last N x 2048 x 1 x 1 is also contiguous: no conversion.
// CHECK-LABEL: func.func @flatten_same_bytes(
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.flatten
func.func @flatten_same_bytes(%x: tensor<2x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>) -> tensor<2x2048xf32> {
  %0 = memfmt.flatten %x {start_dim = 1 : i64} : tensor<2x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>> -> tensor<2x2048xf32>
  return %0 : tensor<2x2048xf32>
}

// -----

// Reshape gets the same treatment; C=1 (N x 1 x H x W) is L3 and needs none.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %[[A:[^:]+]]: tensor<3x2x4x4xf32
// CHECK-SAME: %[[B:[^:]+]]: tensor<3x1x4x4xf32
// CHECK: %[[C:.+]] = memfmt.contiguous %[[A]]
// CHECK: memfmt.reshape %[[C]]
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.reshape %[[B]]
func.func @reshape(%a: tensor<3x2x4x4xf32, #memfmt.strides<[32, 1, 8, 2]>>, %b: tensor<3x1x4x4xf32, #memfmt.strides<[16, 1, 4, 1]>>) -> (tensor<96xf32>, tensor<48xf32>) {
  %0 = memfmt.reshape %a : tensor<3x2x4x4xf32, #memfmt.strides<[32, 1, 8, 2]>> -> tensor<96xf32>
  %1 = memfmt.reshape %b : tensor<3x1x4x4xf32, #memfmt.strides<[16, 1, 4, 1]>> -> tensor<48xf32>
  return %0, %1 : tensor<96xf32>, tensor<48xf32>
}

// -----

// Contiguous operands and ops without the requirement are left alone.
// CHECK-LABEL: func.func @nothing_to_do(
// CHECK-NOT: memfmt.contiguous
// CHECK: return
func.func @nothing_to_do(%x: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) -> (tensor<2x48xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>) {
  %0 = memfmt.flatten %x {start_dim = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<2x48xf32>
  %1 = memfmt.relu %y : tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>> -> tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  return %0, %1 : tensor<2x48xf32>, tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
}
