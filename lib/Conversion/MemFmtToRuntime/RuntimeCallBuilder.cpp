//===- RuntimeCallBuilder.cpp - Typed calls of runtime kernels ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Writes the functions of a compiled model: strided memref views of the
// planned buffers (memref.view of the byte buffer at the value's offset,
// then memref.reinterpret_cast with the value's strides), and one call per
// kernel whose declaration and arguments the `call` overloads generated
// from Kernels.def give: the context, the node id, each tensor as an
// unranked memref of the parameter's element type, each scalar as an i64 or
// f64 constant. A non-zero status branches to the function's failure block,
// which returns it.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/MemFmtToRuntime/RuntimeCallBuilder.h"
#include "memfmt/Conversion/MemFmtToRuntime/MemoryPlan.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"
#include "memfmt/Layout/Strides.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::memfmt;

std::string mlir::memfmt::dtypeName(Type type) {
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

/// The name of a call site in profiles and error messages: the op's name
/// and location.
static std::string describe(Operation *op) {
  std::string text = op->getName().getStringRef().str() + " at ";
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

RuntimeCallBuilder::RuntimeCallBuilder(RewriterBase &rewriter, Location loc,
                                       std::vector<std::string> &nodeNames)
    : rewriter(rewriter), loc(loc), nodeNames(nodeNames) {}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

func::FuncOp RuntimeCallBuilder::beginFunction(Operation *anchor,
                                               StringRef name,
                                               unsigned numBuffers) {
  MLIRContext *context = rewriter.getContext();
  auto bytes = MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type());
  SmallVector<Type> argTypes = {LLVM::LLVMPointerType::get(context)};
  argTypes.append(numBuffers, bytes);
  rewriter.setInsertionPoint(anchor);
  current = func::FuncOp::create(
      rewriter, loc, name,
      rewriter.getFunctionType(argTypes, rewriter.getI32Type()));
  current->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   rewriter.getUnitAttr());
  Block *entry = current.addEntryBlock();
  ctx = entry->getArgument(0);
  views.clear();
  setBuffers(Value(), Value(), {});

  failBlock = new Block();
  current.getBody().push_back(failBlock);
  Value failStatus = failBlock->addArgument(rewriter.getI32Type(), loc);
  rewriter.setInsertionPointToStart(failBlock);
  func::ReturnOp::create(rewriter, loc, failStatus);
  rewriter.setInsertionPointToStart(entry);
  return current;
}

void RuntimeCallBuilder::setBuffers(Value arenaBuffer, Value weightsBuffer,
                                    ValueRange inputBuffers) {
  arena = arenaBuffer;
  weights = weightsBuffer;
  inputs.assign(inputBuffers.begin(), inputBuffers.end());
}

