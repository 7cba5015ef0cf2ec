// RUN: memfmt-opt %s -split-input-file --memfmt-fold-conversions --memfmt-verify-layouts | FileCheck %s

// A chain folds to one conversion.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:[^:]+]]: tensor
// CHECK: %[[C:.+]] = memfmt.contiguous %[[X]] {memory_format = #memfmt.memory_format<channels_last>}
// CHECK-NEXT: memfmt.relu %[[C]]
func.func @chain(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 3, 12]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> {
  %0 = memfmt.contiguous %x : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 3, 12]>>
  %1 = memfmt.contiguous %0 {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  %2 = memfmt.relu %1 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return %2 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
}

// -----

// A round trip to channels-last and straight back cancels.
// CHECK-LABEL: func.func @round_trip(
// CHECK-SAME: %[[X:[^:]+]]: tensor
// CHECK-NOT: memfmt.contiguous
// CHECK: return %[[X]]
func.func @round_trip(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  %1 = memfmt.contiguous %0 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return %1 : tensor<2x3x4x5xf32>
}

// -----

// A round trip whose middle is used elsewhere keeps the middle, not the trip.
// CHECK-LABEL: func.func @round_trip_shared(
// CHECK-SAME: %[[X:[^:]+]]: tensor
// CHECK: %[[C:.+]] = memfmt.contiguous %[[X]] {memory_format = #memfmt.memory_format<channels_last>}
// CHECK: %[[R:.+]] = memfmt.relu %[[C]]
// CHECK: return %[[X]], %[[R]]
func.func @round_trip_shared(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) {
  %0 = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  %1 = memfmt.contiguous %0 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  %2 = memfmt.relu %0 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return %1, %2 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
}

// -----

// A conversion of a parameter becomes a re-laid parameter (no work per run);
// a 1x1 kernel is re-laid too although L3 makes it free, so every conv
// weight's type says channels-last.
// CHECK-LABEL: func.func @relay_weights(
// CHECK-NOT: memfmt.contiguous
// CHECK-DAG: memfmt.weight "w3" : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
// CHECK-DAG: memfmt.weight "w1" : tensor<4x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>
func.func @relay_weights(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w3 = memfmt.weight "w3" : tensor<4x3x3x3xf32>
  %c3 = memfmt.contiguous %w3 {memory_format = #memfmt.memory_format<channels_last>} : tensor<4x3x3x3xf32>
  %w1 = memfmt.weight "w1" : tensor<4x4x1x1xf32>
  %c1 = memfmt.contiguous %w1 {memory_format = #memfmt.memory_format<channels_last>} : tensor<4x4x1x1xf32>
  %0 = memfmt.conv2d %x, %c3 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) -> tensor<1x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
  %1 = memfmt.conv2d %0, %c1 : (tensor<1x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>, tensor<4x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>) -> tensor<1x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
  %2 = memfmt.contiguous %1 : tensor<1x4x6x6xf32, #memfmt.strides<[144, 1, 24, 4]>>
  return %2 : tensor<1x4x6x6xf32>
}

// -----

// L3 no-op conversions vanish for users that accept any layout, and stay
// (free) where the function boundary needs the exact type.
// CHECK-LABEL: func.func @same_bytes(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x2048x1x1xf32>
// CHECK: %[[C:.+]] = memfmt.contiguous %[[X]] {memory_format = #memfmt.memory_format<channels_last>}
// CHECK: memfmt.flatten %[[X]]
// CHECK: return %{{.+}}, %[[C]]
func.func @same_bytes(%x: tensor<4x2048x1x1xf32>) -> (tensor<4x2048xf32>, tensor<4x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>) {
  %0 = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<4x2048x1x1xf32>
  %1 = memfmt.flatten %0 {start_dim = 1 : i64} : tensor<4x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>> -> tensor<4x2048xf32>
  return %1, %0 : tensor<4x2048xf32>, tensor<4x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
}

// -----

// A conversion that moves bytes stays.
// CHECK-LABEL: func.func @real_conversion(
// CHECK: memfmt.contiguous
func.func @real_conversion(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> {
  %0 = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
}

// -----

// A parameter assigned a value of another layout (training state) keeps its
// layout: its conversion stays instead of re-laying it (which would leave the
// assignment storing the wrong type). Found by memfmt-fuzz-ir.
// CHECK-LABEL: func.func @assigned_other_layout(
// CHECK: %[[A:.+]] = memfmt.weight "a" : tensor<2x2x2x2xf32>
// CHECK: memfmt.contiguous %[[A]]
// CHECK: memfmt.assign_weight "a", %arg0 : tensor<2x2x2x2xf32>
func.func @assigned_other_layout(%x: tensor<2x2x2x2xf32>) -> tensor<2x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>> {
  %a = memfmt.weight "a" : tensor<2x2x2x2xf32>
  %ca = memfmt.contiguous %a {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x2x2x2xf32>
  memfmt.assign_weight "a", %x : tensor<2x2x2x2xf32>
  return %ca : tensor<2x2x2x2xf32, #memfmt.strides<[8, 1, 4, 2]>>
}
