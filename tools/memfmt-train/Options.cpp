//===- Options.cpp - memfmt-train's command line --------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The --help text and the parser of memfmt-train's command line (through
// memfmt-run's CommandLine.h): options each at most once, numbers checked
// against their range, and one model directory.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "CommandLine.h"

#include <utility>

namespace memfmt::train {

namespace {

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
  --profile               time each kernel of the steps after the first (the
                          first creates oneDNN's primitives) and print the
                          totals per kernel and per node (in the JSON too)
  --threads N             threads for the runtime (default: MEMFMT_NUM_THREADS,
                          OMP_NUM_THREADS or all hardware threads)
  --allow-bf16            mixed precision: convolutions and their gradients
                          multiply in bf16 (f32 accumulation, f32 parameters,
                          batch norms, loss and SGD) where the CPU has bf16
                          instructions (AMX, AVX-512 BF16; or
                          MEMFMT_ALLOW_BF16=1)
  --collective-timeout S  data-parallel training: end the job with an error
                          when the other replicas do not answer a collective
                          within S seconds (default 300)
  --sync-batch-norm       data-parallel training: batch norms take their
                          statistics over every replica's batch, as
                          torch.nn.SyncBatchNorm (R replicas at batch N then
                          compute what one process at batch R*N computes);
                          default: each replica's own, as in DDP
  -h, --help              print this help

data-parallel training:
  Started by Open MPI's launcher, `mpirun -np R memfmt-train DIR ...` (one
  machine, or several with a hostfile), each process is a replica: global
  step i takes rows [i*R*N, (i+1)*R*N) of the epoch's order and replica r
  its r-th N rows (N the compiled batch), gradients are averaged over the
  replicas before the update, and rank 0's weights are broadcast at start.
  Batch-norm statistics are per replica, as in DistributedDataParallel,
  or over the global batch with --sync-batch-norm.
  Rank 0 prints the global batch's mean loss, evaluates and saves.

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

} // namespace

Options parseArgs(int Argc, char **Argv) {
  Options Opts;
  run::CommandLine Args("memfmt-train", Usage, Argc, Argv);
  bool NoShuffle = false;
  constexpr int64_t Max = int64_t(1) << 40;
  while (Args.next()) {
    const std::string &Name = Args.name();
    if (Name == "--no-shuffle" || Name == "--json" || Name == "--profile" ||
        Name == "--sync-batch-norm" || Name == "--allow-bf16")
      Args.flag();
    else
      Args.once();
    if (Name == "--data") {
      Opts.Data = Args.value();
    } else if (Name == "--data-format") {
      std::string F = Args.value();
      if (F == "contiguous")
        Opts.Format = DataFormat::Contiguous;
      else if (F == "channels-last")
        Opts.Format = DataFormat::ChannelsLast;
      else
        Args.usageError(
            "--data-format expects contiguous or channels-last, got '" + F +
            "'");
    } else if (Name == "--steps") {
      Opts.Steps = Args.integer(1, Max);
    } else if (Name == "--epochs") {
      Opts.Epochs = Args.integer(1, Max);
    } else if (Name == "--shuffle") {
      std::string Seed = Args.value();
      Opts.ShuffleSeed = Args.seed(
          Seed, "--shuffle expects a decimal seed, got '" + Seed + "'");
    } else if (Name == "--no-shuffle") {
      NoShuffle = true;
    } else if (Name == "--log-every") {
      Opts.LogEvery = Args.integer(1, Max);
    } else if (Name == "--eval") {
      Opts.Eval = Args.value();
    } else if (Name == "--save") {
      Opts.Save = Args.value();
    } else if (Name == "--resume") {
      Opts.Resume = Args.value();
    } else if (Name == "--json") {
      Opts.Json = true;
    } else if (Name == "--profile") {
      Opts.Profile = true;
    } else if (Name == "--threads") {
      Opts.Threads = static_cast<int32_t>(Args.integer(1, 4096));
    } else if (Name == "--allow-bf16") {
      Opts.AllowBf16 = true;
    } else if (Name == "--sync-batch-norm") {
      Opts.SyncBatchNorm = true;
    } else if (Name == "--collective-timeout") {
      Opts.CollectiveTimeout = static_cast<double>(Args.integer(1, 1 << 30));
    } else {
      Args.usageError("unknown option '" + Name + "'");
    }
  }
  Opts.Dir = Args.modelDirectory();
  if (Opts.Data.empty())
    Args.usageError("--data FILE.npz is required");
  if (Opts.Steps && Opts.Epochs)
    Args.usageError("--steps and --epochs cannot be used together");
  if (NoShuffle && Opts.ShuffleSeed)
    Args.usageError("--shuffle and --no-shuffle cannot be used together");
  const std::string Suffix = ".safetensors";
  for (auto [Option, Path] :
       {std::pair{"--save", &Opts.Save}, std::pair{"--resume", &Opts.Resume}})
    if (*Path && (Path->value().size() <= Suffix.size() ||
                  Path->value().compare(Path->value().size() - Suffix.size(),
                                        Suffix.size(), Suffix) != 0))
      Args.usageError(std::string(Option) +
                      " expects a path ending in .safetensors, got '" +
                      Path->value() + "'");
  return Opts;
}

} // namespace memfmt::train
