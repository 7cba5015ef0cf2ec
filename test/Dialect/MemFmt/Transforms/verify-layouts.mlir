// RUN: memfmt-opt %s -split-input-file --memfmt-verify-layouts="contiguous-operands=true" -verify-diagnostics

// A result that lost its channels-last encoding (L5) is caught.
func.func @dropped_encoding(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x3x4x5xf32> {
  // expected-error @+1 {{result #0 is 'tensor<2x3x4x5xf32>' but an operand is channels-last; L5 says the result is channels-last}}
  %0 = memfmt.relu %x : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// A reshape of a channels-last tensor without the explicit conversion (L7).
func.func @missing_l7(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x60xf32> {
  // expected-error @+1 {{operand #0 is 'tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>' but must be contiguous (L7}}
  %0 = memfmt.flatten %x {start_dim = 1 : i64} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x60xf32>
  return %0 : tensor<2x60xf32>
}

// -----

// An L3 shape counts as channels-last: Nx2048x1x1 without an encoding is fine.
func.func @l3_result(%x: tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>) -> tensor<2x8x1x1xf32> {
  %0 = memfmt.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>> -> tensor<2x8x1x1xf32>
  return %0 : tensor<2x8x1x1xf32>
}
