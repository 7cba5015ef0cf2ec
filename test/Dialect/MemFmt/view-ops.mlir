// permute, slice, channel_shuffle, layer_norm and softmax round-trip in the custom
// and the generic form, with a channels-last encoding where they take one.
// RUN: memfmt-opt %s | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic | memfmt-opt | FileCheck %s

// CHECK-LABEL: func.func @ops
func.func @ops(%x: tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>,
               %w: tensor<6xf32>) -> tensor<2x5x3x6xf32> {
  // CHECK: memfmt.permute %{{.+}} {dims = array<i64: 0, 2, 3, 1>} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x5x3x6xf32>
  %p = memfmt.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x5x3x6xf32>
  // CHECK: memfmt.slice %{{.+}} {dim = 1 : i64, end = 5 : i64, start = 1 : i64, step = 2 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x2x5x3xf32, #memfmt.strides<[30, 1, 6, 2]>>
  %s = memfmt.slice %x {dim = 1 : i64, start = 1 : i64, end = 5 : i64, step = 2 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x2x5x3xf32, #memfmt.strides<[30, 1, 6, 2]>>
  // CHECK: memfmt.channel_shuffle %{{.+}} {groups = 3 : i64}
  %c = memfmt.channel_shuffle %x {groups = 3 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>
  // CHECK: memfmt.layer_norm %{{.+}} weight %{{.+}} bias %{{.+}} {eps = 1.000000e-03 : f64, normalized_shape = array<i64: 6>} : tensor<2x5x3x6xf32> weight tensor<6xf32> bias tensor<6xf32> -> tensor<2x5x3x6xf32>
  %n = memfmt.layer_norm %p weight %w bias %w {normalized_shape = array<i64: 6>, eps = 1.0e-3 : f64} : tensor<2x5x3x6xf32> weight tensor<6xf32> bias tensor<6xf32> -> tensor<2x5x3x6xf32>
  // CHECK: memfmt.layer_norm %{{.+}} bias %{{.+}} {normalized_shape = array<i64: 6>} : tensor<2x5x3x6xf32> bias tensor<6xf32> -> tensor<2x5x3x6xf32>
  %m = memfmt.layer_norm %n bias %w {normalized_shape = array<i64: 6>} : tensor<2x5x3x6xf32> bias tensor<6xf32> -> tensor<2x5x3x6xf32>
  return %m : tensor<2x5x3x6xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>) -> tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> {
  // CHECK: memfmt.softmax %{{.+}} {dim = 1 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>
  %y = memfmt.softmax %x {dim = 1 : i64} : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>> -> tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>
  return %y : tensor<2x6x5x3xf32, #memfmt.strides<[90, 1, 18, 6]>>
}
