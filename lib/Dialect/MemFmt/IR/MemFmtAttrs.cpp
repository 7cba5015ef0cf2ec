//===- MemFmtAttrs.cpp - memfmt attributes --------------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Parsing, printing and verification of #memfmt.strides, the tensor encoding
// that records a memory format as strides (DESIGN.md §2), and the
// #memfmt.memory_format enum attribute.
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
