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
//              [--no-winograd]
//
// It loads the compiled model directory DIR into a context of the model's
// target (the CPU, or a CUDA GPU for memfmt-compile --target cuda), runs it once
// on the input (logical NCHW f32, from a .npy file or seeded normal noise;
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
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/Npy.h"
#include "memfmt/runtime/loader/Manifest.h"
#include "memfmt/runtime/loader/Random.h"
#include "memfmt/runtime/loader/Weights.h"
#include "memfmt/runtime/memfmt_runtime.h"
#include "memfmt/runtime/model.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace io = memfmt::io;
namespace loader = memfmt::loader;

namespace {

//===----------------------------------------------------------------------===//
// Errors and the command line
//===----------------------------------------------------------------------===//

/// A failure that ends the tool: the message and the exit status.
struct ToolError {
  std::string Message;
  int ExitCode = 1;
};

[[noreturn]] void fail(std::string Message, int ExitCode = 1) {
  throw ToolError{std::move(Message), ExitCode};
}

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

/// An input as given on the command line.
struct InputSource {
  bool Random = true;
  uint64_t Seed = 0;
  std::string Path;

  std::string describe() const {
    return Random ? "random:" + std::to_string(Seed) : Path;
  }
};

struct Options {
  std::string Dir;
  std::vector<InputSource> Inputs;
  std::optional<std::string> Output;
  bool Check = false;
  std::optional<int64_t> Bench;
  bool Profile = false;
  bool Json = false;
  std::optional<std::string> Weights;
  int32_t Threads = 0;
  bool CudaGraph = false;
  bool Tf32 = false;
  bool NoWinograd = false;
  bool Cpu = false;
};

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

//===----------------------------------------------------------------------===//
// Runtime handles
//===----------------------------------------------------------------------===//

struct ContextDeleter {
  void operator()(memfmt_context_t *Ctx) const { memfmt_context_destroy(Ctx); }
};
struct ModelDeleter {
  void operator()(memfmt_model_t *Model) const { memfmt_model_destroy(Model); }
};
using ContextPtr = std::unique_ptr<memfmt_context_t, ContextDeleter>;
using ModelPtr = std::unique_ptr<memfmt_model_t, ModelDeleter>;

/// The context a model of `Target` runs in ("cuda": a GPU; else the CPU).
ContextPtr createContext(memfmt_kernels_t Kernels, const Options &Opts,
                         const std::string &Target = "cpu") {
  memfmt_context_options_t Options;
  memfmt_context_options_init(&Options);
  Options.kernels = Kernels;
  Options.num_threads = Opts.Threads;
  if (Opts.NoWinograd)
    Options.winograd = MEMFMT_SWITCH_OFF;
  if (Target == "cuda") {
    Options.backend = MEMFMT_BACKEND_CUDA;
    if (Opts.CudaGraph)
      Options.cuda_graph = MEMFMT_SWITCH_ON;
    if (Opts.Tf32)
      Options.allow_tf32 = MEMFMT_SWITCH_ON;
  }
  memfmt_context_t *Ctx = nullptr;
  if (memfmt_context_create(&Options, &Ctx) != MEMFMT_STATUS_OK)
    fail(Target == "cuda"
             ? Opts.Dir + " is a CUDA model (target cuda), but no CUDA "
                          "context can be created: " +
                   memfmt_context_last_error(nullptr)
             : std::string(memfmt_context_last_error(nullptr)));
  return ContextPtr(Ctx);
}

/// The target in DIR/manifest.json; "cpu" when it cannot be read (loading
/// then reports why).
std::string targetOf(const std::string &Dir) {
  io::Result<loader::Manifest> M = loader::readManifest(Dir);
  return M ? M->Target : std::string("cpu");
}

ModelPtr loadModel(memfmt_context_t *Ctx, const std::string &Dir,
                   const char *Weights, bool AnyTarget = false) {
  memfmt_model_t *Model = nullptr;
  memfmt_status_t S =
      AnyTarget
          ? memfmt_model_load_any_target(Ctx, Dir.c_str(), Weights, &Model)
          : memfmt_model_load(Ctx, Dir.c_str(), Weights, &Model);
  if (S != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(Ctx));
  return ModelPtr(Model);
}

/// A tensor's description as the loader's C++ helpers take it.
loader::TensorSpec specOf(const memfmt_model_tensor_info_t &Info) {
  loader::TensorSpec T;
  T.Name = Info.name;
  T.Type = *loader::parseElementType(Info.dtype);
  T.Shape.assign(Info.shape, Info.shape + Info.rank);
  T.Strides.assign(Info.strides, Info.strides + Info.rank);
  T.Bytes = Info.buffer_bytes;
  return T;
}

struct Tensors {
  std::vector<memfmt_model_tensor_info_t> Inputs;
  std::vector<memfmt_model_tensor_info_t> Outputs;
};

Tensors tensorsOf(const memfmt_model_t *Model,
                  const memfmt_model_info_t &Info) {
  Tensors T;
  T.Inputs.resize(Info.num_inputs);
  T.Outputs.resize(Info.num_outputs);
  for (int64_t I = 0; I < Info.num_inputs; ++I)
    memfmt_model_input_info(Model, I, &T.Inputs[I]);
  for (int64_t I = 0; I < Info.num_outputs; ++I)
    memfmt_model_output_info(Model, I, &T.Outputs[I]);
  return T;
}

std::vector<int64_t> shapeOf(const memfmt_model_tensor_info_t &Info) {
  return std::vector<int64_t>(Info.shape, Info.shape + Info.rank);
}

std::vector<int64_t> stridesOf(const memfmt_model_tensor_info_t &Info) {
  return std::vector<int64_t>(Info.strides, Info.strides + Info.rank);
}

//===----------------------------------------------------------------------===//
// Inputs and outputs
//===----------------------------------------------------------------------===//

/// The logical f32 values of input \p Info from \p Source.
std::vector<float> readInput(const InputSource &Source,
                             const memfmt_model_tensor_info_t &Info) {
  std::vector<int64_t> Shape = shapeOf(Info);
  if (Source.Random) {
    loader::NormalGenerator Gen(loader::streamKey(Source.Seed, Info.name));
    std::vector<float> Values(static_cast<size_t>(Info.num_elements));
    for (float &V : Values)
      V = static_cast<float>(Gen.next());
    return Values;
  }
  io::Result<io::Tensor> T = io::readNpy(Source.Path);
  if (!T)
    fail(T.error());
  if (T->Type != io::DType::F32) {
    const char *Descr = io::npyDescr(T->Type);
    fail(Source.Path + " has dtype " + io::dtypeName(T->Type) + " ('" +
         (Descr ? Descr : "?") + "'); the model's " + Info.name +
         " is f32 ('<f4'): save it with x.astype(numpy.float32)");
  }
  if (T->Shape != Shape)
    fail(Source.Path + " has shape " + io::formatShape(T->Shape) +
         ", the model expects " + io::formatShape(Shape) + " (" + Info.name +
         ")");
  std::vector<float> Values(static_cast<size_t>(Info.num_elements));
  if (!Values.empty())
    std::memcpy(Values.data(), T->Data.data(), Values.size() * sizeof(float));
  return Values;
}

/// Where output \p Index of \p Count goes for --output \p Path.
std::string outputPath(const std::string &Path, const char *Name,
                       size_t Count) {
  if (Count == 1)
    return Path;
  std::string Stem = Path;
  if (Stem.size() > 4 && Stem.compare(Stem.size() - 4, 4, ".npy") == 0)
    Stem.resize(Stem.size() - 4);
  return Stem + "." + Name + ".npy";
}

void writeOutput(const std::string &Path,
                 const memfmt_model_tensor_info_t &Info,
                 const std::vector<float> &Values) {
  io::Tensor T;
  T.Type = io::DType::F32;
  T.Shape = shapeOf(Info);
  T.Data.resize(Values.size() * sizeof(float));
  if (!Values.empty())
    std::memcpy(T.Data.data(), Values.data(), T.Data.size());
  io::Status S = io::writeNpy(Path, T);
  if (!S)
    fail(S.error());
}

/// Runs \p Model on logical inputs into logical outputs.
void runLogical(memfmt_model_t *Model, const Tensors &T,
                const std::vector<std::vector<float>> &Inputs,
                std::vector<std::vector<float>> &Outputs) {
  std::vector<const float *> In;
  std::vector<int64_t> InCounts, OutCounts;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    In.push_back(Inputs[I].data());
    InCounts.push_back(static_cast<int64_t>(Inputs[I].size()));
  }
  Outputs.resize(T.Outputs.size());
  std::vector<float *> Out;
  for (size_t I = 0; I < T.Outputs.size(); ++I) {
    Outputs[I].assign(static_cast<size_t>(T.Outputs[I].num_elements), 0.0f);
    Out.push_back(Outputs[I].data());
    OutCounts.push_back(T.Outputs[I].num_elements);
  }
  if (memfmt_model_run_logical(Model, In.data(), InCounts.data(), Out.data(),
                               OutCounts.data()) != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(memfmt_model_context(Model)));
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

struct OutputSummary {
  double Min = 0, Max = 0, Mean = 0;
  int64_t NonFinite = 0;
  /// (class, value) of the first image, for a 2-D output.
  std::vector<std::pair<int64_t, float>> Top5;
  std::string File;
};

OutputSummary summarize(const memfmt_model_tensor_info_t &Info,
                        const std::vector<float> &V) {
  OutputSummary S;
  bool First = true;
  double Sum = 0;
  int64_t Finite = 0;
  for (float X : V) {
    if (!std::isfinite(X)) {
      ++S.NonFinite;
      continue;
    }
    S.Min = First ? X : std::min<double>(S.Min, X);
    S.Max = First ? X : std::max<double>(S.Max, X);
    First = false;
    Sum += X;
    ++Finite;
  }
  S.Mean = Finite ? Sum / static_cast<double>(Finite) : 0.0;
  if (Info.rank == 2 && Info.shape[0] > 0 && Info.shape[1] > 0) {
    int64_t Classes = Info.shape[1];
    std::vector<int64_t> Order(static_cast<size_t>(Classes));
    std::iota(Order.begin(), Order.end(), 0);
    size_t K = std::min<size_t>(5, Order.size());
    // Largest first; NaN last; ties by class index.
    auto Key = [&](int64_t C) {
      float X = V[C];
      return std::isnan(X) ? -INFINITY : X;
    };
    std::partial_sort(Order.begin(), Order.begin() + K, Order.end(),
                      [&](int64_t A, int64_t B) {
                        float KA = Key(A), KB = Key(B);
                        return KA != KB ? KA > KB : A < B;
                      });
    for (size_t I = 0; I < K; ++I)
      S.Top5.push_back({Order[I], V[Order[I]]});
  }
  return S;
}

struct CheckResult {
  std::string Name;
  double MaxAbs = 0, MaxRel = 0;
};

/// max|a - b| and max|a - b| / max|b| (b = reference). A NaN or infinity in
/// one tensor and not at the same place in the other makes both infinite.
CheckResult compare(const std::string &Name, const std::vector<float> &A,
                    const std::vector<float> &B) {
  CheckResult R;
  R.Name = Name;
  double MaxRef = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    double X = A[I], Y = B[I];
    bool SameSpecial = (std::isnan(X) && std::isnan(Y)) ||
                       (std::isinf(X) && std::isinf(Y) && X == Y);
    if (SameSpecial)
      continue;
    if (!std::isfinite(X) || !std::isfinite(Y)) {
      R.MaxAbs = INFINITY;
      continue;
    }
    R.MaxAbs = std::max(R.MaxAbs, std::fabs(X - Y));
    MaxRef = std::max(MaxRef, std::fabs(Y));
  }
  if (std::isinf(R.MaxAbs))
    R.MaxRel = INFINITY;
  else if (MaxRef > 0)
    R.MaxRel = R.MaxAbs / MaxRef;
  else
    R.MaxRel = R.MaxAbs > 0 ? INFINITY : 0.0;
  return R;
}

