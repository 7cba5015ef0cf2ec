//===- MemFmtVjpInterface.td - Vector-Jacobian products ----*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// VjpOpInterface: each forward op declares its vector-Jacobian product, as
// PyTorch's derivatives.yaml does per ATen op: which of its operands and
// results carry gradients, and how to build its operands' gradients from its
// results' gradients out of the backward ops (MemFmtTrainingOps.td).
// memfmt-differentiate reads only this interface; it keeps no list of op
// names. The implementations are in lib/Dialect/MemFmt/IR/MemFmtVjp.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_VJP_INTERFACE_TD
#define MEMFMT_VJP_INTERFACE_TD

include "mlir/IR/OpBase.td"

def MemFmt_VjpOpInterface : OpInterface<"VjpOpInterface"> {
  let cppNamespace = "::mlir::memfmt";
  let description = [{
    Declares an op's vector-Jacobian product (reverse-mode derivative):

      * `isDifferentiableOperand` / `isDifferentiableResult`: whether a
        gradient flows through that operand or result at all. By default
        every floating-point tensor does and integer tensors (targets,
        indices) do not; `native_batch_norm` declares its running
        statistics and its saved / updated statistics non-differentiable.
        memfmt-differentiate's activity analysis reads these, so a running
        statistic never becomes a trainable weight.
      * `buildVjp`: given the gradients of the op's results (null where a
        result has no gradient) and which operands need one, builds the
        backward ops at the builder's insertion point and returns one value
        per operand: its gradient, or null where it was not asked for or is
        not differentiable. Each gradient has its primal's type, strides
        included (L9). An op whose derivative memfmt cannot build yet
        (a broadcasting `add`, plain `max_pool2d`) emits a located error
        saying why and returns failure.

    The VJP must compute nothing that was not asked for: an operand that
    does not need a gradient gets `output_mask` false, or no op at all.
  }];

  let methods = [
    InterfaceMethod<
      "True if a gradient flows to operand `index`.",
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), "",
      [{ return ::mlir::memfmt::isFloatTensor(
             $_op->getOperand(index).getType()); }]>,
    InterfaceMethod<
      "True if result `index` carries a gradient.",
      "bool", "isDifferentiableResult", (ins "unsigned":$index), "",
      [{ return ::mlir::memfmt::isFloatTensor(
             $_op->getResult(index).getType()); }]>,
    InterfaceMethod<
      "Builds the operands' gradients from the results' gradients "
      "(`resultGrads`, null where none) for the operands flagged in "
      "`operandNeedsGrad`; null where not needed or not differentiable.",
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::mlir::ArrayRef<bool>":$operandNeedsGrad)>,
  ];
}

#endif // MEMFMT_VJP_INTERFACE_TD
