//===- Passes.h - memfmt layout passes --------------------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Declares the layout passes, the enums their choice options take (with
// the spellings users type), and the pipelines: `memfmt-channels-last`
// (the layout passes), `memfmt-compile-pipeline` (what memfmt-compile runs
// between loading a model and lowering it) and `memfmt-training-pipeline`
// (the same for memfmt-compile --train).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_DIALECT_MEMFMT_TRANSFORMS_PASSES_H
#define MEMFMT_DIALECT_MEMFMT_TRANSFORMS_PASSES_H

#include "memfmt/Dialect/MemFmt/IR/MemFmtAttrs.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

#include <memory>
#include <string>

namespace mlir::memfmt {

//===----------------------------------------------------------------------===//
// Choices of pass and pipeline options
//===----------------------------------------------------------------------===//

/// How 4-D/5-D function arguments enter (memfmt-propagate-channels-last
/// `inputs`).
enum class InputsMode {
  Convert,      ///< "convert": a conversion to channels-last at entry
  ChannelsLast, ///< "channels-last": the arguments are declared channels-last
  Keep,         ///< "keep": as declared
};

/// The layout of 4-D/5-D parameters (`weights`).
enum class WeightsMode {
  ChannelsLast, ///< "channels-last": re-laid once
  Keep,         ///< "keep": as declared
};

/// What 4-D/5-D results do (`outputs`).
enum class OutputsMode {
  Keep,         ///< "keep": converted back to the declared format
  ChannelsLast, ///< "channels-last": the signature changes
};

/// The element type a model computes in (memfmt-convert-precision,
/// memfmt-compile --precision).
enum class ComputePrecision { F32, F16, BF16 };

/// The form of the layout report (memfmt-report `format`).
enum class ReportFormat { Text, Json };

/// The device a compiled model runs on (memfmt-compile --target).
enum class CompileTarget { Cpu, Cuda };

/// The spelled values of each choice, for `llvm::cl` options (pass options
/// in Passes.td, pipeline options, memfmt-compile's flags): one list per
/// enum, so a value is spelled the same everywhere.
llvm::cl::ValuesClass inputsModeValues();
llvm::cl::ValuesClass weightsModeValues();
llvm::cl::ValuesClass outputsModeValues();
llvm::cl::ValuesClass computePrecisionValues();
llvm::cl::ValuesClass reportFormatValues();
llvm::cl::ValuesClass compileTargetValues();
/// `channels-last` and `contiguous` (the memory formats a model runs in or
/// takes its input in).
llvm::cl::ValuesClass modelMemoryFormatValues();

/// The element type `precision` computes in.
Type getComputeElementType(MLIRContext *context, ComputePrecision precision);

/// The spelling of `precision` ("f32", "f16", "bf16").
StringRef stringifyComputePrecision(ComputePrecision precision);

/// False where `target` has no kernels for `precision` (f16 on the CPU,
/// whose reduced-precision kernels are bf16).
bool isPrecisionAvailable(CompileTarget target, ComputePrecision precision);

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

#define GEN_PASS_DECL
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"

/// Options of the `memfmt-channels-last` pipeline, passed through to
/// memfmt-propagate-channels-last.
struct ChannelsLastPipelineOptions
    : public PassPipelineOptions<ChannelsLastPipelineOptions> {
  Option<InputsMode> inputs{
      *this, "inputs", llvm::cl::desc("How 4-D/5-D arguments enter"),
      llvm::cl::init(InputsMode::Convert), inputsModeValues()};
  Option<WeightsMode> weights{
      *this, "weights", llvm::cl::desc("Layout of 4-D/5-D parameters"),
      llvm::cl::init(WeightsMode::ChannelsLast), weightsModeValues()};
  Option<OutputsMode> outputs{
      *this, "outputs", llvm::cl::desc("What 4-D/5-D results do"),
      llvm::cl::init(OutputsMode::Keep), outputsModeValues()};
};

/// propagate-channels-last, materialize-contiguous, fold-conversions,
/// canonicalize and cse, on every function of the module.
void buildChannelsLastPipeline(OpPassManager &pm,
                               const ChannelsLastPipelineOptions &options);

/// The options memfmt-compile's pipelines share: memfmt-compile's flags of
/// the same names, plus where the layout reports go.
template <typename Derived>
struct ModelPipelineOptions : public PassPipelineOptions<Derived> {
  template <typename T>
  using Option = ::mlir::detail::PassOptions::Option<T>;

