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

// A dtype change is not lowered yet.
func.func @to_f16(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf16> {
  // expected-error @+1 {{memfmt.to with a dtype change is not lowered yet}}
  %0 = memfmt.to %x {dtype = f16} : tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf16>
}
