//===- ParseMLIR.cpp - Reading memfmt IR from text, with a depth guard ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The nesting scan and the guarded parse of Import/MLIR.h. The scan is a
// lexer's view, not a parser's: a stack of the open brackets, where a
// closing bracket pops only its own kind (unbalanced text is the parser's
// to report), strings ("..." with backslash escapes) and comments are
// skipped, and the '>' of "->" closes nothing.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Import/MLIR.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/SourceMgr.h"

#include <vector>

using namespace mlir;

int64_t memfmt::findExcessiveNesting(llvm::StringRef text, unsigned maxDepth) {
  std::vector<char> open;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      // A string literal: up to the next unescaped quote (or the end).
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i < e && text[i] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      open.push_back(c);
      if (open.size() > maxDepth)
        return static_cast<int64_t>(i);
      break;
    case ')':
    case ']':
    case '}':
    case '>': {
      if (c == '>' && i > 0 && text[i - 1] == '-')
        break;
      char opener = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '<';
      if (!open.empty() && open.back() == opener)
        open.pop_back();
      break;
    }
    default:
      break;
    }
  }
  return -1;
}

OwningOpRef<ModuleOp> memfmt::parseMLIRModule(llvm::SourceMgr &sourceMgr,
                                              const ParserConfig &config) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  int64_t at = findExcessiveNesting(buffer->getBuffer(), kMaxMLIRNesting);
  if (at >= 0) {
    auto [line, column] = sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(buffer->getBufferStart() + at));
    Location loc = FileLineColLoc::get(config.getContext(),
                                       buffer->getBufferIdentifier(), line,
                                       column);
    emitError(loc) << "brackets nest deeper than " << kMaxMLIRNesting
                   << " levels here; memfmt does not parse IR nested this "
                      "deep";
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(sourceMgr, config);
}
