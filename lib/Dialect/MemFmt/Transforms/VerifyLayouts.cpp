//===- VerifyLayouts.cpp - Check the layout invariants --------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-verify-layouts checks what the layout passes establish, so that a
// pass (or an upstream pattern) that drops an encoding is caught where it
// happens: every op that declares L5 and has a channels-last 4-D/5-D operand
// has channels-last contiguous 4-D/5-D results (an L3 shape counts, as it is
// both), and, with `contiguous-operands`, every operand that must be
// contiguous (L7) is. Op verifiers already check L2, L4 and L6.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_VERIFYLAYOUTS
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;
namespace layout = ::memfmt::layout;

namespace {


class VerifyLayoutsPass
    : public ::mlir::memfmt::impl::VerifyLayoutsBase<VerifyLayoutsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](LayoutOpInterface op) {
      if (op.propagatesChannelsLast() &&
          llvm::any_of(op->getOperands(), [](Value v) {
            RankedTensorType type = getFormattedType(v);
            return type && isChannelsLast(type);
          })) {
        for (OpResult result : op->getResults()) {
          RankedTensorType type = getFormattedType(result);
          if (type && !layout::isChannelsLastContiguous(type.getShape(),
                                                        getStrides(type))) {
            op->emitError() << "result #" << result.getResultNumber()
                            << " is " << type
                            << " but an operand is channels-last; L5 says "
                               "the result is channels-last (was an "
                               "encoding dropped?)";
            return WalkResult::interrupt();
          }
        }
      }
      if (!contiguousOperands)
        return WalkResult::advance();
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (type && op.requiresContiguousOperand(operand.getOperandNumber()) &&
            !isContiguous(type)) {
          op->emitError() << "operand #" << operand.getOperandNumber()
                          << " is " << type
                          << " but must be contiguous (L7: reshapes keep "
                             "NCHW meaning)";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
