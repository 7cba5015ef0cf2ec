//===- MemFmtToRuntime.cpp - Lower memfmt to runtime kernel calls ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Lowers the one public memfmt function of a module (after the layout
// passes) to `memfmt_forward`, a function on byte buffers that calls the
// runtime's kernels. Every decision is taken here, at compile time:
//
//  1. Placement. Each tensor value gets a home: a caller input buffer
//     (arguments), the weights blob (memfmt.weight, packed in op order,
//     64-byte aligned, laid out with the strides of their type; then the
//     results of load-time ops, i.e. side-effect-free ops on weights only,
//     such as memfmt.fold_batch_norm), or the activation arena. Ops that move
//     no bytes alias their operand instead: conversions where source and result
//     give every element the same offset (L3), and reshape/flatten of a
//     contiguous tensor.
//  2. Memory plan. A result may take the buffer of an operand whose last
//     use is its op, where the kernel computes in place (the operands an op
//     names through InPlaceOpInterface: a fused conv's residual, relu, add,
//     batch norm; same shape, strides and type): the
//     residual of a bottleneck block is then summed in place by the
//     convolution instead of being copied into a fresh output first. Arena
//     values are live from their definition to their last use (through
//     aliases and shared buffers); a greedy first-fit by decreasing size
//     places them at 64-byte aligned offsets so that values live at the
//     same time never overlap. The arena size and the peak of live bytes go
//     to the manifest.
//  3. Emission. Each value becomes a strided memref view of its buffer
//     (memref.view + memref.reinterpret_cast with the value's strides), cast
//     to an unranked memref, and each op becomes one call of the matching
//     kernel declared from runtime/include/memfmt/runtime/Kernels.def. A
//     non-zero status returns at once. Load-time ops go to
//     `memfmt_prepare`, which the loader runs once after filling the weights
//     blob; everything else to `memfmt_forward`. Results are copied into the
//     caller's output buffers.
//
// Nothing is allocated, re-laid or decided per run.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/MemFmtToRuntime/MemFmtToRuntime.h"
#include "memfmt/Conversion/Passes.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Layout/Strides.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

#include <map>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

//===----------------------------------------------------------------------===//
// The kernel ABI, from Kernels.def
//===----------------------------------------------------------------------===//

enum class ArgKind { In, Out, OutI64, InI64, InF32, OutF32, I64, F64 };

struct KernelInfo {
  const char *name;
  std::vector<ArgKind> args;
};

const std::vector<KernelInfo> &kernelTable() {
  static const std::vector<KernelInfo> table = {
#define MEMFMT_DTYPE(T)
#define MEMFMT_IN(N) ArgKind::In,
#define MEMFMT_OUT(N) ArgKind::Out,
#define MEMFMT_OUT_I64(N) ArgKind::OutI64,
#define MEMFMT_IN_I64(N) ArgKind::InI64,
#define MEMFMT_IN_F32(N) ArgKind::InF32,
#define MEMFMT_OUT_F32(N) ArgKind::OutF32,
#define MEMFMT_I64(N) ArgKind::I64,
#define MEMFMT_F64(N) ArgKind::F64,
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS) {#NAME, {ARGS}},
#include "memfmt/runtime/Kernels.def"
#undef MEMFMT_DTYPE
#undef MEMFMT_IN
#undef MEMFMT_OUT
#undef MEMFMT_OUT_I64
#undef MEMFMT_IN_I64
#undef MEMFMT_IN_F32
#undef MEMFMT_OUT_F32
#undef MEMFMT_I64
#undef MEMFMT_F64
  };
  return table;
}

const KernelInfo *findKernel(StringRef name) {
  for (const KernelInfo &k : kernelTable())
    if (name == k.name)
      return &k;
  return nullptr;
}

constexpr int64_t kAlignment = MEMFMT_MODEL_BUFFER_ALIGNMENT;

int64_t alignTo(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

std::string dtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isInteger(64))
    return "i64";
  return "";
}

/// Elements a strided tensor spans (the layout library's span rule).
int64_t spanElements(RankedTensorType type) {
  SmallVector<int64_t> strides = getStrides(type);
  return ::memfmt::layout::spanElements(type.getShape(), strides);
}

