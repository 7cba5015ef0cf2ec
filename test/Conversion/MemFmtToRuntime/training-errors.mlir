// RUN: memfmt-opt %s -split-input-file --convert-memfmt-to-runtime -verify-diagnostics

// A state tensor read after its assignment would see the new value in its
// slot; reads come first.
func.func @read_after_assign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = memfmt.weight "a" : tensor<4xf32>
  // expected-note @+1 {{assigned here}}
  memfmt.assign_weight "a", %x : tensor<4xf32>
  // expected-error @+1 {{reads state "a" after its memfmt.assign_weight; every read of a state tensor must come before its assignment}}
  %r = memfmt.relu %w : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// An assigned state has one slot, read by one memfmt.weight.
func.func @two_reads(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = memfmt.weight "a" : tensor<4xf32>
  %r = memfmt.relu %w : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{state "a" is assigned and read by more than one memfmt.weight; read it once}}
  %v = memfmt.weight "a" : tensor<4xf32>
  %s = memfmt.add %r, %v : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  memfmt.assign_weight "a", %x : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A masked-off gradient that is used would be zeros, which no kernel
// computes.
func.func @masked_off_used(%go: tensor<1x2x4x4xf32>, %x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = memfmt.weight "w" : tensor<2x2x1x1xf32>
  // expected-error @+1 {{result #0 (grad_input) is masked off in output_mask but has uses; a masked-off gradient is zeros, which no kernel computes: set its output_mask entry to true}}
  %gi, %gw, %gb = memfmt.convolution_backward %go, %x, %w {output_mask = array<i1: false, true, false>} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>)
  return %gi : tensor<1x2x4x4xf32>
}

// -----

// Only splat floating-point constants are lowered (filled at load).
func.func @dense_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{only splat floating-point tensor constants are lowered (filled once at load); make other constants weights}}
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = memfmt.add %x, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// The training kernels are f32, most also f16 and bf16 (a mixed-precision
// step); the loss, the optimizer and the gradients' all-reduce are f32 only
// (a mixed-precision step keeps them f32).
func.func @f16_all_reduce(%g: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{no runtime kernel all_reduce for 'f16'}}
  %r = memfmt.all_reduce %g {reduce_op = "avg"} : tensor<4xf16>
  return %r : tensor<4xf16>
}