double toleranceFor(const std::string &Precision, bool OnDevice, bool Tf32) {
  if (Precision == "f16")
    return 1e-2;
  if (Precision == "bf16")
    return 4e-2;
  if (!OnDevice)
    return 1e-4;
  return Tf32 ? 1e-2 : 1e-3;
}

struct BenchResult {
  int64_t Runs = 0;
  int64_t Batch = 1;
  double MedianMs = 0, P10Ms = 0, P90Ms = 0, MeanMs = 0, MinMs = 0;
  double ImagesPerSecond = 0;
};

/// The \p Q quantile of sorted \p V, interpolating linearly.
double quantile(const std::vector<double> &V, double Q) {
  double Pos = Q * static_cast<double>(V.size() - 1);
  size_t Lo = static_cast<size_t>(std::floor(Pos));
  size_t Hi = std::min(Lo + 1, V.size() - 1);
  return V[Lo] + (V[Hi] - V[Lo]) * (Pos - static_cast<double>(Lo));
}

/// Buffers in the model's layouts, for memfmt_model_run (host memory), and
/// for a device model their copies in device memory, for
/// memfmt_model_run_device.
struct ModelBuffers {
  struct Free {
    void operator()(void *P) const { std::free(P); }
  };
  std::vector<std::unique_ptr<void, Free>> Storage;
  std::vector<const void *> Inputs;
  std::vector<void *> Outputs;
  memfmt_context_t *DeviceCtx = nullptr;
  std::vector<void *> DeviceStorage;
  std::vector<const void *> DeviceInputs;
  std::vector<void *> DeviceOutputs;