  Option<MemoryFormat> memoryFormat{
      *this, "memory-format", llvm::cl::desc("Memory format the model runs in"),
      llvm::cl::init(MemoryFormat::ChannelsLast), modelMemoryFormatValues()};
  Option<MemoryFormat> inputFormat{
      *this, "input-format",
      llvm::cl::desc("Memory format of the input the caller passes"),
      llvm::cl::init(MemoryFormat::Contiguous), modelMemoryFormatValues()};
  Option<ComputePrecision> precision{
      *this, "precision",
      llvm::cl::desc("Element type of activations and parameters"),
      llvm::cl::init(ComputePrecision::F32), computePrecisionValues()};
  Option<CompileTarget> target{
      *this, "target", llvm::cl::desc("Device the model runs on"),
      llvm::cl::init(CompileTarget::Cpu), compileTargetValues()};
  Option<std::string> reportText{
      *this, "report-text",
      llvm::cl::desc("File for the text layout report ('' for none, '-' "
                     "for stderr)"),
      llvm::cl::init("")};
  Option<std::string> reportJson{
      *this, "report-json",
      llvm::cl::desc("File for the JSON layout report ('' for none, '-' "
                     "for stderr)"),
      llvm::cl::init("")};
};

/// Options of the `memfmt-compile-pipeline` pipeline: the shared ones and
/// fusion.
struct CompilePipelineOptions
    : public ModelPipelineOptions<CompilePipelineOptions> {
  Option<bool> fusion{*this, "fusion",
                      llvm::cl::desc("Fold batch norms into convolutions and "
                                     "fuse residual adds and relus into them"),
                      llvm::cl::init(true)};
  Option<int64_t> tileBatchBytes{
      *this, "tile-batch-bytes",
      llvm::cl::desc("CPU: run the first layers per sub-batch where their "
                     "batched operands and results span more than this many "
                     "bytes (memfmt-tile-batch; 0: off)"),
      llvm::cl::init(16 << 20)};
  Option<int64_t> subBatch{
      *this, "sub-batch",
      llvm::cl::desc("CPU: run every op that computes each sample alone "
                     "this many samples at a time (memfmt-tile-batch; 0: "
                     "chosen by tile-batch-bytes)"),
      llvm::cl::init(0)};
};

/// Discardable attribute memfmt-tile-batch leaves on a function it tiled:
/// {batch, ops (how many were tiled), sub_batch}, all i64.
inline constexpr llvm::StringLiteral kBatchTilingAttrName =
    "memfmt.batch_tiling";

/// The model state tensor memfmt-apply-sgd keeps the optimizer's step count
/// in (0-d i64, zero_init) when the update needs it (dampening != 0 with
/// momentum); checkpoints save it with the momentum buffers.
inline constexpr llvm::StringLiteral kStepCountName = "optimizer.step";

/// The model state of a dynamic loss scaler (memfmt-differentiate's
/// `loss-scale`, memfmt-apply-sgd): the scale (0-d f32) and the count of
/// finite steps since it last changed (0-d i64), both zero_init and saved
/// with the optimizer's state. GradScaler's state_dict calls them "scale"
/// and "_growth_tracker".
inline constexpr llvm::StringLiteral kLossScaleName = "grad_scaler.scale";
inline constexpr llvm::StringLiteral kGrowthTrackerName =
    "grad_scaler.growth_tracker";

/// What memfmt-compile runs between loading a model and lowering it:
/// declare channels-last inputs (NCHW build with channels-last input),
/// fusion, the layout passes of `memoryFormat`, the layout check, the
/// reports, then the precision conversion and another check, and on the
/// CPU the batch tiling. Requires
/// isPrecisionAvailable(options.target, options.precision).
void buildMemFmtCompilePipeline(OpPassManager &pm,
                                const CompilePipelineOptions &options);

/// Options of the `memfmt-training-pipeline` pipeline: the shared ones
/// (precision f32, or bf16 mixed precision on the cpu target) plus
/// memfmt-apply-sgd's.
/// The SGD defaults are torchvision's ResNet recipe, as memfmt-compile
/// --train's.
struct TrainingPipelineOptions
    : public ModelPipelineOptions<TrainingPipelineOptions> {
  Option<double> lr{*this, "lr", llvm::cl::desc("SGD learning rate"),
                    llvm::cl::init(0.1)};
  Option<double> momentum{*this, "momentum",
                          llvm::cl::desc("SGD momentum factor"),
                          llvm::cl::init(0.9)};
  Option<double> dampening{*this, "dampening",
                           llvm::cl::desc("SGD dampening for momentum"),
                           llvm::cl::init(0.0)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("SGD weight decay (L2 penalty)"),
                             llvm::cl::init(1.0e-4)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("SGD with Nesterov momentum"),
                        llvm::cl::init(false)};
  Option<bool> gradients{
      *this, "gradients",
      llvm::cl::desc("No SGD update: the step returns the loss and every "
                     "parameter's gradient (marked memfmt.gradient_of)"),
      llvm::cl::init(false)};
  Option<bool> fusion{
      *this, "fusion",
      llvm::cl::desc("Fuse relus and residual adds into the training batch "
                     "norms and relu's gradient into their backward "
                     "(memfmt-fuse-training; CPU target only)"),
      llvm::cl::init(true)};
  Option<double> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("Dynamic loss scaling (torch.cuda.amp.GradScaler) from "
                     "this initial scale; 0 for none"),
      llvm::cl::init(0.0)};
  Option<double> lossScaleGrowthFactor{
      *this, "loss-scale-growth-factor",
      llvm::cl::desc("GradScaler's growth_factor (> 1)"), llvm::cl::init(2.0)};
  Option<double> lossScaleBackoffFactor{
      *this, "loss-scale-backoff-factor",
      llvm::cl::desc("GradScaler's backoff_factor (in (0, 1))"),
      llvm::cl::init(0.5)};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval",
      llvm::cl::desc("GradScaler's growth_interval (>= 1)"),
      llvm::cl::init(2000)};
};

