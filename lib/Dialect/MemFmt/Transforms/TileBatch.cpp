//===- TileBatch.cpp - Run the first layers one sub-batch at a time -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-tile-batch (see Passes.td): cache blocking along the batch for an
// inference function of one block.
//
//  1. The batched values are the arguments whose dim 0 is the batch (the
//     largest dim 0 of the arguments) and, in program order, the results of
//     the ops that read them. The walk stops at the first op reading a batched
//     value that cannot run per sub-batch: one that mixes samples
//     (PerSampleOpInterface says), a batched value whose dim 0 is not the
//     outermost dense dimension (a sub-batch would not be a plain slice), or
//     an operand indexed by sample that is not batched (it would have to be
//     sliced too). The ops before it form the prefix.
//  2. The tiled ops are the prefix up to its last op whose batched operands
//     and results span more than `cache-bytes`; the sub-batch is the
//     largest divisor of the batch, below it, that brings each of them
//     within the budget (1 if none does). Each sub-batch reads the weights
//     again, so the tiled ops also end before their other operands
//     (weights), together, span more than `cache-bytes`.
//  3. At the last tiled op, for each sub-batch in turn: the arguments are
//     sliced along dim 0, the tiled ops cloned with their batched types at
//     the sub-batch size; then each value that leaves the tiled ops is the
//     concatenation of its pieces along dim 0, and the originals are
//     erased. Ops that read no batched value (weights, load-time folding)
//     are left where they are and shared by every sub-batch. The function
//     gets `memfmt.batch_tiling = {batch, ops, sub_batch}`.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_TILEBATCH
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// True if `type` is a static tensor of `batch` samples along dim 0 whose
/// samples lie one after the other (dim 0 the outermost dense dimension),
/// so that samples [n0, n1) are one plain slice of its bytes.
bool isSampleMajor(Type type, int64_t batch) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getRank() < 1 ||
      tensor.getDimSize(0) != batch)
    return false;
  SmallVector<int64_t> strides = getStrides(tensor);
  int64_t sampleElements = 1;
  for (int64_t size : tensor.getShape().drop_front())
    sampleElements *= size;
  return strides.front() == sampleElements;
}

/// `type` with `samples` along dim 0 and the same strides.
RankedTensorType withSamples(Type type, int64_t samples) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape.front() = samples;
  return getTypeWithStrides(
      RankedTensorType::get(shape, tensor.getElementType()),
      getStrides(tensor));
}

int64_t bytesOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * ((tensor.getElementTypeBitWidth() + 7) / 8);
}

class TileBatchPass
    : public ::mlir::memfmt::impl::TileBatchBase<TileBatchPass> {
public:
  using Base::Base;

  void runOnOperation() override;

private:
  /// True if `op`, which reads a value of `batched`, can run per sub-batch.
  bool canTile(Operation *op, const llvm::DenseSet<Value> &batched) const;

  int64_t batch = 0;
};

