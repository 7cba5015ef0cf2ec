//===- memfmt-run.cpp - Load, check and benchmark a compiled model --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The command-line driver of the model loader (memfmt/runtime/model.h):
//
//   memfmt-run DIR [--input FILE.npy | --input random[:SEED]]
//              [--output FILE.npy] [--check] [--bench N] [--profile] [--json]
//              [--weights SOURCE] [--threads N] [--cuda-graph] [--tf32]
//              [--no-winograd] [--allow-bf16]
//
// It loads the compiled model directory DIR into a context of the model's
// target (the CPU, or a CUDA GPU for memfmt-compile --target cuda), runs it
// once on the input (logical NCHW f32, from a .npy file or seeded normal noise;
// the loader re-lays it into the model's input strides) and prints a
// summary: the model, each output's shape and range and, for a 2-D [N,
// classes] output, the top-5 classes of the first image. Options add:
//
//   --check    a second context with the CPU reference kernels runs the same
//              model, weights and input; the maximum absolute error and the
//              relative error max|a - b| / max|b| over each output (b = the
//              reference) are compared with 1e-4 for f32 (1e-3 for f32 on
//              a GPU, where cuDNN may use Winograd or FFT algorithms; 1e-2
//              with --tf32; 1e-2 f16, 4e-2 bf16); exit status 1 on FAIL.
//   --bench N  3 warm-up runs, then N timed runs of memfmt_model_run on
//              inputs already in the model's layout (on a GPU: inputs in
//              device memory, memfmt_model_run_device, each run timed with
//              CUDA events): median, p10 and p90 ms per batch and images per
//              second (batch = dim 0 of input 0).
//   --cuda-graph  (CUDA) capture the forward pass once as a CUDA graph and
//              replay it (MEMFMT_CUDA_GRAPH=1 does the same).
//   --tf32     (CUDA) let f32 convolutions and linear layers use TF32 tensor
//              cores (MEMFMT_ALLOW_TF32=1 does the same).
//   --no-winograd  (CPU) compute f32 3x3 convolutions directly, never by
//              Winograd's algorithm (MEMFMT_WINOGRAD=0 does the same).
//   --cpu      run a model of any target on the CPU (the compiled code is the
//              same for every target; the runtime dispatches), e.g. a CUDA
//              model on a machine without a GPU.
//   --profile  the context's per-node profile over the bench's N runs (10
//              without --bench), sorted by total time.
//   --json     everything as one JSON object on stdout instead of text.
//
// Exit status: 0 on success, 1 when the check fails or anything goes wrong
// at run time, 2 for a bad command line. It needs no LLVM/MLIR, so it builds
// with -DMEMFMT_RUNTIME_ONLY=ON for machines that only run models.
//
// This file is the driver: it runs the steps in order. Each job has its own
// file: Options (the command line), ModelIO (contexts, loading, inputs and
// outputs), Check (--check), StagedRun + Bench (--bench), Profile
// (--profile), Report (the text and JSON summaries).
//
//===----------------------------------------------------------------------===//

#include "Check.h"
#include "CommandLine.h"
#include "ModelIO.h"
#include "Options.h"
#include "Report.h"
#include "StagedRun.h"

#include "memfmt/runtime/io/Tensor.h"
#include "memfmt/runtime/loader/Manifest.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

using namespace memfmt::run;

