//===- Pipeline.cpp - memfmt's pass pipelines -----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The pass pipelines, built here so that memfmt-opt and memfmt-compile run
// the same passes:
//
//  * memfmt-channels-last: canonicalize (canonical forms such as
//    channel_shuffle first), propagate channels-last (with the options
//    passed through), make reshape conversions explicit, fold conversions,
//    then canonicalize and CSE. Running it twice gives the same IR as running
//    it once.
//  * memfmt-compile-pipeline: what memfmt-compile runs between loading a
//    model and lowering it (its step 3). In order: channels-last arguments
//    into an NCHW model (memory-format=contiguous input-format=
//    channels-last), canonicalization and fusion (x * sigmoid(x) is silu
//    before silu fuses into a convolution), the layout passes
//    (memfmt-channels-last for a channels-last model; for an NCHW model,
//    propagation of what the model
//    itself declares channels-last, L5, then the same clean-up), the layout
//    check, the reports, and last the precision conversion with a second
//    check (the report lists layout conversions, so it comes before the
//    dtype conversions). On the CPU, memfmt-tile-batch runs last: it
//    changes no layout, only how many samples each op computes at once.
//  * memfmt-training-pipeline: what memfmt-compile --train runs in its
//    step 3. The training step is built first (memfmt-training-forward,
//    memfmt-differentiate, memfmt-apply-sgd), so that the layout passes
//    (the compile pipeline's, hence the same report) run over forward,
//    backward and update together: L9 then holds by propagation, and the
//    report counts every conversion of the step. The inference fusion
//    stays off (folding a batch norm needs running statistics, and a
//    convolution epilogue would swallow a value the backward reads); the
//    training fusion (memfmt-fuse-training: relu and residual adds into the
//    batch norms, relu's gradient into their backward) runs after the
//    update for the CPU, whose kernels have those epilogues. Nor is the
//    batch tiled (training batch norm reduces over it). The step computes
//    in f32, or with precision=bf16 in mixed precision (the precision
//    conversion last, as for inference: activations and their gradients
//    bf16; master weights, optimizer state, batch-norm statistics, weight
//    gradients and the loss f32).
//
// memfmt-opt --memfmt-compile-pipeline on the input.mlir memfmt-compile
// writes reproduces its model.mlir (test/Tools/memfmt-compile/pipeline.test).
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::memfmt;

