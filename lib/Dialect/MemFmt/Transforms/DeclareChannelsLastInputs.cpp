//===- DeclareChannelsLastInputs.cpp - Channels-last arguments, NCHW body -===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-declare-channels-last-inputs serves a model that runs NCHW while
// its caller passes channels-last input (memfmt-compile --memory-format
// contiguous --input-format channels-last). For each argument of a public
// function with a body that is a statically shaped 4-D/5-D tensor declared
// contiguous (L3 shapes such as 1xCx1x1 included):
//
//  1. the argument, and with it the signature, takes the dense channels-last
//     type (L2), unless it has that very type already;
//  2. a `memfmt.contiguous` at entry converts it back to the declared
//     contiguous type, and every other use reads that conversion, so the
//     body sees exactly the types it had.
//
// Private functions keep their signatures (a call would no longer match).
// An argument already declared channels-last is not touched, so a second
// run changes nothing. (For an L3 argument the conversion moves no bytes;
// memfmt-fold-conversions and the report treat it as free.)
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Conversions.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_DECLARECHANNELSLASTINPUTS
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// The channels-last type `arg` is declared with, or null where the
/// argument keeps its type.
RankedTensorType getDeclaredChannelsLastType(BlockArgument arg) {
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || !type.hasStaticShape() || !hasChannelsLastFormat(type) ||
      !isContiguous(type))
    return {};
  RankedTensorType declared = getTypeInFormat(type, MemoryFormat::ChannelsLast);
  return declared == type ? RankedTensorType() : declared;
}

class DeclareChannelsLastInputsPass
    : public ::mlir::memfmt::impl::DeclareChannelsLastInputsBase<
          DeclareChannelsLastInputsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.isPublic())
      return;
    IRRewriter rewriter(&getContext());
    Block &entry = func.getBody().front();
    bool changed = false;
    for (BlockArgument arg : func.getArguments()) {
      RankedTensorType declared = getDeclaredChannelsLastType(arg);
      if (!declared)
        continue;
      rewriter.modifyOpInPlace(func, [&] { arg.setType(declared); });
      rewriter.setInsertionPointToStart(&entry);
      ContiguousOp conversion = createConversion(
          rewriter, arg.getLoc(), arg, MemoryFormat::Contiguous,
          "--input-format channels-last: the argument is converted to the "
          "model's contiguous layout at entry");
      rewriter.replaceAllUsesExcept(arg, conversion.getResult(), conversion);
      changed = true;
    }
    if (!changed)
      return;
    rewriter.modifyOpInPlace(func, [&] {
      func.setFunctionType(FunctionType::get(
          &getContext(), entry.getArgumentTypes(), func.getResultTypes()));
    });
  }
};

} // namespace
