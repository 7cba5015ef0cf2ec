// Verifier errors of permute, slice, channel_shuffle, layer_norm and softmax.
// RUN: memfmt-opt %s -split-input-file -verify-diagnostics

func.func @permute_not_permutation(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'dims' [0, 1, 1, 2] is not a permutation of 0..3}}
  %y = memfmt.permute %x {dims = array<i64: 0, 1, 1, 2>} : tensor<2x3x4x5xf32> -> tensor<2x3x3x4xf32>
  return
}

// -----

func.func @permute_rank(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'dims' [1, 0] has 2 entries for an input of rank 4}}
  %y = memfmt.permute %x {dims = array<i64: 1, 0>} : tensor<2x3x4x5xf32> -> tensor<3x2x4x5xf32>
  return
}

// -----

func.func @permute_shape(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected result shape [2, 4, 5, 3], got [2, 3, 4, 5]}}
  %y = memfmt.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  return
}

// -----

func.func @permute_unsupported_result(%x: tensor<2x3x4x5xf32>) {
  // A result with the raw permuted strides is no supported format (L4).
  // expected-error @+1 {{L4}}
  %y = memfmt.permute %x {dims = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x5xf32> -> tensor<2x4x3x5xf32, #memfmt.strides<[60, 5, 20, 1]>>
  return
}

// -----

func.func @slice_bounds(%x: tensor<2x6x5x3xf32>) {
  // expected-error @+1 {{expects 0 <= start < end <= 6 (the size of dim 1), got start 4 and end 7}}
  %y = memfmt.slice %x {dim = 1 : i64, start = 4 : i64, end = 7 : i64} : tensor<2x6x5x3xf32> -> tensor<2x3x5x3xf32>
  return
}

// -----

func.func @slice_step(%x: tensor<2x6x5x3xf32>) {
  // expected-error @+1 {{expects 'step' >= 1, got -1}}
  %y = memfmt.slice %x {dim = 1 : i64, start = 0 : i64, end = 6 : i64, step = -1 : i64} : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  return
}

// -----

func.func @slice_shape(%x: tensor<2x6x5x3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3, 5, 3], got [2, 2, 5, 3]}}
  %y = memfmt.slice %x {dim = 1 : i64, start = 0 : i64, end = 6 : i64, step = 2 : i64} : tensor<2x6x5x3xf32> -> tensor<2x2x5x3xf32>
  return
}

// -----

func.func @slice_dim(%x: tensor<2x6x5x3xf32>) {
  // expected-error @+1 {{'dim' = 4 is out of range for rank 4}}
  %y = memfmt.slice %x {dim = 4 : i64, start = 0 : i64, end = 1 : i64} : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  return
}

// -----

func.func @shuffle_groups(%x: tensor<2x6x5x3xf32>) {
  // expected-error @+1 {{expects 'groups' >= 1 dividing the 6 channels, got 4}}
  %y = memfmt.channel_shuffle %x {groups = 4 : i64} : tensor<2x6x5x3xf32> -> tensor<2x6x5x3xf32>
  return
}

// -----

func.func @shuffle_rank(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{expects an input [N, C, *] of rank >= 3, got [2, 6]}}
  %y = memfmt.channel_shuffle %x {groups = 2 : i64} : tensor<2x6xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @layer_norm_axes(%x: tensor<2x5x6xf32>) {
  // expected-error @+1 {{normalises over the last dimension: 'normalized_shape' must be [6], got [5, 6]}}
  %y = memfmt.layer_norm %x {normalized_shape = array<i64: 5, 6>} : tensor<2x5x6xf32> -> tensor<2x5x6xf32>
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<2x5x6xf32>, %w: tensor<5xf32>) {
  // expected-error @+1 {{expected weight shape [6], got [5]}}
  %y = memfmt.layer_norm %x weight %w {normalized_shape = array<i64: 6>} : tensor<2x5x6xf32> weight tensor<5xf32> -> tensor<2x5x6xf32>
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<2x5x6xf32>) {
  // expected-error @+1 {{expects a finite 'eps' >= 0, got -1}}
  %y = memfmt.layer_norm %x {normalized_shape = array<i64: 6>, eps = -1.0 : f64} : tensor<2x5x6xf32> -> tensor<2x5x6xf32>
  return
}

// -----

func.func @softmax_dim(%x: tensor<2x5x6xf32>) {
  // expected-error @+1 {{expects 'dim' in [0, 3) for an input of rank 3, got 3}}
  %y = memfmt.softmax %x {dim = 3 : i64} : tensor<2x5x6xf32> -> tensor<2x5x6xf32>
  return
}

// -----

func.func @softmax_negative_dim(%x: tensor<2x5x6xf32>) {
  // expected-error @+1 {{expects 'dim' in [0, 3) for an input of rank 3, got -1}}
  %y = memfmt.softmax %x {dim = -1 : i64} : tensor<2x5x6xf32> -> tensor<2x5x6xf32>
  return
}

// -----

func.func @softmax_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{expects an input of rank >= 1}}
  %y = memfmt.softmax %x {dim = 0 : i64} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @softmax_shape(%x: tensor<2x5x6xf32>) {
  // expected-error @+1 {{expected result shape [2, 5, 6], got [2, 6, 5]}}
  %y = memfmt.softmax %x {dim = 2 : i64} : tensor<2x5x6xf32> -> tensor<2x6x5xf32>
  return
}
