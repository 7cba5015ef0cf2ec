//===- MemFmtToRuntime.cpp - Lower memfmt to runtime kernel calls ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The driver of the lowering of a module's one public memfmt function (after
// the layout passes) to `memfmt_forward` and `memfmt_prepare`, functions on
// byte buffers that call the runtime's kernels:
//
//  1. The memory plan (MemoryPlan.h, the analysis of memfmt-plan-memory)
//     says where every value lives; it is made here first when the module
//     carries none. The manifest is read off it.
//  2. `memfmt_prepare(ctx, weights)` gets the load-time ops, and
//     `memfmt_forward(ctx, arena, weights, inputs..., outputs...)` every
//     other op, in program order, each lowered by the one pattern of its
//     family (LoweringPatterns.cpp) through a PatternApplicator; the
//     results are copied into the caller's output buffers. A kernel's
//     non-zero status returns at once (RuntimeCallBuilder).
//  3. The source function is erased.
//
// Why a pattern driver of its own rather than MLIR's dialect conversion: the
// lowering does not convert a function in place. One source function
// becomes two functions with other signatures (a context and byte buffers,
// not tensors), each op goes to one of them by the plan, and a value's
// memref view is made in the function that reads it, from the plan rather
// than from a type conversion. The patterns are ordinary RewritePatterns
// (one per op family, `populateMemFmtToRuntimePatterns`, every refusal a
// notifyMatchFailure); the driver walks the source function once, applies
// them to each op, and turns a refusal into that op's located error.
//
// Nothing is allocated, re-laid or decided per run.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Conversion/MemFmtToRuntime/RuntimeCallBuilder.h"
#include "memfmt/Conversion/Passes.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// Keeps the reason a pattern gave for not lowering an op.
struct MatchFailureListener : public RewriterBase::Listener {
  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic diag(loc, DiagnosticSeverity::Error);
    reasonCallback(diag);
    reason = diag.str();
  }

  std::optional<std::string> reason;
};

/// Where and how a tensor of the function's signature or a parameter is
/// laid out.
TensorPlacement placementOf(std::string name, RankedTensorType type) {
  TensorPlacement p;
  p.name = std::move(name);
  p.elementType = dtypeName(type.getElementType());
  p.shape.assign(type.getShape().begin(), type.getShape().end());
  SmallVector<int64_t> strides = getStrides(type);
  p.strides.assign(strides.begin(), strides.end());
  p.bytes = spanBytes(type);
  return p;
}

int64_t moduleBytes(ModuleOp module, StringRef name) {
  auto attr = module->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : 0;
}

/// The manifest of planned function `func`: the plan's totals, the
/// parameters' places in the weights blob, and the inputs and outputs.
void readManifest(func::FuncOp func, ModelManifest &manifest) {
  ModuleOp module = func->getParentOfType<ModuleOp>();
  manifest.arenaBytes = moduleBytes(module, kArenaBytesAttrName);
  manifest.peakLiveBytes = moduleBytes(module, kPeakLiveBytesAttrName);
  manifest.weightsBytes = moduleBytes(module, kWeightsBytesAttrName);
  for (BlockArgument arg : func.getArguments())
    manifest.inputs.push_back(
        placementOf("input_" + std::to_string(arg.getArgNumber()),
                    cast<RankedTensorType>(arg.getType())));
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    manifest.outputs.push_back(placementOf("output_" + std::to_string(i),
                                           cast<RankedTensorType>(type)));
  llvm::StringSet<> assigned;
  for (auto assign : func.getBody().front().getOps<AssignWeightOp>())
    assigned.insert(assign.getName());
  for (auto weight : func.getBody().front().getOps<WeightOp>()) {
    TensorPlacement p = placementOf(weight.getName().str(), weight.getType());
    p.offset = getPlannedBuffer(weight.getResult()).getOffset();
    p.zeroInit = weight.getZeroInit();
    p.updated = assigned.contains(weight.getName());
    manifest.parameters.push_back(std::move(p));
  }
}

/// Writes memfmt_prepare and memfmt_forward for planned function `func`.
class RuntimeLowering {
public:
  RuntimeLowering(func::FuncOp func, ModelManifest &manifest)
      : func(func), emitter(func.getContext()), matcher(func.getContext()),
        calls(emitter, func.getLoc(), manifest.nodeNames), manifest(manifest),
        patterns(makePatterns(func.getContext(), calls)), applicator(patterns) {
    applicator.applyDefaultCostModel();
    matcher.setListener(&failures);
  }

