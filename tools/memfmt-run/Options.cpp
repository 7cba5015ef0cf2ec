//===- Options.cpp - memfmt-run's command line ----------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The --help text and the parser of memfmt-run's command line: options in
// --name VALUE or --name=VALUE form, each at most once except --input,
// counts checked against their range, and one model directory.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "ToolError.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace memfmt::run {

namespace {

[[noreturn]] void usageError(const std::string &Message) {
  fail(Message + " (see memfmt-run --help)", 2);
}

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
  --cpu                 run a model of any target (a CUDA model) on the CPU
  -h, --help            print this help

exit status: 0 success, 1 check failure or run-time error, 2 bad usage
)";

/// Parses a decimal integer in [Min, Max] for option \p Name.
int64_t parseCount(const std::string &Name, const std::string &Text,
                   int64_t Min, int64_t Max) {
  char *End = nullptr;
  errno = 0;
  long long Value = std::strtoll(Text.c_str(), &End, 10);
  if (Text.empty() || *End != '\0' || errno || Value < Min || Value > Max ||
      !(Text[0] >= '0' && Text[0] <= '9'))
    usageError(Name + " expects an integer from " + std::to_string(Min) +
               " to " + std::to_string(Max) + ", got '" + Text + "'");
  return Value;
}

InputSource parseInput(const std::string &Text) {
  InputSource Source;
  if (Text == "random")
    return Source;
  if (Text.rfind("random:", 0) == 0) {
    std::string Seed = Text.substr(7);
    char *End = nullptr;
    errno = 0;
    unsigned long long Value = std::strtoull(Seed.c_str(), &End, 10);
    if (Seed.empty() || *End != '\0' || errno || Seed[0] < '0' || Seed[0] > '9')
      usageError("--input random:SEED expects a decimal seed, got '" + Text +
                 "'");
    Source.Seed = Value;
    return Source;
  }
  Source.Random = false;
  Source.Path = Text;
  return Source;
}

} // namespace

Options parseArgs(int Argc, char **Argv) {
  Options Opts;
  std::vector<std::string> Positional;
  std::vector<std::string> Seen;
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "-h" || Arg == "--help") {
      std::fputs(Usage, stdout);
      std::exit(0);
    }
    if (Arg.size() < 2 || Arg.compare(0, 2, "--") != 0 || Arg == "--") {
      if (Arg == "--")
        usageError("unexpected '--'");
      if (Arg.size() > 1 && Arg[0] == '-')
        usageError("unknown option '" + Arg + "'");
      Positional.push_back(Arg);
      continue;
    }
    std::string Name = Arg, Value;
    bool HasValue = false;
    size_t Eq = Arg.find('=');
    if (Eq != std::string::npos) {
      Name = Arg.substr(0, Eq);
      Value = Arg.substr(Eq + 1);
      HasValue = true;
    }
    auto TakeValue = [&]() {
      if (HasValue)
        return Value;
      if (I + 1 >= Argc)
        usageError(Name + " needs a value");
      return std::string(Argv[++I]);
    };
    auto Once = [&]() {
      if (std::find(Seen.begin(), Seen.end(), Name) != Seen.end())
        usageError(Name + " given twice");
      Seen.push_back(Name);
    };
    auto NoValue = [&]() {
      if (HasValue)
        usageError(Name + " takes no value");
      Once();
    };
    if (Name == "--input") {
      Opts.Inputs.push_back(parseInput(TakeValue()));
    } else if (Name == "--output") {
      Once();
      Opts.Output = TakeValue();
    } else if (Name == "--check") {
      NoValue();
      Opts.Check = true;
    } else if (Name == "--bench") {
      Once();
      Opts.Bench = parseCount("--bench", TakeValue(), 1, 1000000);
    } else if (Name == "--profile") {
      NoValue();
      Opts.Profile = true;
    } else if (Name == "--json") {
      NoValue();
      Opts.Json = true;
    } else if (Name == "--weights") {
      Once();
      Opts.Weights = TakeValue();
    } else if (Name == "--cuda-graph") {
      NoValue();
      Opts.CudaGraph = true;
    } else if (Name == "--tf32") {
      NoValue();
      Opts.Tf32 = true;
    } else if (Name == "--no-winograd") {
      NoValue();
      Opts.NoWinograd = true;
    } else if (Name == "--cpu") {
      NoValue();
      Opts.Cpu = true;
    } else if (Name == "--threads") {
      Once();
      Opts.Threads =
          static_cast<int32_t>(parseCount("--threads", TakeValue(), 1, 4096));
    } else {
      usageError("unknown option '" + Name + "'");
    }
  }
  if (Positional.empty())
    usageError("no model directory given");
  if (Positional.size() > 1)
    usageError("one model directory expected, got '" + Positional[0] +
               "' and '" + Positional[1] + "'");
  Opts.Dir = Positional[0];
  return Opts;
}

} // namespace memfmt::run
