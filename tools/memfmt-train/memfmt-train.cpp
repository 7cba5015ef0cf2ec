//===- memfmt-train.cpp - Train a compiled training-step model ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The command-line driver of training (see --help, Options.cpp):
//
//   memfmt-train DIR --data FILE.npz [--data-format contiguous|channels-last]
//                [--steps N | --epochs N] [--shuffle SEED | --no-shuffle]
//                [--log-every K] [--eval FILE.npz] [--save FILE.safetensors]
//                [--resume FILE.safetensors] [--json] [--profile]
//                [--threads N] [--allow-bf16] [--collective-timeout SECONDS]
//                [--sync-batch-norm]
//
// Under Open MPI's launcher (`mpirun -np R memfmt-train DIR ...`) each
// process is one replica of data-parallel training (Distributed.h): global
// step i takes rows [i*R*N, (i+1)*R*N) of the epoch's order and replica r
// its r-th N rows, the step averages the gradients over the replicas
// (memfmt.all_reduce) so every replica applies the same update, and
// rank 0's state is broadcast at start; rank 0 prints, evaluates and saves.
// Batch-norm statistics are each replica's own, as in DistributedData-
// Parallel (whose broadcast of rank 0's buffers leaves rank 0's, the ones
// saved, as they are here), or with --sync-batch-norm the global batch's
// (torch.nn.SyncBatchNorm).
//
// DIR is a training-step model written by memfmt-compile --train: inputs
// `x` (f32 [N,C,H,W], at the strides of its input format) and `y` (i64
// [N]), one output, the mean cross-entropy loss (f32, shape []); each run is
// one SGD step that updates the model's state in place. DIR/eval holds the
// inference model of the same network, with the same parameter names.
// Everything is checked before the first step (the model's signature, the
// data against it, the --save path), so a mistake costs no training time.
// The files: Options (command line), Data (arrays, order, batches),
// Checkpoint (safetensors state and the eval model's parameters), Profile
// (--profile's kernel times), Distributed (the replicas), this one
// (the loop, the report, eval).
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "CommandLine.h"
#include "Data.h"
#include "Distributed.h"
#include "Options.h"
#include "Profile.h"

#include "memfmt/runtime/loader/Manifest.h"
#include "memfmt/runtime/model.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace memfmt::train;
using memfmt::run::fail;

