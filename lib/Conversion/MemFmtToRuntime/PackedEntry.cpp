//===- PackedEntry.cpp - The entry point the loader calls -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-emit-packed-entry: adds `memfmt_forward_packed(ctx, buffers)` to a
// model lowered to the LLVM dialect. `_mlir_ciface_memfmt_forward` takes one
// descriptor pointer per buffer (arena, weights, each input and output), so
// a caller that does not know the model's arity at compile time cannot call
// it in C; the wrapper takes them as one array, loads each and makes the
// call, as MLIR's ExecutionEngine does for `invokePacked`. The loader calls
// every model through it (model_abi.h), whatever its number of tensors.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_EMITPACKEDENTRY
#include "memfmt/Conversion/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

class EmitPackedEntryPass
    : public ::mlir::memfmt::impl::EmitPackedEntryBase<EmitPackedEntryPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string forwardName =
        (MEMFMT_MODEL_CIFACE_PREFIX + kForwardFunctionName).str();
    auto forward = module.lookupSymbol<LLVM::LLVMFuncOp>(forwardName);
    if (!forward || forward.isExternal()) {
      module.emitError() << "no '" << forwardName
                         << "' defined in the LLVM dialect to wrap; lower "
                            "the model with convert-memfmt-to-runtime and "
                            "convert-func-to-llvm first";
      return signalPassFailure();
    }
    if (module.lookupSymbol(kEntryFunctionName)) {
      module.emitError() << "the module already defines '" << kEntryFunctionName
                         << "'";
      return signalPassFailure();
    }

    MLIRContext *context = module.getContext();
    Location loc = forward.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(context);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, kEntryFunctionName,
        LLVM::LLVMFunctionType::get(forward.getFunctionType().getReturnType(),
                                    {ptr, ptr}));
    Block *body = entry.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    // The context, then one descriptor pointer per buffer from the array.
    SmallVector<Value> args = {body->getArgument(0)};
    for (unsigned i = 1, e = forward.getNumArguments(); i < e; ++i) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptr, ptr, body->getArgument(1),
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i - 1)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
    auto call = LLVM::CallOp::create(b, loc, forward, args);
    LLVM::ReturnOp::create(b, loc, call.getResult());
  }
};

} // namespace
