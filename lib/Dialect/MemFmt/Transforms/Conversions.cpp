//===- Conversions.cpp - Creating and classifying layout conversions ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements Conversions.h.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/Transforms/Conversions.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

using namespace mlir;
using namespace mlir::memfmt;
namespace layout = ::memfmt::layout;

ContiguousOp mlir::memfmt::createConversion(OpBuilder &builder, Location loc,
                                            Value value, MemoryFormat format,
                                            StringRef reason) {
  auto op = ContiguousOp::create(builder, loc, value, format);
  op->setAttr(kReasonAttrName, builder.getStringAttr(reason));
  return op;
}

ConversionKind mlir::memfmt::classifyConversion(ContiguousOp op) {
  if (haveSameBytes(op.getInput().getType(), op.getType()))
    return ConversionKind::Free;
  if (auto source = op.getInput().getDefiningOp<LayoutOpInterface>())
    if (source.isParameter())
      return ConversionKind::Parameter;
  return ConversionKind::Runtime;
}

int64_t mlir::memfmt::copyBytes(RankedTensorType type) {
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  return 2 * type.getNumElements() * elementBytes;
}

int64_t mlir::memfmt::conversionBytes(ContiguousOp op) {
  return copyBytes(op.getType());
}

StringRef mlir::memfmt::formatName(RankedTensorType type) {
  SmallVector<int64_t> strides = getStrides(type);
  if (layout::isContiguous(type.getShape(), strides))
    return "contiguous";
  if (layout::isChannelsLastContiguous(type.getShape(), strides))
    return "channels_last";
  return "strided";
}
