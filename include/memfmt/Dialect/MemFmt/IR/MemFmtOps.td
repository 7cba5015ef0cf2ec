//===- MemFmtOps.td - memfmt ops ---------------------------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The forward ops of DESIGN.md §2 with ATen's names, operand order and
// attribute names. Each op declares its layout behaviour through
// LayoutOpInterface; verifiers cite the layout rules (L1-L8) they enforce.
// The training and backward ops (L9) are in MemFmtTrainingOps.td, included
// at the end.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_OPS_TD
#define MEMFMT_OPS_TD

include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.td"
include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.td"
include "memfmt/Dialect/MemFmt/IR/MemFmtInterfaces.td"
include "memfmt/Dialect/MemFmt/IR/MemFmtVjpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type and attribute constraints
//===----------------------------------------------------------------------===//

def MemFmt_Float : AnyTypeOf<[F32, F16, BF16]>;
def MemFmt_Tensor : RankedTensorOf<[F32, F16, BF16]>;
def MemFmt_Tensor1D : TensorRankOf<[F32, F16, BF16], [1]>;
def MemFmt_Tensor4D : TensorRankOf<[F32, F16, BF16], [4]>;
def MemFmt_IndicesTensor4D : TensorRankOf<[I64], [4]>;
/// Any tensor an explicit conversion may move: data or indices.
def MemFmt_AnyTensor : RankedTensorOf<[F32, F16, BF16, I64]>;
// An optimizer's step count (sgd_update's `step`).
def MemFmt_StepTensor0D : TensorRankOf<[I64], [0]>;
// A model state tensor: a parameter, optimizer state, or a step count.
def MemFmt_StateTensor : AnyTypeOf<[MemFmt_Tensor, MemFmt_StepTensor0D],
    "float tensor or 0-d i64 tensor", "::mlir::RankedTensorType">;

def MemFmt_I64Pair1 : DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
def MemFmt_I64Pair0 : DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">;
def MemFmt_I64List : DefaultValuedAttr<DenseI64ArrayAttr, "{}">;
def MemFmt_FormatDefaultPreserve : DefaultValuedAttr<MemFmt_MemoryFormatAttr,
    "::mlir::memfmt::MemoryFormat::Preserve">;

/// Ops with this trait implement the L5 propagation rule.
defvar PropagatesL5 = DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                                                ["propagatesChannelsLast"]>;
/// Ops with this trait take any layout and fix nothing about their results.
defvar AnyLayout = DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface>;
/// Ops with this trait name the operands whose buffer their result may take.
defvar InPlace = DeclareOpInterfaceMethods<MemFmt_InPlaceOpInterface>;
/// Ops with this trait only move operand 0's elements (ElementCopyOpInterface).
defvar ElementCopy = DeclareOpInterfaceMethods<MemFmt_ElementCopyOpInterface>;
/// ... and only re-lay it into their `memory_format` (a pure layout copy).
defvar LayoutCopy = DeclareOpInterfaceMethods<MemFmt_ElementCopyOpInterface,
                                              ["getLayoutCopyFormat"]>;
/// Ops with this trait declare their vector-Jacobian product (MemFmtVjp.cpp).
defvar Vjp = DeclareOpInterfaceMethods<MemFmt_VjpOpInterface>;
/// Ops with this trait compute each sample of the batch alone (always).
defvar PerSample = MemFmt_PerSampleOpInterface;
/// ... or only for some attributes, which the op checks.
defvar PerSampleIf = DeclareOpInterfaceMethods<MemFmt_PerSampleOpInterface,
                                               ["computesPerSample"]>;
/// ... always, reading every operand by sample (elementwise ops).
defvar PerSampleOperands = DeclareOpInterfaceMethods<
    MemFmt_PerSampleOpInterface, ["isSampleOperand"]>;
/// ... for some attributes, reading every operand by sample (cat).
defvar PerSampleIfOperands = DeclareOpInterfaceMethods<
    MemFmt_PerSampleOpInterface, ["computesPerSample", "isSampleOperand"]>;

//===----------------------------------------------------------------------===//
// Convolution and normalisation
//===----------------------------------------------------------------------===//