int64_t spanBytes(RankedTensorType type) {
  return spanElements(type) * ((type.getElementTypeBitWidth() + 7) / 8);
}

std::string describe(Operation *op) {
  std::string text = op->getName().getStringRef().str() + " at ";
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Placement and memory plan
//===----------------------------------------------------------------------===//

enum class Home { Arena, Weights, Input };

struct Place {
  Home home = Home::Arena;
  Value root;         ///< arena: the value owning the allocation
  int64_t offset = 0; ///< weights: byte offset; input: argument index
};

class Lowering {
public:
  Lowering(func::FuncOp func, ModelManifest &manifest)
      : func(func), manifest(manifest), builder(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult place();
  /// Gives a result the arena buffer of an operand that dies at its op,
  /// where the op's InPlaceOpInterface allows it.
  void shareBuffers();
  void planArena();
  LogicalResult emitPrepare();
  LogicalResult emitForward();
  /// Starts function `name` with `numBuffers` byte-buffer arguments after the
  /// context and sets up its failure block.
  Block *beginFunction(StringRef name, unsigned numBuffers);
  /// Returns 0 and puts the failure block last.
  void endFunction();

  /// True if `op` only re-describes the bytes of operand 0.
  bool isAlias(Operation *op);

  // Emission helpers.
  Value view(Value tensor);
  Value viewAt(Value buffer, int64_t byteOffset, RankedTensorType type);
  Value unranked(Value memref);
  Value i64(int64_t v);
  Value f64(double v);
  LogicalResult call(Operation *op, StringRef kernel, Type elementType,
                     ArrayRef<Value> args);
  LogicalResult lowerOp(Operation *op);

  func::FuncOp func;
  ModelManifest &manifest;
  OpBuilder builder;

  llvm::DenseMap<Value, Place> places;
  llvm::DenseMap<Value, int64_t> arenaOffsets; // root -> byte offset
  SmallVector<Value> arenaRoots;
  llvm::DenseMap<Value, int64_t> lastUse; // root -> op index
  llvm::DenseMap<Operation *, int64_t> opIndex;

  /// Ops computed once at load (memfmt_prepare), in program order.
  llvm::SmallPtrSet<Operation *, 16> loadTimeOps;

  // The function being emitted.
  func::FuncOp current;
  Value ctx, arenaBuf, weightsBuf;
  SmallVector<Value> inputBufs, outputBufs;
  Block *failBlock = nullptr;
  llvm::DenseMap<Value, Value> views;
  llvm::StringMap<func::FuncOp> declared;
  int64_t nextNode = 0;
};

bool Lowering::isAlias(Operation *op) {
  if (isa<ContiguousOp, CloneOp, ToOp>(op)) {
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    auto out = cast<RankedTensorType>(op->getResult(0).getType());
    return haveSameBytes(in, out);
  }
  if (isa<FlattenOp, ReshapeOp>(op))
    return isContiguous(cast<RankedTensorType>(op->getOperand(0).getType()));
  return false;
}

LogicalResult Lowering::place() {
  int64_t index = 0;
  for (BlockArgument arg : func.getArguments())
    places[arg] = {Home::Input, Value(), arg.getArgNumber()};
  int64_t weightsOffset = 0;
  for (Operation &op : func.getBody().front()) {
    opIndex[&op] = index++;
    for (Value operand : op.getOperands()) {
      auto it = places.find(operand);
      if (it != places.end() && it->second.home == Home::Arena)
        lastUse[it->second.root] = opIndex[&op];
    }
    if (auto weight = dyn_cast<WeightOp>(op)) {
      auto type = cast<RankedTensorType>(weight.getType());
      places[weight.getResult()] = {Home::Weights, Value(), weightsOffset};
      TensorPlacement p;
      p.name = weight.getName().str();
      p.elementType = dtypeName(type.getElementType());
      p.shape.assign(type.getShape().begin(), type.getShape().end());
      SmallVector<int64_t> strides = getStrides(type);
      p.strides.assign(strides.begin(), strides.end());
      p.offset = weightsOffset;
      p.bytes = spanBytes(type);
      manifest.parameters.push_back(p);
      weightsOffset = alignTo(weightsOffset + p.bytes);
      continue;
    }
    if (op.getNumResults() == 1 && isAlias(&op)) {
      places[op.getResult(0)] = places.lookup(op.getOperand(0));
      continue;
    }
    // Side-effect-free ops on weights only run once, at load; their results
    // live in the weights blob after the parameters.
    if (op.getNumOperands() > 0 && op.getNumResults() > 0 &&
        isMemoryEffectFree(&op) && llvm::all_of(op.getOperands(), [&](Value v) {
          auto it = places.find(v);
          return it != places.end() && it->second.home == Home::Weights;
        })) {
      loadTimeOps.insert(&op);
      for (Value result : op.getResults())
        places[result] = {Home::Weights, Value(), -1}; // offset set below
      continue;
    }
    for (Value result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        return op.emitError() << "cannot lower a non-tensor result";
      places[result] = {Home::Arena, result, 0};
      arenaRoots.push_back(result);
      lastUse[result] = opIndex[&op];
    }
  }
  // Results of load-time ops follow the parameters in the weights blob; a
  // folded weight overwrites the weight it replaces when nothing else reads
  // that weight (the fold is elementwise), so folding costs no memory.
  for (Operation &op : func.getBody().front()) {
    if (!loadTimeOps.contains(&op))
      continue;
    if (auto fold = dyn_cast<FoldBatchNormOp>(op);
        fold && fold.getWeight().hasOneUse() &&
        fold.getWeight().getType() == fold.getNewWeight().getType()) {
      places[fold.getNewWeight()] = places.lookup(fold.getWeight());
      Value bias = fold.getNewBias();
      places[bias] = {Home::Weights, Value(), weightsOffset};
      weightsOffset = alignTo(
          weightsOffset + spanBytes(cast<RankedTensorType>(bias.getType())));
      continue;
    }
    for (Value result : op.getResults()) {
      places[result] = {Home::Weights, Value(), weightsOffset};
      weightsOffset = alignTo(
          weightsOffset + spanBytes(cast<RankedTensorType>(result.getType())));
    }
  }
  manifest.weightsBytes = weightsOffset;
  return success();
}

void Lowering::shareBuffers() {
  llvm::DenseMap<Value, Value> sharedWith; // merged root -> its buffer's root
  auto rootOf = [&](Value v) -> Value {
    auto it = places.find(v);
    if (it == places.end() || it->second.home != Home::Arena)
      return Value();
    Value root = it->second.root;
    while (Value next = sharedWith.lookup(root))
      root = next;
    return root;
  };
  auto spanOf = [](Value v) {
    return spanBytes(cast<RankedTensorType>(v.getType()));
  };
  for (Operation &op : func.getBody().front()) {
    if (op.getNumResults() != 1 || loadTimeOps.contains(&op))
      continue;
    Value result = op.getResult(0);
    auto it = places.find(result);
    if (it == places.end() || it->second.home != Home::Arena ||
        it->second.root != result)
      continue;
    auto inPlace = dyn_cast<InPlaceOpInterface>(op);
    if (!inPlace)
      continue;
    bool elementwise = inPlace.readsOperandsElementwise();
    for (OpOperand *operand : inPlace.getInPlaceOperands()) {
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
  if (sharedWith.empty())
    return;
  for (auto &[value, place] : places)
    if (place.home == Home::Arena)
      place.root = rootOf(value);
  llvm::erase_if(arenaRoots,
                 [&](Value root) { return sharedWith.count(root) != 0; });
}

void Lowering::planArena() {
  struct Interval {
    Value root;
    int64_t begin, end, bytes, offset;
  };
  std::vector<Interval> intervals;
  for (Value root : arenaRoots) {
    int64_t begin = opIndex[root.getDefiningOp()];
    intervals.push_back(
        {root, begin, lastUse[root],
         alignTo(spanBytes(cast<RankedTensorType>(root.getType()))), 0});
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
    manifest.peakLiveBytes = std::max(manifest.peakLiveBytes, live);
  }
  // Greedy first fit, largest first.
  std::vector<size_t> order(intervals.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return intervals[a].bytes > intervals[b].bytes;
  });
  std::vector<size_t> placed;
  int64_t arenaBytes = 0;
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
    for (auto [begin, end] : busy) {
      if (offset + cur.bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    cur.offset = offset;
    arenaOffsets[cur.root] = offset;
    arenaBytes = std::max(arenaBytes, offset + cur.bytes);
    placed.push_back(i);
  }
  manifest.arenaBytes = alignTo(arenaBytes);
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

Value Lowering::i64(int64_t v) {
  return arith::ConstantIntOp::create(builder, func.getLoc(), v, 64);
}

Value Lowering::f64(double v) {
  return arith::ConstantFloatOp::create(builder, func.getLoc(),
                                        builder.getF64Type(), llvm::APFloat(v));
}

Value Lowering::viewAt(Value buffer, int64_t byteOffset,
                       RankedTensorType type) {
  Location loc = func.getLoc();
  int64_t span = std::max<int64_t>(spanElements(type), 1);
  auto flatType = MemRefType::get({span}, type.getElementType());
  Value flat = memref::ViewOp::create(
      builder, loc, flatType, buffer,
      arith::ConstantIndexOp::create(builder, loc, byteOffset), ValueRange{});
  SmallVector<int64_t> strides = getStrides(type);
  auto layout = StridedLayoutAttr::get(builder.getContext(), 0, strides);
  auto viewType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return memref::ReinterpretCastOp::create(builder, loc, viewType, flat, 0,
                                           type.getShape(), strides);
}

Value Lowering::view(Value tensor) {
  if (Value cached = views.lookup(tensor))
    return cached;
  auto type = cast<RankedTensorType>(tensor.getType());
  Place p = places.lookup(tensor);
  Value result;
  switch (p.home) {
  case Home::Input:
    result = viewAt(inputBufs[p.offset], 0, type);
    break;
  case Home::Weights:
    result = viewAt(weightsBuf, p.offset, type);
    break;
  case Home::Arena:
    result = viewAt(arenaBuf, arenaOffsets.lookup(p.root), type);
    break;
  }
  views[tensor] = result;
  return result;
}

Value Lowering::unranked(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return memref::CastOp::create(
      builder, func.getLoc(),
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
      memref);
}

LogicalResult Lowering::call(Operation *op, StringRef kernel, Type elementType,
                             ArrayRef<Value> args) {
  const KernelInfo *info = findKernel(kernel);
  std::string dtype = dtypeName(elementType);
  if (!info || dtype.empty() || dtype == "i64")
    return op->emitError() << "no runtime kernel " << kernel << " for "
                           << elementType;
  assert(info->args.size() == args.size() && "argument count mismatch");
  std::string symbol = ("memfmt_" + Twine(kernel) + "_" + dtype).str();
  MLIRContext *context = builder.getContext();
  func::FuncOp callee = declared.lookup(symbol);
  if (!callee) {
    SmallVector<Type> types = {LLVM::LLVMPointerType::get(context),
                               builder.getI64Type()};
    for (ArgKind kind : info->args) {
      switch (kind) {
      case ArgKind::In:
      case ArgKind::Out:
        types.push_back(UnrankedMemRefType::get(elementType, 0));
        break;
      case ArgKind::OutI64:
      case ArgKind::InI64:
        types.push_back(UnrankedMemRefType::get(builder.getI64Type(), 0));
        break;
      case ArgKind::InF32:
      case ArgKind::OutF32:
        types.push_back(UnrankedMemRefType::get(builder.getF32Type(), 0));
        break;
      case ArgKind::I64:
        types.push_back(builder.getI64Type());
        break;
      case ArgKind::F64:
        types.push_back(builder.getF64Type());
        break;
      }
    }
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(current);
    callee = func::FuncOp::create(
        builder, func.getLoc(), symbol,
        builder.getFunctionType(types, builder.getI32Type()));
    callee.setPrivate();
    callee->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    builder.getUnitAttr());
    declared[symbol] = callee;
  }
  SmallVector<Value> operands = {ctx, i64(nextNode++)};
  for (Value arg : args)
    operands.push_back(isa<MemRefType>(arg.getType()) ? unranked(arg) : arg);
  manifest.nodeNames.push_back(describe(op));
  Value status = func::CallOp::create(builder, op->getLoc(), callee, operands)
                     .getResult(0);
  // Return the status at once when the kernel fails.
  Value zero = arith::ConstantIntOp::create(builder, op->getLoc(), 0, 32);
  Value ok = arith::CmpIOp::create(builder, op->getLoc(),
                                   arith::CmpIPredicate::eq, status, zero);
  Block *current = builder.getInsertionBlock();
  Block *next = builder.createBlock(current->getParent());
  builder.setInsertionPointToEnd(current);
  cf::CondBranchOp::create(builder, op->getLoc(), ok, next, ValueRange{},
                           failBlock, ValueRange{status});
  builder.setInsertionPointToStart(next);
  return success();
}

LogicalResult Lowering::lowerOp(Operation *op) {
  auto elem = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  };
  if (isa<WeightOp>(op) || isAlias(op) || isa<EmptyLikeOp>(op))
    return success(); // Placed, aliased or uninitialised: no work.
  if (auto conv = dyn_cast<FusedConv2dOp>(op)) {
    Padding2d pad = Padding2d::fromList(conv.getPadding());
    Value out = view(conv.getOutput());
    Value bias = conv.getBias() ? view(conv.getBias()) : out;
    Value residual = conv.getResidual() ? view(conv.getResidual()) : out;
    return call(op, "conv2d", elem(conv.getInput()),
                {view(conv.getInput()), view(conv.getWeight()), bias, residual,
                 out, i64(conv.getStride()[0]), i64(conv.getStride()[1]),
                 i64(pad.top), i64(pad.left), i64(pad.bottom), i64(pad.right),
                 i64(conv.getDilation()[0]), i64(conv.getDilation()[1]),
                 i64(conv.getGroups()), i64(conv.getBias() ? 1 : 0),
                 i64(conv.getResidual() ? 1 : 0), i64(conv.getRelu() ? 1 : 0)});
  }
  if (auto fold = dyn_cast<FoldBatchNormOp>(op)) {
    Value newBias = view(fold.getNewBias());
    return call(
        op, "fold_batch_norm", elem(fold.getWeight()),
        {view(fold.getWeight()),
         fold.getBias() ? view(fold.getBias()) : newBias, view(fold.getGamma()),
         view(fold.getBeta()), view(fold.getRunningMean()),
         view(fold.getRunningVar()), view(fold.getNewWeight()), newBias,
         f64(fold.getEps().convertToDouble()), i64(fold.getBias() ? 1 : 0)});
  }
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    Padding2d pad = Padding2d::fromList(conv.getPadding());
    Value out = view(conv.getOutput());
    Value bias = conv.getBias() ? view(conv.getBias()) : out;
    return call(op, "conv2d", elem(conv.getInput()),
                {view(conv.getInput()), view(conv.getWeight()), bias, out, out,
                 i64(conv.getStride()[0]), i64(conv.getStride()[1]),
                 i64(pad.top), i64(pad.left), i64(pad.bottom), i64(pad.right),
                 i64(conv.getDilation()[0]), i64(conv.getDilation()[1]),
                 i64(conv.getGroups()), i64(conv.getBias() ? 1 : 0), i64(0),
                 i64(0)});
  }
  if (auto bn = dyn_cast<BatchNormOp>(op)) {
    if (bn.getTraining())
      return op->emitError() << "training batch norm cannot be lowered; "
                                "memfmt compiles inference";
    return call(op, "batch_norm", elem(bn.getInput()),
                {view(bn.getInput()), view(bn.getWeight()), view(bn.getBias()),
                 view(bn.getRunningMean()), view(bn.getRunningVar()),
                 view(bn.getOutput()), f64(bn.getEps().convertToDouble()),
                 i64(0)});
  }
  if (auto relu = dyn_cast<ReluOp>(op))
    return call(op, "relu", elem(relu.getInput()),
                {view(relu.getInput()), view(relu.getOutput())});
  if (auto add = dyn_cast<AddOp>(op))
    return call(op, "add", elem(add.getSelf()),
                {view(add.getSelf()), view(add.getOther()),
                 view(add.getOutput()), i64(0)});
  auto poolArgs = [&](ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                      ArrayRef<int64_t> padding) {
    if (stride.empty())
      stride = kernel;
    Padding2d pad = Padding2d::fromList(padding);
    return std::make_tuple(kernel, stride, pad);
  };
  if (auto pool = dyn_cast<MaxPool2dOp>(op)) {
    auto [k, s, pad] =
        poolArgs(pool.getKernelSize(), pool.getStride(), pool.getPadding());
    return call(op, "max_pool2d", elem(pool.getInput()),
                {view(pool.getInput()), view(pool.getOutput()), i64(k[0]),
                 i64(k[1]), i64(s[0]), i64(s[1]), i64(pad.top), i64(pad.left),
                 i64(pool.getDilation()[0]), i64(pool.getDilation()[1])});
  }
  if (auto pool = dyn_cast<MaxPool2dWithIndicesOp>(op)) {
    auto [k, s, pad] =
        poolArgs(pool.getKernelSize(), pool.getStride(), pool.getPadding());
    return call(op, "max_pool2d_with_indices", elem(pool.getInput()),
                {view(pool.getInput()), view(pool.getOutput()),
                 view(pool.getIndices()), i64(k[0]), i64(k[1]), i64(s[0]),
                 i64(s[1]), i64(pad.top), i64(pad.left),
                 i64(pool.getDilation()[0]), i64(pool.getDilation()[1])});
  }
  if (auto pool = dyn_cast<AvgPool2dOp>(op)) {
    auto [k, s, pad] =
        poolArgs(pool.getKernelSize(), pool.getStride(), pool.getPadding());
    return call(op, "avg_pool2d", elem(pool.getInput()),
                {view(pool.getInput()), view(pool.getOutput()), i64(k[0]),
                 i64(k[1]), i64(s[0]), i64(s[1]), i64(pad.top), i64(pad.left),
                 i64(pad.bottom), i64(pad.right),
                 i64(pool.getCountIncludePad() ? 1 : 0)});
  }
  if (auto pool = dyn_cast<AdaptiveAvgPool2dOp>(op))
    return call(op, "adaptive_avg_pool2d", elem(pool.getInput()),
                {view(pool.getInput()), view(pool.getOutput())});
  if (auto linear = dyn_cast<LinearOp>(op)) {
    Value out = view(linear.getOutput());
    Value bias = linear.getBias() ? view(linear.getBias()) : out;
    return call(op, "linear", elem(linear.getInput()),
                {view(linear.getInput()), view(linear.getWeight()), bias, out,
                 i64(linear.getBias() ? 1 : 0), i64(0)});
  }
  if (isa<ContiguousOp, CloneOp, FlattenOp, ReshapeOp>(op)) {
    if (elem(op->getOperand(0)) != elem(op->getResult(0)))
      return op->emitError() << "element type conversion is not lowered yet";
    return call(op, "copy", elem(op->getOperand(0)),
                {view(op->getOperand(0)), view(op->getResult(0))});
  }
  if (auto to = dyn_cast<ToOp>(op)) {
    // A dtype change converts through f32 (cast_f32_to / cast_to_f32_from,
    // which also change the layout); other pairs need two memfmt.to ops.
    Type from = elem(to.getInput()), into = elem(to.getOutput());
    SmallVector<Value> operands = {view(to.getInput()), view(to.getOutput())};
    if (from == into)
      return call(op, "copy", from, operands);
    if (from.isF32())
      return call(op, "cast_f32_to", into, operands);
    if (into.isF32())
      return call(op, "cast_to_f32_from", from, operands);
    return op->emitError() << "memfmt.to from " << from << " to " << into
                           << " is not lowered; convert through f32 (two "
                              "memfmt.to ops)";
  }
  if (auto cat = dyn_cast<CatOp>(op)) {
    // Copy each input into its slice of the output.
    auto outType = cast<RankedTensorType>(cat.getType());
    int64_t dim =
        cat.getDim() < 0 ? cat.getDim() + outType.getRank() : cat.getDim();
    SmallVector<int64_t> strides = getStrides(outType);
    Place p = places.lookup(cat.getResult());
    int64_t base = arenaOffsets.lookup(p.root);
    int64_t elementBytes = (outType.getElementTypeBitWidth() + 7) / 8;
    int64_t start = 0;
    for (Value input : cat.getTensors()) {
      auto inType = cast<RankedTensorType>(input.getType());
      auto slice = getTypeWithStrides(inType, strides);
      Value dst =
          viewAt(arenaBuf, base + start * strides[dim] * elementBytes, slice);
      if (failed(call(op, "copy", inType.getElementType(), {view(input), dst})))
        return failure();
      start += inType.getDimSize(dim);
    }
    return success();
  }
  if (auto chunk = dyn_cast<ChunkOp>(op)) {
    auto inType = cast<RankedTensorType>(chunk.getInput().getType());
    int64_t dim =
        chunk.getDim() < 0 ? chunk.getDim() + inType.getRank() : chunk.getDim();
    SmallVector<int64_t> strides = getStrides(inType);
    Place p = places.lookup(chunk.getInput());
    int64_t elementBytes = (inType.getElementTypeBitWidth() + 7) / 8;
    int64_t start = 0;
    for (Value piece : chunk.getOutputs()) {
      auto pieceType = cast<RankedTensorType>(piece.getType());
      auto slice = getTypeWithStrides(pieceType, strides);
      Value src;
      int64_t shift = start * strides[dim] * elementBytes;
      switch (p.home) {
      case Home::Input:
        src = viewAt(inputBufs[p.offset], shift, slice);
        break;
      case Home::Weights:
        src = viewAt(weightsBuf, p.offset + shift, slice);
        break;
      case Home::Arena:
        src = viewAt(arenaBuf, arenaOffsets.lookup(p.root) + shift, slice);
        break;
      }
      if (failed(
              call(op, "copy", pieceType.getElementType(), {src, view(piece)})))
        return failure();
      start += pieceType.getDimSize(dim);
    }
    return success();
  }
  if (isa<ResizeAsOp>(op))
    return op->emitError() << "memfmt.resize_as is not lowered yet";
  return op->emitError() << "cannot lower this op to runtime calls";
}

Block *Lowering::beginFunction(StringRef name, unsigned numBuffers) {
  MLIRContext *context = builder.getContext();
  Location loc = func.getLoc();
  auto bytes = MemRefType::get({ShapedType::kDynamic}, builder.getI8Type());
  SmallVector<Type> argTypes = {LLVM::LLVMPointerType::get(context)};
  argTypes.append(numBuffers, bytes);
  builder.setInsertionPoint(func);
  current = func::FuncOp::create(
      builder, loc, name,
      builder.getFunctionType(argTypes, builder.getI32Type()));
  current->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   builder.getUnitAttr());
  Block *entry = current.addEntryBlock();
  ctx = entry->getArgument(0);
  views.clear();

  failBlock = new Block();
  current.getBody().push_back(failBlock);
  Value failStatus = failBlock->addArgument(builder.getI32Type(), loc);
  builder.setInsertionPointToStart(failBlock);
  func::ReturnOp::create(builder, loc, failStatus);
  builder.setInsertionPointToStart(entry);
  return entry;
}

void Lowering::endFunction() {
  Location loc = func.getLoc();
  func::ReturnOp::create(
      builder, loc,
      ValueRange{arith::ConstantIntOp::create(builder, loc, 0, 32)});
  if (failBlock->hasNoPredecessors())
    failBlock->erase(); // No kernel call: nothing can fail.
  else
    failBlock->moveBefore(&current.getBody(), current.getBody().end());
}

LogicalResult Lowering::emitPrepare() {
  Block *entry = beginFunction(kPrepareFunctionName, 1);
  weightsBuf = entry->getArgument(1);
  arenaBuf = Value();
  inputBufs.clear();
  outputBufs.clear();
  for (Operation &op : func.getBody().front())
    if (loadTimeOps.contains(&op) && failed(lowerOp(&op)))
      return failure();
  endFunction();
  return success();
}

LogicalResult Lowering::emitForward() {
  unsigned numInputs = func.getNumArguments();
  unsigned numOutputs = func.getNumResults();
  Block *entry =
      beginFunction(kForwardFunctionName, 2 + numInputs + numOutputs);
  arenaBuf = entry->getArgument(1);
  weightsBuf = entry->getArgument(2);
  inputBufs.clear();
  outputBufs.clear();
  for (unsigned i = 0; i < numInputs; ++i)
    inputBufs.push_back(entry->getArgument(3 + i));
  for (unsigned i = 0; i < numOutputs; ++i)
    outputBufs.push_back(entry->getArgument(3 + numInputs + i));

  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!loadTimeOps.contains(&op) && failed(lowerOp(&op)))
      return failure();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = cast<RankedTensorType>(value.getType());
    Value dst = viewAt(outputBufs[i], 0, type);
    if (failed(call(ret, "copy", type.getElementType(), {view(value), dst})))
      return failure();
  }
  endFunction();
  return success();
}

