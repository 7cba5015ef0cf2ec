//===- MemoryPlan.cpp - Place every value of a compiled model -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The memory plan of the one public function of a module (the analysis of
// memfmt-plan-memory; the lowering to runtime calls reads its result). Every
// decision is taken here, at compile time, and recorded in the IR
// (MemoryPlan.h says where):
//
//  1. Placement. Each tensor value gets a home: a caller input buffer
//     (arguments), the weights blob (memfmt.weight, packed in op order,
//     64-byte aligned, laid out with the strides of their type; then the
//     results of load-time ops, i.e. side-effect-free ops on weights only,
//     such as memfmt.fold_batch_norm), or the activation arena. Ops that move
//     no bytes (ElementCopyOpInterface::isBufferAlias: L3 conversions,
//     reshape/flatten of a contiguous tensor) alias their operand instead,
//     and a slice that is a view (SliceOp::getViewElementOffset: a batch
//     slice of a sample-major activation or input) lies inside it.
//     A load-time result overwrites the weights-blob slot of an operand that
//     nothing else reads where its op computes in place
//     (InPlaceOpInterface: the folded convolution weight), so folding costs
//     no memory.
//  2. In-place sharing. A result may take the arena buffer of an operand
//     whose last use is its op, where the kernel computes in place (the
//     operands an op names through InPlaceOpInterface: a fused conv's
//     residual, relu, add, batch norm; same shape, strides and type): the
//     residual of a bottleneck block is then summed in place by the
//     convolution instead of being copied into a fresh output first.
//  3. Model state. `memfmt.assign_weight "n", %v` stores %v into the
//     weights-blob slot of `memfmt.weight "n"` for the next run. Where %v's
//     op may compute it in place on that very weight (InPlaceOpInterface:
//     sgd_update's parameter and momentum buffer, native_batch_norm's
//     running statistics) and is the slot's last reader, %v is placed in
//     the slot itself and the assignment costs nothing; otherwise it is one
//     copy into the slot, at the assignment, which must follow every read of
//     the slot (a read after it is an error). An assigned weight is never
//     read by a load-time op (its value changes every run) nor shared.
//     Splat constants (the loss gradient's seed) are load-time results,
//     filled once at load. A result its op does not compute (masked off in
//     its `output_mask`, with no use: isAbsentResult) gets no buffer.
//  4. Arena offsets. Arena values are live from their definition to their
//     last use (through aliases and shared buffers); a greedy first-fit by
//     decreasing size places them at 64-byte aligned offsets
//     (MEMFMT_MODEL_BUFFER_ALIGNMENT) so that values live at the same time
//     never overlap. The arena size and the peak of live bytes (a lower
//     bound for any plan) go to the module.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Conversion/Passes.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Layout/Strides.h"
#include "memfmt/runtime/loader/model_abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace mlir::memfmt;

namespace mlir::memfmt {
#define GEN_PASS_DEF_PLANMEMORY
#include "memfmt/Conversion/Passes.h.inc"
} // namespace mlir::memfmt

int64_t mlir::memfmt::spanBytes(RankedTensorType type) {
  SmallVector<int64_t> strides = getStrides(type);
  return ::memfmt::layout::spanElements(type.getShape(), strides) *
         elementBytes(type);
}

FailureOr<func::FuncOp> mlir::memfmt::getCompiledFunction(ModuleOp module) {
  SmallVector<func::FuncOp> publicFuncs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      publicFuncs.push_back(func);
  if (publicFuncs.size() != 1)
    return module.emitError() << "expects exactly one public function to "
                                 "compile, found "
                              << publicFuncs.size();
  return publicFuncs.front();
}

bool mlir::memfmt::hasMemoryPlan(ModuleOp module) {
  return module->hasAttr(kArenaBytesAttrName);
}

BufferAttr mlir::memfmt::getPlannedBuffer(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func)
      return {};
    return func.getArgAttrOfType<BufferAttr>(arg.getArgNumber(),
                                             kBufferArgAttrName);
  }
  auto result = cast<OpResult>(value);
  auto buffers = result.getOwner()->getAttrOfType<ArrayAttr>(kBuffersAttrName);
  if (!buffers || buffers.size() <= result.getResultNumber())
    return {};
  return dyn_cast<BufferAttr>(buffers[result.getResultNumber()]);
}

bool mlir::memfmt::isLoadTime(Operation *op) {
  return op->hasAttr(kLoadTimeAttrName);
}

