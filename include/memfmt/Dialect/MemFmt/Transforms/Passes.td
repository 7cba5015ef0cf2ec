//===- Passes.td - memfmt layout passes --------------------*- tablegen -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The layout passes of DESIGN.md §3: propagate channels-last (L5), take
// channels-last arguments into an NCHW model, make reshape conversions
// explicit (L7), fold conversions (L3), report what is left, and check that
// no pass dropped a layout; plus conv fusion and the precision conversion.
// Options that are choices take the enums of Passes.h, spelled by its
// `*Values()` lists, so a bad value gets LLVM's standard error.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TRANSFORMS_PASSES_TD
#define MEMFMT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PropagateChannelsLast : Pass<"memfmt-propagate-channels-last",
                                 "::mlir::func::FuncOp"> {
  let summary = "Propagate channels-last through the ops that declare L5";
  let description = [{
    Seeds channels-last at 4-D/5-D function arguments (`inputs`) and/or at
    4-D/5-D parameters (`weights`, PyTorch's `model.to(channels_last)`), then
    propagates forward to a fixed point: the result of an op that declares
    L5 is channels-last if any of its 4-D/5-D operands is (an
    order-independent join). Results of ops that preserve format (L6) follow
    their operand. Conversions are inserted only where an op needs a format
    its operand no longer has: at entry for `inputs=convert`, before results
    for `outputs=keep`, and before ops that do not declare how they treat
    layouts. Function signatures change only for `inputs=channels-last` and
    `outputs=channels-last`.
  }];
  let options = [
    Option<"inputs", "inputs", "::mlir::memfmt::InputsMode",
           /*default=*/"::mlir::memfmt::InputsMode::Convert",
           "How 4-D/5-D arguments enter",
           "::mlir::memfmt::inputsModeValues()">,
    Option<"weights", "weights", "::mlir::memfmt::WeightsMode",
           /*default=*/"::mlir::memfmt::WeightsMode::ChannelsLast",
           "Layout of 4-D/5-D parameters",
           "::mlir::memfmt::weightsModeValues()">,
    Option<"outputs", "outputs", "::mlir::memfmt::OutputsMode",
           /*default=*/"::mlir::memfmt::OutputsMode::Keep",
           "What 4-D/5-D results do",
           "::mlir::memfmt::outputsModeValues()">,
  ];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def DeclareChannelsLastInputs : Pass<"memfmt-declare-channels-last-inputs",
                                     "::mlir::func::FuncOp"> {
  let summary = "Take channels-last arguments into an NCHW function";
  let description = [{
    For a model that runs NCHW but whose caller passes channels-last input
    (memfmt-compile `--memory-format contiguous --input-format
    channels-last`): every statically shaped 4-D/5-D argument of a public
    function that is declared contiguous becomes channels-last in the
    signature (dense channels-last strides, also where L3 makes them the
    same bytes) and is converted to the declared type at entry, so the body
    sees the type it had. Private functions keep their signatures (their
    callers' types would no longer match). Running the pass twice changes
    nothing the second time.
  }];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def MaterializeContiguous : Pass<"memfmt-materialize-contiguous",
                                 "::mlir::func::FuncOp"> {
  let summary = "Make the contiguous conversion before reshapes explicit (L7)";
  let description = [{
    Before every operand that an op declares must be contiguous (reshape,
    flatten) and that is channels-last and not also contiguous, inserts an
    explicit `memfmt.contiguous`. Where L3 holds (`Nx2048x1x1`) the operand
    is already contiguous and nothing is inserted.
  }];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def FoldConversions : Pass<"memfmt-fold-conversions",
                           "::mlir::func::FuncOp"> {
  let summary = "Fold, cancel and remove layout conversions (L3)";
  let description = [{
    Chains of conversions fold to one; conversions that move no bytes (L3)
    vanish where every user accepts the other strides; a conversion of a
    parameter becomes a re-laid parameter (the weight is laid out once, at
    compile or load time, never per run); round trips cancel.
  }];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def FuseConv : Pass<"memfmt-fuse-conv", "::mlir::func::FuncOp"> {
  let summary = "Fold batch norm into convolutions and fuse conv epilogues";
  let description = [{
    Inference fusion, run before the layout passes:

      * an inference `memfmt.batch_norm` whose input is a convolution used
        only there, with parameters only (weights, biases, batch-norm
        statistics), becomes `memfmt.fold_batch_norm` on those parameters
        and a convolution with the folded weight and bias: the arithmetic
        happens once, when the model is loaded;
      * `add(conv, r)` / `add(r, conv)` of equal shapes becomes a
        `memfmt.fused_conv2d` with residual `r`, and `relu(conv)` a
        `memfmt.fused_conv2d` with `relu` set, where the convolution has no
        other use (oneDNN post-ops, cuDNN's fused convolution).

    Values never change (L8) beyond floating-point rounding of the folded
    weights.
  }];
  let options = [
    Option<"foldBatchNorm", "fold-batch-norm", "bool", /*default=*/"true",
           "Fold inference batch norms into the convolutions before them">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Fuse residual adds and relus into convolutions">,
  ];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def TileBatch : Pass<"memfmt-tile-batch", "::mlir::func::FuncOp"> {
  let summary = "Run an inference model's first layers one sub-batch at a "
                "time, so that their activations stay in the CPU's caches";
  let description = [{
    The first layers of a CNN have the largest activations: at batch 8 an
    EfficientNet-B0's 112x112x96 tensors take 38 MB each, more than a
    CPU's last-level cache, so each of those layers streams its input and
    output through memory, while one image's 4.8 MB stay in cache from one
    layer to the next. This pass takes the ops from the function's batched
    arguments (those whose dim 0 is the batch, the largest dim 0 of the
    arguments) up to the last op whose batched operands and results span
    more than `cache-bytes`, all of them computing each sample alone
    (PerSampleOpInterface), and runs them once per sub-batch: it slices
    each batched value entering them along dim 0 (`memfmt.slice`), clones
    the ops at the sub-batch size, and concatenates each value leaving them
    (`memfmt.cat` along dim 0). The sub-batch is the largest divisor of the
    batch below it that brings every one of those ops within
    `cache-bytes` (1 if none does). Each sub-batch reads the weights
    again, so the tiled ops also stop before their weights together span
    more than `cache-bytes`. The memory plan then reuses one sub-batch's
    buffers for the next, so the arena shrinks too, and the runtime packs
    each weight once for all of them.

    With `sub-batch` set, the tiled ops are all the ops of the prefix that
    compute each sample alone, and the sub-batch is the one given; it must
    divide the batch when the batch is more than 1 (a located error
    otherwise).

    Weights and load-time values are shared by every sub-batch; an operand
    indexed by sample that does not depend on the arguments (a constant
    `[N, ...]` added to the activations) ends the tiled ops before it.
    Values never change (L8): each sample is computed by the same ops on
    the same data. A function whose batch is 1, or whose ops all fit,
    is left as it is.
  }];
  let options = [
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"16 << 20",
           "Bytes an op's batched operands and results may span before it "
           "runs per sub-batch (0: no tiling)">,
    Option<"subBatch", "sub-batch", "int64_t", /*default=*/"0",
           "Run every op that computes each sample alone this many samples "
           "at a time, whatever their sizes (0: chosen by cache-bytes); "
           "must divide the batch">,
  ];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def ConvertPrecision : Pass<"memfmt-convert-precision",
                            "::mlir::func::FuncOp"> {
  let summary = "Compute in f16 or bf16 behind an f32 signature";
  let description = [{
    Retypes every f32 tensor inside the function (activations and
    parameters, encodings kept) to `precision`, converts f32 arguments at
    entry and results at exit with `memfmt.to` (folding a layout conversion
    at entry or exit into that `memfmt.to`), so callers keep passing and
    receiving f32 (memfmt-compile --precision, AMP-style). Kernels keep f32
    arithmetic and accumulation. In a training step (mixed precision) what
    automatic mixed precision keeps f32 stays f32: the tensors ops declare
    f32 (MixedPrecisionOpInterface: batch-norm statistics, weight
    gradients, the loss, the SGD update), the model state the step assigns
    (master weights, momentum buffers, running statistics) and constants;
    an op reading a value of the other type reads one `memfmt.to` of it
    (a weight is rounded to bf16 once per step). `precision=f32` does
    nothing; the pass is idempotent.
  }];
  let options = [
    Option<"precision", "precision", "::mlir::memfmt::ComputePrecision",
           /*default=*/"::mlir::memfmt::ComputePrecision::BF16",
           "Element type to compute in ('f32': no change)",
           "::mlir::memfmt::computePrecisionValues()">,
  ];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def VerifyLayouts : Pass<"memfmt-verify-layouts", "::mlir::ModuleOp"> {
  let summary = "Check the layout invariants the layout passes establish";
  let description = [{
    Fails with a located error where an op that declares L5 has a
    channels-last 4-D/5-D operand but a result that is not channels-last
    (the signature of a dropped encoding), and, with `contiguous-operands`,
    where an operand that must be contiguous (L7) is not. Run it after each
    layout pass in tests.
  }];
  let options = [
    Option<"contiguousOperands", "contiguous-operands", "bool",
           /*default=*/"false",
           "Also check L7: operands that must be contiguous are">,
  ];
}

def Report : Pass<"memfmt-report", "::mlir::ModuleOp"> {
  let summary = "Report every layout conversion left, as text or JSON";
  let description = [{
    Lists every `memfmt.contiguous` that moves bytes at run time: location,
    shape, from and to format, bytes moved per run (read + write) and why it
    is there, followed by totals. Conversions of parameters and L3 no-ops
    move no bytes and are counted separately. The IR is not changed.
  }];
  let options = [
    Option<"format", "format", "::mlir::memfmt::ReportFormat",
           /*default=*/"::mlir::memfmt::ReportFormat::Text",
           "Form of the report", "::mlir::memfmt::reportFormatValues()">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the report to ('-' for stderr)">,
  ];
}

//===----------------------------------------------------------------------===//
// Training (issue 15): the forward with its loss, and the SGD update
//===----------------------------------------------------------------------===//

def TrainingForward : Pass<"memfmt-training-forward", "::mlir::func::FuncOp"> {
  let summary = "Turn an inference forward into a training forward with its "
                "loss";
  let description = [{
    On each public function with a body (the model's forward, as
    memfmt-compile picks it), which must return exactly one `[N, C]` tensor
    (the logits):

      * each `memfmt.batch_norm` becomes `memfmt.native_batch_norm` (batch
        statistics; same `eps` and `momentum`), and its updated running
        statistics are stored with `memfmt.assign_weight` (the running
        statistics must be `memfmt.weight`s);
      * each `memfmt.max_pool2d` becomes `memfmt.max_pool2d_with_indices`
        (its backward needs the indices);
      * a last argument `%target: tensor<Nxi64>` (class indices) is added and
        the function returns `memfmt.cross_entropy_loss(logits, target)`, a
        0-d tensor, instead of the logits.

    Located errors: not exactly one result, a result that is not `[N, C]`,
    a batch norm in training mode or with a running statistic that is not a
    parameter, a running statistic two batch norms share, a batch norm with
    one value per channel (training divides by n - 1), a function already
    turned into a training step, or a model fused for inference.
  }];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def FuseTraining : Pass<"memfmt-fuse-training", "::mlir::func::FuncOp"> {
  let summary = "Fuse relu and residual adds into training batch norms and "
                "relu's gradient into their backward";
  let description = [{
    Training fusion, run on a training step (after memfmt-differentiate and
    memfmt-apply-sgd, before the layout passes), as torch.compile fuses
    the memory-bound ops around batch norm:

      * `add(native_batch_norm(x)#0, r)` (either operand order, equal
        shapes) becomes `native_batch_norm(x) residual r`, and
        `relu(native_batch_norm(...)#0)` the batch norm with `relu` set,
        where the batch norm's output has no other use; users of its other
        results that stand before the add (the running statistics'
        `memfmt.assign_weight`) move after the fused op;
      * `native_batch_norm_backward(threshold_backward(g, y, 0), x, ...)`,
        where `y` is the output of the relu-fused batch norm of `x` and the
        threshold_backward has no other use, becomes
        `native_batch_norm_backward(g, x, ...) output y` with `relu` set.

    Values never change (L8): the fused kernels round as the separate ops
    do. memfmt-compile --train runs it for the CPU (unless --fusion=false).
  }];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def ApplySgd : Pass<"memfmt-apply-sgd", "::mlir::func::FuncOp"> {
  let summary = "Replace gradient results by in-place SGD updates";
  let description = [{
    Consumes what memfmt-differentiate produces: a function returning the
    loss followed by gradients, each gradient result carrying the result
    attribute `memfmt.gradient_of = "<weight name>"`. Each such result is
    replaced by, after every other op of the function (so every read of the
    parameter comes before its update), `memfmt.weight
    "<name>.momentum_buffer" {zero_init}` (when `momentum` != 0),
    `memfmt.sgd_update` and `memfmt.assign_weight` of the new parameter and
    momentum buffer; the function then returns the other results (the
    loss). The defaults are torchvision's ResNet recipe (lr 0.1, momentum
    0.9, weight decay 1e-4). Options are checked as torch.optim.SGD checks
    them. With `dampening` != 0 and momentum the first step differs from
    the others (torch sets the buffer to the undamped gradient), so the
    updates also read the step count `memfmt.weight "optimizer.step"
    {zero_init} : tensor<i64>` and assign it `memfmt.increment`ed.

    A step whose gradients come from a scaled loss (memfmt-differentiate
    with `loss-scale`: the function has one `memfmt.loss_scale`) gets
    GradScaler's step: every gradient is averaged over the replicas and
    unscaled (`memfmt.unscale_gradient`, whose flag is chained through all
    of them) before any update; the updates and the step count are skipped
    where a gradient was not finite (`found_inf`); and
    `memfmt.update_loss_scale` with the `loss-scale-*` options computes the
    next scale, assigned to `grad_scaler.scale` with its growth tracker
    `grad_scaler.growth_tracker` (0-d i64, zero_init).
  }];
  let options = [
    Option<"lr", "lr", "double", /*default=*/"0.1", "Learning rate (>= 0)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (>= 0; 0 keeps no momentum buffers)">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "Dampening for momentum (0 with nesterov)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"1.0e-4",
           "Weight decay, L2 penalty (>= 0)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum (needs momentum > 0 and dampening 0)">,
    Option<"growthFactor", "loss-scale-growth-factor", "double",
           /*default=*/"2.0",
           "A scaled loss: the scale's factor after growth-interval finite "
           "steps (> 1; GradScaler's growth_factor)">,
    Option<"backoffFactor", "loss-scale-backoff-factor", "double",
           /*default=*/"0.5",
           "A scaled loss: the scale's factor after a step with a "
           "non-finite gradient (in (0, 1); GradScaler's backoff_factor)">,
    Option<"growthInterval", "loss-scale-growth-interval", "int64_t",
           /*default=*/"2000",
           "A scaled loss: finite steps before the scale grows (>= 1; "
           "GradScaler's growth_interval)">,
  ];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect"];
}

def Differentiate : Pass<"memfmt-differentiate", "::mlir::func::FuncOp"> {
  let summary = "Build the reverse sweep: the loss and every trainable "
                "weight's gradient";
  let description = [{
    For a function whose single result is a 0-d float tensor (the loss),
    builds the gradients of the loss with respect to its trainable weights
    from the ops' vector-Jacobian products (VjpOpInterface; the pass knows
    no op by name). A trainable weight is a `memfmt.weight` without
    `zero_init` that reaches the loss through operands and results the ops
    declare differentiable (a batch norm's running statistics do not).
    Activity analysis builds only gradients that lie on a path from a
    trainable weight to the loss: the input image's gradient is never
    computed (`output_mask` false). The sweep is seeded with
    `arith.constant dense<1.0>`; a value with several uses (the residual)
    gets the sum of its gradients with `memfmt.add`, in its own format
    (L9). The function then returns the loss followed by one gradient per
    trainable weight, in the order the weights are first read, each result
    marked `memfmt.gradient_of = "<weight name>"` (what memfmt-apply-sgd
    consumes). Located errors: a function without a single 0-d float
    result, an op on a weight-to-loss path without a VJP, no trainable
    weight.

    With `loss-scale` > 0 the gradients are those of the loss times a
    dynamic loss scale (torch.cuda.amp.GradScaler's `scale(loss)`): the
    seed is `memfmt.loss_scale` of the model state `grad_scaler.scale`
    (0-d f32, zero_init), `loss-scale` being the scale of the first step.
    The returned loss is the unscaled one; memfmt-apply-sgd unscales the
    gradients.
  }];
  let options = [
    Option<"lossScale", "loss-scale", "double", /*default=*/"0.0",
           "The initial dynamic loss scale (GradScaler's init_scale); 0 "
           "for none">,
  ];
  let dependentDialects = ["::mlir::memfmt::MemFmtDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // MEMFMT_TRANSFORMS_PASSES_TD
