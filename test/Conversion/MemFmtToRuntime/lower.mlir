// RUN: memfmt-opt %s -split-input-file --convert-memfmt-to-runtime | FileCheck %s

// Each op becomes one kernel call on strided views (the add runs in place
// on the relu's output: one 512 B slot); a failing status returns at once;
// the result is copied into the caller's buffer.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 512 : i64, memfmt.kernel_calls = 3 : i64, memfmt.peak_live_bytes = 512 : i64, memfmt.weights_bytes = 0 : i64}
// CHECK: func.func private @memfmt_relu_f32(!llvm.ptr, i64, memref<*xf32>, memref<*xf32>) -> i32 attributes {llvm.emit_c_interface}
// CHECK: func.func @memfmt_forward(%[[CTX:.+]]: !llvm.ptr, %[[ARENA:.+]]: memref<?xi8>, %[[W:.+]]: memref<?xi8>, %[[IN:.+]]: memref<?xi8>, %[[OUT:.+]]: memref<?xi8>) -> i32 attributes {llvm.emit_c_interface}
// CHECK: memref.view %[[IN]]
// CHECK: memref.reinterpret_cast {{.*}} strides: [60, 1, 15, 3]
// CHECK: %[[S:.+]] = call @memfmt_relu_f32(%[[CTX]]
// CHECK: cf.cond_br %{{.+}}, ^bb1, ^[[FAIL:bb[0-9]+]](%[[S]] : i32)
// CHECK: call @memfmt_add_f32
// CHECK: call @memfmt_copy_f32
// CHECK: ^[[FAIL]](%[[E:.+]]: i32):
// CHECK-NEXT: return %[[E]] : i32
// CHECK-NOT: func.func @relu_add
func.func @relu_add(%x: tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>) -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> {
  %0 = memfmt.relu %x : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  %1 = memfmt.add %0, %x : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>> -> tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
  return %1 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>
}

// -----

// The arena reuses memory: a chain of three 4 KiB relus runs in place in
// one slot, and the convolution's output takes 64 B more. L3 conversions
// and reshapes of contiguous tensors are aliases (no call); weights are
// packed in the blob with their channels-last strides.
// CHECK-LABEL: module attributes {memfmt.arena_bytes = 4160 : i64, memfmt.kernel_calls = 5 : i64, memfmt.peak_live_bytes = 4160 : i64, memfmt.weights_bytes = 64 : i64}
// CHECK-NOT: memfmt_copy_f32(%{{.*}}, %c2_i64
// CHECK: memref.view %{{.+}}[%c0{{.*}}][] : memref<?xi8> to memref<16xf32>
// CHECK-NEXT: memref.reinterpret_cast {{.*}} sizes: [4, 4, 1, 1], strides: [4, 1, 4, 4]
func.func @reuse(%x: tensor<1x1024xf32>) -> tensor<1x4xf32> {
  %0 = memfmt.relu %x : tensor<1x1024xf32> -> tensor<1x1024xf32>
  %1 = memfmt.relu %0 : tensor<1x1024xf32> -> tensor<1x1024xf32>
  %2 = memfmt.relu %1 : tensor<1x1024xf32> -> tensor<1x1024xf32>
  %3 = memfmt.reshape %2 : tensor<1x1024xf32> -> tensor<1x4x16x16xf32>
  %w = memfmt.weight "w" : tensor<4x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>
  %4 = memfmt.conv2d %3, %w {stride = array<i64: 16, 16>} : (tensor<1x4x16x16xf32>, tensor<4x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>) -> tensor<1x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>
  %5 = memfmt.contiguous %4 : tensor<1x4x1x1xf32, #memfmt.strides<[4, 1, 4, 4]>>
  %6 = memfmt.flatten %5 {start_dim = 1 : i64} : tensor<1x4x1x1xf32> -> tensor<1x4xf32>
  return %6 : tensor<1x4xf32>
}

// -----

// A dtype change is a cast kernel of the non-f32 type, in either direction,
// and may change the layout at the same time (NCHW f32 -> NHWC bf16).
// CHECK-LABEL: module attributes
// CHECK: func.func private @memfmt_cast_f32_to_bf16(!llvm.ptr, i64, memref<*xf32>, memref<*xbf16>) -> i32 attributes {llvm.emit_c_interface}
// CHECK: func.func private @memfmt_cast_to_f32_from_bf16(!llvm.ptr, i64, memref<*xbf16>, memref<*xf32>) -> i32 attributes {llvm.emit_c_interface}
// CHECK: call @memfmt_cast_f32_to_bf16
// CHECK: call @memfmt_relu_bf16
// CHECK: call @memfmt_cast_to_f32_from_bf16
// CHECK: call @memfmt_copy_f32
func.func @casts(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = memfmt.to %x {dtype = bf16, memory_format = #memfmt.memory_format<channels_last>} : tensor<1x2x3x3xf32>
  %1 = memfmt.relu %0 : tensor<1x2x3x3xbf16, #memfmt.strides<[18, 1, 6, 2]>> -> tensor<1x2x3x3xbf16, #memfmt.strides<[18, 1, 6, 2]>>
  %2 = memfmt.to %1 {dtype = f32, memory_format = #memfmt.memory_format<contiguous>} : tensor<1x2x3x3xbf16, #memfmt.strides<[18, 1, 6, 2]>>
  return %2 : tensor<1x2x3x3xf32>
}
