// A model file that parses but does not verify: the conv's result shape is
// wrong (line 6).
func.func @invalid(%x: tensor<1x3x32x32xf32>) -> tensor<1x8x32x32xf32> {
  %w = memfmt.weight "conv.weight" : tensor<8x3x3x3xf32>
  // No padding: the result is 30x30, not 32x32.
  %y = memfmt.conv2d %x, %w : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  return %y : tensor<1x8x32x32xf32>
}
