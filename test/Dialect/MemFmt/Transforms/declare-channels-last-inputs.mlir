// RUN: memfmt-opt %s -split-input-file --memfmt-declare-channels-last-inputs --memfmt-verify-layouts | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-declare-channels-last-inputs --memfmt-declare-channels-last-inputs | FileCheck %s

// A contiguous 4-D argument is declared channels-last and converted back to
// the declared contiguous type at entry; the body is unchanged.
// CHECK-LABEL: func.func @nchw_model
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8x8xf32, #memfmt.strides<[192, 1, 24, 3]>>)
// CHECK-SAME: -> tensor<2x3x8x8xf32>
// CHECK-NEXT: %[[C:.+]] = memfmt.contiguous %[[X]] {memfmt.reason = "--input-format channels-last: {{.*}}"}
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.relu %[[C]] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
func.func @nchw_model(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32> {
  %0 = memfmt.relu %x : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x8x8xf32>
}

// -----

// An L3 argument (contiguous and channels-last at once) takes the explicit
// channels-last strides too; its conversion moves no bytes.
// CHECK-LABEL: func.func @same_bytes
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x1x1xf32, #memfmt.strides<[8, 1, 8, 8]>>)
// CHECK-NEXT: %[[C:.+]] = memfmt.contiguous %[[X]]
// CHECK-NEXT: return %[[C]]
func.func @same_bytes(%a: tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32> {
  return %a : tensor<1x8x1x1xf32>
}

// -----

// Arguments with no channels-last format (2-D) or already channels-last
// keep their types.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%{{.+}}: tensor<4x5xf32>, %{{.+}}: tensor<1x2x3x3xf32, #memfmt.strides<[18, 1, 6, 2]>>)
// CHECK-NOT: memfmt.contiguous
func.func @kept(%b: tensor<4x5xf32>,
                %c: tensor<1x2x3x3xf32, #memfmt.strides<[18, 1, 6, 2]>>)
    -> tensor<4x5xf32> {
  return %b : tensor<4x5xf32>
}

// -----

// A private function keeps its signature (its callers' types would no
// longer match).
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.+}}: tensor<2x3x8x8xf32>)
// CHECK-NOT: memfmt.contiguous
func.func private @helper(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32> {
  return %x : tensor<2x3x8x8xf32>
}
