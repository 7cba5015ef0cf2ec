// RUN: memfmt-opt %s -split-input-file -verify-diagnostics
// Verifier errors added because the random graphs or the fuzzers found IR
// that the verifiers accepted and something later refused or crashed on.
//
// The pooling verifier checks every window's taps, not only that the
// padding is smaller than the dilated window: with dilation a window can
// fall between input elements. Found by randgraph.py (seed 2, graph 94):
// the compiler accepted this pool and the runtime then refused it (ATen
// gives -inf there).

// A 1-high input, kernel 2 dilated by 2, padding 1: row 0's taps are -1
// and 1, both outside [0, 1).
func.func @empty_row(%x: tensor<1x3x1x9xf32>) -> tensor<1x3x1x3xf32> {
  // expected-error @+1 {{'memfmt.max_pool2d' op the window of output row 0 sees no input element (kernel [2, 2], dilation [2, 2], padding [1, 0], input [1, 9])}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 3>, padding = array<i64: 1, 0>, dilation = array<i64: 2, 2>, ceil_mode = true} : tensor<1x3x1x9xf32> -> tensor<1x3x1x3xf32>
  return %y : tensor<1x3x1x3xf32>
}

// -----

// The same in the columns, on max_pool2d_with_indices.
func.func @empty_column(%x: tensor<1x2x4x1xf32>) -> (tensor<1x2x4x1xf32>, tensor<1x2x4x1xi64>) {
  // expected-error @+1 {{'memfmt.max_pool2d_with_indices' op the window of output column 0 sees no input element (kernel [1, 2], dilation [1, 2], padding [0, 1], input [4, 1])}}
  %y, %i = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 1, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 1>, dilation = array<i64: 1, 2>} : tensor<1x2x4x1xf32> -> tensor<1x2x4x1xf32>, tensor<1x2x4x1xi64>
  return %y, %i : tensor<1x2x4x1xf32>, tensor<1x2x4x1xi64>
}

// -----

// Taps that reach the input are fine: row 0 taps -1 and 1 of a 2-high
// input.
func.func @covered(%x: tensor<1x3x2x9xf32>) -> tensor<1x3x1x9xf32> {
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 2, 1>, stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 2, 1>} : tensor<1x3x2x9xf32> -> tensor<1x3x1x9xf32>
  return %y : tensor<1x3x1x9xf32>
}

// -----

// The check takes constant time per window, whatever the kernel size (it
// walked the taps, and the 2^29-tap MaxPool of an ONNX model took 16 s;
// found by memfmt-fuzz-onnx). Walking these 2^40-tap windows would take
// hours.
func.func @huge_covered(%x: tensor<1x1x5x3xf32>) -> tensor<1x1x5x3xf32> {
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 1099511627777, 1>, stride = array<i64: 1, 1>, padding = array<i64: 549755813888, 0>, dilation = array<i64: 1, 1>} : tensor<1x1x5x3xf32> -> tensor<1x1x5x3xf32>
  return %y : tensor<1x1x5x3xf32>
}

// -----

// A dilated window whose extent overflows int64 (found by memfmt-fuzz-ir).
func.func @window_overflow(%x: tensor<1x1x5x3xf32>) -> tensor<1x1x5x3xf32> {
  // expected-error @+1 {{'memfmt.max_pool2d' op kernel_size [1099511627777, 1], dilation [88888881, 1] and padding [549755813888, 0] on input [5, 3] overflow 64-bit sizes}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 1099511627777, 1>, stride = array<i64: 1, 1>, padding = array<i64: 549755813888, 0>, dilation = array<i64: 88888881, 1>} : tensor<1x1x5x3xf32> -> tensor<1x1x5x3xf32>
  return %y : tensor<1x1x5x3xf32>
}

// -----

// Padding so large that the padded input overflows int64.
func.func @padding_overflow(%x: tensor<1x1x5x3xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x5x3xf32> {
  // expected-error @+1 {{'memfmt.conv2d' op kernel [3, 3], dilation [1, 1] and padding [9223372036854775807, 1] on input [5, 3] overflow 64-bit sizes}}
  %y = memfmt.conv2d %x, %w {padding = array<i64: 9223372036854775807, 1>} : (tensor<1x1x5x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x5x3xf32>
  return %y : tensor<1x1x5x3xf32>
}

// -----

// Dilation 2 from an odd offset: row 0's taps are all odd, none is 0.
func.func @huge_empty(%x: tensor<1x1x1x3xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{'memfmt.max_pool2d' op the window of output row 0 sees no input element (kernel [1099511627776, 1], dilation [2, 1], padding [1099511627775, 0, 1099511627777, 0], input [1, 3])}}
  %y = memfmt.max_pool2d %x {kernel_size = array<i64: 1099511627776, 1>, stride = array<i64: 1, 1>, padding = array<i64: 1099511627775, 0, 1099511627777, 0>, dilation = array<i64: 2, 1>} : tensor<1x1x1x3xf32> -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// Found by memfmt-fuzz-ir: chunks = INT64_MAX overflowed the ceil division
// of the piece size (signed overflow, UBSan), and on an empty dim asked for
// INT64_MAX empty pieces. Both are now plain verifier errors.
func.func @chunk_huge(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'memfmt.chunk' op splitting size 4 into 9223372036854775807 chunks gives 4 pieces [1, 1, 1, 1], but the op has 1 results}}
  %y = memfmt.chunk %x {chunks = 9223372036854775807 : i64} : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @chunk_huge_empty(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{'memfmt.chunk' op splitting size 0 into 9223372036854775807 chunks gives 9223372036854775807 empty pieces, but the op has 1 results}}
  %y = memfmt.chunk %x {chunks = 9223372036854775807 : i64} : tensor<0x3xf32> -> tensor<0x3xf32>
  return
}
