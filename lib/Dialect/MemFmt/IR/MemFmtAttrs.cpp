//===- MemFmtAttrs.cpp - memfmt attributes --------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Parsing, printing and verification of #memfmt.strides, the tensor encoding
// that records a memory format as strides (DESIGN.md §2), and the
// #memfmt.memory_format enum attribute, and #memfmt.buffer, a value's place
// in the memory plan.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::memfmt;

#include "memfmt/Dialect/MemFmt/IR/MemFmtEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.cpp.inc"

void MemFmtDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// StridesAttr
//===----------------------------------------------------------------------===//

/// `<[` (int (`,` int)*)? `]>`: an empty list is the encoding of a rank-0
/// tensor.
Attribute StridesAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> strides;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(strides.emplace_back());
      }) ||
      parser.parseGreater())
    return {};
  return StridesAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), strides);
}

void StridesAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getStrides(), printer);
  printer << "]>";
}

LogicalResult
StridesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    ArrayRef<int64_t> strides) {
  for (auto [dim, stride] : llvm::enumerate(strides))
    if (stride < 0)
      return emitError() << "#memfmt.strides: stride " << stride
                         << " of dimension " << dim
                         << " is negative; strides count elements forward";
  return success();
}

LogicalResult StridesAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getStrides().size())
    return emitError() << "#memfmt.strides has " << getStrides().size()
                       << " strides but the tensor has rank " << shape.size();
  if (ShapedType::isDynamicShape(shape))
    return emitError()
           << "#memfmt.strides requires a static shape; the strides of a "
              "dynamic shape are not known";
  return success();
}

//===----------------------------------------------------------------------===//
// BufferAttr
//===----------------------------------------------------------------------===//

/// `<` kind (int, for input)? `, offset = ` int `, bytes = ` int `>`.
Attribute BufferAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  llvm::SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<BufferKind> kind = symbolizeBufferKind(keyword);
  if (!kind) {
    parser.emitError(kindLoc) << "#memfmt.buffer: unknown buffer '" << keyword
                              << "'; expected arena, weights or input";
    return {};
  }
  int64_t index = 0, offset = 0, bytes = 0;
  if ((*kind == BufferKind::Input && parser.parseInteger(index)) ||
      parser.parseComma() || parser.parseKeyword("offset") ||
      parser.parseEqual() || parser.parseInteger(offset) ||
      parser.parseComma() || parser.parseKeyword("bytes") ||
      parser.parseEqual() || parser.parseInteger(bytes) ||
      parser.parseGreater())
    return {};
  return BufferAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), *kind, index, offset, bytes);
}

void BufferAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyBufferKind(getKind());
  if (getKind() == BufferKind::Input)
    printer << " " << getIndex();
  printer << ", offset = " << getOffset() << ", bytes = " << getBytes() << ">";
}

LogicalResult BufferAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 BufferKind kind, int64_t index,
                                 int64_t offset, int64_t bytes) {
  if (index < 0 || offset < 0 || bytes < 0)
    return emitError() << "#memfmt.buffer: index, offset and bytes must be "
                          ">= 0, got "
                       << index << ", " << offset << " and " << bytes;
  if (kind != BufferKind::Input && index != 0)
    return emitError() << "#memfmt.buffer: only an input buffer has an index";
  return success();
}
