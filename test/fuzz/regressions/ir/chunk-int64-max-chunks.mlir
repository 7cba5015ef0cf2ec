func.func @chunk_zero_chunks(%x: tensor<4x3xf32>) {
  %y = memfmt.chunk %x {chunks = 09223372036854775807 : i64} : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}