LogicalResult Lowering::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "expects a function body of one block";
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() ||
        dtypeName(type.getElementType()).empty())
      return func.emitError() << "argument #" << arg.getArgNumber()
                              << " must be a statically shaped f32, f16, "
                                 "bf16 or i64 tensor, got "
                              << arg.getType();
    TensorPlacement p;
    p.name = "input_" + std::to_string(arg.getArgNumber());
    p.elementType = dtypeName(type.getElementType());
    p.shape.assign(type.getShape().begin(), type.getShape().end());
    SmallVector<int64_t> strides = getStrides(type);
    p.strides.assign(strides.begin(), strides.end());
    p.bytes = spanBytes(type);
    manifest.inputs.push_back(p);
  }
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape() ||
        dtypeName(type.getElementType()).empty())
      return func.emitError()
             << "result #" << i << " must be a statically shaped tensor";
    TensorPlacement p;
    p.name = "output_" + std::to_string(i);
    p.elementType = dtypeName(type.getElementType());
    p.shape.assign(type.getShape().begin(), type.getShape().end());
    SmallVector<int64_t> strides = getStrides(type);
    p.strides.assign(strides.begin(), strides.end());
    p.bytes = spanBytes(type);
    manifest.outputs.push_back(p);
  }
  if (failed(place()))
    return failure();
  shareBuffers();
  planArena();
  if (failed(emitPrepare()) || failed(emitForward()))
    return failure();
  manifest.numKernelCalls = nextNode;
  func.erase();
  return success();
}

} // namespace

