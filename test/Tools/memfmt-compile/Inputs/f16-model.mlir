// A model in f16: the cpu target compiles f32 only for now.
func.func @half(%x: tensor<1x3x8x8xf16>) -> tensor<1x3x8x8xf16> {
  %r = memfmt.relu %x : tensor<1x3x8x8xf16> -> tensor<1x3x8x8xf16>
  return %r : tensor<1x3x8x8xf16>
}
