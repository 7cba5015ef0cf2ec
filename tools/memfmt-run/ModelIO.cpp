//===- ModelIO.cpp - Loading a model and moving data in and out -----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Contexts, model loading, the model's tensors, inputs (.npy or seeded
// normal noise, drawn per input name as the loader's synthetic weights are)
// and outputs (.npy) for memfmt-run; see ModelIO.h.
//
//===----------------------------------------------------------------------===//

#include "ModelIO.h"

#include "ToolError.h"

#include "memfmt/runtime/io/Npy.h"
#include "memfmt/runtime/loader/Random.h"

#include <algorithm>
#include <cstring>

namespace memfmt::run {

ContextPtr createContext(memfmt_kernels_t Kernels, const Options &Opts,
                         const std::string &Target) {
  memfmt_context_options_t Options;
  memfmt_context_options_init(&Options);
  Options.kernels = Kernels;
  Options.num_threads = Opts.Threads;
  if (Opts.NoWinograd)
    Options.winograd = MEMFMT_SWITCH_OFF;
  if (Opts.AllowBf16 && Kernels != MEMFMT_KERNELS_REFERENCE)
    Options.allow_bf16 = MEMFMT_SWITCH_ON;
  if (Target == "cuda") {
    Options.backend = MEMFMT_BACKEND_CUDA;
    if (Opts.CudaGraph)
      Options.cuda_graph = MEMFMT_SWITCH_ON;
    if (Opts.Tf32)
      Options.allow_tf32 = MEMFMT_SWITCH_ON;
  }
  memfmt_context_t *Ctx = nullptr;
  if (memfmt_context_create(&Options, &Ctx) != MEMFMT_STATUS_OK)
    fail(Target == "cuda" ? Opts.Dir +
                                " is a CUDA model (target cuda), but no CUDA "
                                "context can be created: " +
                                memfmt_context_last_error(nullptr)
                          : std::string(memfmt_context_last_error(nullptr)));
  return ContextPtr(Ctx);
}

std::string targetOf(const std::string &Dir) {
  io::Result<loader::Manifest> M = loader::readManifest(Dir);
  return M ? M->Target : std::string("cpu");
}

ModelPtr loadModel(memfmt_context_t *Ctx, const std::string &Dir,
                   const char *Weights, bool AnyTarget) {
  memfmt_model_t *Model = nullptr;
  memfmt_status_t S =
      AnyTarget
          ? memfmt_model_load_any_target(Ctx, Dir.c_str(), Weights, &Model)
          : memfmt_model_load(Ctx, Dir.c_str(), Weights, &Model);
  if (S != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(Ctx));
  return ModelPtr(Model);
}

loader::TensorSpec specOf(const memfmt_model_tensor_info_t &Info) {
  loader::TensorSpec T;
  T.Name = Info.name;
  T.Type = *loader::parseElementType(Info.dtype);
  T.Shape.assign(Info.shape, Info.shape + Info.rank);
  T.Strides.assign(Info.strides, Info.strides + Info.rank);
  T.Bytes = Info.buffer_bytes;
  return T;
}

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

std::vector<float> readInput(const InputSource &Source,
                             const memfmt_model_tensor_info_t &Info,
                             int64_t &Rows) {
  std::vector<int64_t> Shape = shapeOf(Info);
  Rows = Shape.empty() ? 1 : Shape[0];
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
  // A smaller batch (the remainder of a data set) is padded with zero rows.
  bool FewerRows = !Shape.empty() && T->Shape.size() == Shape.size() &&
                   T->Shape[0] >= 1 && T->Shape[0] < Shape[0] &&
                   std::equal(T->Shape.begin() + 1, T->Shape.end(),
                              Shape.begin() + 1);
  if (T->Shape != Shape && !FewerRows)
    fail(Source.Path + " has shape " + io::formatShape(T->Shape) +
         ", the model expects " + io::formatShape(Shape) + " (" + Info.name +
         (Shape.empty() ? ")" : "; or fewer rows, padded to the batch)"));
  Rows = T->Shape.empty() ? 1 : T->Shape[0];
  std::vector<float> Values(static_cast<size_t>(Info.num_elements), 0.0f);
  if (!T->Data.empty())
    std::memcpy(Values.data(), T->Data.data(), T->Data.size());
  return Values;
}

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
  if (!T.Shape.empty() && T.Shape[0] > 0)
    T.Shape[0] = static_cast<int64_t>(Values.size()) /
                 std::max<int64_t>(1, Info.num_elements / T.Shape[0]);
  T.Data.resize(Values.size() * sizeof(float));
  if (!Values.empty())
    std::memcpy(T.Data.data(), Values.data(), T.Data.size());
  io::Status S = io::writeNpy(Path, T);
  if (!S)
    fail(S.error());
}

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

} // namespace memfmt::run