LogicalResult mlir::memfmt::lowerToRuntimeCalls(ModuleOp module,
                                                ModelManifest &manifest) {
  SmallVector<func::FuncOp> publicFuncs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      publicFuncs.push_back(func);
  if (publicFuncs.size() != 1)
    return module.emitError() << "expects exactly one public function to "
                                 "compile, found "
                              << publicFuncs.size();
  module.getContext()
      ->loadDialect<arith::ArithDialect, cf::ControlFlowDialect,
                    func::FuncDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect>();
  Lowering lowering(publicFuncs.front(), manifest);
  return lowering.run();
}

LogicalResult mlir::memfmt::lowerToLLVMDialect(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return pm.run(module);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace mlir::memfmt {
#define GEN_PASS_DEF_CONVERTMEMFMTTORUNTIME
#include "memfmt/Conversion/Passes.h.inc"
} // namespace mlir::memfmt

namespace {
class ConvertMemFmtToRuntimePass
    : public ::mlir::memfmt::impl::ConvertMemFmtToRuntimeBase<
          ConvertMemFmtToRuntimePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModelManifest manifest;
    if (failed(lowerToRuntimeCalls(module, manifest)))
      return signalPassFailure();
    Builder b(module.getContext());
    module->setAttr("memfmt.arena_bytes",
                    b.getI64IntegerAttr(manifest.arenaBytes));
    module->setAttr("memfmt.peak_live_bytes",
                    b.getI64IntegerAttr(manifest.peakLiveBytes));
    module->setAttr("memfmt.weights_bytes",
                    b.getI64IntegerAttr(manifest.weightsBytes));
    module->setAttr("memfmt.kernel_calls",
                    b.getI64IntegerAttr(manifest.numKernelCalls));
  }
};
} // namespace
