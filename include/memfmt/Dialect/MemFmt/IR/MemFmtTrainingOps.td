//===- MemFmtTrainingOps.td - memfmt training ops ----------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The training ops of DESIGN.md §2: batch norm in training mode, the
// backward ops of the forward ops (ATen's names, operand order and attribute
// names), the loss and its backward, and the SGD update. Every gradient has
// its primal's memory format (L9): the ops declare it through
// LayoutOpInterface (`getPreservedOperand`: result i takes operand j's
// format), so memfmt-propagate-channels-last handles them with no list of op
// names, and their verifiers reject a gradient in another format.
//
// Gradient accumulation needs no op of its own: where a value has several
// uses (the residual), its gradients are summed with `memfmt.add`, whose L5
// join is order-independent, so the sum has the value's format (L9).
//
// Masked-off results (`output_mask`): ATen returns undefined tensors. Here
// every result is always present and typed, so results keep fixed numbers
// (a VJP or the lowering names them by index); a masked-off result is all
// zeros, autograd's meaning of an undefined gradient, and nothing computes
// it unless it has a use.
//
// Included from MemFmtOps.td; uses its constraints and layout traits.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TRAINING_OPS_TD
#define MEMFMT_TRAINING_OPS_TD

def MemFmt_Tensor0D : TensorRankOf<[F32, F16, BF16], [0]>;
def MemFmt_F32Tensor0D : TensorRankOf<[F32], [0]>;
def MemFmt_Tensor2D : TensorRankOf<[F32, F16, BF16], [2]>;
def MemFmt_TargetTensor1D : TensorRankOf<[I64], [1]>;
def MemFmt_OutputMask : ConfinedAttr<DenseBoolArrayAttr,
    [DenseArrayCount<3>]>;

/// Ops with this trait say which operand's format each result takes and
/// which format each incoming gradient operand must have (L9).
defvar GradientLayout = DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
    ["getPreservedOperand", "getGradientOperandFormat"]>;

/// Ops with this trait say which of their tensors stay f32 when they
/// compute in bf16 (mixed-precision training).
defvar MixedPrecision =
    DeclareOpInterfaceMethods<MemFmt_MixedPrecisionOpInterface>;

//===----------------------------------------------------------------------===//
// Batch normalisation
//===----------------------------------------------------------------------===//

