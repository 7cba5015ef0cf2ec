// A bf16 convolution_backward wanting only grad_input: its absent f32
// grad_weight and grad_bias have no f32 peer to stand in for them.
func.func @main(%go: tensor<1x4x5x5xbf16>, %x: tensor<1x2x7x7xbf16>, %w: tensor<4x2x3x3xbf16>) -> tensor<1x2x7x7xbf16> {
  %gi, %gw, %gb = memfmt.convolution_backward %go, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, output_mask = array<i1: true, false, false>} : (tensor<1x4x5x5xbf16>, tensor<1x2x7x7xbf16>, tensor<4x2x3x3xbf16>) -> (tensor<1x2x7x7xbf16>, tensor<4x2x3x3xf32>, tensor<4xf32>)
  return %gi : tensor<1x2x7x7xbf16>
}