bool mlir::memfmt::isAbsentResult(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result || !result.use_empty())
    return false;
  auto mask =
      result.getOwner()->getAttrOfType<DenseBoolArrayAttr>(kOutputMaskAttrName);
  return mask && result.getResultNumber() < mask.size() &&
         !mask[result.getResultNumber()];
}

BufferAttr mlir::memfmt::getAssignedBuffer(AssignWeightOp assign) {
  return assign->getAttrOfType<BufferAttr>(kStateBufferAttrName);
}

namespace {

constexpr int64_t kAlignment = MEMFMT_MODEL_BUFFER_ALIGNMENT;

int64_t alignTo(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

int64_t spanOf(Value value) {
  return spanBytes(cast<RankedTensorType>(value.getType()));
}

/// The element types a compiled model's inputs and outputs may have.
bool isBufferElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() || type.isInteger(64);
}

/// A splat floating-point constant (the loss gradient's seed): filled once at
/// load.
bool isSplatFloatConstant(Operation &op) {
  DenseElementsAttr value;
  return op.hasTrait<OpTrait::ConstantLike>() && op.getNumResults() == 1 &&
         matchPattern(op.getResult(0), m_Constant(&value)) && value.isSplat() &&
         isa<FloatType>(value.getElementType());
}

/// A value's home while planning: for the arena the value owning the
/// allocation (`root`), for the weights blob a byte offset, for an input
/// the argument number; `viewOffset` bytes into that buffer for a view of
/// part of it (a slice).
struct Place {
  BufferKind kind = BufferKind::Arena;
  Value root;
  int64_t offset = 0;
  int64_t viewOffset = 0;
};

class MemoryPlanner {
public:
  explicit MemoryPlanner(func::FuncOp func) : func(func) {}

  LogicalResult run();

private:
  LogicalResult checkSignature();
  LogicalResult place();
  /// Gives each load-time result its weights-blob slot.
  void placeLoadTimeResults();
  /// Places each assigned value in its weight's slot where its op computes
  /// it in place there, and checks that no read of a slot follows its
  /// assignment.
  LogicalResult placeAssignedState();
  /// Gives a result the arena buffer of an operand that dies at its op,
  /// where the op's InPlaceOpInterface allows it.
  void shareArenaBuffers();
  void planArena();
  void record();

  func::FuncOp func;
  llvm::DenseMap<Value, Place> places;
  llvm::DenseMap<Value, int64_t> arenaOffsets; // root -> byte offset
  SmallVector<Value> arenaRoots;
  llvm::DenseMap<Value, int64_t> lastUse; // root -> op index
  llvm::DenseMap<Operation *, int64_t> opIndex;
  /// Ops computed once at load (memfmt_prepare), in program order.
  llvm::SmallPtrSet<Operation *, 16> loadTimeOps;
  /// The weight each assigned state name reads, and the slots they hold.
  llvm::StringMap<WeightOp> assignedWeights;
  llvm::DenseSet<int64_t> assignedSlots;
  int64_t weightsBytes = 0, arenaBytes = 0, peakLiveBytes = 0;
};

LogicalResult MemoryPlanner::checkSignature() {
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "expects a function body of one block";
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() ||
        !isBufferElementType(type.getElementType()))
      return func.emitError() << "argument #" << arg.getArgNumber()
                              << " must be a statically shaped f32, f16, "
                                 "bf16 or i64 tensor, got "
                              << arg.getType();
  }
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape() ||
        !isBufferElementType(type.getElementType()))
      return func.emitError()
             << "result #" << i << " must be a statically shaped tensor";
  }
  return success();
}

/// Declares each state that is assigned but not read: a zero_init
/// memfmt.weight of the assigned type at the top of the body, so that it
/// has a slot, a manifest entry and a checkpoint name like any other state
/// (see AssignWeightOp). Created here, after the last pass that could erase
/// an unused read again.
static void declareUnreadState(func::FuncOp func) {
  Block &body = func.getBody().front();
  llvm::StringSet<> read;
  for (auto weight : body.getOps<WeightOp>())
    read.insert(weight.getName());
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  for (auto assign : body.getOps<AssignWeightOp>())
    if (read.insert(assign.getName()).second)
      WeightOp::create(builder, assign.getLoc(), assign.getValue().getType(),
                       assign.getName(), /*zero_init=*/true);
}

