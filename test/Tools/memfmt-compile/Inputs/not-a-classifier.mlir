// A feature extractor (no classifier head): memfmt-compile --train rejects it.
// Its function is on line 3 (train.test checks the error's location).
func.func @features(%x: tensor<2x3x8x8xf32>) -> tensor<2x8x4x4xf32> {
  %w = memfmt.weight "conv.weight" : tensor<8x3x3x3xf32>
  %c = memfmt.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x4x4xf32>
  return %c : tensor<2x8x4x4xf32>
}