bool TileBatchPass::canTile(Operation *op,
                            const llvm::DenseSet<Value> &batched) const {
  auto perSample = dyn_cast<PerSampleOpInterface>(op);
  if (!perSample || !perSample.computesPerSample() ||
      op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    bool bySample = perSample.isSampleOperand(operand.getOperandNumber());
    if (batched.contains(value)) {
      if (!bySample || !isSampleMajor(value.getType(), batch))
        return false;
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (bySample && type && type.getRank() >= 1 && type.getDimSize(0) == batch)
      return false; // A sample-indexed operand that would need slicing too.
  }
  return llvm::all_of(op->getResultTypes(),
                      [&](Type type) { return isSampleMajor(type, batch); });
}

void TileBatchPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if ((cacheBytes <= 0 && subBatch <= 0) || !func.getBody().hasOneBlock() ||
      func.getNumArguments() == 0)
    return;
  // The batch: the largest dim 0 of the arguments (a model's one input; in
  // a function of several independent graphs, those of the largest batch).
  batch = 0;
  for (Type type : func.getArgumentTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && tensor.hasStaticShape() && tensor.getRank() >= 1)
      batch = std::max(batch, tensor.getDimSize(0));
  if (batch <= 1)
    return; // Nothing to tile.
  if (subBatch < 0 || (subBatch > 0 && batch % subBatch != 0)) {
    func.emitError() << "sub-batch " << subBatch.getValue()
                     << " does not divide the batch, " << batch;
    return signalPassFailure();
  }
  if (subBatch == batch)
    return;

  // 1. The prefix of ops that can run per sub-batch, the bytes each one's
  // batched values span, and the bytes of its other operands (weights).
  llvm::DenseSet<Value> batched;
  for (BlockArgument arg : func.getArguments())
    if (isSampleMajor(arg.getType(), batch))
      batched.insert(arg);
  SmallVector<Operation *> prefix;
  SmallVector<int64_t> spans, shared;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return batched.contains(v); }))
      continue;
    if (!canTile(&op, batched))
      break;
    llvm::SetVector<Value> touched, whole;
    for (Value operand : op.getOperands())
      (batched.contains(operand) ? touched : whole).insert(operand);
    for (Value result : op.getResults()) {
      batched.insert(result);
      touched.insert(result);
    }
    auto sum = [](const llvm::SetVector<Value> &values) {
      int64_t bytes = 0;
      for (Value value : values)
        if (isa<RankedTensorType>(value.getType()))
          bytes += bytesOf(value.getType());
      return bytes;
    };
    prefix.push_back(&op);
    spans.push_back(sum(touched));
    shared.push_back(sum(whole));
  }

  // 2. The tiled ops and the sub-batch.
  auto tiledCount = [&](size_t limit) -> size_t {
    for (size_t i = limit; i > 0; --i)
      if (spans[i - 1] > cacheBytes)
        return i;
    return 0;
  };
  auto subBatchFor = [&](size_t count) -> int64_t {
    int64_t widest = *llvm::max_element(ArrayRef(spans).take_front(count));
    for (int64_t d = batch - 1; d > 1; --d)
      if (batch % d == 0 && widest / batch * d <= cacheBytes)
        return d;
    return 1;
  };
  size_t numTiled = subBatch > 0 ? spans.size() : tiledCount(spans.size());
  if (numTiled == 0)
    return;
  // Each sub-batch reads the weights again: the tiled ops stop before their
  // weights together outgrow the budget, so that every sub-batch after the
  // first finds them in cache (not the last stages of a ResNet, whose
  // weights are most of its bytes).
  int64_t weights = 0;
  for (size_t i = 0; i < numTiled && subBatch == 0; ++i) {
    weights += shared[i];
    if (weights > cacheBytes) {
      numTiled = tiledCount(i);
      break;
    }
  }
  if (numTiled == 0)
    return;
  int64_t samples = subBatch > 0 ? subBatch.getValue() : subBatchFor(numTiled);
  ArrayRef<Operation *> tiled = ArrayRef(prefix).take_front(numTiled);

  // 3. One clone of the tiled ops per sub-batch, then the concatenations.
  llvm::DenseSet<Operation *> tiledSet(tiled.begin(), tiled.end());
  llvm::SetVector<Value> entering, leaving;
  for (Operation *op : tiled) {
    for (Value operand : op->getOperands())
      if (batched.contains(operand) &&
          !tiledSet.contains(operand.getDefiningOp()))
        entering.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !tiledSet.contains(user);
          }))
        leaving.insert(result);
  }
  OpBuilder builder(func.getContext());
  builder.setInsertionPointAfter(tiled.back());
  SmallVector<SmallVector<Value>> pieces(leaving.size());
  for (int64_t start = 0; start < batch; start += samples) {
    IRMapping mapping;
    for (Value value : entering)
      mapping.map(value, SliceOp::create(builder, value.getLoc(),
                                         withSamples(value.getType(), samples),
                                         value, /*dim=*/0, start,
                                         start + samples, /*step=*/1));
    for (Operation *op : tiled) {
      Operation *clone = builder.clone(*op, mapping);
      for (OpResult result : clone->getResults())
        result.setType(withSamples(result.getType(), samples));
    }
    for (auto [i, value] : llvm::enumerate(leaving))
      pieces[i].push_back(mapping.lookup(value));
  }
  for (auto [i, leaver] : llvm::enumerate(leaving)) {
    Value value = leaver;
    Value whole = CatOp::create(builder, value.getLoc(), value.getType(),
                                pieces[i], /*dim=*/0);
    value.replaceUsesWithIf(whole, [&](OpOperand &use) {
      return !tiledSet.contains(use.getOwner());
    });
  }
  for (Operation *op : llvm::reverse(tiled))
    op->erase();
  // What was done, for memfmt-compile to say and model.mlir to show.
  Builder b(func.getContext());
  func->setAttr(kBatchTilingAttrName,
                b.getDictionaryAttr(
                    {b.getNamedAttr("batch", b.getI64IntegerAttr(batch)),
                     b.getNamedAttr("ops", b.getI64IntegerAttr(numTiled)),
                     b.getNamedAttr("sub_batch",
                                    b.getI64IntegerAttr(samples))}));
}

} // namespace
