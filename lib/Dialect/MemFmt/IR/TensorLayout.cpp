//===- TensorLayout.cpp - Memory formats of tensor types ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Implements TensorLayout.h on top of the stride library.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

using namespace mlir;
using namespace mlir::memfmt;
namespace layout = ::memfmt::layout;

SmallVector<int64_t> mlir::memfmt::getStrides(RankedTensorType type) {
  if (auto strides = dyn_cast_or_null<StridesAttr>(type.getEncoding()))
    return SmallVector<int64_t>(strides.getStrides());
  auto contiguous = layout::contiguousStrides(type.getShape());
  return SmallVector<int64_t>(contiguous.begin(), contiguous.end());
}

MemoryFormat mlir::memfmt::getMemoryFormat(RankedTensorType type) {
  return fromLayoutFormat(
      layout::suggestMemoryFormat(type.getShape(), getStrides(type)));
}

bool mlir::memfmt::isChannelsLast(RankedTensorType type) {
  return getMemoryFormat(type) == MemoryFormat::ChannelsLast;
}

bool mlir::memfmt::isContiguous(RankedTensorType type) {
  return layout::isContiguous(type.getShape(), getStrides(type));
}

bool mlir::memfmt::hasChannelsLastFormat(RankedTensorType type) {
  return layout::hasChannelsLastFormat(type.getRank());
}

RankedTensorType mlir::memfmt::getFormattedType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || !hasChannelsLastFormat(type))
    return {};
  return type;
}

RankedTensorType mlir::memfmt::getTypeWithStrides(RankedTensorType type,
                                                  ArrayRef<int64_t> strides) {
  auto contiguous = layout::contiguousStrides(type.getShape());
  if (strides == ArrayRef<int64_t>(contiguous))
    return RankedTensorType::get(type.getShape(), type.getElementType());
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               StridesAttr::get(type.getContext(), strides));
}

RankedTensorType mlir::memfmt::getTypeInFormat(RankedTensorType type,
                                               MemoryFormat format) {
  auto strides = layout::stridesForFormat(toLayoutFormat(format),
                                          type.getShape());
  if (strides.empty() && type.getRank() != 0)
    return {};
  return getTypeWithStrides(type, strides);
}

bool mlir::memfmt::haveSameBytes(RankedTensorType lhs, RankedTensorType rhs) {
  return lhs.getShape() == rhs.getShape() &&
         lhs.getElementType() == rhs.getElementType() &&
         layout::sameBytes(lhs.getShape(), getStrides(lhs), getStrides(rhs));
}

layout::MemoryFormat mlir::memfmt::toLayoutFormat(MemoryFormat format) {
  switch (format) {
  case MemoryFormat::Contiguous:
    return layout::MemoryFormat::Contiguous;
  case MemoryFormat::ChannelsLast:
    return layout::MemoryFormat::ChannelsLast;
  case MemoryFormat::Preserve:
    return layout::MemoryFormat::Preserve;
  }
  llvm_unreachable("unknown memory format");
}

MemoryFormat mlir::memfmt::fromLayoutFormat(layout::MemoryFormat format) {
  switch (format) {
  case layout::MemoryFormat::Contiguous:
    return MemoryFormat::Contiguous;
  case layout::MemoryFormat::ChannelsLast:
    return MemoryFormat::ChannelsLast;
  case layout::MemoryFormat::Preserve:
    return MemoryFormat::Preserve;
  }
  llvm_unreachable("unknown memory format");
}