  ModelBuffers() = default;
  ModelBuffers(ModelBuffers &&) = default;
  ~ModelBuffers() {
    for (void *P : DeviceStorage)
      memfmt_device_free(DeviceCtx, P);
  }

  /// Device memory holding a copy of `Bytes` at `Host`.
  void *toDevice(const void *Host, int64_t Bytes) {
    void *P = nullptr;
    if (memfmt_device_alloc(DeviceCtx, Bytes, &P) != MEMFMT_STATUS_OK ||
        memfmt_device_copy(DeviceCtx, P, Host, Bytes,
                           MEMFMT_COPY_HOST_TO_DEVICE) != MEMFMT_STATUS_OK)
      fail(memfmt_context_last_error(DeviceCtx));
    DeviceStorage.push_back(P);
    return P;
  }

  void *allocate(int64_t Bytes) {
    size_t Size =
        static_cast<size_t>((std::max<int64_t>(Bytes, 1) + 63) / 64 * 64);
    void *P = std::aligned_alloc(64, Size);
    if (!P)
      fail("cannot allocate " + std::to_string(Bytes) + " bytes");
    std::memset(P, 0, Size);
    Storage.emplace_back(P);
    return P;
  }
};

/// Inputs in the model's layouts; for a model on a device (`DeviceCtx` not
/// null) also copied to device memory.
ModelBuffers stageInputs(const Tensors &T,
                         const std::vector<std::vector<float>> &Logical,
                         memfmt_context_t *DeviceCtx) {
  ModelBuffers B;
  B.DeviceCtx = DeviceCtx;
  for (size_t I = 0; I < T.Inputs.size(); ++I) {
    void *P = B.allocate(T.Inputs[I].buffer_bytes);
    loader::scatterFromRowMajor(Logical[I].data(), specOf(T.Inputs[I]), P);
    B.Inputs.push_back(P);
    if (DeviceCtx)
      B.DeviceInputs.push_back(B.toDevice(P, T.Inputs[I].buffer_bytes));
  }
  for (const memfmt_model_tensor_info_t &Out : T.Outputs) {
    void *P = B.allocate(Out.buffer_bytes);
    B.Outputs.push_back(P);
    if (DeviceCtx)
      B.DeviceOutputs.push_back(B.toDevice(P, Out.buffer_bytes));
  }
  return B;
}

