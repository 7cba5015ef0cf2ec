func.func @conv_cl_weight_nchw_input(%x: tensor<1x3x8x8xf32>, %p: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %w = memfmt.weight "w" : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %0 = memfmt.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) -> tensor<1x4x6x6xf32>
  %1 = memfmt.batch_norm %0, %p, %p, %p, %p : tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}