LogicalResult MemoryPlanner::place() {
  declareUnreadState(func);
  int64_t index = 0;
  for (auto assign : func.getBody().front().getOps<AssignWeightOp>())
    assignedWeights[assign.getName()] = WeightOp();
  for (BlockArgument arg : func.getArguments())
    places[arg] = {BufferKind::Input, Value(), arg.getArgNumber()};
  for (Operation &op : func.getBody().front()) {
    opIndex[&op] = index++;
    for (Value operand : op.getOperands()) {
      auto it = places.find(operand);
      if (it != places.end() && it->second.kind == BufferKind::Arena)
        lastUse[it->second.root] = opIndex[&op];
    }
    if (auto weight = dyn_cast<WeightOp>(op)) {
      if (assignedWeights.count(weight.getName())) {
        WeightOp &first = assignedWeights[weight.getName()];
        if (first)
          return weight.emitError()
                 << "state \"" << weight.getName()
                 << "\" is assigned and read by more than one memfmt.weight; "
                    "read it once";
        first = weight;
        assignedSlots.insert(weightsBytes);
      }
      places[weight.getResult()] = {BufferKind::Weights, Value(), weightsBytes};
      weightsBytes = alignTo(weightsBytes + spanOf(weight.getResult()));
      continue;
    }
    if (auto copy = dyn_cast<ElementCopyOpInterface>(op);
        copy && copy.isBufferAlias()) {
      places[op.getResult(0)] = places.lookup(op.getOperand(0));
      continue;
    }
    // A slice that is a view of an activation or an input lies inside it.
    // (Slices of weights stay load-time copies.)
    if (auto slice = dyn_cast<SliceOp>(op)) {
      std::optional<int64_t> elements = slice.getViewElementOffset();
      Place input = places.lookup(slice.getInput());
      if (elements && input.kind != BufferKind::Weights) {
        input.viewOffset +=
            *elements * elementBytes(slice.getInput().getType());
        places[slice.getOutput()] = input;
        continue;
      }
    }
    // Side-effect-free ops on weights only run once, at load; their results
    // live in the weights blob after the parameters. A weight that a run
    // assigns changes every run: what reads it runs every run.
    bool onFixedWeights =
        op.getNumOperands() > 0 && op.getNumResults() > 0 &&
        isMemoryEffectFree(&op) && llvm::all_of(op.getOperands(), [&](Value v) {
          auto it = places.find(v);
          return it != places.end() && it->second.kind == BufferKind::Weights &&
                 !assignedSlots.contains(it->second.offset);
        });
    if (onFixedWeights || isSplatFloatConstant(op)) {
      loadTimeOps.insert(&op);
      for (Value result : op.getResults())
        places[result] = {BufferKind::Weights, Value(), -1}; // offset below
      continue;
    }
    for (Value result : op.getResults()) {
      if (isAbsentResult(result))
        continue; // Not computed: no buffer.
      if (!isa<RankedTensorType>(result.getType()))
        return op.emitError() << "cannot lower a non-tensor result";
      places[result] = {BufferKind::Arena, result, 0};
      arenaRoots.push_back(result);
      lastUse[result] = opIndex[&op];
    }
  }
  placeLoadTimeResults();
  return success();
}

void MemoryPlanner::placeLoadTimeResults() {
  for (Operation &op : func.getBody().front()) {
    if (!loadTimeOps.contains(&op))
      continue;
    auto inPlace = dyn_cast<InPlaceOpInterface>(op);
    for (OpResult result : op.getResults()) {
      // The slot of an operand read by nothing else, holding exactly the
      // result's type, where the kernel computes in place.
      OpOperand *reused = nullptr;
      if (inPlace) {
        bool elementwise = inPlace.readsOperandsElementwise();
        for (OpOperand *operand :
             inPlace.getInPlaceOperands(result.getResultNumber())) {
          Value candidate = operand->get();
          if (!candidate.hasOneUse() || candidate.getType() != result.getType())
            continue;
          int64_t slot = places.lookup(candidate).offset;
          bool conflict =
              llvm::any_of(op.getOpOperands(), [&](OpOperand &other) {
                return &other != operand &&
                       places.lookup(other.get()).offset == slot &&
                       (!elementwise ||
                        other.get().getType() != result.getType());
              });
          if (!conflict) {
            reused = operand;
            break;
          }
        }
      }
      if (reused) {
        places[result] = places.lookup(reused->get());
        continue;
      }
      places[result] = {BufferKind::Weights, Value(), weightsBytes};
      weightsBytes = alignTo(weightsBytes + spanOf(result));
    }
  }
}

