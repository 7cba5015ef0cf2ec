//===- MaterializeContiguous.cpp - Explicit conversions before reshapes ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-materialize-contiguous applies L7: reshape, flatten and view keep
// NCHW meaning, so an operand that an op declares must be contiguous
// (LayoutOpInterface::requiresContiguousOperand) and that is not gets an
// explicit `memfmt.contiguous` right before the op. A channels-last tensor
// that is also contiguous (L3: ResNet's Nx2048x1x1 before `fc`) needs none.
// A Linear layer after `flatten` therefore sees features in the original
// order and saved weights stay valid.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Conversions.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_MATERIALIZECONTIGUOUS
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

class MaterializeContiguousPass
    : public ::mlir::memfmt::impl::MaterializeContiguousBase<
          MaterializeContiguousPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](LayoutOpInterface op) {
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || !op.requiresContiguousOperand(operand.getOperandNumber()) ||
            isContiguous(type))
          continue;
        rewriter.setInsertionPoint(op);
        std::string reason =
            ("L7: " + op->getName().getStringRef() +
             " keeps NCHW meaning and needs a contiguous operand")
                .str();
        ContiguousOp conv =
            createConversion(rewriter, op->getLoc(), operand.get(),
                             MemoryFormat::Contiguous, reason);
        rewriter.modifyOpInPlace(op, [&] { operand.set(conv.getResult()); });
      }
    });
  }
};

} // namespace
