//===- FoldConversions.cpp - Fold, cancel and remove conversions ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-fold-conversions leaves only the conversions that must move bytes.
// It runs these patterns with the greedy driver, together with the folder of
// `memfmt.contiguous` (a conversion to the type its input already has is the
// identity; a round trip x -> y -> type(x) gives x back, since values never
// change, L8):
//
//  * Chains: contiguous(contiguous(x)) becomes one conversion of x to the
//    outer format; the inner one dies if nothing else uses it.
//  * No-ops (L3): a conversion (of anything but a parameter) whose input
//    gives every element the same offset is bypassed for every user that accepts any layout (an op that
//    implements LayoutOpInterface and whose result strides do not derive
//    from this operand through L6). Other users keep it; it moves no bytes
//    and the lowering makes it an alias.
//  * Parameters: a conversion of a parameter (`isParameter`, i.e.
//    memfmt.weight) becomes a parameter of the converted type, which the
//    weight loader lays out once; nothing happens per run.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Conversions.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_FOLDCONVERSIONS
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// contiguous(contiguous(x, f1), f2) -> contiguous(x, f2).
struct FoldConversionChain : OpRewritePattern<ContiguousOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContiguousOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ContiguousOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a conversion");
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};

/// Bypasses a conversion that moves no bytes (L3) for users that accept any
/// layout.
struct BypassNoOpConversion : OpRewritePattern<ContiguousOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool acceptsAnyLayout(OpOperand &use) {
    auto user = dyn_cast<LayoutOpInterface>(use.getOwner());
    if (!user)
      return false;
    for (unsigned i = 0, e = user->getNumResults(); i < e; ++i)
      if (user.getPreservedOperand(i) == use.getOperandNumber())
        return false;
    return true;
  }

  LogicalResult matchAndRewrite(ContiguousOp op,
                                PatternRewriter &rewriter) const override {
    if (!haveSameBytes(op.getInput().getType(), op.getType()))
      return rewriter.notifyMatchFailure(op, "the conversion moves bytes");
    if (auto source = op.getInput().getDefiningOp<LayoutOpInterface>())
      if (source.isParameter())
        return rewriter.notifyMatchFailure(
            op, "parameters are re-laid instead, so their type says how "
                "they are laid out");
    if (llvm::none_of(op->getUses(), acceptsAnyLayout))
      return rewriter.notifyMatchFailure(
          op, "no user accepts the input's strides");
    rewriter.replaceUsesWithIf(op.getResult(), op.getInput(),
                               acceptsAnyLayout);
    return success();
  }
};

/// True when a memfmt.assign_weight of the function stores into the
/// parameter `source` (a memfmt.weight) a value not of type `type`: the
/// state tensor keeps the layout its assignments store.
static bool isAssignedOtherThan(Operation *source, Type type) {
  auto weight = dyn_cast<WeightOp>(source);
  auto func = source->getParentOfType<FunctionOpInterface>();
  if (!weight || !func)
    return false;
  bool other = false;
  func->walk([&](AssignWeightOp assign) {
    other |= assign.getName() == weight.getName() &&
             assign.getValue().getType() != type;
  });
  return other;
}

/// contiguous(weight "w") -> weight "w" of the converted type, unless "w" is
/// assigned a value of another type (training state).
struct RelayParameter : OpRewritePattern<ContiguousOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContiguousOp op,
                                PatternRewriter &rewriter) const override {
    Operation *source = op.getInput().getDefiningOp();
    auto param = dyn_cast_or_null<LayoutOpInterface>(source);
    if (!param || !param.isParameter())
      return rewriter.notifyMatchFailure(op, "input is not a parameter");
    if (isAssignedOtherThan(source, op.getType()))
      return rewriter.notifyMatchFailure(
          op, "the parameter is assigned a value of another layout");
    rewriter.setInsertionPoint(source);
    Operation *relaid = rewriter.clone(*source);
    rewriter.modifyOpInPlace(relaid,
                             [&] { relaid->getResult(0).setType(op.getType()); });
    rewriter.replaceOp(op, relaid->getResults());
    return success();
  }
};

class FoldConversionsPass
    : public ::mlir::memfmt::impl::FoldConversionsBase<FoldConversionsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldConversionChain, BypassNoOpConversion, RelayParameter>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