LogicalResult MemoryPlanner::placeAssignedState() {
  Block &body = func.getBody().front();
  // The ops reading each weights-blob slot (through aliases too).
  llvm::DenseMap<int64_t, SmallVector<Operation *>> readers;
  for (Operation &op : body) {
    llvm::SmallDenseSet<int64_t, 4> read;
    for (Value operand : op.getOperands()) {
      auto it = places.find(operand);
      if (it != places.end() && it->second.kind == BufferKind::Weights &&
          assignedSlots.contains(it->second.offset) &&
          read.insert(it->second.offset).second)
        readers[it->second.offset].push_back(&op);
    }
  }
  for (auto assign : body.getOps<AssignWeightOp>()) {
    WeightOp weight = assignedWeights.lookup(assign.getName());
    assert(weight && "declareUnreadState declares every assigned state");
    int64_t slot = places.lookup(weight.getResult()).offset;
    int64_t assignIndex = opIndex[assign];
    Operation *lastReader = nullptr;
    for (Operation *reader : readers.lookup(slot)) {
      if (reader == assign.getOperation())
        continue;
      if (opIndex[reader] > assignIndex) {
        InFlightDiagnostic diag =
            reader->emitError()
            << "reads state \"" << assign.getName()
            << "\" after its memfmt.assign_weight; every read of a state "
               "tensor must come before its assignment";
        diag.attachNote(assign.getLoc()) << "assigned here";
        return diag;
      }
      if (!lastReader || opIndex[reader] > opIndex[lastReader])
        lastReader = reader;
    }
    // In place: the op defining the value is the slot's last reader and may
    // compute that result over the weight it reads.
    auto value = dyn_cast<OpResult>(assign.getValue());
    Operation *op = value ? value.getOwner() : nullptr;
    auto inPlace = dyn_cast_or_null<InPlaceOpInterface>(op);
    auto it = places.find(assign.getValue());
    if (!inPlace || op != lastReader || loadTimeOps.contains(op) ||
        it == places.end() || it->second.kind != BufferKind::Arena ||
        it->second.root != assign.getValue())
      continue;
    bool elementwise = inPlace.readsOperandsElementwise();
    bool fits = llvm::any_of(
        inPlace.getInPlaceOperands(value.getResultNumber()),
        [&](OpOperand *operand) {
          Value candidate = operand->get();
          Place p = places.lookup(candidate);
          if (p.kind != BufferKind::Weights || p.offset != slot ||
              candidate.getType() != value.getType())
            return false;
          return llvm::none_of(op->getOpOperands(), [&](OpOperand &other) {
            Place q = places.lookup(other.get());
            return &other != operand && q.kind == BufferKind::Weights &&
                   q.offset == slot &&
                   (!elementwise || other.get().getType() != value.getType());
          });
        });
    if (!fits)
      continue;
    Place home = places.lookup(weight.getResult());
    for (auto &[v, p] : places)
      if (p.kind == BufferKind::Arena && p.root == value)
        p = home;
    llvm::erase(arenaRoots, Value(value));
  }
  return success();
}

void MemoryPlanner::shareArenaBuffers() {
  llvm::DenseMap<Value, Value> sharedWith; // merged root -> its buffer's root
  auto rootOf = [&](Value v) -> Value {
    auto it = places.find(v);
    if (it == places.end() || it->second.kind != BufferKind::Arena)
      return Value();
    Value root = it->second.root;
    while (Value next = sharedWith.lookup(root))
      root = next;
    return root;
  };
  for (Operation &op : func.getBody().front()) {
    auto inPlace = dyn_cast<InPlaceOpInterface>(op);
    if (!inPlace || loadTimeOps.contains(&op))
      continue;
    bool elementwise = inPlace.readsOperandsElementwise();
    for (OpResult result : op.getResults()) {
      auto it = places.find(result);
      if (it == places.end() || it->second.kind != BufferKind::Arena ||
          it->second.root != result)
        continue;
      for (OpOperand *operand :
           inPlace.getInPlaceOperands(result.getResultNumber())) {
        Value candidate = operand->get();
        Value root = rootOf(candidate);
        // The operand's buffer must be dead after this op, hold exactly the
        // result's bytes, and be read by no other operand except (for an
        // elementwise kernel) one with the result's very layout.
        if (!root || candidate.getType() != result.getType() ||
            lastUse.lookup(root) != opIndex[&op] ||
            spanOf(root) != spanOf(result))
          continue;
        bool conflict = llvm::any_of(op.getOpOperands(), [&](OpOperand &other) {
          return &other != operand && rootOf(other.get()) == root &&
                 (!elementwise || other.get().getType() != result.getType());
        });
        if (conflict)
          continue;
        sharedWith[result] = root;
        lastUse[root] = std::max(lastUse[root], lastUse[result]);
        break;
      }
    }
  }
  if (sharedWith.empty())
    return;
  for (auto &[value, place] : places)
    if (place.kind == BufferKind::Arena)
      place.root = rootOf(value);
  llvm::erase_if(arenaRoots,
                 [&](Value root) { return sharedWith.count(root) != 0; });
}

