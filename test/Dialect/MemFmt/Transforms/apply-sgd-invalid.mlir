// RUN: memfmt-opt %s -split-input-file --memfmt-apply-sgd -verify-diagnostics --allow-unregistered-dialect

// memfmt-apply-sgd's errors, located at the function: a gradient that names
// no parameter, one parameter marked twice, a type mismatch, optimizer
// state marked as a parameter.

// expected-error @+1 {{memfmt-apply-sgd: result 1 is the gradient of 'fc.bias', which no memfmt.weight of @no_weight reads}}
func.func @no_weight(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = "fc.bias"}) {
  return %l, %g : tensor<f32>, tensor<5xf32>
}

// -----

// expected-error @+1 {{memfmt-apply-sgd: results 1 and 2 are both the gradient of 'fc.bias'}}
func.func @twice(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = "fc.bias"}, tensor<5xf32> {memfmt.gradient_of = "fc.bias"}) {
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  return %l, %g, %g : tensor<f32>, tensor<5xf32>, tensor<5xf32>
}

// -----

// expected-error @+1 {{memfmt-apply-sgd: result 1 (the gradient of 'fc.bias') has type 'tensor<4xf32>' but the parameter has type 'tensor<5xf32>'}}
func.func @type(%l: tensor<f32>, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32> {memfmt.gradient_of = "fc.bias"}) {
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{memfmt-apply-sgd: result 1 is the gradient of 'fc.bias.momentum_buffer', which is optimizer state (zero_init), not a parameter}}
func.func @state(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = "fc.bias.momentum_buffer"}) {
  %b = memfmt.weight "fc.bias.momentum_buffer" {zero_init} : tensor<5xf32>
  return %l, %g : tensor<f32>, tensor<5xf32>
}

// -----

// expected-error @+1 {{memfmt-apply-sgd: result 1 has memfmt.gradient_of = 3 : i64; expected the name of a parameter}}
func.func @not_a_name(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = 3}) {
  return %l, %g : tensor<f32>, tensor<5xf32>
}

// -----

// expected-error @+1 {{memfmt-apply-sgd: @blocks has more than one block; the updates go at the end of a training step of one block}}
func.func @blocks(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = "fc.bias"}) {
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  "test.br"() [^next] : () -> ()
^next:
  return %l, %g : tensor<f32>, tensor<5xf32>
}
