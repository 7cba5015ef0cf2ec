//===- PropagateChannelsLast.cpp - Forward channels-last propagation -----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-propagate-channels-last turns an NCHW function, as saved, into a
// channels-last one. It reads nothing but LayoutOpInterface.
//
//  1. Anchors. 4-D/5-D function arguments are channels-last with
//     `inputs=convert|channels-last`; 4-D/5-D parameters (ops declaring
//     `isParameter`) with `weights=channels-last`. Every other value starts
//     in the format its type declares (L4).
//  2. Forward propagation to a fixed point over the lattice {declared,
//     channels-last}. A result of an op that declares L5 is channels-last if
//     its declared type is or if any 4-D/5-D operand is: a join (logical or),
//     so `add(a, b)` and `add(b, a)` agree. A result that preserves an
//     operand's format (L6) follows that operand's strides, permuted for a
//     view (`permute`, getPreservedStrides). Nothing else changes.
//  3. Rewrite. Anchored arguments are either retyped (`inputs=channels-
//     last`, the signature changes) or converted at entry (`inputs=convert`);
//     anchored parameters get a conversion (memfmt-fold-conversions turns it
//     into a re-laid parameter). Results that became channels-last get the
//     dense channels-last strides; L6 results are re-inferred from their
//     operand.
//  4. Boundaries. A use whose type changed in an op that does not declare
//     how it treats layouts gets a conversion back to the type it had; a
//     returned value gets one back to the declared result type with
//     `outputs=keep`, or the signature takes the channels-last type with
//     `outputs=channels-last`.
//
//     In a training step, an incoming gradient operand takes its primal's
//     new format (L9, getGradientOperandFormat): where the forward
//     converted a value (contiguous before a flatten, L7), the gradient
//     arrives in the other format and is converted back, the inverse
//     conversion.
//
// Conversions are inserted only in steps 3 and 4, i.e. only where an op
// needs a format its operand does not have. Each carries `memfmt.reason`.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Conversions.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_PROPAGATECHANNELSLAST
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;
namespace layout = ::memfmt::layout;