/// One run: on host buffers (CPU), or on device buffers without waiting for
/// the device (CUDA).
void runRaw(memfmt_model_t *Model, const ModelBuffers &B) {
  memfmt_status_t S =
      B.DeviceCtx ? memfmt_model_run_device(Model, B.DeviceInputs.data(),
                                            B.DeviceOutputs.data())
                  : memfmt_model_run(Model, B.Inputs.data(), B.Outputs.data());
  if (S != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(memfmt_model_context(Model)));
}

void synchronize(memfmt_model_t *Model) {
  memfmt_context_t *Ctx = memfmt_model_context(Model);
  if (memfmt_context_synchronize(Ctx) != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(Ctx));
}

BenchResult bench(memfmt_model_t *Model, const Tensors &T,
                  const ModelBuffers &B, int64_t Runs) {
  for (int I = 0; I < 3; ++I)
    runRaw(Model, B);
  std::vector<double> Ms;
  if (B.DeviceCtx) {
    // The device's own clock: CUDA events around each run.
    memfmt_context_t *Ctx = B.DeviceCtx;
    synchronize(Model);
    for (int64_t I = 0; I < Runs; ++I) {
      double Elapsed = 0;
      if (memfmt_context_timer_start(Ctx) != MEMFMT_STATUS_OK)
        fail(memfmt_context_last_error(Ctx));
      runRaw(Model, B);
      if (memfmt_context_timer_stop(Ctx, &Elapsed) != MEMFMT_STATUS_OK)
        fail(memfmt_context_last_error(Ctx));
      Ms.push_back(Elapsed);
    }
  } else {
    for (int64_t I = 0; I < Runs; ++I) {
      auto Start = std::chrono::steady_clock::now();
      runRaw(Model, B);
      auto End = std::chrono::steady_clock::now();
      Ms.push_back(
          std::chrono::duration<double, std::milli>(End - Start).count());
    }
  }
  BenchResult R;
  R.Runs = Runs;
  R.Batch = !T.Inputs.empty() && T.Inputs[0].rank > 0 ? T.Inputs[0].shape[0]
                                                       : 1;
  R.MeanMs = std::accumulate(Ms.begin(), Ms.end(), 0.0) /
             static_cast<double>(Ms.size());
  std::sort(Ms.begin(), Ms.end());
  R.MinMs = Ms.front();
  R.MedianMs = quantile(Ms, 0.5);
  R.P10Ms = quantile(Ms, 0.1);
  R.P90Ms = quantile(Ms, 0.9);
  R.ImagesPerSecond =
      R.MedianMs > 0 ? static_cast<double>(R.Batch) * 1000.0 / R.MedianMs : 0;
  return R;
}

