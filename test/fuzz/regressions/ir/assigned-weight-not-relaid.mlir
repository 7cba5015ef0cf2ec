#cl = #memfmt.strides<[8, 1, 4, 2]>
func.func @assigned_not_folded(%x: tensor<2x2x2x2xf32>) -> tensor<2x2x2x2xf32, #cl> {
  %a = memfmt.weight "a" : tensor<2x2x2x2xf32>
  %ca = memfmt.contiguous %a {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x2x2x2xf32>
  %s = memfmt.add %ca, %ca : tensor<2x2x2x2xf32, #cl>, tensor<2x2x2x2xf32, #cl> -> tensor<2x2x2x2xf32, #cl>
  memfmt.assign_weight "a", %x : tensor<2x2x2x2xf32>
  return %s : tensor<2x2x2x2xf32, #cl>
}
