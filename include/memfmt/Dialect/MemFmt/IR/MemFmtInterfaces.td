//===- MemFmtInterfaces.td - How ops treat memory formats --*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// LayoutOpInterface: each op declares how it treats memory formats (rules
// L5, L6, L7 of DESIGN.md). The layout passes read only this interface; they
// keep no list of op names.
//
// InPlaceOpInterface: an op declares which operand buffers its results may
// take when it is lowered (its runtime kernel computes in place there). The
// memory plan reads only this interface.
//
// MixedPrecisionOpInterface: an op declares which of its tensors stay f32
// when it computes in a reduced precision (a training batch norm's
// statistics, the weight gradients the SGD update reads). The verifiers and
// memfmt-convert-precision read it.
//
// ElementCopyOpInterface: an op declares that it only moves operand 0's
// elements (a re-layout, reshape or element type conversion), when it moves
// no bytes at all, and when it is a pure layout copy. The memory plan, the
// lowering and memfmt-convert-precision read it instead of a list of op
// names.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_INTERFACES_TD
#define MEMFMT_INTERFACES_TD

include "mlir/IR/OpBase.td"

def MemFmt_LayoutOpInterface : OpInterface<"LayoutOpInterface"> {
  let cppNamespace = "::mlir::memfmt";
  let description = [{
    Declares how an op treats the memory formats of its tensors. An op that
    implements the interface accepts its operands in any layout (its kernels
    take general strides), so the layout passes may change the strides of its
    operands freely, except where a method below says otherwise:

      * `propagatesChannelsLast` (L5): if one 4-D or 5-D operand is
        channels-last, every 4-D or 5-D result is channels-last.
      * `requiresContiguousOperand` (L7): the operand must be contiguous
        (reshape, flatten); the passes make that conversion explicit.
      * `getPreservedOperand` (L6): the result's strides are the
        preserve_format strides of that operand. Gradients use it for L9
        (a gradient takes its primal's format, a weight's gradient the
        weight's), per result: `convolution_backward`'s grad_input follows
        `input` and its grad_weight follows `weight`.
      * `getPreservedStrides` (L6 for views): the strides a preserved
        result takes given its operand's strides: preserve_format's by
        default; `permute` takes them permuted where that is a supported
        format (its result is then a view and moves no bytes).
      * `getGradientOperandFormat` (L9): the format an incoming gradient
        operand must have, its primal's (`threshold_backward`'s grad_output
        takes `self`'s); memfmt-propagate-channels-last converts a gradient
        that arrives in another format (the inverse of a conversion the
        forward made), and the op's verifier requires it.
      * `isLayoutConversion`: the op is an explicit conversion; its result
        format is fixed by the op itself.
      * `isParameter`: the result is a parameter whose layout is chosen at
        compile time (re-laid once, never per run).

    Ops that do not implement the interface are assumed to need their operands
    exactly as typed: a pass that changes such an operand inserts a
    conversion back to the original type.
  }];

  let methods = [
    InterfaceMethod<
      "L5: a channels-last 4-D/5-D operand makes all 4-D/5-D results "
      "channels-last.",
      "bool", "propagatesChannelsLast", (ins), "",
      [{ return false; }]>,
    InterfaceMethod<
      "L7: operand `index` must be contiguous (NCHW order).",
      "bool", "requiresContiguousOperand", (ins "unsigned":$index), "",
      [{ return false; }]>,
    InterfaceMethod<
      "L6: the operand whose preserve_format strides result `index` takes, "
      "if any.",
      "std::optional<unsigned>", "getPreservedOperand",
      (ins "unsigned":$resultIndex), "",
      [{ return std::nullopt; }]>,
    InterfaceMethod<
      "L6: the strides result `resultIndex` takes when its preserved "
      "operand (getPreservedOperand) has `operandStrides`: by default "
      "preserve_format's (the operand's own when dense, L4's otherwise).",
      "::llvm::SmallVector<int64_t>", "getPreservedStrides",
      (ins "unsigned":$resultIndex,
           "::llvm::ArrayRef<int64_t>":$operandStrides), "",
      [{
        ::mlir::Value operand =
            $_op->getOperand(*$_op.getPreservedOperand(resultIndex));
        std::vector<int64_t> strides =
            ::memfmt::layout::preserveFormatStrides(
                ::llvm::cast<::mlir::RankedTensorType>(operand.getType())
                    .getShape(),
                operandStrides);
        return {strides.begin(), strides.end()};
      }]>,
    InterfaceMethod<
      "L9: the memory format operand `index` (an incoming gradient) must "
      "have, given the op's other operands (its primal's format); none "
      "where any format will do (not a gradient operand, or a primal in "
      "both formats, L3).",
      "std::optional<::mlir::memfmt::MemoryFormat>",
      "getGradientOperandFormat", (ins "unsigned":$index), "",
      [{ return std::nullopt; }]>,
    InterfaceMethod<
      "True for the explicit layout conversion op.",
      "bool", "isLayoutConversion", (ins), "",
      [{ return false; }]>,
    InterfaceMethod<
      "True if the single result is a parameter whose layout may be chosen "
      "at compile time.",
      "bool", "isParameter", (ins), "",
      [{ return false; }]>,
  ];
}

def MemFmt_InPlaceOpInterface : OpInterface<"InPlaceOpInterface"> {
  let cppNamespace = "::mlir::memfmt";
  let description = [{
    Declares, per result, the operands whose buffer the result may take once
    the op is lowered to its runtime kernel. For each such operand the kernel
    reads an element before it writes the same element of the result and
    never reads it again, so the memory plan (`memfmt-plan-memory`) may
    place the result in that operand's buffer when the operand dies at the
    op: its arena buffer, or for an op run at load time its weights-blob
    slot (runtime/lib/Validate.cpp accepts exactly these aliases, with
    identical shapes and strides, at run time):

      * `getInPlaceOperands`: the candidates for result `resultIndex`, the
        preferred one first.
      * `readsOperandsElementwise`: the kernel reads element `i` of every
        operand only to write element `i` of the result, so another operand
        of the result's very type may read the shared buffer as well
        (`add(x, x)`). When false, no other operand may (a convolution
        reads its input around each output element).

    Ops that do not implement the interface never share a buffer with an
    operand.
  }];

  let methods = [
    InterfaceMethod<
      "The operands whose buffer result `resultIndex` may take, preferred "
      "first.",
      "::llvm::SmallVector<::mlir::OpOperand *>", "getInPlaceOperands",
      (ins "unsigned":$resultIndex)>,
    InterfaceMethod<
      "True if every operand is read only at the element being written.",
      "bool", "readsOperandsElementwise", (ins)>,
  ];
}

//===----------------------------------------------------------------------===//
// Lowering: ops that only move elements
//===----------------------------------------------------------------------===//

def MemFmt_ElementCopyOpInterface : OpInterface<"ElementCopyOpInterface"> {
  let cppNamespace = "::mlir::memfmt";
  let description = [{
    Declares an op whose single result holds the elements of operand 0 in
    their logical order, only re-laid (other strides: `contiguous`, `clone`,
    `to`), re-shaped (`reshape`, `flatten`, which keep NCHW order, L7) or
    converted to another element type (`to`). It is lowered to the runtime's
    element-by-element `copy` (or a `cast_*` kernel for a type change), or
    to nothing at all:

      * `isBufferAlias`: the result describes exactly the bytes of operand 0
        (an L3 conversion, a reshape of a contiguous tensor). The memory plan
        gives the result operand 0's buffer and the lowering emits no call.
      * `getSourceView`: operand 0's bytes seen as a tensor of the result's
        shape and logical order: operand 0's type (the default), or its
        strides permuted (`permute`, which moves elements to other logical
        positions and is otherwise a copy like the others).
      * `getLayoutCopyFormat`: the op only re-lays operand 0 into a memory
        format (same shape and element type: `contiguous`, `clone`).
        memfmt-convert-precision turns such a copy at a function's entry or
        exit into one `memfmt.to` that converts layout and dtype together.
  }];

  let methods = [
    InterfaceMethod<
      "True if the result describes the very bytes of operand 0 (no kernel, "
      "no copy).",
      "bool", "isBufferAlias", (ins)>,
    InterfaceMethod<
      "Operand 0's bytes as a tensor of the result's shape whose logical "
      "order is the result's (the copy's source).",
      "::mlir::RankedTensorType", "getSourceView", (ins), "",
      [{
        return ::llvm::cast<::mlir::RankedTensorType>(
            $_op->getOperand(0).getType());
      }]>,
    InterfaceMethod<
      "The memory format the op re-lays operand 0 into, if that is all it "
      "does (no reshape, no element type change).",
      "std::optional<::mlir::memfmt::MemoryFormat>", "getLayoutCopyFormat",
      (ins), "", [{ return std::nullopt; }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Mixed precision: tensors that stay f32
//===----------------------------------------------------------------------===//

def MemFmt_MixedPrecisionOpInterface
    : OpInterface<"MixedPrecisionOpInterface"> {
  let cppNamespace = "::mlir::memfmt";
  let description = [{
    Declares the floating-point tensors of an op that are f32 whatever
    element type the op computes in, as automatic mixed precision keeps
    them: a training batch norm's parameters, batch statistics and running
    statistics; the weight and bias gradients of the backward ops (what the
    f32 SGD update reads); the loss and the optimizer state. Their kernels
    take them as `MEMFMT_IN_F32` / `MEMFMT_OUT_F32` (Kernels.def). Every other
    floating-point tensor of the op has one element type, the op's compute
    type (f32, or bf16 in a mixed-precision training step).

      * `isF32Operand`, `isF32Result`: whether operand or result `index` is
        one of those f32 tensors.

    The verifiers check both rules (OpVerification.cpp, verifyCommon), and
    memfmt-convert-precision keeps these tensors f32. Ops that do not
    implement the interface have one element type for all their
    floating-point tensors.
  }];

  let methods = [
    InterfaceMethod<
      "True if operand `index` is f32 whatever the op computes in.",
      "bool", "isF32Operand", (ins "unsigned":$index)>,
    InterfaceMethod<
      "True if result `index` is f32 whatever the op computes in.",
      "bool", "isF32Result", (ins "unsigned":$index)>,
  ];
}

//===----------------------------------------------------------------------===//
// Batch tiling: ops that compute each sample alone
//===----------------------------------------------------------------------===//

def MemFmt_PerSampleOpInterface : OpInterface<"PerSampleOpInterface"> {
  let cppNamespace = "::mlir::memfmt";
  let description = [{
    Declares an op that computes each sample of a batch on its own: sample
    `n` (index `n` of dim 0) of every result depends only on sample `n` of
    the operands whose dim 0 is the batch, and on the whole of its other
    operands (weights, a `[1, C, 1, 1]` scale). Running such an op on the
    slice `[n0, n1)` of its batched operands computes exactly the slice
    `[n0, n1)` of its results, which is what memfmt-tile-batch relies on to
    run the first layers of an inference model one sub-batch at a time.
    Batch norm in training mode, which reduces over the batch, is not such
    an op; nor is an op that mixes dim 0 with another dimension.

      * `computesPerSample`: true for every instance by default; ops whose
        attributes may touch dim 0 (a softmax, a slice, a reshape) say
        when.
      * `isSampleOperand`: whether operand `index` is indexed by sample
        along its dim 0 when that dim is the batch (the operands of an
        elementwise op or a concatenation, a convolution's residual), as
        opposed to read whole by every sample (a weight, whose dim 0 is
        something else). By default only operand 0 is.
  }];

  let methods = [
    InterfaceMethod<
      "True if each sample (index of dim 0) is computed from that sample "
      "alone.",
      "bool", "computesPerSample", (ins), "", [{ return true; }]>,
    InterfaceMethod<
      "True if operand `index` is indexed by sample along dim 0 (when dim 0 "
      "is the batch), false if every sample reads all of it.",
      "bool", "isSampleOperand", (ins "unsigned":$index), "",
      [{ return index == 0; }]>,
  ];
}

#endif // MEMFMT_INTERFACES_TD