struct ProfileRow {
  memfmt_profile_entry_t Entry;
  std::string Name;
};

struct ProfileResult {
  int64_t Runs = 0;
  double WallMsPerRun = 0;
  double KernelMsPerRun = 0;
  std::vector<ProfileRow> Rows;
};

ProfileResult profile(memfmt_model_t *Model, const ModelBuffers &B,
                      int64_t Runs) {
  memfmt_context_t *Ctx = memfmt_model_context(Model);
  memfmt_context_profile_reset(Ctx);
  memfmt_context_set_profiling(Ctx, 1);
  auto Start = std::chrono::steady_clock::now();
  for (int64_t I = 0; I < Runs; ++I)
    runRaw(Model, B);
  if (B.DeviceCtx)
    synchronize(Model);
  auto End = std::chrono::steady_clock::now();
  memfmt_context_set_profiling(Ctx, 0);

  ProfileResult R;
  R.Runs = Runs;
  R.WallMsPerRun =
      std::chrono::duration<double, std::milli>(End - Start).count() /
      static_cast<double>(Runs);
  int64_t Count = 0;
  memfmt_context_profile_count(Ctx, &Count);
  double Total = 0;
  for (int64_t I = 0; I < Count; ++I) {
    ProfileRow Row;
    if (memfmt_context_profile_entry(Ctx, I, &Row.Entry) != MEMFMT_STATUS_OK)
      continue;
    const char *Name = nullptr;
    Row.Name =
        memfmt_model_node_name(Model, Row.Entry.node, &Name) == MEMFMT_STATUS_OK
            ? Name
            : "?";
    Total += Row.Entry.total_seconds;
    R.Rows.push_back(std::move(Row));
  }
  // Largest total first; ties in node order (std::stable_sort would do, but
  // libstdc++ 12's uses a helper that Clang flags as deprecated).
  std::sort(R.Rows.begin(), R.Rows.end(),
            [](const ProfileRow &A, const ProfileRow &B) {
              if (A.Entry.total_seconds != B.Entry.total_seconds)
                return A.Entry.total_seconds > B.Entry.total_seconds;
              if (A.Entry.node != B.Entry.node)
                return A.Entry.node < B.Entry.node;
              return std::strcmp(A.Entry.kernel, B.Entry.kernel) < 0;
            });
  R.KernelMsPerRun = Total * 1000.0 / static_cast<double>(Runs);
  return R;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

std::string format(const char *Fmt, double V) {
  char Buffer[64];
  std::snprintf(Buffer, sizeof(Buffer), Fmt, V);
  return Buffer;
}

/// "480 B", "12.5 KiB", "97.7 MiB", "1.2 GiB".
std::string humanBytes(int64_t Bytes) {
  double B = static_cast<double>(Bytes);
  if (Bytes < 1024)
    return std::to_string(Bytes) + " B";
  if (B < 1024.0 * 1024.0)
    return format("%.1f KiB", B / 1024.0);
  if (B < 1024.0 * 1024.0 * 1024.0)
    return format("%.1f MiB", B / (1024.0 * 1024.0));
  return format("%.2f GiB", B / (1024.0 * 1024.0 * 1024.0));
}

std::string dims(const std::vector<int64_t> &D) { return io::formatShape(D); }

/// A tiny JSON writer: values are appended with the commas they need.
class JsonWriter {
public:
  std::string Out;

  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }
  void key(const std::string &K) {
    comma();
    quote(K);
    Out += ':';
    AfterKey = true;
  }
  void value(const std::string &S) {
    comma();
    quote(S);
  }
  void value(const char *S) { value(std::string(S)); }
  void value(bool B) {
    comma();
    Out += B ? "true" : "false";
  }
  void value(int64_t N) {
    comma();
    Out += std::to_string(N);
  }
  void value(double D) {
    comma();
    if (!std::isfinite(D)) {
      Out += "null";
      return;
    }
    char Buffer[32];
    std::snprintf(Buffer, sizeof(Buffer), "%.9g", D);
    Out += Buffer;
  }
  void value(const std::vector<int64_t> &V) {
    beginArray();
    for (int64_t N : V)
      value(N);
    endArray();
  }
  template <typename T> void field(const std::string &K, const T &V) {
    key(K);
    value(V);
  }

private:
  void open(char C) {
    comma();
    Out += C;
    First = true;
  }
  void close(char C) {
    Out += C;
    First = false;
  }
  void comma() {
    if (AfterKey) {
      AfterKey = false;
      return;
    }
    if (!First && !Out.empty())
      Out += ',';
    First = false;
  }
  void quote(const std::string &S) {
    Out += '"';
    for (unsigned char C : S) {
      if (C == '"' || C == '\\') {
        Out += '\\';
        Out += static_cast<char>(C);
      } else if (C < 0x20) {
        char Buffer[8];
        std::snprintf(Buffer, sizeof(Buffer), "\\u%04x", C);
        Out += Buffer;
      } else {
        Out += static_cast<char>(C);
      }
    }
    Out += '"';
  }

  bool First = true;
  bool AfterKey = false;
};

