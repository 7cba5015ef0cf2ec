//===- Report.cpp - Report the layout conversions left --------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-report lists every `memfmt.contiguous` in the module: where it is,
// the shape, from and to which format, the bytes it moves per run (read +
// write) and why it is there (the `memfmt.reason` a pass recorded, or
// "explicit in the input"), then the totals. Conversions that move no bytes
// (L3) and conversions of parameters (done once at load) are listed but not
// counted as runtime conversions. Permutes are counted apart: those that
// are views of their operand (no bytes) and those that copy, with the bytes
// they move. Output is text or JSON; the IR is not changed.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/Transforms/Conversions.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"
#include "memfmt/Support/OutputFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::memfmt {
#define GEN_PASS_DEF_REPORT
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"
} // namespace mlir::memfmt

using namespace mlir;
using namespace mlir::memfmt;

namespace {

StringRef kindName(ConversionKind kind) {
  switch (kind) {
  case ConversionKind::Runtime:
    return "runtime";
  case ConversionKind::Free:
    return "free (L3)";
  case ConversionKind::Parameter:
    return "parameter (load time)";
  }
  llvm_unreachable("unknown conversion kind");
}

std::string locationString(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

std::string shapeString(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(type.getShape(), os, "x");
  os << "x" << type.getElementType();
  return text;
}

/// One conversion of the report.
struct Entry {
  std::string location, shape, elementType, from, to, reason;
  ArrayRef<int64_t> dims;
  ConversionKind kind;
  int64_t bytes;
};

class ReportPass : public ::mlir::memfmt::impl::ReportBase<ReportPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Entry> entries;
    int64_t runtime = 0, free = 0, parameter = 0, bytes = 0;
    getOperation().walk([&](ContiguousOp op) {
      Entry e;
      e.kind = classifyConversion(op);
      e.bytes = e.kind == ConversionKind::Runtime ? conversionBytes(op) : 0;
      e.location = locationString(op.getLoc());
      e.shape = shapeString(op.getType());
      e.dims = op.getType().getShape();
      llvm::raw_string_ostream(e.elementType) << op.getType().getElementType();
      e.from = formatName(op.getInput().getType()).str();
      e.to = stringifyMemoryFormat(op.getMemoryFormat()).str();
      auto reason = op->getAttrOfType<StringAttr>(kReasonAttrName);
      e.reason = reason ? reason.getValue().str() : "explicit in the input";
      runtime += e.kind == ConversionKind::Runtime;
      free += e.kind == ConversionKind::Free;
      parameter += e.kind == ConversionKind::Parameter;
      bytes += e.bytes;
      entries.push_back(std::move(e));
    });

    // Permutes are views where the layout allows (no bytes), else copies.
    int64_t permuteViews = 0, permuteCopies = 0, permuteBytes = 0;
    getOperation().walk([&](PermuteOp op) {
      if (op.isBufferAlias()) {
        ++permuteViews;
        return;
      }
      ++permuteCopies;
      permuteBytes += copyBytes(op.getType());
    });

    std::string errorMessage;
    std::unique_ptr<llvm::ToolOutputFile> file;
    if (output != "-") {
      file = openOutputFile(output, &errorMessage);
      if (!file) {
        getOperation().emitError() << "memfmt-report: cannot write '"
                                   << output << "': " << errorMessage;
        return signalPassFailure();
      }
    }
    llvm::raw_ostream &os = file ? file->os() : llvm::errs();

    if (format == ReportFormat::Json) {
      llvm::json::Array list;
      for (const Entry &e : entries)
        list.push_back(llvm::json::Object{
            {"location", e.location},
            {"shape", llvm::json::Array(e.dims)},
            {"element_type", e.elementType},
            {"from", e.from},
            {"to", e.to},
            {"kind", kindName(e.kind)},
            {"bytes_per_run", e.bytes},
            {"reason", e.reason},
        });
      llvm::json::Object report{
          {"runtime_conversions", runtime},
          {"bytes_moved_per_run", bytes},
          {"free_conversions", free},
          {"parameter_conversions", parameter},
          {"conversions", std::move(list)},
          {"permute_views", permuteViews},
          {"permute_copies", permuteCopies},
          {"permute_bytes_per_run", permuteBytes},
      };
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
         << "\n";
    } else {
      os << "memfmt layout report: " << runtime << " runtime conversion(s), "
         << bytes << " bytes moved per run; " << free << " free (L3), "
         << parameter << " on parameters\n";
      for (auto [i, e] : llvm::enumerate(entries))
        os << "  #" << i + 1 << " " << kindName(e.kind) << ": " << e.from
           << " -> " << e.to << " " << e.shape << ", " << e.bytes
           << " bytes/run at " << e.location << "\n      why: " << e.reason
           << "\n";
      if (permuteViews + permuteCopies > 0)
        os << "  permutes: " << permuteViews << " view(s), no bytes moved; "
           << permuteCopies << " copy(ies), " << permuteBytes
           << " bytes moved per run\n";
    }
    if (!file)
      return;
    if (std::optional<std::string> error = mlir::memfmt::keepOutput(*file)) {
      getOperation().emitError()
          << "memfmt-report: cannot write '" << output << "': " << *error;
      signalPassFailure();
    }
  }
};

} // namespace
