// RUN: memfmt-opt %s --memfmt-channels-last --memfmt-verify-layouts="contiguous-operands=true" > %t.1.mlir
// RUN: FileCheck %s --input-file=%t.1.mlir
// RUN: memfmt-opt %t.1.mlir --memfmt-channels-last > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: memfmt-opt %s --memfmt-channels-last="inputs=channels-last outputs=channels-last" > %t.3.mlir
// RUN: FileCheck %s --check-prefix=CL --input-file=%t.3.mlir
// RUN: memfmt-opt %t.3.mlir --memfmt-channels-last="inputs=channels-last outputs=channels-last" | diff %t.3.mlir -
// RUN: memfmt-opt %s --memfmt-channels-last="inputs=keep weights=keep" > %t.4.mlir
// RUN: FileCheck %s --check-prefix=KEEP --input-file=%t.4.mlir
// RUN: memfmt-opt %t.4.mlir --memfmt-channels-last="inputs=keep weights=keep" | diff %t.4.mlir -

// A small CNN: conv (weight re-laid), bn, relu, residual add, pool, a
// flatten of a 2x8x3x3 that needs the L7 conversion, and fc.
// CHECK-LABEL: func.func @small_cnn(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x6x6xf32>
// CHECK: %[[IN:.+]] = memfmt.contiguous %[[X]] {{.*}}inputs=convert
// CHECK-DAG: memfmt.weight "conv.weight" : tensor<8x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
// CHECK: memfmt.conv2d %[[IN]]
// CHECK: %[[P:.+]] = memfmt.max_pool2d {{.*}} -> tensor<2x8x3x3xf32, #memfmt.strides<[72, 1, 24, 8]>>
// CHECK: %[[F:.+]] = memfmt.contiguous %[[P]] {memfmt.reason = "L7:
// CHECK: memfmt.flatten %[[F]]
// CL-LABEL: func.func @small_cnn(
// CL-SAME: tensor<2x3x6x6xf32, #memfmt.strides<[108, 1, 18, 3]>>
// CL-SAME: -> (tensor<2x10xf32>, tensor<2x8x6x6xf32, #memfmt.strides<[288, 1, 48, 8]>>)
// CL-NOT: inputs=convert
// CL-NOT: outputs=keep
// KEEP-LABEL: func.func @small_cnn(
// KEEP-NOT: memfmt.contiguous
// KEEP: return
func.func @small_cnn(%x: tensor<2x3x6x6xf32>) -> (tensor<2x10xf32>, tensor<2x8x6x6xf32>) {
  %w = memfmt.weight "conv.weight" : tensor<8x3x3x3xf32>
  %g = memfmt.weight "bn.weight" : tensor<8xf32>
  %b = memfmt.weight "bn.bias" : tensor<8xf32>
  %m = memfmt.weight "bn.running_mean" : tensor<8xf32>
  %v = memfmt.weight "bn.running_var" : tensor<8xf32>
  %0 = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x6x6xf32>
  %1 = memfmt.batch_norm %0, %g, %b, %m, %v : tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8x6x6xf32>
  %2 = memfmt.relu %1 : tensor<2x8x6x6xf32> -> tensor<2x8x6x6xf32>
  %3 = memfmt.add %2, %0 : tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32> -> tensor<2x8x6x6xf32>
  %4 = memfmt.max_pool2d %3 {kernel_size = array<i64: 2, 2>} : tensor<2x8x6x6xf32> -> tensor<2x8x3x3xf32>
  %5 = memfmt.flatten %4 {start_dim = 1 : i64} : tensor<2x8x3x3xf32> -> tensor<2x72xf32>
  %fw = memfmt.weight "fc.weight" : tensor<10x72xf32>
  %fb = memfmt.weight "fc.bias" : tensor<10xf32>
  %6 = memfmt.linear %5, %fw, %fb : (tensor<2x72xf32>, tensor<10x72xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  return %6, %3 : tensor<2x10xf32>, tensor<2x8x6x6xf32>
}
