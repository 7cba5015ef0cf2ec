//===- Passes.td - memfmt conversion passes ----------------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Conversion passes: the memory plan of a compiled model, memfmt on
// tensors to runtime kernel calls on the planned buffers, and the entry
// point the loader calls.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_CONVERSION_PASSES_TD
#define MEMFMT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemory : Pass<"memfmt-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place every value of the compiled function in a buffer";
  let description = [{
    Plans the memory of the module's one public function: each tensor value
    goes to a caller input, the weights blob (parameters, then the results
    of load-time ops) or the activation arena; ops that move no bytes alias
    their operand; results computed in place take the buffer of an operand
    that dies there (InPlaceOpInterface); `memfmt.assign_weight` stores
    into its weight's slot, computed there in place where the value's op
    allows it and is the slot's last reader, else copied at the assignment
    (`memfmt.state_buffer`); assigned weights are never folded at load;
    splat constants are filled at load; results masked off in an
    `output_mask` and unused get no buffer; arena values get 64-byte aligned
    offsets by liveness (greedy first fit, largest first). The plan is
    recorded in the IR for `convert-memfmt-to-runtime`: a `memfmt.buffers`
    array of `#memfmt.buffer` per op, a `memfmt.buffer` per argument,
    `memfmt.load_time` on ops run once at load, and the module's
    `memfmt.arena_bytes`, `memfmt.peak_live_bytes` and
    `memfmt.weights_bytes`. See MemoryPlan.h.
  }];
}

def ConvertMemFmtToRuntime : Pass<"convert-memfmt-to-runtime",
                                  "::mlir::ModuleOp"> {
  let summary = "Lower memfmt to runtime kernel calls on planned buffers";
  let description = [{
    Replaces the module's public function by `memfmt_forward`, which calls
    the runtime's kernels on strided views of one activation arena, one
    weights blob and the caller's buffers, and `memfmt_prepare`, which
    computes the load-time ops into the weights blob. It lowers the plan of
    `memfmt-plan-memory` (and makes that plan first when the module has
    none); the module keeps the plan's totals and gets
    `memfmt.kernel_calls`. See MemFmtToRuntime.h for the entry point's ABI.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def EmitPackedEntry : Pass<"memfmt-emit-packed-entry", "::mlir::ModuleOp"> {
  let summary = "Add the entry point the loader calls: memfmt_forward with "
                "its buffers in one array";
  let description = [{
    On the LLVM dialect, after `convert-func-to-llvm` has made
    `_mlir_ciface_memfmt_forward` (one descriptor pointer per buffer):
    adds `memfmt_forward_packed(ctx, buffers)`, which loads each buffer's
    descriptor pointer from the array and calls it, as MLIR's
    ExecutionEngine wraps a function for `invokePacked`. The loader then
    calls every model the same way, whatever its number of inputs and
    outputs (model_abi.h). A module without the C interface of
    `memfmt_forward` is an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // MEMFMT_CONVERSION_PASSES_TD
