//===- MemFmtDialect.td - The memfmt dialect ---------------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The memfmt dialect: ATen-named CNN ops on builtin ranked tensors whose
// encoding slot records the memory format as strides (#memfmt.strides).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_TD
#define MEMFMT_DIALECT_TD

include "mlir/IR/OpBase.td"

def MemFmt_Dialect : Dialect {
  let name = "memfmt";
  let cppNamespace = "::mlir::memfmt";
  let summary = "CNN ops on tensors whose memory format is a stride encoding";
  let description = [{
    Tensors are builtin ranked tensors. Their encoding attribute,
    `#memfmt.strides<[...]>`, records the strides (in elements) of the value's
    memory layout; a tensor without an encoding is contiguous (NCHW). The
    meaning of a tensor is always logical (NCHW): layouts change strides,
    never values (DESIGN.md rule L8).

    Ops carry ATen's names, operand order and attribute names, generalised
    where ONNX needs it (asymmetric padding). How each op treats layouts is
    declared on the op through `LayoutOpInterface`; the layout passes read
    nothing else.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class MemFmt_Op<string mnemonic, list<Trait> traits = []>
    : Op<MemFmt_Dialect, mnemonic, traits>;

#endif // MEMFMT_DIALECT_TD