void mlir::memfmt::buildChannelsLastPipeline(
    OpPassManager &pm, const ChannelsLastPipelineOptions &options) {
  PropagateChannelsLastOptions propagate;
  propagate.inputs = options.inputs;
  propagate.weights = options.weights;
  propagate.outputs = options.outputs;
  // Canonical forms first (a channel shuffle written as reshape - permute -
  // reshape becomes memfmt.channel_shuffle before L7 would convert it).
  pm.addPass(createCanonicalizerPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createPropagateChannelsLast(propagate));
  funcPm.addPass(createMaterializeContiguous());
  funcPm.addPass(createFoldConversions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// The layout passes of an NCHW model: it adds no channels-last, but what
/// the model declares channels-last (a parameter, an argument) still makes
/// the results of its users channels-last (L5), which their declared types
/// may not say.
static void buildDeclaredLayoutPipeline(OpPassManager &pm) {
  PropagateChannelsLastOptions declared;
  declared.inputs = InputsMode::Keep;
  declared.weights = WeightsMode::Keep;
  declared.outputs = OutputsMode::Keep;
  pm.addPass(createCanonicalizerPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createPropagateChannelsLast(declared));
  funcPm.addPass(createMaterializeContiguous());
  funcPm.addPass(createFoldConversions());
  pm.addPass(createCanonicalizerPass());
}

void mlir::memfmt::buildMemFmtCompilePipeline(
    OpPassManager &pm, const CompilePipelineOptions &options) {
  bool channelsLastModel = options.memoryFormat == MemoryFormat::ChannelsLast;
  bool channelsLastInput = options.inputFormat == MemoryFormat::ChannelsLast;
  if (!channelsLastModel && channelsLastInput)
    pm.addNestedPass<func::FuncOp>(createDeclareChannelsLastInputs());
  if (options.fusion) {
    // Canonical forms first, so that x * sigmoid(x) fuses as silu.
    pm.addPass(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createFuseConv());
  }
  if (channelsLastModel) {
    ChannelsLastPipelineOptions layout;
    layout.inputs =
        channelsLastInput ? InputsMode::ChannelsLast : InputsMode::Convert;
    layout.weights = WeightsMode::ChannelsLast;
    layout.outputs = OutputsMode::Keep;
    buildChannelsLastPipeline(pm, layout);
  } else {
    buildDeclaredLayoutPipeline(pm);
  }
  pm.addPass(createVerifyLayouts(VerifyLayoutsOptions{true}));
  if (!options.reportText.empty())
    pm.addPass(
        createReport(ReportOptions{ReportFormat::Text, options.reportText}));
  if (!options.reportJson.empty())
    pm.addPass(
        createReport(ReportOptions{ReportFormat::Json, options.reportJson}));
  if (options.precision != ComputePrecision::F32) {
    pm.addNestedPass<func::FuncOp>(
        createConvertPrecision(ConvertPrecisionOptions{options.precision}));
    pm.addPass(createVerifyLayouts(VerifyLayoutsOptions{true}));
  }
  if (options.target == CompileTarget::Cpu &&
      (options.tileBatchBytes > 0 || options.subBatch > 0))
    pm.addNestedPass<func::FuncOp>(createTileBatch(
        TileBatchOptions{options.tileBatchBytes, options.subBatch}));
}

std::string mlir::memfmt::checkTrainingPipelineOptions(
    const TrainingPipelineOptions &options) {
  if (!isPrecisionAvailable(options.target, options.precision))
    return "precision=f16 training runs on target=cuda (the cpu's "
           "reduced-precision kernels are bf16)";
  std::string problem =
      checkSgdOptions(options.lr, options.momentum, options.dampening,
                      options.weightDecay, options.nesterov);
  if (problem.empty())
    problem = checkLossScaleOptions(
        options.lossScale.getValue(), options.lossScaleGrowthFactor,
        options.lossScaleBackoffFactor, options.lossScaleGrowthInterval);
  if (problem.empty() && options.gradients && options.lossScale != 0)
    problem = "loss-scale needs the SGD update: with gradients the step "
              "would return the gradients of the scaled loss";
  return problem;
}

void mlir::memfmt::buildMemFmtTrainingPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  // Canonical forms first, so that the VJPs are those of the ops the step
  // runs: x * sigmoid(x) differentiates as silu (one silu_backward, not a
  // sigmoid kept alive for its gradient beside the silu), an exporter's
  // reshape - permute - reshape as one channel_shuffle.
  pm.addPass(createCanonicalizerPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createTrainingForward());
  funcPm.addPass(createDifferentiate(DifferentiateOptions{options.lossScale}));
  ApplySgdOptions sgd;
  sgd.lr = options.lr;
  sgd.momentum = options.momentum;
  sgd.dampening = options.dampening;
  sgd.weightDecay = options.weightDecay;
  sgd.nesterov = options.nesterov;
  sgd.growthFactor = options.lossScaleGrowthFactor;
  sgd.backoffFactor = options.lossScaleBackoffFactor;
  sgd.growthInterval = options.lossScaleGrowthInterval;
  if (!options.gradients)
    funcPm.addPass(createApplySgd(sgd));
  if (options.fusion && options.target == CompileTarget::Cpu)
    funcPm.addPass(createFuseTraining());
  CompilePipelineOptions layout;
  layout.memoryFormat = options.memoryFormat;
  layout.inputFormat = options.inputFormat;
  layout.precision = options.precision;
  layout.fusion = false;
  layout.tileBatchBytes = 0;
  layout.subBatch = 0;
  layout.target = options.target;
  layout.reportText = options.reportText;
  layout.reportJson = options.reportJson;
  buildMemFmtCompilePipeline(pm, layout);
}

/// Registers a pipeline whose options `check` may reject when they are
/// parsed (PassPipelineRegistration's builder cannot fail): `check` returns
/// why, or "" to build the pipeline with `build`.
template <typename Options>
static void registerCheckedPipeline(StringRef name, StringRef description,
                                    std::string (*check)(const Options &),
                                    void (*build)(OpPassManager &,
                                                  const Options &)) {
  std::string prefix = name.str();
  registerPassPipeline(
      name, description,
      [=](OpPassManager &pm, StringRef text,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string problem = check(options);
        if (!problem.empty())
          return errorHandler(prefix + ": " + problem);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionsHandler) {
        optionsHandler(Options());
      });
}

/// What memfmt-compile-pipeline rejects: a precision the target has no
/// kernels for (as memfmt-compile does before any work).
static std::string
checkCompilePipelineOptions(const CompilePipelineOptions &options) {
  if (isPrecisionAvailable(options.target, options.precision))
    return "";
  return ("precision=" + stringifyComputePrecision(options.precision) +
          " is not available on target=cpu (its reduced-precision kernels "
          "are bf16)")
      .str();
}

void mlir::memfmt::registerMemFmtPipelines() {
  PassPipelineRegistration<ChannelsLastPipelineOptions>(
      "memfmt-channels-last",
      "Run memfmt's layout passes: propagate channels-last, make reshape "
      "conversions explicit, fold conversions, canonicalize, cse",
      buildChannelsLastPipeline);
  registerCheckedPipeline<CompilePipelineOptions>(
      "memfmt-compile-pipeline",
      "Run what memfmt-compile runs between loading a model and lowering "
      "it: fusion, the layout passes, the layout check and reports, and the "
      "precision conversion",
      checkCompilePipelineOptions, buildMemFmtCompilePipeline);
  registerCheckedPipeline<TrainingPipelineOptions>(
      "memfmt-training-pipeline",
      "Run what memfmt-compile --train runs between loading a model and "
      "lowering it: the training forward with its loss, differentiation, "
      "the SGD update, then the layout passes, check and reports over the "
      "whole step",
      checkTrainingPipelineOptions, buildMemFmtTrainingPipeline);
}
