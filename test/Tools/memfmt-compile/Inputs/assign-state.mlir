// A model that updates its state on every run (assign-state.test).
func.func @state(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = memfmt.weight "a" : tensor<8xf32>
  %o = memfmt.add %w, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r = memfmt.relu %w : tensor<8xf32> -> tensor<8xf32>
  memfmt.assign_weight "a", %r : tensor<8xf32>
  return %o : tensor<8xf32>
}