void MemoryPlanner::planArena() {
  struct Interval {
    Value root;
    int64_t begin, end, bytes, offset;
  };
  std::vector<Interval> intervals;
  for (Value root : arenaRoots) {
    int64_t begin = opIndex[root.getDefiningOp()];
    intervals.push_back({root, begin, lastUse[root], alignTo(spanOf(root)), 0});
  }
  // Peak of live bytes: a lower bound for any plan.
  std::map<int64_t, int64_t> delta;
  for (const Interval &i : intervals) {
    delta[i.begin] += i.bytes;
    delta[i.end + 1] -= i.bytes;
  }
  int64_t live = 0;
  for (auto [time, change] : delta) {
    live += change;
    peakLiveBytes = std::max(peakLiveBytes, live);
  }
  // Greedy first fit, largest first.
  std::vector<size_t> order(intervals.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // (Ties in definition order: a stable sort.)
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (intervals[a].bytes != intervals[b].bytes)
      return intervals[a].bytes > intervals[b].bytes;
    return a < b;
  });
  std::vector<size_t> placed;
  int64_t end = 0;
  for (size_t i : order) {
    Interval &cur = intervals[i];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const Interval &other = intervals[j];
      if (other.begin <= cur.end && cur.begin <= other.end)
        busy.push_back({other.offset, other.offset + other.bytes});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [begin, busyEnd] : busy) {
      if (offset + cur.bytes <= begin)
        break;
      offset = std::max(offset, busyEnd);
    }
    cur.offset = offset;
    arenaOffsets[cur.root] = offset;
    end = std::max(end, offset + cur.bytes);
    placed.push_back(i);
  }
  arenaBytes = alignTo(end);
}

void MemoryPlanner::record() {
  MLIRContext *context = func.getContext();
  Builder b(context);
  auto bufferOf = [&](Value value) {
    Place p = places.lookup(value);
    int64_t bytes = spanOf(value);
    switch (p.kind) {
    case BufferKind::Input:
      return BufferAttr::get(context, p.kind, p.offset, p.viewOffset, bytes);
    case BufferKind::Weights:
      return BufferAttr::get(context, p.kind, 0, p.offset, bytes);
    case BufferKind::Arena:
      break;
    }
    return BufferAttr::get(context, p.kind, 0,
                           arenaOffsets.lookup(p.root) + p.viewOffset, bytes);
  };
  for (BlockArgument arg : func.getArguments())
    func.setArgAttr(arg.getArgNumber(), kBufferArgAttrName, bufferOf(arg));
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto assign = dyn_cast<AssignWeightOp>(op)) {
      WeightOp weight = assignedWeights.lookup(assign.getName());
      assign->setAttr(kStateBufferAttrName, bufferOf(weight.getResult()));
      continue;
    }
    if (op.getNumResults() == 0)
      continue;
    SmallVector<Attribute> buffers;
    for (Value result : op.getResults())
      buffers.push_back(isAbsentResult(result) ? Attribute(b.getUnitAttr())
                                               : Attribute(bufferOf(result)));
    op.setAttr(kBuffersAttrName, b.getArrayAttr(buffers));
    if (loadTimeOps.contains(&op))
      op.setAttr(kLoadTimeAttrName, b.getUnitAttr());
  }
  ModuleOp module = func->getParentOfType<ModuleOp>();
  module->setAttr(kArenaBytesAttrName, b.getI64IntegerAttr(arenaBytes));
  module->setAttr(kPeakLiveBytesAttrName, b.getI64IntegerAttr(peakLiveBytes));
  module->setAttr(kWeightsBytesAttrName, b.getI64IntegerAttr(weightsBytes));
}

LogicalResult MemoryPlanner::run() {
  if (failed(checkSignature()) || failed(place()) ||
      failed(placeAssignedState()))
    return failure();
  shareArenaBuffers();
  planArena();
  record();
  return success();
}

} // namespace

LogicalResult mlir::memfmt::planMemory(func::FuncOp func) {
  return MemoryPlanner(func).run();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
class PlanMemoryPass
    : public ::mlir::memfmt::impl::PlanMemoryBase<PlanMemoryPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = getCompiledFunction(getOperation());
    if (failed(func) || failed(planMemory(*func)))
      return signalPassFailure();
  }
};
} // namespace