namespace {

/// Element types a memfmt conversion takes (those of memfmt's tensors): an
/// argument of another type (an f64 input, say) stays as declared, as no
/// memfmt op can use it anyway.
bool isConvertible(RankedTensorType type) {
  Type element = type.getElementType();
  return isa<Float32Type, Float16Type, BFloat16Type>(element) ||
         element.isSignlessInteger(64);
}

/// True if `type` is channels-last and not also contiguous (L4).
bool declaredChannelsLast(Value value) {
  RankedTensorType type = getFormattedType(value);
  return type && isChannelsLast(type);
}

class PropagateChannelsLastPass
    : public ::mlir::memfmt::impl::PropagateChannelsLastBase<
          PropagateChannelsLastPass> {
public:
  using Base::Base;

  void runOnOperation() override;

private:
  /// Step 2: the set of values that end up channels-last.
  llvm::DenseSet<Value> analyze(func::FuncOp func, bool argsChannelsLast,
                                bool weightsChannelsLast);
  /// Step 3 for one op: retype its results.
  void retypeResults(RewriterBase &rewriter, Operation *op,
                     const llvm::DenseSet<Value> &channelsLast);
  /// Step 3 for one op: convert its incoming gradients to the formats
  /// their primals now have (L9).
  void convertGradients(RewriterBase &rewriter, LayoutOpInterface op);
};

void PropagateChannelsLastPass::convertGradients(RewriterBase &rewriter,
                                                 LayoutOpInterface op) {
  for (OpOperand &use : op->getOpOperands()) {
    std::optional<MemoryFormat> format =
        op.getGradientOperandFormat(use.getOperandNumber());
    RankedTensorType type = getFormattedType(use.get());
    if (!format || !type ||
        layout::isContiguousInFormat(toLayoutFormat(*format), type.getShape(),
                                     getStrides(type)))
      continue;
    rewriter.setInsertionPoint(op);
    ContiguousOp conv = createConversion(
        rewriter, op->getLoc(), use.get(), *format,
        "L9: the gradient takes its primal's format (the inverse of a "
        "conversion of the forward)");
    rewriter.modifyOpInPlace(op, [&] { use.set(conv.getResult()); });
  }
}

llvm::DenseSet<Value>
PropagateChannelsLastPass::analyze(func::FuncOp func, bool argsChannelsLast,
                                   bool weightsChannelsLast) {
  llvm::DenseSet<Value> channelsLast;
  auto isCL = [&](Value v) {
    return channelsLast.contains(v) || declaredChannelsLast(v);
  };
  // The strides each L6 result will be re-inferred with in step 3, from
  // its operand's final strides: those of an L6 operand come from here,
  // not from its declared type (a permute of a permute whose source changed
  // format has neither its declared strides nor the dense channels-last
  // ones).
  llvm::DenseMap<Value, SmallVector<int64_t>> preservedStrides;
  auto finalStrides = [&](Value v) -> SmallVector<int64_t> {
    if (auto it = preservedStrides.find(v); it != preservedStrides.end())
      return it->second;
    auto type = cast<RankedTensorType>(v.getType());
    if (isCL(v) && getFormattedType(v))
      return getStrides(getTypeInFormat(type, MemoryFormat::ChannelsLast));
    return getStrides(type);
  };
  if (argsChannelsLast)
    for (BlockArgument arg : func.getArguments())
      if (RankedTensorType type = getFormattedType(arg);
          type && isConvertible(type))
        channelsLast.insert(arg);

  bool changed = true;
  while (changed) {
    changed = false;
    auto mark = [&](Value v) {
      if (getFormattedType(v) && channelsLast.insert(v).second)
        changed = true;
    };
    func.walk([&](LayoutOpInterface op) {
      if (op.isParameter()) {
        if (weightsChannelsLast)
          mark(op->getResult(0));
        return;
      }
      if (op.propagatesChannelsLast()) {
        // L5: the join over all 4-D/5-D operands, in any order.
        if (llvm::any_of(op->getOperands(), [&](Value v) {
              return getFormattedType(v) && isCL(v);
            }))
          for (Value result : op->getResults())
            mark(result);
        return;
      }
      // L6: the result follows its operand's strides (permuted for a
      // view): it is channels-last if those strides are, or if they are
      // both formats at once (L3) and the operand is channels-last.
      for (OpResult result : op->getResults()) {
        std::optional<unsigned> from =
            op.getPreservedOperand(result.getResultNumber());
        RankedTensorType type = getFormattedType(result);
        if (!from || !type)
          continue;
        Value source = op->getOperand(*from);
        bool sourceCL = isCL(source);
        SmallVector<int64_t> strides = op.getPreservedStrides(
            result.getResultNumber(), finalStrides(source));
        SmallVector<int64_t> &known = preservedStrides[result];
        if (known != strides) {
          known = strides;
          changed = true;
        }
        if (layout::isChannelsLastContiguous(type.getShape(), strides) &&
            (sourceCL || !layout::isContiguous(type.getShape(), strides)))
          mark(result);
      }
    });
  }
  return channelsLast;
}

void PropagateChannelsLastPass::retypeResults(
    RewriterBase &rewriter, Operation *op,
    const llvm::DenseSet<Value> &channelsLast) {
  auto iface = dyn_cast<LayoutOpInterface>(op);
  if (!iface || iface.isParameter() || iface.isLayoutConversion())
    return;
  for (OpResult result : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      continue;
    RankedTensorType newType = type;
    if (std::optional<unsigned> from =
            iface.getPreservedOperand(result.getResultNumber())) {
      // L6: re-infer from the (possibly retyped) operand.
      auto source = cast<RankedTensorType>(op->getOperand(*from).getType());
      newType = getTypeWithStrides(
          type, iface.getPreservedStrides(result.getResultNumber(),
                                          getStrides(source)));
    } else if (channelsLast.contains(result) && !declaredChannelsLast(result)) {
      newType = getTypeInFormat(type, MemoryFormat::ChannelsLast);
    }
    if (newType != type)
      rewriter.modifyOpInPlace(op, [&] { result.setType(newType); });
  }
}

void PropagateChannelsLastPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  if (!func.getBody().hasOneBlock()) {
    func.emitError() << "memfmt-propagate-channels-last expects a function "
                        "body of one block";
    return signalPassFailure();
  }