namespace {

using Clock = std::chrono::steady_clock;

struct ContextDeleter {
  void operator()(memfmt_context_t *C) const { memfmt_context_destroy(C); }
};
struct ModelDeleter {
  void operator()(memfmt_model_t *M) const { memfmt_model_destroy(M); }
};
using ContextPtr = std::unique_ptr<memfmt_context_t, ContextDeleter>;
using ModelPtr = std::unique_ptr<memfmt_model_t, ModelDeleter>;

ModelPtr loadModel(memfmt_context_t *Ctx, const std::string &Dir,
                   const char *Weights) {
  memfmt_model_t *Model = nullptr;
  if (memfmt_model_load(Ctx, Dir.c_str(), Weights, &Model) != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(Ctx));
  return ModelPtr(Model);
}

/// Checks that \p Model is a training step: inputs f32 images and i64
/// labels of one batch, one f32 scalar output.
void checkTrainingModel(memfmt_model_t *Model, const std::string &Dir,
                        const ImageInput &X) {
  memfmt_model_info_t Info;
  memfmt_model_get_info(Model, &Info);
  memfmt_model_tensor_info_t Y, Loss;
  std::string Why;
  if (Info.num_inputs != 2)
    Why = "it has " + std::to_string(Info.num_inputs) +
          " inputs, not 2 (images and labels)";
  else if (memfmt_model_input_info(Model, 1, &Y),
           std::strcmp(Y.dtype, "i64") != 0 || Y.rank != 1 || Y.shape[0] != X.N)
    Why = std::string("input 1 (") + Y.name + ") is " + Y.dtype + " of rank " +
          std::to_string(Y.rank) + ", not the labels, i64 [" +
          std::to_string(X.N) + "]";
  else if (Info.num_outputs != 1)
    Why = "it has " + std::to_string(Info.num_outputs) +
          " outputs, not 1 (the loss)";
  else if (memfmt_model_output_info(Model, 0, &Loss),
           std::strcmp(Loss.dtype, "f32") != 0 || Loss.rank != 0)
    Why = std::string("output 0 (") + Loss.name + ") is " + Loss.dtype +
          " of rank " + std::to_string(Loss.rank) +
          ", not the loss, an f32 scalar";
  if (!Why.empty())
    fail(Dir +
         " is not a training model (memfmt-compile --train writes "
         "one): " +
         Why);
}

const char *formatName(DataFormat F) {
  return F == DataFormat::ChannelsLast ? "channels-last" : "contiguous";
}

/// Top-1 accuracy of the model in \p Dir on \p Path, after copying the
/// trained parameters of \p Trained into it.
nlohmann::json evaluate(memfmt_context_t *Ctx, memfmt_model_t *Trained,
                        const Options &Opts) {
  std::string Dir = Opts.Dir + "/eval";
  ModelPtr Model = loadModel(Ctx, Dir, nullptr);
  copyParameters(Trained, Model.get(), Dir);
  ImageInput X = imageInput(Model.get(), Dir);
  memfmt_model_info_t Info;
  memfmt_model_get_info(Model.get(), &Info);
  memfmt_model_tensor_info_t Out;
  if (Info.num_inputs != 1 || Info.num_outputs != 1 ||
      (memfmt_model_output_info(Model.get(), 0, &Out), Out.rank != 2) ||
      Out.shape[0] != X.N || std::strcmp(Out.dtype, "f32") != 0)
    fail(Dir + " is not an inference model with one image input and f32 "
               "logits [N,classes]");
  Dataset Data = loadDataset(*Opts.Eval, Opts.Format, X);
  BatchFeeder Feeder(Data, X);
  std::vector<float> Logits(static_cast<size_t>(Out.buffer_bytes / 4));
  const int64_t *Labels = reinterpret_cast<const int64_t *>(Data.Y.Data.data());
  int64_t Correct = 0, Classes = Out.shape[1];
  for (int64_t First = 0; First < Data.Rows; First += X.N) {
    int64_t Count = std::min(X.N, Data.Rows - First);
    std::vector<int64_t> Rows(static_cast<size_t>(Count));
    for (int64_t I = 0; I < Count; ++I)
      Rows[static_cast<size_t>(I)] = First + I;
    const void *In[] = {Feeder.images(Rows.data(), Count)};
    void *OutBuf[] = {Logits.data()};
    if (memfmt_model_run(Model.get(), In, OutBuf) != MEMFMT_STATUS_OK)
      fail(std::string("eval: ") + memfmt_context_last_error(Ctx));
    for (int64_t I = 0; I < Count; ++I) {
      int64_t Best = 0;
      for (int64_t K = 1; K < Classes; ++K)
        if (Logits[I * Out.strides[0] + K * Out.strides[1]] >
            Logits[I * Out.strides[0] + Best * Out.strides[1]])
          Best = K;
      Correct += Best == Labels[First + I];
    }
  }
  return {{"file", *Opts.Eval},
          {"images", Data.Rows},
          {"correct", Correct},
          {"top1", Data.Rows ? double(Correct) / double(Data.Rows) : 0.0}};
}

/// The context of the model's target: the CPU, or for a model compiled
/// with --target cuda the GPU, where each step is one CUDA graph replayed
/// (captured on the first step; the data is copied to the model's input
/// buffers before each).
ContextPtr createContext(const Options &Opts) {
  memfmt::io::Result<memfmt::loader::Manifest> M =
      memfmt::loader::readManifest(Opts.Dir);
  const bool Cuda = M && M->Target == "cuda";
  memfmt_context_options_t CtxOptions;
  memfmt_context_options_init(&CtxOptions);
  CtxOptions.num_threads = Opts.Threads;
  if (Opts.AllowBf16)
    CtxOptions.allow_bf16 = MEMFMT_SWITCH_ON;
  if (Cuda) {
    CtxOptions.backend = MEMFMT_BACKEND_CUDA;
    CtxOptions.cuda_graph = MEMFMT_SWITCH_ON;
  }
  memfmt_context_t *RawCtx = nullptr;
  if (memfmt_context_create(&CtxOptions, &RawCtx) != MEMFMT_STATUS_OK)
    fail(Cuda ? Opts.Dir +
                    " is a CUDA training step (target cuda), but no "
                    "CUDA context can be created: " +
                    memfmt_context_last_error(nullptr)
              : "cannot create the runtime context: " +
                    std::string(memfmt_context_last_error(nullptr)));
  return ContextPtr(RawCtx);
}

int train(const Options &Opts, Replicas &Group) {
  ContextPtr Ctx = createContext(Opts);
  Group.attach(Ctx.get(), Opts.SyncBatchNorm);
  const bool Leader = Group.rank() == 0;

  if (Opts.Save && Leader) {
    checkWritable(*Opts.Save);
    checkWritable(optimizerPath(*Opts.Save));
  }
  ModelPtr Model = loadModel(Ctx.get(), Opts.Dir,
                             Opts.Resume ? Opts.Resume->c_str() : nullptr);
  ImageInput X = imageInput(Model.get(), Opts.Dir);
  checkTrainingModel(Model.get(), Opts.Dir, X);
  Dataset Data = loadDataset(Opts.Data, Opts.Format, X);
  // One global batch: a batch of the model per replica.
  const int64_t GlobalBatch = X.N * Group.size();
  if (Data.Rows < GlobalBatch)
    fail(Opts.Data + ": " + std::to_string(Data.Rows) +
         " rows, fewer than one batch of " + std::to_string(X.N) +
         (Group.size() > 1 ? " per replica for " +
                                 std::to_string(Group.size()) + " replicas"
                           : std::string()));
  int64_t Tracked = initialStep(Model.get());
  int64_t Start = Opts.Resume ? resumeOptimizer(Model.get(), *Opts.Resume) : 0;
  Group.broadcastState(Model.get());

  const int64_t PerEpoch = Data.Rows / GlobalBatch;
  const int64_t Steps =
      Opts.Steps ? *Opts.Steps : PerEpoch * Opts.Epochs.value_or(1);
  RowOrder Order(Data.Rows, Opts.ShuffleSeed);
  BatchFeeder Feeder(Data, X);
  memfmt_model_info_t Info;
  memfmt_model_get_info(Model.get(), &Info);

  std::vector<double> Losses, StepMs;
  double Seconds = 0.0;
  for (int64_t S = 0; S < Steps; ++S) {
    int64_t Global = Start + S;
    const std::vector<int64_t> &Rows = Order.epoch(Global / PerEpoch);
    const int64_t *Batch = Rows.data() + (Global % PerEpoch) * GlobalBatch +
                           Group.rank() * X.N;
    float Loss = 0.0f;
    if (Opts.Profile && S == std::min<int64_t>(1, Steps - 1)) {
      memfmt_context_profile_reset(Ctx.get());
      memfmt_context_set_profiling(Ctx.get(), 1);
    }
    auto Begin = Clock::now();
    const void *In[] = {Feeder.images(Batch, X.N), Feeder.labels(Batch, X.N)};
    void *Out[] = {&Loss};
    if (memfmt_model_run(Model.get(), In, Out) != MEMFMT_STATUS_OK)
      fail("step " + std::to_string(S + 1) + ": " +
           memfmt_context_last_error(Ctx.get()));
    double Took = std::chrono::duration<double>(Clock::now() - Begin).count();
    Loss = Group.mean(Loss); // The global batch's mean loss.
    Seconds += Took;
    Losses.push_back(Loss);
    StepMs.push_back(Took * 1e3);
    if (Leader && !Opts.Json &&
        ((S + 1) % Opts.LogEvery == 0 || S + 1 == Steps))
      std::printf("step %lld/%lld  loss %.4f  images/s %.1f\n",
                  static_cast<long long>(S + 1), static_cast<long long>(Steps),
                  Loss, Took > 0 ? double(GlobalBatch) / Took : 0.0);
    std::fflush(stdout);
  }
  double ImagesPerSecond =
      Seconds > 0 ? double(Steps * GlobalBatch) / Seconds : 0.0;
  nlohmann::json Profile;
  if (Opts.Profile) {
    memfmt_context_set_profiling(Ctx.get(), 0);
    // Steps after the first, or the only one.
    int64_t First = std::min<int64_t>(1, Steps - 1);
    double Ms = 0;
    for (size_t I = static_cast<size_t>(First); I < StepMs.size(); ++I)
      Ms += StepMs[I];
    Profile = summariseProfile(Model.get(), Steps - First,
                               Ms / double(Steps - First));
  }

  if (!Leader)
    return 0; // Rank 0 reports, saves and evaluates.
  if (Opts.Save)
    saveCheckpoint(Model.get(), *Opts.Save, Tracked + Steps);
  nlohmann::json Eval;
  if (Opts.Eval)
    Eval = evaluate(Ctx.get(), Model.get(), Opts);

  std::string Conversion = std::string("data ") + formatName(Opts.Format) +
                           ", model input " + Info.input_format;
  // A step compiled with --grad-scaler: the loss scale of its next step
  // (GradScaler's get_scale()); NOT_FOUND for a step without one.
  float LossScale = 0;
  const bool Scaled =
      memfmt_model_read_parameter(Model.get(), "grad_scaler.scale", &LossScale,
                                  1) == MEMFMT_STATUS_OK;
  if (Opts.Json) {
    nlohmann::json J = {
        {"model", Info.name},
        {"directory", Opts.Dir},
        {"data", Opts.Data},
        {"data_format", formatName(Opts.Format)},
        {"input_format", Info.input_format},
        {"batch", X.N},
        {"replicas", Group.size()},
        {"global_batch", GlobalBatch},
        {"rows", Data.Rows},
        {"batches_per_epoch", PerEpoch},
        {"shuffle", Opts.ShuffleSeed ? nlohmann::json(*Opts.ShuffleSeed)
                                     : nlohmann::json(nullptr)},
        {"start_step", Start},
        {"steps", Steps},
        {"losses", Losses},
        {"step_ms", StepMs},
        {"seconds", Seconds},
        {"device", memfmt_context_device_description(Ctx.get())},
        {"images_per_second", ImagesPerSecond},
        {"conversions", Feeder.conversions()},
        {"saved",
         Opts.Save ? nlohmann::json(*Opts.Save) : nlohmann::json(nullptr)},
        {"eval", Eval},
        {"loss_scale",
         Scaled ? nlohmann::json(LossScale) : nlohmann::json(nullptr)},
        {"profile", Profile}};
    std::printf("%s\n", J.dump(2).c_str());
    return 0;
  }
  std::string Across =
      Group.size() > 1 ? " x " + std::to_string(Group.size()) + " replicas" : "";
  std::printf("trained %s: %lld steps of batch %lld%s (steps %lld to %lld, "
              "%lld batches per epoch) in %.2f s, mean images/s %.1f, final "
              "loss %.4f\n",
              Info.name, static_cast<long long>(Steps),
              static_cast<long long>(X.N), Across.c_str(),
              static_cast<long long>(Start + 1),
              static_cast<long long>(Start + Steps),
              static_cast<long long>(PerEpoch), Seconds, ImagesPerSecond,
              Losses.empty() ? 0.0 : Losses.back());
  std::printf("conversions: %lld (%s)\n",
              static_cast<long long>(Feeder.conversions()), Conversion.c_str());
  std::printf("device: %s\n", memfmt_context_device_description(Ctx.get()));
  if (Scaled)
    std::printf("loss scale: %g (the next step's; steps with a non-finite "
                "gradient were skipped)\n",
                LossScale);
  if (Opts.Profile)
    printProfile(Profile);
  if (Opts.Save)
    std::printf("saved %s and %s\n", Opts.Save->c_str(),
                optimizerPath(*Opts.Save).c_str());
  if (Opts.Eval)
    std::printf("eval: top-1 %.2f%% (%lld of %lld images of %s)\n",
                100.0 * Eval["top1"].get<double>(),
                static_cast<long long>(Eval["correct"].get<int64_t>()),
                static_cast<long long>(Eval["images"].get<int64_t>()),
                Opts.Eval->c_str());
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  std::unique_ptr<Replicas> Group;
  int Code = memfmt::run::runTool(
      "memfmt-train", Argc, Argv,
      [&] {
        Options Opts = parseArgs(Argc, Argv);
        Group = std::make_unique<Replicas>(Argc, Argv, Opts.CollectiveTimeout);
        try {
          return train(Opts, *Group);
        } catch (memfmt::run::ToolError &E) {
          if (Group->size() > 1)
            E.Message = "rank " + std::to_string(Group->rank()) + " of " +
                        std::to_string(Group->size()) + ": " + E.Message;
          throw;
        }
      },
      [](const std::string &Message, int ExitCode) {
        std::printf("%s\n", nlohmann::json(
                                {{"error", Message}, {"exit_code", ExitCode}})
                                .dump(2)
                                .c_str());
      });
  // The other replicas may be waiting for this one in a collective.
  if (Code != 0 && Group)
    Group->abortAll(Code);
  return Code;
}