def MemFmt_Conv2dOp : MemFmt_Op<"conv2d", [Pure, PropagatesL5, Vjp,
                                           PerSample]> {
  let summary = "2-D convolution (aten::conv2d)";
  let description = [{
    `output = conv2d(input, weight) + bias`, with input `[N, C, H, W]`,
    weight `[O, C / groups, KH, KW]` and optional bias `[O]`. `padding` has
    2 values (symmetric, ATen) or 4 (top, left, bottom, right, as ONNX). By
    L5 the result is channels-last if the input *or* the weight is.

    ```mlir
    %y = memfmt.conv2d %x, %w {stride = array<i64: 2, 2>,
                               padding = array<i64: 3, 3>}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>)
        -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$input, MemFmt_Tensor4D:$weight,
                       Optional<MemFmt_Tensor1D>:$bias,
                       MemFmt_I64Pair1:$stride,
                       MemFmt_I64Pair0:$padding,
                       MemFmt_I64Pair1:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs MemFmt_Tensor4D:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    `(` type($input) `,` type($weight) (`,` type($bias)^)? `)` `->`
    type($output)
  }];
  let hasVerifier = 1;
}

def MemFmt_FusedConv2dOp : MemFmt_Op<"fused_conv2d", [Pure, PropagatesL5,
    InPlace, AttrSizedOperandSegments, Vjp, PerSampleOperands]> {
  let summary = "convolution with fused bias, residual add and activation";
  let description = [{
    `output = act(conv2d(input, weight) + bias + residual)`, where `act` is
    relu when `relu` is set, the elementwise op `activation` names when it
    is set (`sigmoid`, `silu`, `hardswish`, `gelu`, `gelu_tanh`;
    `hardsigmoid` with `activation_alpha` and `activation_beta` as its
    `alpha` and `beta`; `clamp` with them as `min` and `max`, each optional),
    and the identity otherwise. Produced by `memfmt-fuse-conv` from conv2d /
    add / activation chains (oneDNN post-ops and cuDNN's fused convolution
    serve it); attributes as for `memfmt.conv2d`.

    ```mlir
    %y = memfmt.fused_conv2d %x, %w, %b, %r {relu = true}
        : tensor<1x64x56x56xf32>, tensor<64x64x1x1xf32> bias tensor<64xf32>
          residual tensor<1x64x56x56xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$input, MemFmt_Tensor4D:$weight,
                       Optional<MemFmt_Tensor1D>:$bias,
                       Optional<MemFmt_Tensor4D>:$residual,
                       MemFmt_I64Pair1:$stride,
                       MemFmt_I64Pair0:$padding,
                       MemFmt_I64Pair1:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<BoolAttr, "false">:$relu,
                       OptionalAttr<StrAttr>:$activation,
                       OptionalAttr<F64Attr>:$activation_alpha,
                       OptionalAttr<F64Attr>:$activation_beta);
  let results = (outs MemFmt_Tensor4D:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`residual` $residual^)? attr-dict `:`
    type($input) `,` type($weight) (`bias` type($bias)^)?
    (`residual` type($residual)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

def MemFmt_FoldBatchNormOp : MemFmt_Op<"fold_batch_norm", [Pure, PropagatesL5,
                                                           InPlace]> {
  let summary = "a convolution's weight and bias with a batch norm folded in";
  let description = [{
    For a convolution weight `[O, I, KH, KW]`, optional bias `[O]` and an
    inference batch norm over its `O` output channels:
    `scale = gamma / sqrt(running_var + eps)`,
    `new_weight = weight * scale` (per output channel) and
    `new_bias = (bias - running_mean) * scale + beta` (bias 0 when absent).
    `memfmt-fuse-conv` creates it on parameters only, so the lowering
    computes it once when the model is loaded, never per run.

    ```mlir
    %w2, %b2 = memfmt.fold_batch_norm %w, %g, %b, %m, %v {eps = 1.0e-05 : f64}
        : tensor<64x3x7x7xf32>, tensor<64xf32>, tensor<64xf32>,
          tensor<64xf32>, tensor<64xf32> -> tensor<64x3x7x7xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$weight,
                       Optional<MemFmt_Tensor1D>:$bias,
                       MemFmt_Tensor1D:$gamma, MemFmt_Tensor1D:$beta,
                       MemFmt_Tensor1D:$running_mean,
                       MemFmt_Tensor1D:$running_var,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs MemFmt_Tensor4D:$new_weight, MemFmt_Tensor1D:$new_bias);
  let assemblyFormat = [{
    $weight (`bias` $bias^)? `,` $gamma `,` $beta `,` $running_mean `,`
    $running_var attr-dict `:` type($weight) `,` (`bias` type($bias)^ `,`)?
    type($gamma) `,` type($beta) `,` type($running_mean) `,`
    type($running_var) `->` type($new_weight) `,` type($new_bias)
  }];
  let hasVerifier = 1;
}

def MemFmt_BatchNormOp : MemFmt_Op<"batch_norm", [Pure, PropagatesL5,
                                                 InPlace, PerSample]> {
  let summary = "batch normalisation (aten::batch_norm)";
  let description = [{
    Normalises over dim 1 with per-channel `weight`, `bias`, `running_mean`
    and `running_var`, all of shape `[C]`. Only inference (`training =
    false`) can be lowered today; the attribute is kept for fidelity.

    ```mlir
    %y = memfmt.batch_norm %x, %g, %b, %m, %v {eps = 1.0e-05 : f64}
        : tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>,
          tensor<64xf32>, tensor<64xf32> -> tensor<8x64x56x56xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, MemFmt_Tensor1D:$weight,
                       MemFmt_Tensor1D:$bias, MemFmt_Tensor1D:$running_mean,
                       MemFmt_Tensor1D:$running_var,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                       DefaultValuedAttr<BoolAttr, "false">:$training);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `,` $running_mean `,` $running_var attr-dict
    `:` type($input) `,` type($weight) `,` type($bias) `,`
    type($running_mean) `,` type($running_var) `->` type($output)
  }];
  let hasVerifier = 1;
}

def MemFmt_LayerNormOp : MemFmt_Op<"layer_norm", [Pure, PropagatesL5,
                                                 InPlace, PerSampleIf, Vjp,
                                                 AttrSizedOperandSegments]> {
  let summary = "layer normalisation over the last dimension (aten::layer_norm)";
  let description = [{
    Normalises each run of `normalized_shape = [D]` elements along the last
    dimension: `(x - mean) / sqrt(var + eps) * weight + bias`, with the
    biased variance; `weight` and `bias` are `[D]` and optional. Any layout
    (the kernel takes general strides); the result has the input's format
    (L5). ConvNeXt normalises over channels by permuting to `[N, H, W, C]`
    first: in a channels-last build that permute is a view (see
    `memfmt.permute`), so this op reads channels-last bytes directly.

    ```mlir
    %y = memfmt.layer_norm %x, %w, %b {normalized_shape = array<i64: 96>,
                                       eps = 1.0e-06 : f64}
        : tensor<1x56x56x96xf32> weight tensor<96xf32> bias tensor<96xf32>
        -> tensor<1x56x56x96xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input,
                       Optional<MemFmt_Tensor1D>:$weight,
                       Optional<MemFmt_Tensor1D>:$bias,
                       DenseI64ArrayAttr:$normalized_shape,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` type($input)
    (`weight` type($weight)^)? (`bias` type($bias)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

def MemFmt_SoftmaxOp : MemFmt_Op<"softmax", [Pure, PropagatesL5, InPlace,
                                             PerSampleIf, Vjp]> {
  let summary = "softmax along one dimension (aten::_softmax)";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along dimension `dim`
    (`0 <= dim < rank`; the importer resolves negative axes), accumulated in
    f32. Any layout (the kernel takes general strides); the result has the
    input's format (L5), so a softmax over the channels of a channels-last
    tensor reads its rows in place. Attention (ViT) applies it to the last
    dimension of its `[heads, tokens, tokens]` scores.

    ```mlir
    %p = memfmt.softmax %s {dim = 2 : i64}
        : tensor<12x197x197xf32> -> tensor<12x197x197xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, I64Attr:$dim);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def MemFmt_ReluOp : MemFmt_Op<"relu", [Pure, PropagatesL5, InPlace, Vjp,
                                       PerSample]> {
  let summary = "max(x, 0) (aten::relu)";
  let description = [{
    ```mlir
    %y = memfmt.relu %x : tensor<8x64x56x56xf32> -> tensor<8x64x56x56xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def MemFmt_AddOp : MemFmt_Op<"add", [Pure, PropagatesL5, InPlace, Vjp,
                                     PerSampleOperands]> {
  let summary = "elementwise sum with broadcasting (aten::add)";
  let description = [{
    `output = self + other` with NumPy broadcasting. By L5 the result is
    channels-last if either operand is, whatever their order. A 1-D bias
    added to a bias-free `memfmt.linear` (directly, or through the reshape
    of an N-D MatMul), its only user, canonicalizes to the linear's bias.

    ```mlir
    %z = memfmt.add %x, %y : tensor<8x256x56x56xf32>, tensor<8x256x56x56xf32>
        -> tensor<8x256x56x56xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$self, MemFmt_Tensor:$other);
  let results = (outs MemFmt_Tensor:$output);
  let hasCanonicalizer = 1;
  let assemblyFormat = [{
    $self `,` $other attr-dict `:` type($self) `,` type($other) `->`
    type($output)
  }];
  let hasVerifier = 1;
}

/// An elementwise function of one tensor (ATen's name and formula); the
/// result has the input's shape and, by L5, its format.
class MemFmt_UnaryElementwiseOp<string mnemonic, string formula,
                                list<Trait> traits = []>
    : MemFmt_Op<mnemonic, !listconcat([Pure, PropagatesL5, InPlace,
                                         PerSample, Vjp], traits)> {
  let summary = formula # " (aten::" # mnemonic # ")";
  let arguments = (ins MemFmt_Tensor:$input);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyUnaryElementwise(*this);
    }
    bool $cppClass::propagatesChannelsLast() { return true; }
    ::llvm::SmallVector<::mlir::OpOperand *>
    $cppClass::getInPlaceOperands(unsigned) {
      return {&getOperation()->getOpOperand(0)};
    }
    bool $cppClass::readsOperandsElementwise() { return true; }
  }];
}

def MemFmt_SigmoidOp : MemFmt_UnaryElementwiseOp<"sigmoid",
    "1 / (1 + exp(-x))">;

def MemFmt_SiluOp : MemFmt_UnaryElementwiseOp<"silu", "x * sigmoid(x)">;

def MemFmt_HardswishOp : MemFmt_UnaryElementwiseOp<"hardswish",
    "x * relu6(x + 3) / 6">;

def MemFmt_HardsigmoidOp : MemFmt_UnaryElementwiseOp<"hardsigmoid",
    "clamp(alpha * x + beta, 0, 1)"> {
  let description = [{
    ATen's hardsigmoid is `relu6(x + 3) / 6`: the defaults `alpha = 1/6`,
    `beta = 1/2`. ONNX's HardSigmoid gives other values.
  }];
  let arguments = (ins MemFmt_Tensor:$input,
                   DefaultValuedAttr<F64Attr, "1.0 / 6.0">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.5">:$beta);
}

def MemFmt_ClampOp : MemFmt_UnaryElementwiseOp<"clamp",
    "min(max(x, min), max)"> {
  let description = [{
    Either bound may be absent; NaN stays NaN (as in ATen). ReLU6 is
    `clamp {min = 0.0, max = 6.0}`.

    ```mlir
    %y = memfmt.clamp %x {min = 0.0 : f64, max = 6.0 : f64}
        : tensor<1x32x112x112xf32> -> tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
}

def MemFmt_GeluOp : MemFmt_UnaryElementwiseOp<"gelu",
    "x * Phi(x), exactly (erf) or by tanh"> {
  let arguments = (ins MemFmt_Tensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
}

/// An elementwise function of two tensors with NumPy broadcasting (ATen's
/// name); by L5 the result is channels-last if either operand is.
class MemFmt_BinaryElementwiseOp<string mnemonic, string formula>
    : MemFmt_Op<mnemonic, [Pure, PropagatesL5, InPlace,
                           PerSampleOperands, Vjp]> {
  let summary = formula # " with broadcasting (aten::" # mnemonic # ")";
  let arguments = (ins MemFmt_Tensor:$self, MemFmt_Tensor:$other);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = [{
    $self `,` $other attr-dict `:` type($self) `,` type($other) `->`
    type($output)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyBroadcastElementwise(*this);
    }
    bool $cppClass::propagatesChannelsLast() { return true; }
    /// Either operand; a broadcast one never has the result's type, so the
    /// memory plan passes it over.
    ::llvm::SmallVector<::mlir::OpOperand *>
    $cppClass::getInPlaceOperands(unsigned) {
      return {&getOperation()->getOpOperand(0),
              &getOperation()->getOpOperand(1)};
    }
    bool $cppClass::readsOperandsElementwise() { return true; }
  }];
}

def MemFmt_MulOp : MemFmt_BinaryElementwiseOp<"mul", "self * other"> {
  let description = [{
    A squeeze-excite scale `[N, C, 1, 1]` times a channels-last
    `[N, C, H, W]` activation is channels-last with no conversion: the
    scale is in both formats at once (L3). `x * sigmoid(x)` (how exporters
    write SiLU below ONNX opset 22) canonicalizes to `memfmt.silu`.
  }];
  let hasCanonicalizer = 1;
}
def MemFmt_SubOp : MemFmt_BinaryElementwiseOp<"sub", "self - other">;
def MemFmt_DivOp : MemFmt_BinaryElementwiseOp<"div", "self / other">;

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

class MemFmt_MaxPoolOp<string mnemonic, dag resultList>
    : MemFmt_Op<mnemonic, [Pure, PropagatesL5, Vjp, PerSample]> {
  let arguments = (ins MemFmt_Tensor4D:$input,
                       DenseI64ArrayAttr:$kernel_size,
                       MemFmt_I64List:$stride,
                       MemFmt_I64Pair0:$padding,
                       MemFmt_I64Pair1:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = resultList;
  let hasVerifier = 1;
}

def MemFmt_MaxPool2dOp : MemFmt_MaxPoolOp<"max_pool2d",
                                          (outs MemFmt_Tensor4D:$output)> {
  let summary = "2-D max pooling (aten::max_pool2d)";
  let description = [{
    An empty `stride` means `kernel_size` (ATen). `padding` has 2 or 4
    values (top, left, bottom, right); padded positions never win.

    ```mlir
    %y = memfmt.max_pool2d %x {kernel_size = array<i64: 3, 3>,
        stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
        : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
    ```
  }];
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def MemFmt_MaxPool2dWithIndicesOp : MemFmt_MaxPoolOp<"max_pool2d_with_indices",
    (outs MemFmt_Tensor4D:$output, MemFmt_IndicesTensor4D:$indices)> {
  let summary = "2-D max pooling returning argmax indices "
                "(aten::max_pool2d_with_indices)";
  let description = [{
    Like `memfmt.max_pool2d`; `indices` holds, per output element, the flat
    index `h * W + w` of the winner in its input plane. By L5 both results
    are channels-last when the input is, as in PyTorch.

    ```mlir
    %y, %i = memfmt.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>}
        : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>, tensor<1x8x3x3xi64>
    ```
  }];
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($output) `,` type($indices)
  }];
}

def MemFmt_AvgPool2dOp : MemFmt_Op<"avg_pool2d", [Pure, PropagatesL5, Vjp,
                                                 PerSample]> {
  let summary = "2-D average pooling (aten::avg_pool2d)";
  let description = [{
    ```mlir
    %y = memfmt.avg_pool2d %x {kernel_size = array<i64: 2, 2>}
        : tensor<1x8x6x6xf32> -> tensor<1x8x3x3xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$input,
                       DenseI64ArrayAttr:$kernel_size,
                       MemFmt_I64List:$stride,
                       MemFmt_I64Pair0:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
  let results = (outs MemFmt_Tensor4D:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def MemFmt_AdaptiveAvgPool2dOp : MemFmt_Op<"adaptive_avg_pool2d",
                                           [Pure, PropagatesL5, Vjp,
                                            PerSample]> {
  let summary = "adaptive 2-D average pooling (aten::adaptive_avg_pool2d)";
  let description = [{
    ```mlir
    %y = memfmt.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>}
        : tensor<8x2048x7x7xf32> -> tensor<8x2048x1x1xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$input,
                       DenseI64ArrayAttr:$output_size);
  let results = (outs MemFmt_Tensor4D:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reshapes (L7) and linear
//===----------------------------------------------------------------------===//

def MemFmt_FlattenOp : MemFmt_Op<"flatten", [Pure, ElementCopy, Vjp,
    PerSampleIf,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["requiresContiguousOperand"]>]> {
  let summary = "flatten dims start_dim..end_dim (aten::flatten)";
  let description = [{
    Keeps NCHW meaning (L7): elements are taken in logical order. The input
    must be contiguous; `memfmt-materialize-contiguous` inserts the explicit
    conversion when it is channels-last and not also contiguous (L3). The
    result is contiguous.

    ```mlir
    %y = memfmt.flatten %x {start_dim = 1 : i64}
        : tensor<8x2048x1x1xf32> -> tensor<8x2048xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$start_dim,
                       DefaultValuedAttr<I64Attr, "-1">:$end_dim);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def MemFmt_ReshapeOp : MemFmt_Op<"reshape", [Pure, ElementCopy, Vjp,
    PerSampleIf,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["requiresContiguousOperand"]>]> {
  let summary = "reshape to the result type's shape (aten::reshape)";
  let description = [{
    Keeps NCHW meaning (L7); the input must be contiguous, the result is
    contiguous and has the same number of elements.

    ```mlir
    %y = memfmt.reshape %x : tensor<8x512x7x7xf32> -> tensor<8x25088xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def MemFmt_LinearOp : MemFmt_Op<"linear", [Pure, AnyLayout, Vjp, PerSample]> {
  let summary = "x @ weight^T + bias (aten::linear)";
  let description = [{
    Input `[*, K]`, weight `[M, K]`, optional bias `[M]`, result `[*, M]`.
    With `activation` (and `activation_alpha`, `activation_beta`), named
    and checked as fused_conv2d's, the result is that function of the
    product: `memfmt-fuse-conv` folds a linear layer's GELU (ConvNeXt's and
    ViT's MLPs) or other activation into it, as oneDNN's eltwise post-ops
    compute it. Such a linear has no vector-Jacobian product (training
    compiles without fusion).

    ```mlir
    %y = memfmt.linear %x, %w, %b
        : (tensor<8x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>)
        -> tensor<8x1000xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, MemFmt_Tensor:$weight,
                       Optional<MemFmt_Tensor1D>:$bias,
                       OptionalAttr<StrAttr>:$activation,
                       OptionalAttr<F64Attr>:$activation_alpha,
                       OptionalAttr<F64Attr>:$activation_beta);
  let results = (outs MemFmt_Tensor:$output);
  let builders = [
    // A linear layer without activation (the importers' and the zoo's).
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::Value":$weight, "::mlir::Value":$bias), [{
      build($_builder, $_state, output, input, weight, bias,
            ::mlir::StringAttr(), ::mlir::FloatAttr(), ::mlir::FloatAttr());
    }]>
  ];
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    `(` type($input) `,` type($weight) (`,` type($bias)^)? `)` `->`
    type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ops whose result layout the rules fix (L2, L6)
//===----------------------------------------------------------------------===//

class MemFmt_FixedLayoutOp<string mnemonic, list<Trait> traits = []>
    : MemFmt_Op<mnemonic, traits # [Pure,
          DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Always true: verify() compares the result with the inferred type
    /// itself, so that its error can say which layout rule is broken.
    static bool isCompatibleReturnTypes(::mlir::TypeRange lhs,
                                        ::mlir::TypeRange rhs);
  }];
}

def MemFmt_ContiguousOp : MemFmt_FixedLayoutOp<"contiguous", [LayoutCopy, Vjp,
    PerSample,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["isLayoutConversion"]>]> {
  let summary = "explicit layout conversion (aten::contiguous)";
  let description = [{
    The one explicit conversion: the result has the dense strides of
    `memory_format` (L2), `contiguous` (default) or `channels_last`. The
    result type is inferred in the custom syntax. Converting a tensor that is
    already in that format (including L3 shapes such as `Nx2048x1x1`) moves
    no bytes.

    ```mlir
    %y = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>}
        : tensor<1x3x224x224xf32>
    ```
  }];
  let arguments = (ins MemFmt_AnyTensor:$input,
                       DefaultValuedAttr<MemFmt_MemoryFormatAttr,
                           "::mlir::memfmt::MemoryFormat::Contiguous">:$memory_format);
  let results = (outs MemFmt_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def MemFmt_CloneOp : MemFmt_FixedLayoutOp<"clone", [LayoutCopy, Vjp, PerSample,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["getPreservedOperand"]>]> {
  let summary = "copy (aten::clone)";
  let description = [{
    With `memory_format = preserve` (default) the result keeps the input's
    exact strides when the input is dense and non-overlapping, else takes the
    input's L4 format (L6). Zero strides are never preserved.

    ```mlir
    %y = memfmt.clone %x : tensor<2x3x4x5xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input,
                       MemFmt_FormatDefaultPreserve:$memory_format);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def MemFmt_EmptyLikeOp : MemFmt_FixedLayoutOp<"empty_like", [
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["getPreservedOperand"]>]> {
  let summary = "uninitialised tensor shaped like the input "
                "(aten::empty_like)";
  let description = [{
    Result layout as for `memfmt.clone` (L6); values are unspecified.

    ```mlir
    %y = memfmt.empty_like %x : tensor<2x3x4x5xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input,
                       MemFmt_FormatDefaultPreserve:$memory_format);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def MemFmt_ToOp : MemFmt_FixedLayoutOp<"to", [ElementCopy, PerSample,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["getPreservedOperand"]>]> {
  let summary = "convert element type and/or memory format (aten::to)";
  let description = [{
    The result has element type `dtype` (default: the input's) and the
    layout of `memory_format` (L2), or L6's for `preserve` (default).

    ```mlir
    %y = memfmt.to %x {dtype = bf16} : tensor<2x3x4x5xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input,
                       OptionalAttr<TypeAttrOf<MemFmt_Float>>:$dtype,
                       MemFmt_FormatDefaultPreserve:$memory_format);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def MemFmt_ResizeAsOp : MemFmt_FixedLayoutOp<"resize_as", [
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["getPreservedOperand"]>]> {
  let summary = "input resized to the template's shape (aten::resize_as)";
  let description = [{
    The result has the template's shape and the input's element type; its
    layout follows `memory_format`, with `preserve` (default) applying L6 to
    the template. Elements beyond the input's count are unspecified.

    ```mlir
    %y = memfmt.resize_as %x, %t : tensor<120xf32>, tensor<2x3x4x5xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, MemFmt_Tensor:$the_template,
                       MemFmt_FormatDefaultPreserve:$memory_format);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $the_template attr-dict `:` type($input) `,`
    type($the_template)
  }];
}

//===----------------------------------------------------------------------===//
// Views and data movement: permute, slice, channel_shuffle
//===----------------------------------------------------------------------===//

def MemFmt_PermuteOp : MemFmt_Op<"permute", [Pure, PerSampleIf, Vjp,
    DeclareOpInterfaceMethods<MemFmt_ElementCopyOpInterface,
                              ["getSourceView"]>,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                              ["getPreservedOperand", "getPreservedStrides"]>]> {
  let summary = "reorder the dimensions (aten::permute)";
  let description = [{
    Result dimension `k` is input dimension `dims[k]`. In ATen the result is a view
    with the input's strides permuted. memfmt keeps that view wherever it is
    a supported memory format (L4): the layout passes give the result the
    permuted strides, and the op then moves no bytes (like an L3
    conversion). A channels-last `[N, C, H, W]` permuted by `[0, 2, 3, 1]`
    is the contiguous `[N, H, W, C]` - ConvNeXt's permutes around its
    LayerNorm are free in a channels-last build - and the permute back by
    `[0, 3, 1, 2]` is channels-last again. Where the permuted strides are no
    supported format, the result is contiguous and the op copies.

    ```mlir
    %y = memfmt.permute %x {dims = array<i64: 0, 2, 3, 1>}
        : tensor<1x96x56x56xf32, #memfmt.strides<[301056, 1, 5376, 96]>>
        -> tensor<1x56x56x96xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MemFmt_SliceOp : MemFmt_Op<"slice", [Pure, PropagatesL5, PerSampleIf,
                                         Vjp]> {
  let summary = "elements start, start + step, ... < end of `dim` "
                "(aten::slice)";
  let description = [{
    Copies `input[..., start:end:step, ...]` along `dim` (0 <= start < end
    <= size, step >= 1, as the importer normalises ONNX's Slice). The result
    has the input's format (L5): slicing the channels of a channels-last
    tensor, as ShuffleNet's `chunk` does, keeps it channels-last. Where the
    result's strides are the input's (a batch slice of a sample-major
    tensor, as memfmt-tile-batch makes) it is a view: the memory plan
    places it inside the input's bytes and nothing is copied.

    ```mlir
    %y = memfmt.slice %x {dim = 1 : i64, start = 0 : i64, end = 58 : i64}
        : tensor<1x116x28x28xf32> -> tensor<1x58x28x28xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, I64Attr:$dim, I64Attr:$start,
                       I64Attr:$end, DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Where the result's elements lie in the input's bytes when the result
    /// is a view of them (unit step, or one element along `dim`, and the
    /// input's strides on every dim the result has more than one element
    /// of): `start` along `dim`, in elements. std::nullopt when the slice
    /// must copy.
    std::optional<int64_t> getViewElementOffset();
  }];
}

def MemFmt_ChannelShuffleOp : MemFmt_Op<"channel_shuffle", [Pure,
                                                           PropagatesL5,
                                                           PerSample, Vjp]> {
  let summary = "interleave `groups` groups of channels (aten::channel_shuffle)";
  let description = [{
    For an input `[N, C, *]` and `g = groups`: output channel `j * g + i`
    is input channel `i * (C / g) + j`, i.e. the view `[N, g, C/g, *]`
    transposed to `[N, C/g, g, *]` and flattened back (ShuffleNet). A
    permutation of channels within each pixel, so the result keeps the
    input's format (L5): a channels-last tensor is shuffled without a
    conversion. Canonicalization recognises the reshape - transpose -
    reshape sequence that exporters write (see `memfmt.permute`).

    ```mlir
    %y = memfmt.channel_shuffle %x {groups = 2 : i64}
        : tensor<1x116x28x28xf32> -> tensor<1x116x28x28xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, I64Attr:$groups);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Concatenation and chunking
//===----------------------------------------------------------------------===//

def MemFmt_CatOp : MemFmt_Op<"cat", [Pure, PropagatesL5, PerSampleIfOperands,
                                     Vjp]> {
  let summary = "concatenate along `dim` (aten::cat)";
  let description = [{
    Format-preserving (L5): the result is channels-last if an input is.

    ```mlir
    %y = memfmt.cat %a, %b {dim = 0 : i64}
        : tensor<2x8x4x4xf32>, tensor<3x8x4x4xf32> -> tensor<5x8x4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<MemFmt_Tensor>:$tensors,
                       DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = [{
    $tensors attr-dict `:` type($tensors) `->` type($output)
  }];
  let hasVerifier = 1;
}

def MemFmt_ChunkOp : MemFmt_Op<"chunk", [Pure, PropagatesL5, PerSampleIf,
                                         Vjp]> {
  let summary = "split into `chunks` pieces along `dim` (aten::chunk)";
  let description = [{
    Every piece has `ceil(size / chunks)` elements along `dim` but the last,
    which may be smaller; there may be fewer than `chunks` pieces (ATen).
    Format-preserving (L5).

    ```mlir
    %a, %b = memfmt.chunk %x {chunks = 2 : i64}
        : tensor<4x8x4x4xf32> -> tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, I64Attr:$chunks,
                       DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs Variadic<MemFmt_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($outputs)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def MemFmt_WeightOp : MemFmt_Op<"weight", [Pure,
    DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface, ["isParameter"]>]> {
  let summary = "a parameter loaded from the weight source";
  let description = [{
    A parameter whose value comes from the weight source at load time
    (safetensors, ONNX initializers or the synthetic initializer). `name` is
    the torchvision `state_dict` key. The values are logical (NCHW); the
    result type's strides say how the loader lays them out, so a re-laid
    weight costs nothing per run.

    With `zero_init` the weight is optimizer state (a momentum buffer, or
    the 0-d i64 step count of an optimizer that needs one): it starts as
    zeros unless the weight source has a tensor of its name.
    A training step updates weights with `memfmt.assign_weight`.

    ```mlir
    %w = memfmt.weight "layer1.0.conv1.weight" : tensor<64x64x1x1xf32>
    %m = memfmt.weight "conv1.weight.momentum_buffer" {zero_init}
        : tensor<64x3x7x7xf32>
    %s = memfmt.weight "optimizer.step" {zero_init} : tensor<i64>
    ```
  }];
  let arguments = (ins StrAttr:$name, UnitAttr:$zero_init);
  let results = (outs MemFmt_StateTensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let hasVerifier = 1;
}

include "memfmt/Dialect/MemFmt/IR/MemFmtTrainingOps.td"

#endif // MEMFMT_OPS_TD
