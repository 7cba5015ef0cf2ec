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
//     Stays f32, as automatic mixed precision keeps it:
//       * what an op declares f32 (MixedPrecisionOpInterface: a training
//         batch norm's statistics, weight gradients, the loss, the SGD
//         update and the gradient all-reduce);
//       * model state the function assigns (memfmt.assign_weight): the f32
//         master weights, momentum buffers and running statistics of a
//         training step, read and updated in f32;
//       * constants (arith.constant: the loss gradient's seed).
//  2. Operands: where an op reads a value in another element type than it
//     computes in (its reduced-precision results say which; an f32 tensor
//     the op declares stays f32), one memfmt.to after the value's
//     definition converts it, shared by every such reader: a training
//     step's f32 weight is rounded to bf16 once per step for the forward
//     convolution and its backward, and the logits are widened once for
//     the loss and its gradient.
//  3. Entry: each f32 tensor argument is converted by one memfmt.to. Where
//     the argument's only uses are layout copies (ops that declare
//     ElementCopyOpInterface::getLayoutCopyFormat, e.g. the channels-last
//     conversion at entry),
//     each of them becomes a memfmt.to with its memory format, so the input
//     is read once, converting layout and dtype together.
//  4. Exit: each returned tensor is converted back to f32 by a memfmt.to;
//     a returned layout copy used only there becomes that memfmt.to.
//
// precision=f32 changes nothing, and running the pass twice changes nothing
// the second time.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "llvm/ADT/StringSet.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// The memory format `op` re-lays its operand into, if `op` is a pure layout
/// copy (ElementCopyOpInterface::getLayoutCopyFormat).
std::optional<MemoryFormat> layoutCopyFormat(Operation *op) {
  auto copy = dyn_cast_or_null<ElementCopyOpInterface>(op);
  return copy ? copy.getLayoutCopyFormat() : std::nullopt;
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
    llvm::StringSet<> assigned;
    func.walk([&](AssignWeightOp assign) { assigned.insert(assign.getName()); });
    auto keepsF32 = [&](OpResult result) {
      Operation *op = result.getOwner();
      if (auto to = dyn_cast<ToOp>(op); to && to.getDtypeAttr())
        return true;
      if (auto weight = dyn_cast<WeightOp>(op))
        return assigned.contains(weight.getName());
      if (auto mixed = dyn_cast<MixedPrecisionOpInterface>(op))
        return mixed.isF32Result(result.getResultNumber());
      return isa<arith::ConstantOp>(op);
    };
    func.walk([&](Operation *op) {
      for (OpResult result : op->getResults())
        if (isF32Tensor(result.getType()) && !keepsF32(result))
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

    // 2. Operands read in another element type than the op computes in.
    DenseMap<std::pair<Value, Type>, Value> converted;
    auto convert = [&](Value value, Type element) {
      Value &to = converted[{value, element}];
      if (to)
        return to;
      rewriter.setInsertionPointAfter(value.getDefiningOp());
      to = makeTo(value.getLoc(), value,
                  withElement(cast<RankedTensorType>(value.getType()), element),
                  element, MemoryFormat::Preserve);
      return to;
    };
    SmallVector<std::pair<OpOperand *, Type>> mismatched;
    func.walk([&](Operation *op) {
      if (isa<ToOp>(op) || op->getNumResults() == 0)
        return; // Conversions read any type; assign and return keep theirs.
      auto mixed = dyn_cast<MixedPrecisionOpInterface>(op);
      // The compute type: that of the first floating-point result not
      // declared f32.
      Type compute;
      for (OpResult result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (type && isa<FloatType>(type.getElementType()) &&
            !(mixed && mixed.isF32Result(result.getResultNumber()))) {
          compute = type.getElementType();
          break;
        }
      }
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || !isa<FloatType>(type.getElementType()) ||
            isa<BlockArgument>(operand.get()))
          continue; // Arguments are converted at entry (3).
        Type wanted = mixed && mixed.isF32Operand(operand.getOperandNumber())
                          ? b.getF32Type()
                          : compute;
        if (wanted && wanted != type.getElementType())
          mismatched.push_back({&operand, wanted});
      }
    });
    for (auto [operand, wanted] : mismatched) {
      Value to = convert(operand->get(), wanted);
      rewriter.modifyOpInPlace(operand->getOwner(),
                               [&, operand = operand] { operand->set(to); });
    }

    // 3. Entry conversions.
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      if (!isF32Tensor(arg.getType()) || arg.use_empty())
        continue;
      auto argType = cast<RankedTensorType>(arg.getType());
      bool allLayoutCopies = true, allConverted = true;
      for (Operation *user : arg.getUsers()) {
        allLayoutCopies &= layoutCopyFormat(user).has_value();
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
                           *layoutCopyFormat(user));
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

    // 4. Exit conversions.
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
      Operation *def = value.getDefiningOp();
      if (std::optional<MemoryFormat> format = layoutCopyFormat(def);
          format && value.hasOneUse()) {
        rewriter.setInsertionPoint(def);
        ToOp to = makeTo(def->getLoc(), def->getOperand(0), declared,
                         b.getF32Type(), *format);
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
