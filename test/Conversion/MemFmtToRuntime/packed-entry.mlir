// memfmt-emit-packed-entry wraps the C interface of memfmt_forward (one
// descriptor pointer per buffer) in memfmt_forward_packed(ctx, buffers),
// which loads buffer i's pointer from slot i of the array, in order, and
// returns the forward's status. Without a defined forward it is an error.
// RUN: memfmt-opt %s --memfmt-emit-packed-entry --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @memfmt_forward_packed(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[BUFFERS:.*]]: !llvm.ptr) -> i32
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[BUFFERS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BUFFERS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S2:.*]] = llvm.getelementptr %[[BUFFERS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[STATUS:.*]] = llvm.call @_mlir_ciface_memfmt_forward(%[[CTX]], %[[B0]], %[[B1]], %[[B2]])
// CHECK: llvm.return %[[STATUS]] : i32
llvm.func @_mlir_ciface_memfmt_forward(%ctx: !llvm.ptr, %arena: !llvm.ptr,
                                       %weights: !llvm.ptr,
                                       %output: !llvm.ptr) -> i32 {
  %0 = llvm.mlir.constant(0 : i32) : i32
  llvm.return %0 : i32
}

// -----

// expected-error @+1 {{no '_mlir_ciface_memfmt_forward' defined in the LLVM dialect to wrap; lower the model with convert-memfmt-to-runtime and convert-func-to-llvm first}}
module {
  llvm.func @_mlir_ciface_memfmt_forward(!llvm.ptr, !llvm.ptr) -> i32
}

// -----

// expected-error @+1 {{the module already defines 'memfmt_forward_packed'}}
module {
  llvm.func @_mlir_ciface_memfmt_forward(%ctx: !llvm.ptr, %a: !llvm.ptr) -> i32 {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
  llvm.func @memfmt_forward_packed(!llvm.ptr, !llvm.ptr) -> i32
}
