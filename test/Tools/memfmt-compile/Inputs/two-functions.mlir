// Two public functions: memfmt-compile cannot tell which is the model.
func.func @first(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %r = memfmt.relu %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}
func.func @second(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %r = memfmt.relu %x : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return %r : tensor<1x3x8x8xf32>
}
