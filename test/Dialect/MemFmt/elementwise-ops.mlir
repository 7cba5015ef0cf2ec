// The elementwise ops beyond ResNet (sigmoid, silu, hardswish, hardsigmoid,
// clamp, gelu; mul, sub, div with NumPy broadcasting) round-trip in the
// custom and the generic form, and keep a channels-last encoding (L5).
// RUN: memfmt-opt %s | FileCheck %s
// RUN: memfmt-opt %s --mlir-print-op-generic | memfmt-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  // CHECK: memfmt.sigmoid %{{.+}} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  %a = memfmt.sigmoid %x : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.silu
  %b = memfmt.silu %a : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.hardswish
  %c = memfmt.hardswish %b : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // ATen's hardsigmoid: the defaults are not printed.
  // CHECK: memfmt.hardsigmoid %{{.+}} : tensor
  %d = memfmt.hardsigmoid %c : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.hardsigmoid %{{.+}} {alpha = 2.000000e-01 : f64} : tensor
  %e = memfmt.hardsigmoid %d {alpha = 0.2 : f64, beta = 0.5 : f64} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.clamp %{{.+}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %f = memfmt.clamp %e {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.clamp %{{.+}} {min = -1.000000e+00 : f64}
  %g = memfmt.clamp %f {min = -1.0 : f64} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.gelu %{{.+}} : tensor
  %h = memfmt.gelu %g : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: memfmt.gelu %{{.+}} {approximate = "tanh"}
  %i = memfmt.gelu %h {approximate = "tanh"} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  return %i : tensor<2x3x4x5xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>,
                  %s: tensor<2x3x1x1xf32>, %v: tensor<5xf32>)
    -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> {
  // A squeeze-excite scale times a channels-last activation (L5, L3).
  // CHECK: memfmt.mul %{{.+}}, %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<2x3x1x1xf32> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  %a = memfmt.mul %x, %s : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<2x3x1x1xf32> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  // CHECK: memfmt.sub %{{.+}}, %{{.+}} : tensor<2x3x1x1xf32>, tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  %b = memfmt.sub %s, %a : tensor<2x3x1x1xf32>, tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  // CHECK: memfmt.div %{{.+}}, %{{.+}} : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<5xf32>
  %c = memfmt.div %b, %v : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<5xf32> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return %c : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
}
