// RUN: memfmt-opt %s --memfmt-propagate-channels-last="inputs=convert" | FileCheck %s
// RUN: memfmt-opt %s --memfmt-channels-last | FileCheck %s
// An argument whose element type no memfmt op takes (f64) is not anchored:
// seeding it made a memfmt.contiguous of an f64 tensor, which does not
// verify (found by memfmt-fuzz-ir; test/fuzz/regressions/ir).

// CHECK-LABEL: func.func @f64_argument
// CHECK-SAME: (%{{.*}}: tensor<1x8x7x7xf64>)
// CHECK-NOT: memfmt.contiguous
func.func @f64_argument(%x: tensor<1x8x7x7xf64>) {
  return
}

// The f32 argument beside it is still converted at entry; the f64 one never
// gets a channels-last type.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[A:.+]]: tensor<1x8x7x7xf64>, %[[B:.+]]: tensor<1x3x4x4xf32>)
// CHECK: memfmt.contiguous %[[B]] {{{.*}}channels_last{{.*}}} : tensor<1x3x4x4xf32>
// CHECK-NOT: xf64, #memfmt.strides
func.func @mixed(%a: tensor<1x8x7x7xf64>, %b: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = memfmt.relu %b : tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