  bool argsChannelsLast = inputs != InputsMode::Keep;
  llvm::DenseSet<Value> channelsLast =
      analyze(func, argsChannelsLast, weights == WeightsMode::ChannelsLast);

  // Remember every type before the rewrite, for the boundary conversions.
  llvm::DenseMap<Value, Type> oldTypes;
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      oldTypes[result] = result.getType();
  });
  for (BlockArgument arg : func.getArguments())
    oldTypes[arg] = arg.getType();

  IRRewriter rewriter(&getContext());
  Block &entry = func.getBody().front();

  // Step 3a: arguments.
  for (BlockArgument arg : func.getArguments()) {
    RankedTensorType type = getFormattedType(arg);
    if (!type || !channelsLast.contains(arg) || isChannelsLast(type))
      continue;
    if (inputs == InputsMode::ChannelsLast) {
      arg.setType(getTypeInFormat(type, MemoryFormat::ChannelsLast));
      continue;
    }
    // inputs=convert: one conversion at entry, unless one is already there
    // (so running the pass twice changes nothing).
    if (llvm::any_of(arg.getUsers(), [](Operation *user) {
          auto conv = dyn_cast<ContiguousOp>(user);
          return conv && conv.getMemoryFormat() == MemoryFormat::ChannelsLast;
        }))
      continue;
    rewriter.setInsertionPointToStart(&entry);
    ContiguousOp conv = createConversion(
        rewriter, arg.getLoc(), arg, MemoryFormat::ChannelsLast,
        "inputs=convert: the argument enters channels-last");
    rewriter.replaceAllUsesExcept(arg, conv.getResult(), conv);
    oldTypes[conv.getResult()] = conv.getType();
  }

  // Step 3b: parameters and results, in order.
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    auto iface = dyn_cast<LayoutOpInterface>(&op);
    if (iface && iface.isParameter()) {
      Value param = op.getResult(0);
      RankedTensorType type = getFormattedType(param);
      if (!type || !channelsLast.contains(param) || isChannelsLast(type))
        continue;
      rewriter.setInsertionPointAfter(&op);
      ContiguousOp conv = createConversion(
          rewriter, op.getLoc(), param, MemoryFormat::ChannelsLast,
          "weights=channels-last: the parameter is re-laid once");
      rewriter.replaceAllUsesExcept(param, conv.getResult(), conv);
      oldTypes[conv.getResult()] = conv.getType();
      continue;
    }
    retypeResults(rewriter, &op, channelsLast);
    if (iface)
      convertGradients(rewriter, iface);
  }

  // Step 4: boundaries. Users that do not declare how they treat layouts,
  // and the terminator, need the types they had.
  auto returnOp = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<Type> resultTypes(func.getResultTypes());
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    bool isReturn = &op == returnOp.getOperation();
    if (!isReturn && isa<LayoutOpInterface>(op))
      continue;
    for (OpOperand &use : op.getOpOperands()) {
      Value value = use.get();
      auto oldType = dyn_cast_or_null<RankedTensorType>(oldTypes.lookup(value));
      if (isReturn)
        oldType =
            dyn_cast<RankedTensorType>(resultTypes[use.getOperandNumber()]);
      auto newType = dyn_cast<RankedTensorType>(value.getType());
      if (!oldType || !newType || oldType == newType)
        continue;
      if (isReturn && outputs == OutputsMode::ChannelsLast) {
        resultTypes[use.getOperandNumber()] = newType;
        continue;
      }
      MemoryFormat target = getMemoryFormat(oldType);
      if (getTypeInFormat(oldType, target) != oldType) {
        op.emitError() << "memfmt-propagate-channels-last: cannot restore "
                          "the layout "
                       << oldType
                       << " this op needs; only dense contiguous and "
                          "channels-last types can be produced (L4)";
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(&op);
      ContiguousOp conv = createConversion(
          rewriter, op.getLoc(), value, target,
          isReturn ? "outputs=keep: the result leaves in its declared format"
                   : "the user does not declare how it treats layouts");
      rewriter.modifyOpInPlace(&op, [&] { use.set(conv.getResult()); });
    }
  }

  SmallVector<Type> argTypes(entry.getArgumentTypes());
  func.setFunctionType(FunctionType::get(&getContext(), argTypes, resultTypes));
}

} // namespace
