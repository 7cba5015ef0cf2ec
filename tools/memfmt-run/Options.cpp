//===- Options.cpp - memfmt-run's command line ----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The --help text and the parser of memfmt-run's command line (through
// CommandLine.h): options each at most once except --input, counts checked
// against their range, and one model directory.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "CommandLine.h"

namespace memfmt::run {

namespace {

const char *const Usage = R"(usage: memfmt-run DIR [options]

Loads the compiled model directory DIR (model.so + manifest.json, written by
memfmt-compile), runs it once and prints a summary.

options:
  --input FILE.npy      the input, logical NCHW f32 with the model's shape
                        (repeat once per input for models with several)
  --input random[:SEED] seeded normal(0, 1) noise (the default, seed 0)
  --output FILE.npy     write the output (logical, f32); with several
                        outputs, FILE.<name>.npy for each
  --check               run again with the CPU reference kernels and compare:
                        max abs error, max rel error = max|a-b| / max|b| over
                        each output (b = reference); FAIL (exit 1) above 1e-4
                        for f32 (1e-3 on a GPU, 1e-2 with --tf32; 1e-2 for
                        f16, 4e-2 for bf16)
  --bench N             3 warm-ups then N timed runs: median, p10, p90 ms per
                        batch and images/s
  --profile             per-node kernel times (over the bench runs, or 10)
  --json                print everything as one JSON object
  --weights SOURCE      override the manifest's weights: synthetic[:SEED],
                        safetensors:PATH or a .safetensors file
  --threads N           threads for the runtime (default: MEMFMT_NUM_THREADS,
                        OMP_NUM_THREADS or all hardware threads)
  --cuda-graph          CUDA models: capture the forward pass as one CUDA
                        graph and replay it (or MEMFMT_CUDA_GRAPH=1)
  --tf32                CUDA models: allow TF32 for f32 convolutions and
                        linear layers (or MEMFMT_ALLOW_TF32=1); --check then
                        allows 1e-2
  --no-winograd         CPU: compute f32 3x3 convolutions directly, never by
                        Winograd's algorithm (or MEMFMT_WINOGRAD=0)
  --allow-bf16          CPU: let f32 convolutions multiply in bf16 with f32
                        accumulation where the CPU has bf16 instructions
                        (AMX, AVX-512 BF16; or MEMFMT_ALLOW_BF16=1); --check
                        then allows 4e-2
  --cpu                 run a model of any target (a CUDA model) on the CPU
  -h, --help            print this help

exit status: 0 success, 1 check failure or run-time error, 2 bad usage
)";

InputSource parseInput(const CommandLine &Args, const std::string &Text) {
  InputSource Source;
  if (Text == "random")
    return Source;
  if (Text.rfind("random:", 0) == 0) {
    Source.Seed = Args.seed(
        Text.substr(7),
        "--input random:SEED expects a decimal seed, got '" + Text + "'");
    return Source;
  }
  Source.Random = false;
  Source.Path = Text;
  return Source;
}

} // namespace

Options parseArgs(int Argc, char **Argv) {
  Options Opts;
  CommandLine Args("memfmt-run", Usage, Argc, Argv);
  while (Args.next()) {
    const std::string &Name = Args.name();
    if (Name == "--input") {
      Opts.Inputs.push_back(parseInput(Args, Args.value()));
    } else if (Name == "--output") {
      Args.once();
      Opts.Output = Args.value();
    } else if (Name == "--check") {
      Args.flag();
      Opts.Check = true;
    } else if (Name == "--bench") {
      Args.once();
      Opts.Bench = Args.integer(1, 1000000);
    } else if (Name == "--profile") {
      Args.flag();
      Opts.Profile = true;
    } else if (Name == "--json") {
      Args.flag();
      Opts.Json = true;
    } else if (Name == "--weights") {
      Args.once();
      Opts.Weights = Args.value();
    } else if (Name == "--cuda-graph") {
      Args.flag();
      Opts.CudaGraph = true;
    } else if (Name == "--tf32") {
      Args.flag();
      Opts.Tf32 = true;
    } else if (Name == "--no-winograd") {
      Args.flag();
      Opts.NoWinograd = true;
    } else if (Name == "--allow-bf16") {
      Args.flag();
      Opts.AllowBf16 = true;
    } else if (Name == "--cpu") {
      Args.flag();
      Opts.Cpu = true;
    } else if (Name == "--threads") {
      Args.once();
      Opts.Threads = static_cast<int32_t>(Args.integer(1, 4096));
    } else {
      Args.usageError("unknown option '" + Name + "'");
    }
  }
  Opts.Dir = Args.modelDirectory();
  return Opts;
}

} // namespace memfmt::run