def MemFmt_NativeBatchNormOp : MemFmt_Op<"native_batch_norm",
    [Pure, PropagatesL5, InPlace, MixedPrecision,
     DeclareOpInterfaceMethods<MemFmt_VjpOpInterface,
         ["isDifferentiableOperand", "isDifferentiableResult"]>]> {
  let summary = "batch normalisation in training mode "
                "(aten::native_batch_norm, training=True)";
  let description = [{
    Normalises `input` `[N, C, ...]` over every dim but 1 with the batch
    statistics: `mean` and the biased variance `var` over `N * H * W`
    values, `output = (input - mean) * invstd * weight + bias` with
    `invstd = 1 / sqrt(var + eps)`. `save_mean = mean` and
    `save_invstd = invstd` are kept for the backward op. The running
    statistics are updated as ATen does with `training=True`:
    `running_mean_out = (1 - momentum) * running_mean + momentum * mean`,
    `running_var_out = (1 - momentum) * running_var + momentum * var * n /
    (n - 1)` (the unbiased variance, `n = N * H * W`, which must be > 1).
    `running_*_out` may take the buffer of `running_*` (InPlaceOpInterface),
    so a training step updates its running statistics in place. By L5 `output` is channels-last when `input` (or `residual`) is. `memfmt.batch_norm`
    stays the inference op.

    The training fusion (memfmt-fuse-training) gives it an epilogue:
    `output = relu(bn(input) + residual)`, the optional `residual` (the
    input's shape) added and relu applied when `relu` is set, computed with
    the rounding of the separate `memfmt.add` and `memfmt.relu`, so the
    fused op has the unfused graph's values in one pass over memory.

    ```mlir
    %y, %mean, %invstd, %rm, %rv = memfmt.native_batch_norm %x, %g, %b, %m, %v
        {eps = 1.0e-05 : f64, momentum = 1.0e-01 : f64}
        : (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<64xf32>, tensor<64xf32>)
        -> (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>,
            tensor<64xf32>, tensor<64xf32>)
    %z:5 = memfmt.native_batch_norm %x, %g, %b, %m, %v residual %r
        {relu = true} : (tensor<8x64x56x56xf32>, tensor<64xf32>,
           tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<8x64x56x56xf32>)
        -> (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>,
            tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, MemFmt_Tensor1D:$weight,
                       MemFmt_Tensor1D:$bias, MemFmt_Tensor1D:$running_mean,
                       MemFmt_Tensor1D:$running_var,
                       Optional<MemFmt_Tensor>:$residual,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                       DefaultValuedAttr<BoolAttr, "false">:$relu);
  let results = (outs MemFmt_Tensor:$output, MemFmt_Tensor1D:$save_mean,
                      MemFmt_Tensor1D:$save_invstd,
                      MemFmt_Tensor1D:$running_mean_out,
                      MemFmt_Tensor1D:$running_var_out);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `,` $running_mean `,` $running_var
    (`residual` $residual^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_NativeBatchNormBackwardOp : MemFmt_Op<"native_batch_norm_backward",
    [Pure, GradientLayout, MixedPrecision]> {
  let summary = "backward of training batch norm "
                "(aten::native_batch_norm_backward)";
  let description = [{
    From `grad_out` (the gradient of `native_batch_norm`'s `output`), the
    forward's `input`, `weight`, `save_mean` and `save_invstd`:
    `grad_input = weight * invstd * (grad_out - mean(grad_out) - xhat *
    mean(grad_out * xhat))` with `xhat = (input - save_mean) * invstd` and
    means over every dim but 1; `grad_weight = sum(grad_out * xhat)`,
    `grad_bias = sum(grad_out)`. `output_mask` says which of the three are
    wanted; a masked-off result is zeros. By L9 `grad_out` and `grad_input`
    have `input`'s memory format.

    With `relu` (the training fusion's backward of a batch norm fused with
    relu) it takes the forward's `output` and first applies relu's gradient
    to `grad_out`, `threshold_backward(grad_out, output, 0)`, as it reads it.

    ```mlir
    %gi, %gw, %gb = memfmt.native_batch_norm_backward %go, %x, %g, %mean, %invstd
        {output_mask = array<i1: true, true, true>}
        : (tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>, tensor<64xf32>,
           tensor<64xf32>, tensor<64xf32>)
        -> (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$grad_out, MemFmt_Tensor:$input,
                       MemFmt_Tensor1D:$weight, MemFmt_Tensor1D:$save_mean,
                       MemFmt_Tensor1D:$save_invstd,
                       Optional<MemFmt_Tensor>:$output,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       MemFmt_OutputMask:$output_mask,
                       DefaultValuedAttr<BoolAttr, "false">:$relu);
  let results = (outs MemFmt_Tensor:$grad_input, MemFmt_Tensor1D:$grad_weight,
                      MemFmt_Tensor1D:$grad_bias);
  let assemblyFormat = [{
    $grad_out `,` $input `,` $weight `,` $save_mean `,` $save_invstd
    (`output` $output^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution, linear
//===----------------------------------------------------------------------===//

def MemFmt_ConvolutionBackwardOp : MemFmt_Op<"convolution_backward",
    [Pure, GradientLayout, MixedPrecision]> {
  let summary = "backward of conv2d (aten::convolution_backward)";
  let description = [{
    Gradients of `conv2d(input, weight) + bias` from `grad_output`, with the
    forward's attributes (as for `memfmt.conv2d`; `padding` has 2 values,
    symmetric, or 4, top, left, bottom, right, so that the VJP of any
    conv2d carries its padding unchanged): `grad_input` (shape and,
    by L9, memory format of `input`), `grad_weight` (those of `weight`) and
    `grad_bias` `[O]` (the sum of `grad_output` over N, H, W).
    `grad_output` has the forward result's format: channels-last if `input`
    or `weight` is (L5). `output_mask` says which results are wanted; a
    masked-off result is zeros (ATen's undefined tensor).

    ```mlir
    %gi, %gw, %gb = memfmt.convolution_backward %go, %x, %w
        {padding = array<i64: 1, 1>, output_mask = array<i1: false, true, false>}
        : (tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>,
           tensor<64x64x3x3xf32>)
        -> (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$grad_output, MemFmt_Tensor4D:$input,
                       MemFmt_Tensor4D:$weight,
                       MemFmt_I64Pair1:$stride,
                       MemFmt_I64Pair0:$padding,
                       MemFmt_I64Pair1:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       MemFmt_OutputMask:$output_mask);
  let results = (outs MemFmt_Tensor4D:$grad_input,
                      MemFmt_Tensor4D:$grad_weight,
                      MemFmt_Tensor1D:$grad_bias);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $weight attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_LinearBackwardOp : MemFmt_Op<"linear_backward",
    [Pure, GradientLayout, MixedPrecision]> {
  let summary = "backward of linear (aten::linear_backward)";
  let description = [{
    For `output = input @ weight^T + bias` with input `[*, K]`, weight
    `[M, K]` and `grad_output` `[*, M]`: `grad_input = grad_output @ weight`
    (`[*, K]`), `grad_weight = grad_output^T @ input` (`[M, K]`, summed over
    the leading dims) and `grad_bias` `[M]` (the sum of `grad_output`). By L9
    each gradient has its primal's format. A masked-off result
    (`output_mask`) is zeros.

    ```mlir
    %gi, %gw, %gb = memfmt.linear_backward %x, %go, %w
        {output_mask = array<i1: true, true, true>}
        : (tensor<8x2048xf32>, tensor<8x1000xf32>, tensor<1000x2048xf32>)
        -> (tensor<8x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, MemFmt_Tensor:$grad_output,
                       MemFmt_Tensor2D:$weight,
                       MemFmt_OutputMask:$output_mask);
  let results = (outs MemFmt_Tensor:$grad_input, MemFmt_Tensor2D:$grad_weight,
                      MemFmt_Tensor1D:$grad_bias);
  let assemblyFormat = [{
    $input `,` $grad_output `,` $weight attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layer normalisation
//===----------------------------------------------------------------------===//

def MemFmt_LayerNormBackwardOp : MemFmt_Op<"layer_norm_backward",
    [Pure, GradientLayout, MixedPrecision]> {
  let summary = "backward of layer_norm (aten::native_layer_norm_backward)";
  let description = [{
    The gradients of `layer_norm` over the last dimension `D` (its
    `normalized_shape = [D]` and `eps`), from `grad_output` and the
    forward's `input` and optional `weight`. Each row's mean and `rstd = 1
    / sqrt(var + eps)` are recomputed from `input` (ATen saves them from the
    forward; recomputing costs a pass over a row the kernel reads anyway
    and keeps the forward op as it is). With `xhat = (input - mean) * rstd`
    and `g = grad_output * weight`: `grad_input = rstd * (g - mean(g) -
    xhat * mean(g * xhat))` per row, `grad_weight = sum(grad_output *
    xhat)` and `grad_bias = sum(grad_output)` over the rows. `output_mask`
    says which of the three are wanted; a masked-off result is zeros. By L9
    `grad_output` and `grad_input` have `input`'s memory format; in a
    mixed-precision step `grad_weight` and `grad_bias` stay f32.

    ```mlir
    %gi, %gw, %gb = memfmt.layer_norm_backward %go, %x, %w
        {normalized_shape = array<i64: 96>, eps = 1.0e-06 : f64,
         output_mask = array<i1: true, true, true>}
        : (tensor<8x56x56x96xf32>, tensor<8x56x56x96xf32>, tensor<96xf32>)
        -> (tensor<8x56x56x96xf32>, tensor<96xf32>, tensor<96xf32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$input,
                       Optional<MemFmt_Tensor1D>:$weight,
                       DenseI64ArrayAttr:$normalized_shape,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       MemFmt_OutputMask:$output_mask);
  let results = (outs MemFmt_Tensor:$grad_input, MemFmt_Tensor1D:$grad_weight,
                      MemFmt_Tensor1D:$grad_bias);
  let assemblyFormat = [{
    $grad_output `,` $input (`,` $weight^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_SoftmaxBackwardOp : MemFmt_Op<"softmax_backward",
                                         [Pure, GradientLayout]> {
  let summary = "backward of softmax (aten::_softmax_backward_data)";
  let description = [{
    The gradient of `memfmt.softmax` along `dim` from `grad_output` and the
    forward's `output` y: `grad_input = y * (grad_output - sum(grad_output
    * y))`, the sum over each row along `dim` (`0 <= dim < rank`), in
    double. By L9 `grad_output` and `grad_input` have `output`'s memory
    format (which is the softmax input's, L5).

    ```mlir
    %gi = memfmt.softmax_backward %go, %p {dim = 2 : i64}
        : (tensor<12x197x197xf32>, tensor<12x197x197xf32>)
        -> tensor<12x197x197xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$output,
                       I64Attr:$dim);
  let results = (outs MemFmt_Tensor:$grad_input);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise and pooling backward
//===----------------------------------------------------------------------===//

def MemFmt_ThresholdBackwardOp : MemFmt_Op<"threshold_backward",
                                           [Pure, GradientLayout]> {
  let summary = "backward of relu/threshold (aten::threshold_backward)";
  let description = [{
    `grad_input = self <= threshold ? 0 : grad_output`; relu's backward is
    `threshold = 0` with `self` the relu's result (or input). By L9
    `grad_output` and `grad_input` have `self`'s memory format.

    With `addend`, `grad_output + addend` (rounded to the element type, as
    `memfmt.add` rounds) takes `grad_output`'s place: the sum of the
    gradients of a value with two uses, as `memfmt-fuse-training` fuses it
    (a residual block's input, whose gradient comes from its first
    convolution and from the residual). `addend` has `grad_output`'s shape
    and element type and, by L9, `self`'s memory format.

    ```mlir
    %gi = memfmt.threshold_backward %go, %y {threshold = 0.0 : f64}
        : (tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>)
        -> tensor<8x64x56x56xf32>
    %gs = memfmt.threshold_backward %go, %y addend %gr
        : (tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>,
           tensor<8x64x56x56xf32>) -> tensor<8x64x56x56xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$self,
                       Optional<MemFmt_Tensor>:$addend,
                       DefaultValuedAttr<F64Attr, "0.0">:$threshold);
  let results = (outs MemFmt_Tensor:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $self (`addend` $addend^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

/// The gradient of an elementwise function of MemFmtOps.td (ATen's
/// `<name>_backward`): `grad_input = grad_output * f'(x)`, element by
/// element, with the forward op's attributes. The second operand is what
/// ATen's backward op takes: the forward's input `self` (its `output` for
/// sigmoid). By L9 `grad_output` and `grad_input` have its memory format.
class MemFmt_EltwiseBackwardOp<string mnemonic, string formula>
    : MemFmt_Op<mnemonic, [Pure, GradientLayout]> {
  let summary = formula # " (aten::" # mnemonic # ")";
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$self);
  let results = (outs MemFmt_Tensor:$grad_input);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::memfmt::detail::verifyEltwiseBackward(*this);
    }
    std::optional<unsigned> $cppClass::getPreservedOperand(unsigned) {
      return 1;
    }
    std::optional<::mlir::memfmt::MemoryFormat>
    $cppClass::getGradientOperandFormat(unsigned index) {
      return ::mlir::memfmt::detail::eltwiseBackwardGradientFormat(*this,
                                                                   index);
    }
  }];
}

def MemFmt_SigmoidBackwardOp : MemFmt_EltwiseBackwardOp<"sigmoid_backward",
    "grad_output * (1 - output) * output"> {
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$output);
}

def MemFmt_SiluBackwardOp : MemFmt_EltwiseBackwardOp<"silu_backward",
    "grad_output * s * (1 + self * (1 - s)), s = sigmoid(self)">;

def MemFmt_HardswishBackwardOp : MemFmt_EltwiseBackwardOp<
    "hardswish_backward",
    "self < -3 ? 0 : self <= 3 ? grad_output * (self / 3 + 1 / 2) : "
    "grad_output">;

def MemFmt_HardsigmoidBackwardOp : MemFmt_EltwiseBackwardOp<
    "hardsigmoid_backward",
    "0 < alpha * self + beta < 1 ? grad_output * alpha : 0"> {
  let description = [{
    With `memfmt.hardsigmoid`'s `alpha` and `beta` (ATen's `-3 < self < 3
    ? grad_output / 6 : 0` for its defaults 1/6 and 1/2).
  }];
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$self,
                   DefaultValuedAttr<F64Attr, "1.0 / 6.0">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.5">:$beta);
}

def MemFmt_ClampBackwardOp : MemFmt_EltwiseBackwardOp<"clamp_backward",
    "min <= self <= max ? grad_output : 0"> {
  let description = [{
    The gradient of `memfmt.clamp` as PyTorch's autograd takes it
    (`clamp_backward` of derivatives.yaml, not an ATen op of its own): the
    gradient passes where `self` lies within the bounds, ends included, and
    is 0 outside and where `self` is NaN. An absent bound does not limit.

    ```mlir
    %gi = memfmt.clamp_backward %go, %x {min = 0.0 : f64, max = 6.0 : f64}
        : (tensor<8x32x56x56xf32>, tensor<8x32x56x56xf32>)
        -> tensor<8x32x56x56xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$self,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
}

def MemFmt_GeluBackwardOp : MemFmt_EltwiseBackwardOp<"gelu_backward",
    "grad_output * (Phi(self) + self * phi(self)), exactly or by tanh"> {
  let arguments = (ins MemFmt_Tensor:$grad_output, MemFmt_Tensor:$self,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
}

def MemFmt_MaxPool2dWithIndicesBackwardOp
    : MemFmt_Op<"max_pool2d_with_indices_backward", [Pure, GradientLayout]> {
  let summary = "backward of max pooling "
                "(aten::max_pool2d_with_indices_backward)";
  let description = [{
    Scatters (adds) each element of `grad_output` to the input position
    `indices` names in its plane (as `memfmt.max_pool2d_with_indices`
    produced it); attributes as for the forward op, whose output shape
    `grad_output` and `indices` have. By L9 `grad_output` and `grad_input`
    have `self`'s memory format.

    ```mlir
    %gi = memfmt.max_pool2d_with_indices_backward %go, %x, %i
        {kernel_size = array<i64: 2, 2>}
        : (tensor<1x8x3x3xf32>, tensor<1x8x6x6xf32>, tensor<1x8x3x3xi64>)
        -> tensor<1x8x6x6xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$grad_output, MemFmt_Tensor4D:$self,
                       MemFmt_IndicesTensor4D:$indices,
                       DenseI64ArrayAttr:$kernel_size,
                       MemFmt_I64List:$stride,
                       MemFmt_I64Pair0:$padding,
                       MemFmt_I64Pair1:$dilation,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs MemFmt_Tensor4D:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $self `,` $indices attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_AvgPool2dBackwardOp : MemFmt_Op<"avg_pool2d_backward",
                                           [Pure, GradientLayout]> {
  let summary = "backward of average pooling (aten::avg_pool2d_backward)";
  let description = [{
    Spreads each element of `grad_output` evenly over its window (the
    divisor as the forward's, by `count_include_pad`); attributes as for
    `memfmt.avg_pool2d`. By L9 `grad_output` and `grad_input` have `self`'s
    memory format.

    ```mlir
    %gi = memfmt.avg_pool2d_backward %go, %x {kernel_size = array<i64: 2, 2>}
        : (tensor<1x8x3x3xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$grad_output, MemFmt_Tensor4D:$self,
                       DenseI64ArrayAttr:$kernel_size,
                       MemFmt_I64List:$stride,
                       MemFmt_I64Pair0:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
  let results = (outs MemFmt_Tensor4D:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $self attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_AdaptiveAvgPool2dBackwardOp
    : MemFmt_Op<"adaptive_avg_pool2d_backward", [Pure, GradientLayout]> {
  let summary = "backward of adaptive average pooling "
                "(aten::_adaptive_avg_pool2d_backward)";
  let description = [{
    The forward's `output_size` is `grad_output`'s spatial shape; each
    element of `grad_output` is spread evenly over its adaptive window. By
    L9 `grad_output` and `grad_input` have `self`'s memory format (a
    `[N, C, 1, 1]` gradient is both, L3).

    ```mlir
    %gi = memfmt.adaptive_avg_pool2d_backward %go, %x
        : (tensor<8x2048x1x1xf32>, tensor<8x2048x7x7xf32>)
        -> tensor<8x2048x7x7xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor4D:$grad_output, MemFmt_Tensor4D:$self);
  let results = (outs MemFmt_Tensor4D:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $self attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_SumToSizeOp : MemFmt_Op<"sum_to_size", [Pure, AnyLayout]> {
  let summary = "sum down to a shape the input broadcasts from "
                "(aten::sum_to_size)";
  let description = [{
    The gradient of an operand that an elementwise op broadcast: `input` is
    summed over its leading dims beyond the result's rank and over the dims
    where the result has size 1 (the result's dims are aligned to the right
    of the input's, each the input's size or 1). The sum is taken in double
    and rounded once. The result's layout is its type's; a VJP gives it its
    primal's format with `memfmt.contiguous`, free where L3 holds (a
    squeeze-excite scale `[N, C, 1, 1]`).

    ```mlir
    %gs = memfmt.sum_to_size %g
        : tensor<8x96x14x14xf32, #memfmt.strides<[18816, 1, 1344, 96]>>
        -> tensor<8x96x1x1xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

def MemFmt_CrossEntropyLossOp : MemFmt_Op<"cross_entropy_loss",
    [Pure, AnyLayout, Vjp, MixedPrecision]> {
  let summary = "mean cross-entropy of logits and class indices "
                "(aten::cross_entropy_loss, reduction=mean)";
  let description = [{
    For logits `self` `[N, C]` and class indices `target` `[N]` (i64, each
    in `[0, C)`; no class weights, no `ignore_index`, no label smoothing):
    `output = mean_n(logsumexp(self[n, :]) - self[n, target[n]])`, a 0-d
    tensor.

    ```mlir
    %loss = memfmt.cross_entropy_loss %logits, %y
        : (tensor<8x1000xf32>, tensor<8xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor2D:$self, MemFmt_TargetTensor1D:$target);
  let results = (outs MemFmt_Tensor0D:$output);
  let assemblyFormat = [{
    $self `,` $target attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_CrossEntropyLossBackwardOp
    : MemFmt_Op<"cross_entropy_loss_backward",
                [Pure, GradientLayout, MixedPrecision]> {
  let summary = "gradient of the mean cross-entropy loss";
  let description = [{
    `grad_input[n, c] = grad_output * (softmax(self[n, :])[c] -
    (c == target[n])) / N`, the gradient of `memfmt.cross_entropy_loss`
    with respect to `self` (ATen computes it as the backward of
    `log_softmax` and `nll_loss`). By L9 it has `self`'s format.

    ```mlir
    %g = memfmt.cross_entropy_loss_backward %one, %logits, %y
        : (tensor<f32>, tensor<8x1000xf32>, tensor<8xi64>)
        -> tensor<8x1000xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor0D:$grad_output, MemFmt_Tensor2D:$self,
                       MemFmt_TargetTensor1D:$target);
  let results = (outs MemFmt_Tensor2D:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $self `,` $target attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def MemFmt_SgdUpdateOp : MemFmt_Op<"sgd_update",
    [Pure, GradientLayout, InPlace, MixedPrecision,
     AttrSizedOperandSegments]> {
  let summary = "one torch.optim.SGD step for one parameter";
  let description = [{
    torch.optim.SGD's exact update of `param` from its gradient `grad`
    (`maximize = False`):

      1. `g = grad + weight_decay * param` (just `grad` when
         `weight_decay == 0`).
      2. With `momentum != 0`: on the first step (torch has no buffer yet)
         `buf = g`; on later steps
         `buf = momentum * momentum_buffer + (1 - dampening) * g`.
         `momentum_buffer_out = buf`. Then `g = g + momentum * buf` with
         `nesterov`, else `g = buf`. With `momentum == 0` the buffer is
         not used and `momentum_buffer_out` equals `momentum_buffer`.
      3. `param_out = param - lr * g`.

    `step` (0-d i64, optional) is the number of steps taken before this
    one, so step 0 is the first. Without it every step is a later step,
    which with a zero-initialised buffer gives the first step exactly when
    `dampening == 0` (`momentum * 0 + g == g`); a `dampening != 0` with
    momentum therefore needs `step`. As in torch, `nesterov` requires
    `momentum > 0` and `dampening == 0`, and `lr`, `momentum` and
    `weight_decay` are non-negative. By L9 `grad` and the buffer have the
    parameter's layout, and so do the results. `param_out` may take the
    buffer of `param` and `momentum_buffer_out` that of `momentum_buffer`
    (InPlaceOpInterface): the memory plan updates the model state in place.

    `found_inf` (0-d f32, optional; `memfmt.unscale_gradient`'s flag) skips
    the step where it is nonzero, as `GradScaler.step` skips
    `optimizer.step`: the results are `param` and `momentum_buffer`.

    ```mlir
    %w1, %buf1 = memfmt.sgd_update %w, %gw, %buf
        {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64,
         weight_decay = 1.0e-04 : f64}
        : (tensor<64x3x7x7xf32>, tensor<64x3x7x7xf32>, tensor<64x3x7x7xf32>)
        -> (tensor<64x3x7x7xf32>, tensor<64x3x7x7xf32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$param, MemFmt_Tensor:$grad,
                       MemFmt_Tensor:$momentum_buffer,
                       Optional<MemFmt_StepTensor0D>:$step,
                       Optional<MemFmt_F32Tensor0D>:$found_inf,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs MemFmt_Tensor:$param_out,
                      MemFmt_Tensor:$momentum_buffer_out);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer (`step` $step^)?
    (`found_inf` $found_inf^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

def MemFmt_LossScaleOp : MemFmt_Op<"loss_scale",
    [Pure, AnyLayout, MixedPrecision, AllTypesMatch<["state", "output"]>]> {
  let summary = "the loss scale of a training step (GradScaler.scale)";
  let description = [{
    Dynamic loss scaling as `torch.cuda.amp.GradScaler`: the step's loss is
    multiplied by a scale (the seed of its gradients is the scale instead
    of 1), so that small gradients survive in f16; the gradients are
    unscaled before the optimizer (`memfmt.unscale_gradient`), a step with
    a non-finite gradient is skipped, and the scale adapts
    (`memfmt.update_loss_scale`).

    `output = state` where `state` (the model state
    `grad_scaler.scale`, which starts as zeros) is nonzero, else
    `init_scale`: the scaler creates its scale on first use, as
    GradScaler does.

    ```mlir
    %state = memfmt.weight "grad_scaler.scale" {zero_init} : tensor<f32>
    %scale = memfmt.loss_scale %state {init_scale = 65536.0 : f64}
        : tensor<f32>
    ```
  }];
  let arguments = (ins MemFmt_F32Tensor0D:$state, F64Attr:$init_scale);
  let results = (outs MemFmt_F32Tensor0D:$output);
  let assemblyFormat = "$state attr-dict `:` type($state)";
  let hasVerifier = 1;
}

def MemFmt_UnscaleGradientOp : MemFmt_Op<"unscale_gradient",
    [Pure, InPlace, MixedPrecision,
     DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                               ["getPreservedOperand"]>]> {
  let summary = "a gradient of a scaled loss unscaled, and checked";
  let description = [{
    `GradScaler.unscale_` for one gradient (ATen's
    `_amp_foreach_non_finite_check_and_unscale_`): `grad_out = grad *
    inv_scale`, `inv_scale = 1 / scale` computed in f64 and rounded to f32;
    `found_inf_out` (0-d f32) is 1 if an element of `grad` is not finite or
    `found_inf` (optional: the flag of the gradients checked before) is
    nonzero, else 0. The unscaled gradient keeps the gradient's layout
    (L9), and both results may take their operand's buffer.

    ```mlir
    %g1, %inf1 = memfmt.unscale_gradient %g, %scale found_inf %inf0
        : (tensor<64xf32>, tensor<f32>, tensor<f32>)
        -> (tensor<64xf32>, tensor<f32>)
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$grad, MemFmt_F32Tensor0D:$scale,
                       Optional<MemFmt_F32Tensor0D>:$found_inf);
  let results = (outs MemFmt_Tensor:$grad_out,
                      MemFmt_F32Tensor0D:$found_inf_out);
  let assemblyFormat = [{
    $grad `,` $scale (`found_inf` $found_inf^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MemFmt_UpdateLossScaleOp : MemFmt_Op<"update_loss_scale",
    [Pure, AnyLayout, InPlace, MixedPrecision]> {
  let summary = "the loss scale of the next step (GradScaler.update)";
  let description = [{
    ATen's `_amp_update_scale_`: where `found_inf` is nonzero,
    `scale_out = scale * backoff_factor` and `growth_tracker_out = 0`;
    otherwise the tracker (0-d i64, the model state
    `grad_scaler.growth_tracker`) counts the step, and once it reaches
    `growth_interval` the scale is multiplied by `growth_factor` (kept
    only where the product is finite) and the tracker restarts at 0. The
    defaults are GradScaler's; as in its constructor, `growth_factor` > 1,
    0 < `backoff_factor` < 1 and `growth_interval` >= 1.

    ```mlir
    %s1, %t1 = memfmt.update_loss_scale %scale, %tracker, %inf
        : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
    ```
  }];
  let arguments = (ins MemFmt_F32Tensor0D:$scale,
                       MemFmt_StepTensor0D:$growth_tracker,
                       MemFmt_F32Tensor0D:$found_inf,
                       DefaultValuedAttr<F64Attr, "2.0">:$growth_factor,
                       DefaultValuedAttr<F64Attr, "0.5">:$backoff_factor,
                       DefaultValuedAttr<I64Attr, "2000">:$growth_interval);
  let results = (outs MemFmt_F32Tensor0D:$scale_out,
                      MemFmt_StepTensor0D:$growth_tracker_out);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $found_inf attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

def MemFmt_AllReduceOp : MemFmt_Op<"all_reduce",
    [Pure, AllTypesMatch<["input", "output"]>, MixedPrecision,
     DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface,
                               ["getPreservedOperand"]>,
     InPlace]> {
  let summary = "a tensor reduced over the data-parallel replicas";
  let description = [{
    ATen's functional collective `_c10d_functional::all_reduce(input,
    reduce_op)`: each replica of a data-parallel training step (the same
    compiled step, run by several processes on their own slices of the
    batch) gets the elementwise sum (`reduce_op = "sum"`) or mean (`"avg"`)
    of `input` over all replicas. With a single replica it is the identity.
    `memfmt-apply-sgd` averages every gradient this way before its update,
    as DistributedDataParallel does, so each replica applies the same
    update.

    Every replica runs the same model with the same layouts, so the result
    keeps the input's type, memory format included, and may take the
    input's buffer (InPlaceOpInterface).

    ```mlir
    %g = memfmt.all_reduce %grad {reduce_op = "avg"} : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins MemFmt_Tensor:$input, StrAttr:$reduce_op);
  let results = (outs MemFmt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Model state
//===----------------------------------------------------------------------===//

def MemFmt_IncrementOp : MemFmt_Op<"increment",
    [Pure, AllTypesMatch<["input", "output"]>, AnyLayout, InPlace]> {
  let summary = "a step count plus one";
  let description = [{
    `output = input + 1` on a 0-d i64 tensor: the step count an optimizer
    keeps in the model state (torch's `state_steps += 1`); `output = input`
    where `found_inf` (optional) is nonzero, a step the loss scaler
    skipped.
    `memfmt-apply-sgd` counts the steps this way when `memfmt.sgd_update`
    needs to know the first one (`dampening != 0` with momentum). The
    result may take the input's buffer (InPlaceOpInterface), so the count
    is updated in place in the model state.

    ```mlir
    %next = memfmt.increment %step : tensor<i64>
    ```
  }];
  let arguments = (ins MemFmt_StepTensor0D:$input,
                       Optional<MemFmt_F32Tensor0D>:$found_inf);
  let results = (outs MemFmt_StepTensor0D:$output);
  let assemblyFormat = [{
    $input (`found_inf` $found_inf^ `:` type($found_inf))? attr-dict `:`
    type($input)
  }];
}

def MemFmt_AssignWeightOp : MemFmt_Op<"assign_weight",
    [MemoryEffects<[MemWrite]>,
     DeclareOpInterfaceMethods<MemFmt_LayoutOpInterface>]> {
  let summary = "stores a new value of a model state tensor";
  let description = [{
    Makes `value` the state tensor `name` (a `memfmt.weight` of the same
    function, with the same type) from the next run on: a training step
    assigns each parameter its SGD update, each momentum buffer its new
    value and each batch-norm running statistic its update. Reads of
    `memfmt.weight "name"` in the same run see the old value. The memory
    plan computes `value` directly into the weight's slot where the op that
    defines it may run in place (`memfmt.sgd_update` on the parameter), so
    the assignment costs no copy; otherwise it is lowered to one copy.

    A state that no `memfmt.weight` of the function reads (nothing in the
    step depends on its old value; canonicalization also erases reads whose
    value became unused) is declared by its assignment: the lowering gives
    it a slot of the assigned type that starts as zeros unless the weight
    source has a tensor of its name (`zero_init`), and checkpoints save it.

    ```mlir
    memfmt.assign_weight "conv1.weight", %w1 : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, MemFmt_StateTensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

#endif // MEMFMT_TRAINING_OPS_TD
