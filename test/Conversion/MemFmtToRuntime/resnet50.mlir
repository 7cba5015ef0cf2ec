// ResNet-50 (batch 8, 224x224) lowered to runtime calls: the arena planned
// by liveness, with relu, add and batch norm run in place where their
// operand dies, equals the peak of live bytes (57802752 B, i.e. no waste;
// 77070336 B without running in place),
// the weights blob holds 25557032 f32 parameters (64-byte aligned each),
// and the whole forward pass is 176 kernel calls. The result lowers to LLVM
// and translates to LLVM IR with the entry point the loader calls (its
// buffers as one array) around the forward's C interface.
// RUN: memfmt-opt %S/../../Dialect/MemFmt/Transforms/Inputs/resnet50.mlir --memfmt-channels-last --convert-memfmt-to-runtime | FileCheck %s
// RUN: memfmt-opt %S/../../Dialect/MemFmt/Transforms/Inputs/resnet50.mlir --memfmt-channels-last --convert-memfmt-to-runtime --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --memfmt-emit-packed-entry | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM
// CHECK: module attributes {memfmt.arena_bytes = 57802752 : i64, memfmt.kernel_calls = 176 : i64, memfmt.peak_live_bytes = 57802752 : i64, memfmt.weights_bytes = 102440640 : i64}
// LLVM-DAG: define i32 @_mlir_ciface_memfmt_forward(ptr
// LLVM-DAG: define i32 @memfmt_forward_packed(ptr %0, ptr %1)
// LLVM-DAG: declare i32 @_mlir_ciface_memfmt_conv2d_f32(ptr, i64, ptr, ptr, ptr, ptr, ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, double, double)
