// A model file with a syntax error on line 5 (a missing type).
func.func @broken(%x: tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32> {
  %r = memfmt.relu %x : tensor<1x3x32x32xf32> -> tensor<1x3x32x32xf32>
  // The result type is missing:
  %s = memfmt.relu %r : tensor<1x3x32x32xf32> ->
  return %s : tensor<1x3x32x32xf32>
}
