//===- ConvertPrecision.cpp - Run a model in f16 or bf16 ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-convert-precision{precision=f16|bf16} turns an f32 function into
// one that computes in the reduced precision while its signature stays f32
// (the AMP-style contract of memfmt-compile --precision):
//
//  1. Retype: every op result that is an f32 tensor becomes a tensor of the
//     precision with the same shape and the same encoding (never dropped).
//     That covers activations and parameters (memfmt.weight: the loader
//     converts the saved f32 values once, at load). memfmt.to ops with an
//     explicit dtype keep their result type; i64 tensors (indices) are not
//     touched. Kernels keep f32 arithmetic and accumulation inside (batch
//     norm parameters are widened to f32, sums and products are f32).
//  2. Entry: each f32 tensor argument is converted by one memfmt.to. Where
//     the argument's only uses are layout copies (ops that declare
//     LayoutCopyOpInterface, e.g. the channels-last conversion at entry),
//     each of them becomes a memfmt.to with its memory format, so the input
//     is read once, converting layout and dtype together.
//  3. Exit: each returned tensor is converted back to f32 by a memfmt.to;
//     a returned layout copy used only there becomes that memfmt.to.
//
// precision=f32 changes nothing, and running the pass twice changes nothing
// the second time.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_CONVERTPRECISION
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// `type` with element type `element` (shape and encoding kept).
RankedTensorType withElement(RankedTensorType type, Type element) {
  return RankedTensorType::get(type.getShape(), element, type.getEncoding());
}

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}


class ConvertPrecisionPass
    : public ::mlir::memfmt::impl::ConvertPrecisionBase<ConvertPrecisionPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (precision == ComputePrecision::F32 || func.isExternal())
      return;
    Builder b(&getContext());
    Type target = getComputeElementType(&getContext(), precision);

    // 1. Retype results.
    func.walk([&](Operation *op) {
      if (auto to = dyn_cast<ToOp>(op); to && to.getDtypeAttr())
        return;
      for (OpResult result : op->getResults())
        if (isF32Tensor(result.getType()))
          result.setType(
              withElement(cast<RankedTensorType>(result.getType()), target));
    });

    IRRewriter rewriter(&getContext());
    auto makeTo = [&](Location loc, Value input, RankedTensorType resultType,
                      Type dtype, MemoryFormat format) {
      return ToOp::create(rewriter, loc, resultType, input,
                          TypeAttr::get(dtype),
                          MemoryFormatAttr::get(&getContext(), format));
    };

    // 2. Entry conversions.
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      if (!isF32Tensor(arg.getType()) || arg.use_empty())
        continue;
      auto argType = cast<RankedTensorType>(arg.getType());
      bool allLayoutCopies = true, allConverted = true;
      for (Operation *user : arg.getUsers()) {
        allLayoutCopies &= isa<LayoutCopyOpInterface>(user);
        auto to = dyn_cast<ToOp>(user);
        allConverted &=
            to && to.getDtypeAttr() && to.getDtypeAttr().getValue() == target;
      }
      if (allConverted)
        continue; // Already converted (the pass ran before).
      if (allLayoutCopies) {
        for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
          rewriter.setInsertionPoint(user);
          auto resultType =
              cast<RankedTensorType>(user->getResult(0).getType());
          ToOp to = makeTo(user->getLoc(), arg, resultType, target,
                           cast<LayoutCopyOpInterface>(user).getCopyFormat());
          to->setDiscardableAttrs(user->getDiscardableAttrDictionary());
          rewriter.replaceOp(user, to.getResult());
        }
        continue;
      }
      rewriter.setInsertionPointToStart(&entry);
      ToOp to = makeTo(arg.getLoc(), arg, withElement(argType, target), target,
                       MemoryFormat::Preserve);
      rewriter.replaceAllUsesExcept(arg, to.getResult(), to);
    }

    // 3. Exit conversions.
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    ArrayRef<Type> resultTypes = func.getResultTypes();
    for (OpOperand &operand : ret->getOpOperands()) {
      Value value = operand.get();
      auto type = dyn_cast<RankedTensorType>(value.getType());
      unsigned index = operand.getOperandNumber();
      if (!type || type.getElementType() != target ||
          !isF32Tensor(resultTypes[index]))
        continue;
      auto declared = cast<RankedTensorType>(resultTypes[index]);
      auto copy = value.getDefiningOp<LayoutCopyOpInterface>();
      if (copy && value.hasOneUse()) {
        Operation *def = copy.getOperation();
        rewriter.setInsertionPoint(def);
        ToOp to = makeTo(def->getLoc(), copy.getCopySource(), declared,
                         b.getF32Type(), copy.getCopyFormat());
        to->setDiscardableAttrs(def->getDiscardableAttrDictionary());
        rewriter.replaceOp(def, to.getResult());
        continue;
      }
      rewriter.setInsertionPoint(ret);
      ToOp to = makeTo(ret.getLoc(), value, declared, b.getF32Type(),
                       MemoryFormat::Preserve);
      rewriter.modifyOpInPlace(ret, [&] { operand.set(to.getResult()); });
    }
  }
};

} // namespace
