// RUN: memfmt-opt %s -split-input-file --memfmt-convert-precision="precision=bf16" | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-convert-precision="precision=bf16" --memfmt-convert-precision="precision=bf16" | FileCheck %s
// RUN: memfmt-opt %s -split-input-file --memfmt-convert-precision="precision=f16" | FileCheck %s --check-prefix=F16
// RUN: memfmt-opt %s -split-input-file --memfmt-convert-precision="precision=f32" | FileCheck %s --check-prefix=F32
// RUN: not memfmt-opt %s -split-input-file --memfmt-convert-precision="precision=f64" 2>&1 | FileCheck %s --check-prefix=BAD

// The body computes in bf16 (weights too, encodings kept); the signature
// stays f32, with one memfmt.to at entry and one at exit. Running the pass
// twice gives the same IR.
// CHECK-LABEL: func.func @body
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: %[[IN:.+]] = memfmt.to %[[X]] {dtype = bf16} : tensor<1x3x8x8xf32>
// CHECK: %[[W:.+]] = memfmt.weight "conv.weight" : tensor<4x3x3x3xbf16, #memfmt.strides<[27, 1, 9, 3]>>
// CHECK: %[[C:.+]] = memfmt.conv2d %[[IN]], %[[W]]
// CHECK-SAME: -> tensor<1x4x8x8xbf16>
// CHECK: %[[R:.+]] = memfmt.relu %[[C]] : tensor<1x4x8x8xbf16> -> tensor<1x4x8x8xbf16>
// CHECK: %[[OUT:.+]] = memfmt.to %[[R]] {dtype = f32} : tensor<1x4x8x8xbf16>
// CHECK: return %[[OUT]] : tensor<1x4x8x8xf32>
// CHECK-NOT: memfmt.to
// F16-LABEL: func.func @body
// F16: memfmt.to %{{.+}} {dtype = f16
// F16: memfmt.relu %{{.+}} : tensor<1x4x8x8xf16> -> tensor<1x4x8x8xf16>
// F32-LABEL: func.func @body
// F32-NOT: memfmt.to
// F32: memfmt.relu %{{.+}} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// BAD: for the --precision option: Cannot find option named 'f64'!
func.func @body(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = memfmt.weight "conv.weight" : tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
  %0 = memfmt.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) -> tensor<1x4x8x8xf32>
  %1 = memfmt.relu %0 : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %1 : tensor<1x4x8x8xf32>
}

// -----

// Layout conversions at entry and exit become the memfmt.to that also
// converts the dtype: the input is read once, the output written once.
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4x4xf32>)
// CHECK: %[[IN:.+]] = memfmt.to %[[X]] {dtype = bf16, memfmt.reason = "entry", memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x4xf32>
// CHECK: %[[R:.+]] = memfmt.relu %[[IN]] : tensor<2x3x4x4xbf16, #memfmt.strides<[48, 1, 12, 3]>>
// CHECK: %[[OUT:.+]] = memfmt.to %[[R]] {dtype = f32, memory_format = #memfmt.memory_format<contiguous>} : tensor<2x3x4x4xbf16, #memfmt.strides<[48, 1, 12, 3]>>
// CHECK: return %[[OUT]] : tensor<2x3x4x4xf32>
func.func @layouts(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %0 = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>, memfmt.reason = "entry"} : tensor<2x3x4x4xf32>
  %1 = memfmt.relu %0 : tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>> -> tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  %2 = memfmt.contiguous %1 : tensor<2x3x4x4xf32, #memfmt.strides<[48, 1, 12, 3]>>
  return %2 : tensor<2x3x4x4xf32>
}

// -----

// Indices stay i64; a memfmt.to with an explicit dtype keeps it.
// CHECK-LABEL: func.func @indices
// CHECK: memfmt.max_pool2d_with_indices %{{.+}} -> tensor<1x2x2x2xbf16>, tensor<1x2x2x2xi64>
// CHECK: %[[KEEP:.+]] = memfmt.to %{{.+}} {dtype = f16
// CHECK: return %{{.+}}, %[[KEEP]] : tensor<1x2x2x2xi64>, tensor<1x2x2x2xf16>
func.func @indices(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xi64>, tensor<1x2x2x2xf16>) {
  %0:2 = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
  %1 = memfmt.to %0#0 {dtype = f16} : tensor<1x2x2x2xf32>
  return %0#1, %1 : tensor<1x2x2x2xi64>, tensor<1x2x2x2xf16>
}