  LogicalResult run();

private:
  static FrozenRewritePatternSet makePatterns(MLIRContext *context,
                                              RuntimeCallBuilder &calls) {
    RewritePatternSet set(context);
    populateMemFmtToRuntimePatterns(set, calls);
    return FrozenRewritePatternSet(std::move(set));
  }

  /// Lowers `op` into the function being written, or reports why not.
  LogicalResult lowerOp(Operation *op);
  LogicalResult emitPrepare();
  LogicalResult emitForward();

  func::FuncOp func;
  /// Writes the new functions; `matcher` only carries match failures.
  IRRewriter emitter;
  PatternRewriter matcher;
  MatchFailureListener failures;
  RuntimeCallBuilder calls;
  ModelManifest &manifest;
  FrozenRewritePatternSet patterns;
  PatternApplicator applicator;
};

LogicalResult RuntimeLowering::lowerOp(Operation *op) {
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults()))
    if (!getPlannedBuffer(value) && !isAbsentResult(value))
      return op->emitError()
             << "a value of this op has no place in the memory plan; plan "
                "the whole function (memfmt-plan-memory) after changing it";
  bool tried = false;
  failures.reason.reset();
  matcher.setInsertionPoint(op);
  if (succeeded(applicator.matchAndRewrite(op, matcher, [&](const Pattern &) {
        tried = true;
        return true;
      })))
    return success();
  if (!tried)
    return op->emitError() << "cannot lower this op to runtime calls";
  if (failures.reason)
    return op->emitError() << *failures.reason;
  return failure(); // The pattern reported its error.
}

LogicalResult RuntimeLowering::emitPrepare() {
  func::FuncOp prepare = calls.beginFunction(func, kPrepareFunctionName, 1);
  calls.setBuffers(Value(), prepare.getArgument(1), {});
  for (Operation &op : func.getBody().front())
    if (isLoadTime(&op) && failed(lowerOp(&op)))
      return failure();
  calls.endFunction();
  return success();
}

LogicalResult RuntimeLowering::emitForward() {
  unsigned numInputs = func.getNumArguments();
  unsigned numOutputs = func.getNumResults();
  func::FuncOp forward = calls.beginFunction(func, kForwardFunctionName,
                                             2 + numInputs + numOutputs);
  calls.setBuffers(forward.getArgument(1), forward.getArgument(2),
                   forward.getArguments().slice(3, numInputs));
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!isLoadTime(&op) && failed(lowerOp(&op)))
      return failure();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = cast<RankedTensorType>(value.getType());
    Value dst = calls.viewAt(forward.getArgument(3 + numInputs + i), 0, type);
    if (failed(calls.call(
            ret, type.getElementType(),
            kernels::copy{.input = calls.view(value), .output = dst})))
      return failure();
  }
  calls.endFunction();
  return success();
}

LogicalResult RuntimeLowering::run() {
  readManifest(func, manifest);
  if (failed(emitPrepare()) || failed(emitForward()))
    return failure();
  manifest.numKernelCalls = calls.numCalls();
  func.erase();
  return success();
}

} // namespace

LogicalResult mlir::memfmt::lowerToRuntimeCalls(ModuleOp module,
                                                ModelManifest &manifest) {
  FailureOr<func::FuncOp> func = getCompiledFunction(module);
  if (failed(func))
    return failure();
  module.getContext()
      ->loadDialect<arith::ArithDialect, cf::ControlFlowDialect,
                    func::FuncDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect>();
  if (!hasMemoryPlan(module) && failed(planMemory(*func)))
    return failure();
  return RuntimeLowering(*func, manifest).run();
}

LogicalResult mlir::memfmt::lowerToLLVMDialect(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createEmitPackedEntry());
  return pm.run(module);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace mlir::memfmt {
#define GEN_PASS_DEF_CONVERTMEMFMTTORUNTIME
#include "memfmt/Conversion/Passes.h.inc"
} // namespace mlir::memfmt

namespace {
class ConvertMemFmtToRuntimePass
    : public ::mlir::memfmt::impl::ConvertMemFmtToRuntimeBase<
          ConvertMemFmtToRuntimePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModelManifest manifest;
    if (failed(lowerToRuntimeCalls(module, manifest)))
      return signalPassFailure();
    // The plan's totals are on the module already.
    Builder b(module.getContext());
    module->setAttr("memfmt.kernel_calls",
                    b.getI64IntegerAttr(manifest.numKernelCalls));
  }
};
} // namespace