void RuntimeCallBuilder::endFunction() {
  func::ReturnOp::create(
      rewriter, loc,
      ValueRange{arith::ConstantIntOp::create(rewriter, loc, 0, 32)});
  if (failBlock->hasNoPredecessors())
    failBlock->erase(); // No kernel call: nothing can fail.
  else
    failBlock->moveBefore(&current.getBody(), current.getBody().end());
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

Value RuntimeCallBuilder::viewAt(Value bytes, int64_t byteOffset,
                                 RankedTensorType type) {
  SmallVector<int64_t> strides = getStrides(type);
  int64_t span = std::max<int64_t>(
      ::memfmt::layout::spanElements(type.getShape(), strides), 1);
  auto flatType = MemRefType::get({span}, type.getElementType());
  Value flat = memref::ViewOp::create(
      rewriter, loc, flatType, bytes,
      arith::ConstantIndexOp::create(rewriter, loc, byteOffset), ValueRange{});
  auto layout = StridedLayoutAttr::get(rewriter.getContext(), 0, strides);
  auto viewType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return memref::ReinterpretCastOp::create(rewriter, loc, viewType, flat, 0,
                                           type.getShape(), strides);
}

Value RuntimeCallBuilder::viewAt(BufferAttr buffer, int64_t byteOffset,
                                 RankedTensorType type) {
  Value bytes;
  switch (buffer.getKind()) {
  case BufferKind::Input:
    bytes = inputs[buffer.getIndex()];
    break;
  case BufferKind::Weights:
    bytes = weights;
    break;
  case BufferKind::Arena:
    bytes = arena;
    break;
  }
  return viewAt(bytes, buffer.getOffset() + byteOffset, type);
}

Value RuntimeCallBuilder::view(Value value) {
  if (Value cached = views.lookup(value))
    return cached;
  Value result = viewAt(getPlannedBuffer(value), 0,
                        cast<RankedTensorType>(value.getType()));
  views[value] = result;
  return result;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

LogicalResult RuntimeCallBuilder::emitCall(Operation *op, StringRef kernel,
                                           ArrayRef<StringRef> dtypes,
                                           Type elementType,
                                           ArrayRef<Argument> args) {
  std::string dtype = dtypeName(elementType);
  if (dtype.empty() || !llvm::is_contained(dtypes, dtype))
    return op->emitError() << "no runtime kernel " << kernel << " for "
                           << elementType;
  // Scalars first, then the node id, then the tensors' casts: the order in
  // which the lowering has always written them.
  SmallVector<Value> scalars;
  for (const Argument &arg : args) {
    if (arg.kind == Argument::Kind::I64)
      scalars.push_back(
          arith::ConstantIntOp::create(rewriter, loc, arg.i64, 64));
    else if (arg.kind == Argument::Kind::F64)
      scalars.push_back(arith::ConstantFloatOp::create(
          rewriter, loc, rewriter.getF64Type(), llvm::APFloat(arg.f64)));
  }
  std::string symbol = ("memfmt_" + kernel + "_" + dtype).str();
  func::FuncOp callee = declared.lookup(symbol);
  if (!callee) {
    SmallVector<Type> types = {
        LLVM::LLVMPointerType::get(rewriter.getContext()),
        rewriter.getI64Type()};
    for (const Argument &arg : args) {
      switch (arg.kind) {
      case Argument::Kind::Tensor:
        types.push_back(UnrankedMemRefType::get(arg.elementType, 0));
        break;
      case Argument::Kind::I64:
        types.push_back(rewriter.getI64Type());
        break;
      case Argument::Kind::F64:
        types.push_back(rewriter.getF64Type());
        break;
      }
    }
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(current);
    callee = func::FuncOp::create(
        rewriter, loc, symbol,
        rewriter.getFunctionType(types, rewriter.getI32Type()));
    callee.setPrivate();
    callee->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    rewriter.getUnitAttr());
    declared[symbol] = callee;
  }
  SmallVector<Value> operands = {
      ctx, arith::ConstantIntOp::create(rewriter, loc, nextNode++, 64)};
  const Value *scalar = scalars.begin();
  for (const Argument &arg : args) {
    if (arg.kind != Argument::Kind::Tensor) {
      operands.push_back(*scalar++);
      continue;
    }
    auto type = cast<MemRefType>(arg.view.getType());
    operands.push_back(memref::CastOp::create(
        rewriter, loc,
        UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
        arg.view));
  }
  nodeNames.push_back(describe(op));
  Value status = func::CallOp::create(rewriter, op->getLoc(), callee, operands)
                     .getResult(0);
  // Return the status at once when the kernel fails.
  Value zero = arith::ConstantIntOp::create(rewriter, op->getLoc(), 0, 32);
  Value ok = arith::CmpIOp::create(rewriter, op->getLoc(),
                                   arith::CmpIPredicate::eq, status, zero);
  Block *block = rewriter.getInsertionBlock();
  Block *next = rewriter.createBlock(block->getParent());
  rewriter.setInsertionPointToEnd(block);
  cf::CondBranchOp::create(rewriter, op->getLoc(), ok, next, ValueRange{},
                           failBlock, ValueRange{status});
  rewriter.setInsertionPointToStart(next);
  return success();
}

// The `call` overloads: each argument of Kernels.def, in its order, with the
// element type of its parameter (T for MEMFMT_IN/OUT).
#define MEMFMT_DTYPES_EXPAND(...) __VA_ARGS__
#define MEMFMT_DTYPE(T) #T,
#define MEMFMT_TENSOR_ARG(N, TYPE)                                             \
  arguments.push_back({Argument::Kind::Tensor, args.N.get(), TYPE});
#define MEMFMT_IN(N) MEMFMT_TENSOR_ARG(N, elementType)
#define MEMFMT_OUT(N) MEMFMT_TENSOR_ARG(N, elementType)
#define MEMFMT_OUT_I64(N) MEMFMT_TENSOR_ARG(N, rewriter.getI64Type())
#define MEMFMT_IN_I64(N) MEMFMT_TENSOR_ARG(N, rewriter.getI64Type())
#define MEMFMT_IN_F32(N) MEMFMT_TENSOR_ARG(N, rewriter.getF32Type())
#define MEMFMT_OUT_F32(N) MEMFMT_TENSOR_ARG(N, rewriter.getF32Type())
#define MEMFMT_I64(N)                                                          \
  arguments.push_back({Argument::Kind::I64, Value(), Type(), args.N.get()});
#define MEMFMT_F64(N)                                                          \
  arguments.push_back({Argument::Kind::F64, Value(), Type(), 0, args.N.get()});
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  LogicalResult RuntimeCallBuilder::call(Operation *op, Type elementType,      \
                                         const kernels::NAME &args) {          \
    static const StringRef dtypes[] = {MEMFMT_DTYPES_EXPAND DTYPES};           \
    SmallVector<Argument> arguments;                                           \
    ARGS return emitCall(op, #NAME, dtypes, elementType, arguments);           \
  }
#include "memfmt/runtime/Kernels.def"
#undef MEMFMT_DTYPES_EXPAND
#undef MEMFMT_DTYPE
#undef MEMFMT_TENSOR_ARG
#undef MEMFMT_IN
#undef MEMFMT_OUT
#undef MEMFMT_OUT_I64
#undef MEMFMT_IN_I64
#undef MEMFMT_IN_F32
#undef MEMFMT_OUT_F32
#undef MEMFMT_I64
#undef MEMFMT_F64
