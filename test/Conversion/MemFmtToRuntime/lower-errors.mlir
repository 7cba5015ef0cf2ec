// RUN: memfmt-opt %s -split-input-file --convert-memfmt-to-runtime -verify-diagnostics

// Training batch norm cannot be compiled.
func.func @training(%x: tensor<1x2x3x3xf32>, %p: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{training batch norm cannot be lowered; memfmt compiles inference}}
  %0 = memfmt.batch_norm %x, %p, %p, %p, %p {training = true} : tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// One public function is compiled; two are ambiguous.
// expected-error @+1 {{expects exactly one public function to compile, found 2}}
module {
  func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
  func.func @b(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// A dtype change between two reduced precisions goes through f32.
func.func @to_bf16(%x: tensor<1x2x3x3xf16>) -> tensor<1x2x3x3xbf16> {
  // expected-error @+1 {{memfmt.to from 'f16' to 'bf16' is not lowered; convert through f32 (two memfmt.to ops)}}
  %0 = memfmt.to %x {dtype = bf16} : tensor<1x2x3x3xf16>
  return %0 : tensor<1x2x3x3xbf16>
}

// -----

// A module that carries a memory plan is lowered by it: an op added after
// planning has no place in it.
module attributes {memfmt.arena_bytes = 64 : i64, memfmt.peak_live_bytes = 64 : i64, memfmt.weights_bytes = 0 : i64} {
  func.func @stale(%x: tensor<4xf32> {memfmt.buffer = #memfmt.buffer<input 0, offset = 0, bytes = 16>}) -> tensor<4xf32> {
    // expected-error @+1 {{a value of this op has no place in the memory plan; plan the whole function (memfmt-plan-memory) after changing it}}
    %0 = memfmt.relu %x : tensor<4xf32> -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