/// Everything a run produced, for printing.
struct Report {
  std::string Dir;
  memfmt_model_info_t Info{};
  Tensors T;
  memfmt_context_options_t Context{};
  std::vector<std::string> InputSources;
  std::vector<OutputSummary> Outputs;
  std::optional<std::vector<CheckResult>> Check;
  double Tolerance = 1e-4;
  bool CheckPassed = true;
  std::optional<BenchResult> Bench;
  std::optional<ProfileResult> Profile;
  /// The device (memfmt_context_device_description); on a GPU, whether
  /// graphs and TF32 are on.
  std::string Device;
  bool OnDevice = false, CudaGraph = false, Tf32 = false;
};

const char *const RelDefinition =
    "max|a-b| / max|b| over the output, b = reference kernels";

const char *kernelsName(memfmt_kernels_t K) {
  return K == MEMFMT_KERNELS_REFERENCE ? "reference" : "fast";
}

void printText(const Report &R) {
  const memfmt_model_info_t &I = R.Info;
  std::printf("model      %s (target %s, %s, %s; inputs %s)\n", I.name,
              I.target, I.precision, I.memory_format, I.input_format);
  std::printf("library    %s (%lld nodes)\n", I.library_path,
              static_cast<long long>(I.num_nodes));
  std::printf("memory     arena %s (peak live %s), weights %s from %s\n",
              humanBytes(I.arena_bytes).c_str(),
              humanBytes(I.peak_live_bytes).c_str(),
              humanBytes(I.weights_bytes).c_str(), I.weights_source);
  std::printf("context    %s kernels%s, %d threads%s\n",
              kernelsName(R.Context.kernels),
              memfmt_runtime_has_onednn() ? " (oneDNN)" : "",
              R.Context.num_threads,
              R.Context.kernels == MEMFMT_KERNELS_FAST &&
                      R.Context.winograd == MEMFMT_SWITCH_OFF
                  ? ", no Winograd"
                  : "");
  if (!R.OnDevice)
    std::printf("device     %s\n", R.Device.c_str());
  else
    std::printf("device     %s; CUDA graph %s, TF32 %s\n", R.Device.c_str(),
                R.CudaGraph ? "on" : "off", R.Tf32 ? "on" : "off");
  for (size_t K = 0; K < R.T.Inputs.size(); ++K) {
    const memfmt_model_tensor_info_t &In = R.T.Inputs[K];
    std::printf("input      %s %s %s strides %s <- %s\n", In.name,
                dims(shapeOf(In)).c_str(), In.dtype,
                dims(stridesOf(In)).c_str(), R.InputSources[K].c_str());
  }
  for (size_t K = 0; K < R.T.Outputs.size(); ++K) {
    const memfmt_model_tensor_info_t &Out = R.T.Outputs[K];
    const OutputSummary &S = R.Outputs[K];
    std::printf("output     %s %s %s: min %.6g max %.6g mean %.6g", Out.name,
                dims(shapeOf(Out)).c_str(), Out.dtype, S.Min, S.Max, S.Mean);
    if (S.NonFinite)
      std::printf(", %lld not finite", static_cast<long long>(S.NonFinite));
    if (!S.File.empty())
      std::printf(" -> %s", S.File.c_str());
    std::printf("\n");
    if (!S.Top5.empty()) {
      std::printf("top-%zu of %s for image 0:\n", S.Top5.size(), Out.name);
      for (size_t J = 0; J < S.Top5.size(); ++J)
        std::printf("  %zu. class %5lld  %.6g\n", J + 1,
                    static_cast<long long>(S.Top5[J].first), S.Top5[J].second);
    }
  }
  if (R.Check) {
    for (const CheckResult &C : *R.Check)
      std::printf("check      %s vs reference kernels: max abs error %.3g, "
                  "max rel error %.3g (rel = %s)\n",
                  C.Name.c_str(), C.MaxAbs, C.MaxRel, RelDefinition);
    std::printf("check      %s (tolerance %.0e on max rel error)\n",
                R.CheckPassed ? "PASS" : "FAIL", R.Tolerance);
  }
  if (R.Bench) {
    const BenchResult &B = *R.Bench;
    std::printf("bench      %lld runs after 3 warm-ups: median %.3f ms, p10 "
                "%.3f ms, p90 %.3f ms per batch of %lld; %.1f images/s\n",
                static_cast<long long>(B.Runs), B.MedianMs, B.P10Ms, B.P90Ms,
                static_cast<long long>(B.Batch), B.ImagesPerSecond);
  }
  if (R.Profile) {
    const ProfileResult &P = *R.Profile;
    std::printf("profile    %lld runs: kernels %.3f ms per run, whole model "
                "%.3f ms per run\n",
                static_cast<long long>(P.Runs), P.KernelMsPerRun,
                P.WallMsPerRun);
    std::printf("  %5s %5s %10s %6s %6s  %-32s %-14s %s\n", "rank", "node",
                "ms/run", "%", "calls", "kernel", "impl", "node name");
    for (size_t J = 0; J < P.Rows.size(); ++J) {
      const memfmt_profile_entry_t &E = P.Rows[J].Entry;
      double MsPerRun = E.total_seconds * 1000.0 / static_cast<double>(P.Runs);
      double Percent =
          P.KernelMsPerRun > 0 ? 100.0 * MsPerRun / P.KernelMsPerRun : 0.0;
      std::printf("  %5zu %5lld %10.3f %5.1f%% %6.3g  %-32s %-14s %s\n", J + 1,
                  static_cast<long long>(E.node), MsPerRun, Percent,
                  static_cast<double>(E.calls) / static_cast<double>(P.Runs),
                  E.kernel, E.impl, P.Rows[J].Name.c_str());
    }
  }
}

