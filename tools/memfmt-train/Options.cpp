//===- Options.cpp - memfmt-train's command line --------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The --help text and the parser of memfmt-train's command line: options in
// --name VALUE or --name=VALUE form, each at most once, numbers checked
// against their range, and one model directory.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "ToolError.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace memfmt::train {

using run::fail;

namespace {

[[noreturn]] void usageError(const std::string &Message) {
  fail(Message + " (see memfmt-train --help)", 2);
}

const char *const Usage = R"(usage: memfmt-train DIR --data FILE.npz [options]

Trains the training-step model in DIR (written by memfmt-compile --train):
each run of the model is one SGD step on one batch, which updates the
parameters, momentum buffers and batch-norm running statistics in place.

data:
  FILE.npz (np.savez or np.savez_compressed) holds `x`, float32 [M,C,H,W]
  (or [M,H,W,C] with --data-format channels-last), and `y`, int64 [M] class
  indices. Batches are consecutive rows of the compiled batch size N; the
  last partial batch of an epoch is dropped. A batch whose layout is not the
  model's input layout is converted once (counted in the summary).

options:
  --data FILE.npz         the training data (required)
  --data-format F         contiguous (default) or channels-last: the layout
                          of `x`; channels-last data feeds a model compiled
                          with --input-format channels-last with no copy
  --steps N               run N steps (default: one epoch)
  --epochs N              run N epochs of M / N batches each
  --shuffle SEED          a new order of the rows every epoch (see below)
  --no-shuffle            the rows in file order (the default)
  --log-every K           a progress line every K steps (default 1)
  --eval FILE.npz         after training, copy the parameters into the
                          inference model DIR/eval and print its top-1
                          accuracy on FILE.npz (same arrays as --data); a
                          partial last batch is padded with zeros and the
                          padding is not counted
  --save FILE.safetensors write the weights as a torchvision state_dict
                          (parameters, running statistics and
                          <module>.num_batches_tracked) and the momentum
                          buffers to FILE.optimizer.safetensors
  --resume FILE.safetensors
                          start from a checkpoint written by --save: the
                          weights, the momentum buffers and the step count
                          (from num_batches_tracked), so training continues
                          exactly (same data, batch and shuffle seed)
  --json                  print one JSON document (every step's loss, the
                          summary and the eval accuracy) instead of text
  --threads N             threads for the runtime (default: MEMFMT_NUM_THREADS,
                          OMP_NUM_THREADS or all hardware threads)
  -h, --help              print this help

shuffle order:
  One SplitMix64 stream seeded with SEED serves every epoch in turn
  (state += 0x9E3779B97F4A7C15; z = state; z = (z ^ z >> 30) *
  0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB; next =
  z ^ z >> 31, all mod 2^64). Epoch e starts from the identity permutation p
  of the M rows and runs Fisher-Yates: for i = M-1 down to 1, j = next %
  (i + 1), swap p[i] and p[j]; batch b of the epoch is rows p[b*N ..
  b*N+N-1]. In Python:
    def perm(m, rng):
        p = list(range(m))
        for i in range(m - 1, 0, -1):
            j = rng() % (i + 1); p[i], p[j] = p[j], p[i]
        return p

exit status: 0 success, 1 run-time error, 2 bad usage
)";

/// Parses a decimal integer in [Min, Max] for option \p Name.
int64_t parseInteger(const std::string &Name, const std::string &Text,
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

uint64_t parseSeed(const std::string &Text) {
  char *End = nullptr;
  errno = 0;
  unsigned long long Value = std::strtoull(Text.c_str(), &End, 10);
  if (Text.empty() || *End != '\0' || errno || Text[0] < '0' || Text[0] > '9')
    usageError("--shuffle expects a decimal seed, got '" + Text + "'");
  return Value;
}

} // namespace

Options parseArgs(int Argc, char **Argv) {
  Options Opts;
  std::vector<std::string> Positional, Seen;
  bool NoShuffle = false;
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "-h" || Arg == "--help") {
      std::fputs(Usage, stdout);
      std::exit(0);
    }
    if (Arg.size() < 2 || Arg.compare(0, 2, "--") != 0 || Arg == "--") {
      if (Arg.size() > 1 && Arg[0] == '-')
        usageError("unknown option '" + Arg + "'");
      Positional.push_back(Arg);
      continue;
    }
    std::string Name = Arg, Value;
    bool HasValue = false;
    if (size_t Eq = Arg.find('='); Eq != std::string::npos) {
      Name = Arg.substr(0, Eq);
      Value = Arg.substr(Eq + 1);
      HasValue = true;
    }
    if (std::find(Seen.begin(), Seen.end(), Name) != Seen.end())
      usageError(Name + " given twice");
    Seen.push_back(Name);
    auto TakeValue = [&]() {
      if (HasValue)
        return Value;
      if (I + 1 >= Argc)
        usageError(Name + " needs a value");
      return std::string(Argv[++I]);
    };
    auto NoValue = [&]() {
      if (HasValue)
        usageError(Name + " takes no value");
    };
    constexpr int64_t Max = int64_t(1) << 40;
    if (Name == "--data") {
      Opts.Data = TakeValue();
    } else if (Name == "--data-format") {
      std::string F = TakeValue();
      if (F == "contiguous")
        Opts.Format = DataFormat::Contiguous;
      else if (F == "channels-last")
        Opts.Format = DataFormat::ChannelsLast;
      else
        usageError("--data-format expects contiguous or channels-last, got '" +
                   F + "'");
    } else if (Name == "--steps") {
      Opts.Steps = parseInteger(Name, TakeValue(), 1, Max);
    } else if (Name == "--epochs") {
      Opts.Epochs = parseInteger(Name, TakeValue(), 1, Max);
    } else if (Name == "--shuffle") {
      Opts.ShuffleSeed = parseSeed(TakeValue());
    } else if (Name == "--no-shuffle") {
      NoValue();
      NoShuffle = true;
    } else if (Name == "--log-every") {
      Opts.LogEvery = parseInteger(Name, TakeValue(), 1, Max);
    } else if (Name == "--eval") {
      Opts.Eval = TakeValue();
    } else if (Name == "--save") {
      Opts.Save = TakeValue();
    } else if (Name == "--resume") {
      Opts.Resume = TakeValue();
    } else if (Name == "--json") {
      NoValue();
      Opts.Json = true;
    } else if (Name == "--threads") {
      Opts.Threads =
          static_cast<int32_t>(parseInteger(Name, TakeValue(), 1, 4096));
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
  if (Opts.Data.empty())
    usageError("--data FILE.npz is required");
  if (Opts.Steps && Opts.Epochs)
    usageError("--steps and --epochs cannot be used together");
  if (NoShuffle && Opts.ShuffleSeed)
    usageError("--shuffle and --no-shuffle cannot be used together");
  for (const std::optional<std::string> *Path : {&Opts.Save, &Opts.Resume}) {
    const std::string Suffix = ".safetensors";
    if (*Path && (Path->value().size() <= Suffix.size() ||
                  Path->value().compare(Path->value().size() - Suffix.size(),
                                        Suffix.size(), Suffix) != 0))
      usageError((Path == &Opts.Save ? "--save" : "--resume") +
                 std::string(" expects a path ending in .safetensors, got '") +
                 Path->value() + "'");
  }
  return Opts;
}

} // namespace memfmt::train
