//===- MemFmtToRuntime.h - Lower memfmt to runtime calls --------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Lowers a memfmt function on tensors (after the layout passes) to one entry
// point that calls the runtime's kernels (runtime/include/memfmt/runtime/
// Kernels.def) on strided buffers placed at compile time by the memory plan
// (MemoryPlan.h): activations in one arena planned by liveness, parameters
// in one weights blob, inputs and outputs in caller buffers. The result uses
// func, arith, cf and memref and lowers to LLVM with the upstream
// conversions.
//
// The entry point of a compiled model (C symbol `_mlir_ciface_memfmt_forward`):
//
//   int32_t memfmt_forward(memfmt_context_t *ctx, memref<?xi8> arena,
//                          memref<?xi8> weights, memref<?xi8> input_0, ...,
//                          memref<?xi8> output_0, ...)
//
// Every memref is passed as a pointer to MLIR's 1-D descriptor {allocated,
// aligned, offset, size, stride}. Inputs are read in the layout their
// ModelManifest entry gives; outputs are written contiguously. The return
// value is 0 or the first failing kernel's memfmt_status_t. A second entry
// point, `_mlir_ciface_memfmt_prepare(ctx, weights)`, computes the results of
// load-time ops into the weights blob; the loader calls it once, after
// filling the parameters and before the first run. The loader calls the
// forward through `memfmt_forward_packed(ctx, buffers)`, its buffers as one
// array, which memfmt-emit-packed-entry adds on the LLVM dialect
// (model_abi.h).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_CONVERSION_MEMFMTTORUNTIME_MEMFMTTORUNTIME_H
#define MEMFMT_CONVERSION_MEMFMTTORUNTIME_MEMFMTTORUNTIME_H

#include "memfmt/runtime/loader/model_abi.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::memfmt {

class RuntimeCallBuilder;

/// Name of the entry point a compiled model exports (before MLIR's
/// `_mlir_ciface_` prefix).
inline constexpr llvm::StringLiteral kForwardFunctionName =
    MEMFMT_MODEL_FORWARD_FUNCTION;
/// Name of the entry point the loader calls: `memfmt_forward` with its
/// buffers in one array (memfmt-emit-packed-entry).
inline constexpr llvm::StringLiteral kEntryFunctionName =
    MEMFMT_MODEL_ENTRY_FUNCTION;
/// Name of the function the loader runs once after filling the weights blob
/// (`int32_t memfmt_prepare(memfmt_context_t *ctx, memref<?xi8> weights)`):
/// it computes the load-time ops (e.g. batch norm folded into convolution
/// weights) into the blob.
inline constexpr llvm::StringLiteral kPrepareFunctionName =
    MEMFMT_MODEL_PREPARE_FUNCTION;

/// Where a tensor of the model lives and how it is laid out.
struct TensorPlacement {
  std::string name;           ///< weight name, or "input_0", "output_0"...
  std::string elementType;    ///< "f32", "f16", "bf16", "i64"
  std::vector<int64_t> shape; ///< logical (NCHW) shape
  std::vector<int64_t> strides; ///< in elements
  int64_t offset = 0;         ///< in bytes, in its buffer (weights blob)
  int64_t bytes = 0;          ///< bytes spanned
  bool zeroInit = false;      ///< parameters: memfmt.weight {zero_init}
  /// Parameters: model state the function stores (memfmt.assign_weight), so
  /// its value changes from run to run.
  bool updated = false;
};

/// What the runtime needs to know to load and call a compiled model.
struct ModelManifest {
  int64_t arenaBytes = 0;        ///< activation arena size (64-byte aligned)
  int64_t peakLiveBytes = 0;     ///< lower bound: most bytes live at once
  int64_t weightsBytes = 0;      ///< size of the weights blob
  std::vector<TensorPlacement> parameters;
  std::vector<TensorPlacement> inputs;
  std::vector<TensorPlacement> outputs;
  int64_t numKernelCalls = 0;    ///< runtime calls per run (profile nodes)
  std::vector<std::string> nodeNames; ///< op name + location per node id
};

/// Replaces the single public function of `module` by `memfmt_forward`
/// (see above) and fills `manifest`, lowering the module's memory plan
/// (planned first if the module has none). Fails with a located error on anything
/// it cannot lower (e.g. training batch norm, dynamic shapes).
LogicalResult lowerToRuntimeCalls(ModuleOp module, ModelManifest &manifest);

/// Adds the patterns that lower each memfmt op family to kernel calls
/// emitted through `calls` (LoweringPatterns.cpp).
void populateMemFmtToRuntimePatterns(RewritePatternSet &patterns,
                                     RuntimeCallBuilder &calls);

/// Lowers the result of lowerToRuntimeCalls to the LLVM dialect and adds the
/// packed entry point (memfmt-emit-packed-entry).
LogicalResult lowerToLLVMDialect(ModuleOp module);

} // namespace mlir::memfmt

#endif // MEMFMT_CONVERSION_MEMFMTTORUNTIME_MEMFMTTORUNTIME_H
