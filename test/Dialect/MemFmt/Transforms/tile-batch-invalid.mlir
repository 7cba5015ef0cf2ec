// RUN: memfmt-opt %s --memfmt-tile-batch="sub-batch=3" -verify-diagnostics -split-input-file

// expected-error @+1 {{sub-batch 3 does not divide the batch, 4}}
func.func @uneven(%x: tensor<4x3x5x5xf32>) -> tensor<4x3x5x5xf32> {
  %0 = memfmt.relu %x : tensor<4x3x5x5xf32> -> tensor<4x3x5x5xf32>
  return %0 : tensor<4x3x5x5xf32>
}

