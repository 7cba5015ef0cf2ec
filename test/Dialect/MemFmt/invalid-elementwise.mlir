// Verifier errors of the elementwise ops beyond ResNet.
// RUN: memfmt-opt %s -split-input-file -verify-diagnostics

func.func @unary_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3], got [3, 2]}}
  %y = memfmt.sigmoid %x : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @clamp_nan(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'min' is NaN}}
  %y = memfmt.clamp %x {min = 0x7FF8000000000000 : f64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @gelu_approximate(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %y = memfmt.gelu %x {approximate = "fast"} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @mul_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes [2, 3] and [4] do not broadcast}}
  %z = memfmt.mul %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @div_result(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3], got [2, 1]}}
  %z = memfmt.div %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x1xf32>
  return
}
