//===- MemFmtAttrs.td - memfmt attributes ------------------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The stride encoding of tensor types and the memory_format enum; the
// buffer a value is planned into (#memfmt.buffer, written by
// memfmt-plan-memory and read by the lowering to runtime calls).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_ATTRS_TD
#define MEMFMT_ATTRS_TD

include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/TensorEncoding.td"

def MemFmt_StridesAttr : AttrDef<MemFmt_Dialect, "Strides",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "strides";
  let summary = "the strides, in elements, of a tensor's memory layout";
  let description = [{
    The encoding of a ranked tensor type that records its memory format as
    strides, one per dimension, in elements (DESIGN.md §2). A tensor without
    this encoding is contiguous. The memory format is a function of the
    strides (L1, L2); a dimension of size 1 may have any stride.

    ```mlir
    // 8x64x56x56 in channels-last order (NHWC in memory).
    tensor<8x64x56x56xf32, #memfmt.strides<[200704, 1, 3584, 64]>>
    ```

    The encoding is verified with the tensor type: the number of strides
    must equal the rank, strides must be non-negative and the shape static.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "strides in elements">:$strides);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def MemFmt_MemoryFormat : I32EnumAttr<"MemoryFormat",
    "a memory format, or the request to preserve one (L2, L6)", [
      I32EnumAttrCase<"Contiguous", 0, "contiguous">,
      I32EnumAttrCase<"ChannelsLast", 1, "channels_last">,
      I32EnumAttrCase<"Preserve", 2, "preserve">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::memfmt";
}

def MemFmt_MemoryFormatAttr : EnumAttr<MemFmt_Dialect, MemFmt_MemoryFormat,
                                       "memory_format"> {
  let summary = "memory format: contiguous, channels_last or preserve";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

/// The activations a `memfmt.fused_conv2d` epilogue applies besides relu:
/// its `activation` string is one of these names (the elementwise ops
/// memfmt-fuse-conv folds into a convolution, gelu by approximation). The
/// verifier, the fusion and the lowering all read the names from here.
def MemFmt_ConvActivation : I32EnumAttr<"ConvActivation",
    "an activation of a fused convolution's epilogue", [
      I32EnumAttrCase<"Sigmoid", 0, "sigmoid">,
      I32EnumAttrCase<"Silu", 1, "silu">,
      I32EnumAttrCase<"Hardswish", 2, "hardswish">,
      I32EnumAttrCase<"Hardsigmoid", 3, "hardsigmoid">,
      I32EnumAttrCase<"Clamp", 4, "clamp">,
      I32EnumAttrCase<"Gelu", 5, "gelu">,
      I32EnumAttrCase<"GeluTanh", 6, "gelu_tanh">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::memfmt";
}

//===----------------------------------------------------------------------===//
// The memory plan
//===----------------------------------------------------------------------===//

def MemFmt_BufferKind : I32EnumAttr<"BufferKind",
    "the buffer of a compiled model that holds a value", [
      I32EnumAttrCase<"Arena", 0, "arena">,
      I32EnumAttrCase<"Weights", 1, "weights">,
      I32EnumAttrCase<"Input", 2, "input">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::memfmt";
}

def MemFmt_BufferAttr : AttrDef<MemFmt_Dialect, "Buffer"> {
  let mnemonic = "buffer";
  let summary = "where the memory plan puts a value";
  let description = [{
    The home of one tensor value of a compiled function, chosen by
    `memfmt-plan-memory`: the activation `arena`, the `weights` blob (with
    the results of load-time ops), or the caller's `input` buffer number
    `index`, at byte `offset`, spanning `bytes` (the value's strided span).
    Values that share bytes (aliases, results computed in place) have the
    same buffer and offset.

    ```mlir
    #memfmt.buffer<arena, offset = 1024, bytes = 4096>
    #memfmt.buffer<weights, offset = 0, bytes = 64>
    #memfmt.buffer<input 0, offset = 0, bytes = 480>
    ```
  }];
  let parameters = (ins
    EnumParameter<MemFmt_BufferKind>:$kind,
    "int64_t":$index,
    "int64_t":$offset,
    "int64_t":$bytes);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // MEMFMT_ATTRS_TD