void printJson(const Report &R) {
  const memfmt_model_info_t &I = R.Info;
  JsonWriter J;
  J.beginObject();
  J.field("model", I.name);
  J.field("directory", R.Dir);
  J.field("library", I.library_path);
  J.field("target", I.target);
  J.field("precision", I.precision);
  J.field("memory_format", I.memory_format);
  J.field("input_format", I.input_format);
  J.field("weights_source", I.weights_source);
  J.field("num_nodes", I.num_nodes);
  J.field("arena_bytes", I.arena_bytes);
  J.field("peak_live_bytes", I.peak_live_bytes);
  J.field("weights_bytes", I.weights_bytes);
  J.field("kernels", kernelsName(R.Context.kernels));
  J.field("onednn", memfmt_runtime_has_onednn() != 0);
  J.field("threads", static_cast<int64_t>(R.Context.num_threads));
  J.field("winograd", R.Context.winograd == MEMFMT_SWITCH_ON);
  J.field("device", R.Device);
  if (R.OnDevice) {
    J.field("cuda_graph", R.CudaGraph);
    J.field("tf32", R.Tf32);
  }
  J.key("inputs");
  J.beginArray();
  for (size_t K = 0; K < R.T.Inputs.size(); ++K) {
    const memfmt_model_tensor_info_t &In = R.T.Inputs[K];
    J.beginObject();
    J.field("name", In.name);
    J.field("dtype", In.dtype);
    J.field("shape", shapeOf(In));
    J.field("strides", stridesOf(In));
    J.field("source", R.InputSources[K]);
    J.endObject();
  }
  J.endArray();
  J.key("outputs");
  J.beginArray();
  for (size_t K = 0; K < R.T.Outputs.size(); ++K) {
    const memfmt_model_tensor_info_t &Out = R.T.Outputs[K];
    const OutputSummary &S = R.Outputs[K];
    J.beginObject();
    J.field("name", Out.name);
    J.field("dtype", Out.dtype);
    J.field("shape", shapeOf(Out));
    J.field("min", S.Min);
    J.field("max", S.Max);
    J.field("mean", S.Mean);
    J.field("non_finite", S.NonFinite);
    if (!S.Top5.empty()) {
      J.key("top5");
      J.beginArray();
      for (const auto &[Class, Value] : S.Top5) {
        J.beginObject();
        J.field("class", Class);
        J.field("value", static_cast<double>(Value));
        J.endObject();
      }
      J.endArray();
    }
    if (!S.File.empty())
      J.field("file", S.File);
    J.endObject();
  }
  J.endArray();
  if (R.Check) {
    J.key("check");
    J.beginObject();
    J.field("kernels", "reference");
    J.field("rel_definition", RelDefinition);
    J.field("tolerance", R.Tolerance);
    double MaxAbs = 0, MaxRel = 0;
    J.key("outputs");
    J.beginArray();
    for (const CheckResult &C : *R.Check) {
      MaxAbs = std::max(MaxAbs, C.MaxAbs);
      MaxRel = std::max(MaxRel, C.MaxRel);
      J.beginObject();
      J.field("name", C.Name);
      J.field("max_abs_error", C.MaxAbs);
      J.field("max_rel_error", C.MaxRel);
      J.endObject();
    }
    J.endArray();
    J.field("max_abs_error", MaxAbs);
    J.field("max_rel_error", MaxRel);
    J.field("pass", R.CheckPassed);
    J.endObject();
  }
  if (R.Bench) {
    const BenchResult &B = *R.Bench;
    J.key("bench");
    J.beginObject();
    J.field("warmup_runs", int64_t(3));
    J.field("runs", B.Runs);
    J.field("batch", B.Batch);
    J.field("median_ms", B.MedianMs);
    J.field("p10_ms", B.P10Ms);
    J.field("p90_ms", B.P90Ms);
    J.field("mean_ms", B.MeanMs);
    J.field("min_ms", B.MinMs);
    J.field("images_per_second", B.ImagesPerSecond);
    J.endObject();
  }
  if (R.Profile) {
    const ProfileResult &P = *R.Profile;
    J.key("profile");
    J.beginObject();
    J.field("runs", P.Runs);
    J.field("kernel_ms_per_run", P.KernelMsPerRun);
    J.field("wall_ms_per_run", P.WallMsPerRun);
    J.key("entries");
    J.beginArray();
    for (const ProfileRow &Row : P.Rows) {
      const memfmt_profile_entry_t &E = Row.Entry;
      J.beginObject();
      J.field("node", E.node);
      J.field("name", Row.Name);
      J.field("kernel", E.kernel);
      J.field("impl", E.impl);
      J.field("calls", E.calls);
      J.field("total_ms", E.total_seconds * 1000.0);
      J.field("ms_per_run",
              E.total_seconds * 1000.0 / static_cast<double>(P.Runs));
      J.endObject();
    }
    J.endArray();
    J.endObject();
  }
  J.endObject();
  std::printf("%s\n", J.Out.c_str());
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

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
  }
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
  for (size_t I = 0; I < NumInputs; ++I) {
    Inputs.push_back(readInput(Sources[I], R.T.Inputs[I]));
    R.InputSources.push_back(Sources[I].describe());
  }

  // The run.
  std::vector<std::vector<float>> Outputs;
  runLogical(Model.get(), R.T, Inputs, Outputs);
  for (size_t I = 0; I < Outputs.size(); ++I) {
    R.Outputs.push_back(summarize(R.T.Outputs[I], Outputs[I]));
    if (Opts.Output) {
      std::string Path =
          outputPath(*Opts.Output, R.T.Outputs[I].name, Outputs.size());
      writeOutput(Path, R.T.Outputs[I], Outputs[I]);
      R.Outputs.back().File = Path;
    }
  }

  // The check against the reference kernels, with the same weights.
  if (Opts.Check) {
    // The CPU reference kernels, whatever the model's target.
    ContextPtr RefCtx = createContext(MEMFMT_KERNELS_REFERENCE, Opts);
    ModelPtr RefModel = loadModel(RefCtx.get(), Opts.Dir,
                                  R.Info.weights_source, /*AnyTarget=*/true);
    std::vector<std::vector<float>> RefOutputs;
    runLogical(RefModel.get(), R.T, Inputs, RefOutputs);
    R.Tolerance = toleranceFor(R.Info.precision, OnDevice,
                               R.Context.allow_tf32 == MEMFMT_SWITCH_ON);
    R.Check.emplace();
    for (size_t I = 0; I < Outputs.size(); ++I) {
      R.Check->push_back(
          compare(R.T.Outputs[I].name, Outputs[I], RefOutputs[I]));
      if (!(R.Check->back().MaxRel <= R.Tolerance))
        R.CheckPassed = false;
    }
  }

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
  return R.CheckPassed ? 0 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  bool Json = false;
  for (int I = 1; I < Argc; ++I)
    Json |= std::strcmp(Argv[I], "--json") == 0;
  try {
    return run(parseArgs(Argc, Argv));
  } catch (const ToolError &E) {
    std::fflush(stdout);
    std::fprintf(stderr, "memfmt-run: error: %s\n", E.Message.c_str());
    if (Json) {
      JsonWriter J;
      J.beginObject();
      J.field("error", E.Message);
      J.field("exit_code", static_cast<int64_t>(E.ExitCode));
      J.endObject();
      std::printf("%s\n", J.Out.c_str());
    }
    return E.ExitCode;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "memfmt-run: error: %s\n", E.what());
    return 1;
  }
}