/// Why `options` cannot build a training step ("" when they can): f16, bf16
/// on a target other than the CPU, or SGD options checkSgdOptions rejects.
/// memfmt-compile --train checks the same.
std::string
checkTrainingPipelineOptions(const TrainingPipelineOptions &options);

/// What memfmt-compile --train runs between loading a model and lowering
/// it: memfmt-training-forward, memfmt-differentiate, memfmt-apply-sgd
/// (unless `gradients`), memfmt-fuse-training (with `fusion`, on the CPU),
/// then the compile pipeline's layout passes, layout check and reports (no
/// inference fusion) over the whole training step, and with precision bf16
/// its precision conversion (mixed precision: f32 master weights, optimizer
/// state, statistics and loss). Requires
/// checkTrainingPipelineOptions(options) to be "".
void buildMemFmtTrainingPipeline(OpPassManager &pm,
                                 const TrainingPipelineOptions &options);

/// torch.optim.SGD's checks of its arguments: the reason the options are
/// rejected, spelled with memfmt-apply-sgd's option names, or "" when they
/// are fine.
std::string checkSgdOptions(double lr, double momentum, double dampening,
                            double weightDecay, bool nesterov);

/// GradScaler's checks of a dynamic loss scale: the initial scale (0 for
/// none, else finite in f32 and > 0), growth factor > 1, 0 < backoff factor
/// < 1, growth interval >= 1. The reason the options are rejected, with
/// memfmt-training-pipeline's option names, or "".
std::string checkInitialLossScale(double initScale);
std::string checkLossScaleOptions(std::optional<double> initScale,
                                  double growthFactor, double backoffFactor,
                                  int64_t growthInterval);

#define GEN_PASS_REGISTRATION
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h.inc"

/// Registers the `memfmt-channels-last`, `memfmt-compile-pipeline` and
/// `memfmt-training-pipeline` pipelines (the passes themselves are registered
/// by the generated registerMemFmtPasses()).
void registerMemFmtPipelines();

} // namespace mlir::memfmt

#endif // MEMFMT_DIALECT_MEMFMT_TRANSFORMS_PASSES_H