namespace {

int run(const Options &Opts) {
  Report R;
  R.Dir = Opts.Dir;
  std::string Target = Opts.Cpu ? "cpu" : targetOf(Opts.Dir);
  ContextPtr Ctx = createContext(MEMFMT_KERNELS_DEFAULT, Opts, Target);
  memfmt_context_get_options(Ctx.get(), &R.Context);
  bool OnDevice = R.Context.backend != MEMFMT_BACKEND_CPU;
  R.Device = memfmt_context_device_description(Ctx.get());
  R.OnDevice = OnDevice;
  if (OnDevice) {
    R.CudaGraph = R.Context.cuda_graph == MEMFMT_SWITCH_ON;
    R.Tf32 = R.Context.allow_tf32 == MEMFMT_SWITCH_ON;
  } else {
    R.AllowBf16 = R.Context.allow_bf16 == MEMFMT_SWITCH_ON;
  }
  // A training step takes class indices, which memfmt-run cannot invent;
  // say so before loading it.
  if (memfmt::io::Result<memfmt::loader::Manifest> M =
          memfmt::loader::readManifest(Opts.Dir))
    for (const memfmt::loader::TensorSpec &In : M->Inputs)
      if (In.Type == memfmt::loader::ElementType::I64)
        fail(Opts.Dir + ": input " + In.Name +
             " is i64 (class indices: the model is a training step); "
             "memfmt-run runs inference models only: train it with "
             "memfmt-train " +
             Opts.Dir + " --data FILE.npz");
  ModelPtr Model = loadModel(Ctx.get(), Opts.Dir,
                             Opts.Weights ? Opts.Weights->c_str() : nullptr,
                             /*AnyTarget=*/Opts.Cpu);
  memfmt_model_get_info(Model.get(), &R.Info);
  R.T = tensorsOf(Model.get(), R.Info);

  // Inputs.
  size_t NumInputs = R.T.Inputs.size();
  std::vector<InputSource> Sources = Opts.Inputs;
  if (Sources.empty())
    Sources.assign(NumInputs, InputSource{});
  else if (Sources.size() == 1 && Sources[0].Random)
    Sources.assign(NumInputs, Sources[0]);
  if (Sources.size() != NumInputs) {
    std::string Names;
    for (const memfmt_model_tensor_info_t &In : R.T.Inputs)
      Names += (Names.empty() ? "" : ", ") + std::string(In.name);
    fail("the model has " + std::to_string(NumInputs) + " input" +
             (NumInputs == 1 ? "" : "s") + " (" + Names +
             ") but --input was "
             "given " +
             std::to_string(Sources.size()) + " times",
         2);
  }
  std::vector<std::vector<float>> Inputs;
  std::vector<int64_t> RowsGiven;
  for (size_t I = 0; I < NumInputs; ++I) {
    int64_t Rows;
    Inputs.push_back(readInput(Sources[I], R.T.Inputs[I], Rows));
    R.InputSources.push_back(Sources[I].describe());
    RowsGiven.push_back(Rows);
    int64_t Batch = R.T.Inputs[I].rank ? R.T.Inputs[I].shape[0] : 1;
    if (Rows != Batch)
      R.Rows = {Rows, Batch};
  }
  if (R.Rows)
    for (size_t I = 0; I < NumInputs; ++I)
      if (RowsGiven[I] != R.Rows->first)
        fail("input " + std::string(R.T.Inputs[I].name) + " has " +
             std::to_string(RowsGiven[I]) + " rows and another " +
             std::to_string(R.Rows->first) +
             "; a smaller batch must be the same for every input");
  // A smaller batch: every output's dimension 0 must be the batch, so that
  // its first rows are the answer.
  if (R.Rows)
    for (const memfmt_model_tensor_info_t &Out : R.T.Outputs)
      if (Out.rank == 0 || Out.shape[0] != R.Rows->second)
        fail("the inputs give " + std::to_string(R.Rows->first) +
             " rows of a batch of " + std::to_string(R.Rows->second) +
             ", but output " + Out.name + " is " + memfmt::io::formatShape(shapeOf(Out)) +
             ": its dimension 0 is not the batch, so it cannot be cut to "
             "the rows given");

  // The run.
  std::vector<std::vector<float>> Outputs;
  runLogical(Model.get(), R.T, Inputs, Outputs);
  for (size_t I = 0; I < Outputs.size(); ++I) {
    std::vector<float> Given = Outputs[I];
    if (R.Rows)
      Given.resize(Given.size() / R.Rows->second * R.Rows->first);
    R.Outputs.push_back(summarize(R.T.Outputs[I], Given));
    if (Opts.Output) {
      std::string Path =
          outputPath(*Opts.Output, R.T.Outputs[I].name, Outputs.size());
      writeOutput(Path, R.T.Outputs[I], Given);
      R.Outputs.back().File = Path;
    }
  }

  // The check against the reference kernels, with the same weights.
  if (Opts.Check)
    R.Check = checkAgainstReference(Opts, R.Info, R.T, Inputs, Outputs,
                                    OnDevice, OnDevice ? R.Tf32 : R.AllowBf16);

  // Timing and profile, on inputs already in the model's layout.
  if (Opts.Bench || Opts.Profile) {
    ModelBuffers Buffers =
        stageInputs(R.T, Inputs, OnDevice ? Ctx.get() : nullptr);
    if (Opts.Bench)
      R.Bench = bench(Model.get(), R.T, Buffers, *Opts.Bench);
    if (Opts.Profile)
      R.Profile = profile(Model.get(), Buffers, Opts.Bench ? *Opts.Bench : 10);
  }

  if (Opts.Json)
    printJson(R);
  else
    printText(R);
  return R.passed() ? 0 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  return runTool(
      "memfmt-run", Argc, Argv, [&] { return run(parseArgs(Argc, Argv)); },
      printJsonError);
}
