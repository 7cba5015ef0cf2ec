func.func @assign_twice(%v: tensor<4xf32>) {
  %w = memfmt.weight "w" : tensor<4xf32>
  memfmt.assign_weight "w", %v : tensor<4xf32>
  return
}
