//===- ModelIO.h - Loading a model and moving data in and out ---*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-run's layer over the C API of memfmt/runtime/model.h: owning
// handles for contexts and models, the context a model's target needs, the
// model's tensors, its inputs read from .npy files or drawn as seeded noise,
// one run on logical (row-major NCHW) f32 buffers, and outputs written to
// .npy files. Every failure is a ToolError carrying the runtime's message.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_MODELIO_H
#define MEMFMT_TOOLS_MEMFMT_RUN_MODELIO_H

#include "Options.h"

#include "memfmt/runtime/loader/Manifest.h"
#include "memfmt/runtime/memfmt_runtime.h"
#include "memfmt/runtime/model.h"

#include <memory>
#include <string>
#include <vector>

namespace memfmt::run {

struct ContextDeleter {
  void operator()(memfmt_context_t *Ctx) const { memfmt_context_destroy(Ctx); }
};
struct ModelDeleter {
  void operator()(memfmt_model_t *Model) const { memfmt_model_destroy(Model); }
};
using ContextPtr = std::unique_ptr<memfmt_context_t, ContextDeleter>;
using ModelPtr = std::unique_ptr<memfmt_model_t, ModelDeleter>;

/// The context a model of \p Target runs in ("cuda": a GPU; else the CPU),
/// with \p Kernels and the thread, Winograd, CUDA graph and TF32 choices of
/// \p Opts.
ContextPtr createContext(memfmt_kernels_t Kernels, const Options &Opts,
                         const std::string &Target = "cpu");

/// The target in DIR/manifest.json; "cpu" when it cannot be read (loading
/// then reports why).
std::string targetOf(const std::string &Dir);

/// Loads the model directory \p Dir into \p Ctx with the weights source
/// \p Weights (null: the manifest's); \p AnyTarget loads a model of any
/// target (memfmt_model_load_any_target).
ModelPtr loadModel(memfmt_context_t *Ctx, const std::string &Dir,
                   const char *Weights, bool AnyTarget = false);

/// A model's input and output descriptions.
struct Tensors {
  std::vector<memfmt_model_tensor_info_t> Inputs;
  std::vector<memfmt_model_tensor_info_t> Outputs;
};

Tensors tensorsOf(const memfmt_model_t *Model, const memfmt_model_info_t &Info);

std::vector<int64_t> shapeOf(const memfmt_model_tensor_info_t &Info);
std::vector<int64_t> stridesOf(const memfmt_model_tensor_info_t &Info);

/// A tensor's description as the loader's C++ helpers take it.
loader::TensorSpec specOf(const memfmt_model_tensor_info_t &Info);

/// The logical f32 values of input \p Info from \p Source. A .npy file
/// may have fewer rows (dimension 0) than the model's batch: the rest are
/// zeros. \p Rows is how many rows the source gave.
std::vector<float> readInput(const InputSource &Source,
                             const memfmt_model_tensor_info_t &Info,
                             int64_t &Rows);

/// Where output \p Name of \p Count goes for --output \p Path: the path
/// itself for one output, PATH-without-.npy.NAME.npy for several.
std::string outputPath(const std::string &Path, const char *Name, size_t Count);

/// Writes the logical f32 \p Values of output \p Info to \p Path (.npy);
/// fewer values than the output has are its first rows.
void writeOutput(const std::string &Path,
                 const memfmt_model_tensor_info_t &Info,
                 const std::vector<float> &Values);

/// Runs \p Model on logical inputs into logical outputs.
void runLogical(memfmt_model_t *Model, const Tensors &T,
                const std::vector<std::vector<float>> &Inputs,
                std::vector<std::vector<float>> &Outputs);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_MODELIO_H
