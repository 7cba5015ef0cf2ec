//===- Passes.td - memfmt conversion passes ----------------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Conversion passes: memfmt on tensors to runtime kernel calls.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_CONVERSION_PASSES_TD
#define MEMFMT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertMemFmtToRuntime : Pass<"convert-memfmt-to-runtime",
                                  "::mlir::ModuleOp"> {
  let summary = "Lower memfmt to runtime kernel calls on planned buffers";
  let description = [{
    Replaces the module's public function by `memfmt_forward`, which calls
    the runtime's kernels on strided views of one activation arena (planned
    by liveness), one weights blob and the caller's buffers. The plan is
    recorded on the module as `memfmt.arena_bytes`, `memfmt.peak_live_bytes`,
    `memfmt.weights_bytes` and `memfmt.kernel_calls`. See
    MemFmtToRuntime.h for the entry point's ABI.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // MEMFMT_CONVERSION_PASSES_TD
