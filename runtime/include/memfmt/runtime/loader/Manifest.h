//===- Manifest.h - The manifest.json of a compiled model directory -------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A compiled model directory (written by memfmt-compile) holds the model's
// shared library and a manifest.json that says how to call it and where its
// weights come from. This header is the one definition of that file's
// format: the loader reads it with parseManifest, memfmt-compile writes it
// with writeManifest, and both go through the same key names
// (Manifest.cpp). The format, with keys in the order the writer puts them:
//
//   { "format_version": 1, "model": "resnet50", "target": "cpu",
//     "precision": "f32", "memory_format": "channels-last",
//     "input_format": "contiguous", "library": "model.so",
//     "entry": "_mlir_ciface_memfmt_forward",
//     "arena_bytes": 123, "peak_live_bytes": 100, "weights_bytes": 456,
//     "weights_source": "synthetic:0",
//     "parameters": [ {"name": "conv1.weight", "dtype": "f32",
//                      "shape": [64,3,7,7], "strides": [147,1,21,3],
//                      "offset": 0, "bytes": 37632}, ...,
//                    {"name": "conv1.weight.momentum_buffer", ...,
//                     "init": "zeros"} ],
//     "inputs":  [ {"name": "input_0", "dtype": "f32",
//                   "shape": [8,3,224,224], "strides": [...]} ],
//     "outputs": [ {"name": "output_0", "dtype": "f32", "shape": [8,1000],
//                   "strides": [1000,1]} ],
//     "nodes": [ "memfmt.conv2d at loc(...)", ... ] }
//
// Reading is strict, because a manifest that does not match its library
// gives wrong numbers rather than a crash: every field above is required
// (except peak_live_bytes) and has its type and range checked, unknown
// fields and duplicate keys are errors, parameters must lie inside the
// weights blob without overlapping each other, strides must never map two
// elements to one address, and names are unique. Each error message starts
// with the manifest's path and names the field, e.g.
// "d/manifest.json: parameters[3] (layer1.0.conv1.weight): strides has 3
// entries, shape has 4".
//
// Element types: f32, f16, bf16 and i64 (the class indices a training step
// takes as input). A parameter with "init": "zeros" (optional; the only
// value) is model state that starts as zeros unless the weight source has a
// tensor of its name (memfmt.weight {zero_init}: a momentum buffer).
//
// Shapes are logical (NCHW meaning); strides are in elements. A parameter
// element with index idx lives at byte offset + sum(idx[d] * strides[d]) *
// element size of the weights blob.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LOADER_MANIFEST_H
#define MEMFMT_RUNTIME_LOADER_MANIFEST_H

#include "memfmt/runtime/io/Tensor.h"
#include "memfmt/runtime/loader/model_abi.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memfmt::loader {

/// The version of the manifest format this loader reads (model_abi.h).
constexpr int64_t ManifestFormatVersion = MEMFMT_MANIFEST_FORMAT_VERSION;

/// The largest rank of a model tensor (the runtime's kernels take at most 8).
constexpr size_t MaxTensorRank = 8;

/// Element types of model tensors.
enum class ElementType { F32, F16, BF16, I64 };

/// "f32", "f16", "bf16" or "i64" (the manifest's spelling).
const char *toString(ElementType Type);

/// Bytes per element.
size_t elementSize(ElementType Type);

/// The element type spelled \p Name in a manifest, or std::nullopt.
std::optional<ElementType> parseElementType(std::string_view Name);

/// A parameter, input or output of a compiled model.
struct TensorSpec {
  std::string Name;
  ElementType Type = ElementType::F32;
  /// Logical shape (NCHW meaning).
  std::vector<int64_t> Shape;
  /// Strides in elements, one per dimension.
  std::vector<int64_t> Strides;
  /// Parameters: byte offset of element 0 in the weights blob.
  int64_t Offset = 0;
  /// Parameters: the bytes reserved in the blob (>= extentBytes()). Inputs
  /// and outputs: extentBytes().
  int64_t Bytes = 0;
  /// Parameters: starts as zeros unless the weight source has it
  /// ("init": "zeros").
  bool ZeroInit = false;
  /// Parameters: model state each run updates (a training step's
  /// parameters, momentum buffers and running statistics; "updated": true).
  /// The loader then never declares the weights blob constant.
  bool Updated = false;

  /// The product of the shape (1 for rank 0).
  int64_t numElements() const;
  /// The bytes the strides span: (1 + sum((shape[d] - 1) * strides[d])) *
  /// element size, or 0 when the tensor has no elements.
  int64_t extentBytes() const;
};

/// Where the weights of a model come from.
struct WeightsSource {
  enum class Kind { Synthetic, SafeTensors };
  Kind K = Kind::Synthetic;
  /// Synthetic: the seed.
  uint64_t Seed = 0;
  /// SafeTensors: the file (absolute, or relative to the current directory).
  std::string Path;

  /// "synthetic:SEED" or "safetensors:PATH".
  std::string str() const;
};

/// True for a tensor a weight source may carry beyond a model's parameters
/// because only training uses it: torch's `*.num_batches_tracked` and the
/// optimizer state memfmt saves beside the parameters (`*.momentum_buffer`,
/// `optimizer.step`). A model that has none of them ignores them, so a
/// training checkpoint compiles and loads for inference.
bool isTrainingOnlyState(std::string_view Name);

/// Parses a weights source: "synthetic" (seed 0), "synthetic:SEED" (a
/// decimal uint64), "safetensors:PATH" or, when \p AllowBarePath, a bare
/// path ending in ".safetensors". A relative PATH is taken relative to
/// \p BaseDir when it is not empty.
io::Result<WeightsSource> parseWeightsSource(std::string_view Text,
                                             const std::string &BaseDir,
                                             bool AllowBarePath);

/// The contents of a manifest.json.
struct Manifest {
  /// The manifest's path and the directory that holds it.
  std::string Path;
  std::string Dir;

  int64_t FormatVersion = ManifestFormatVersion;
  std::string Model;
  /// "cpu" or "cuda".
  std::string Target;
  /// "f32", "f16" or "bf16".
  std::string Precision;
  /// "channels-last" or "contiguous".
  std::string MemoryFormat;
  std::string InputFormat;
  /// The library as written, and resolved against Dir.
  std::string Library;
  std::string LibraryPath;
  std::string Entry;
  int64_t ArenaBytes = 0;
  int64_t PeakLiveBytes = 0;
  int64_t WeightsBytes = 0;
  WeightsSource Weights;
  std::vector<TensorSpec> Parameters;
  std::vector<TensorSpec> Inputs;
  std::vector<TensorSpec> Outputs;
  std::vector<std::string> Nodes;

  /// The parameter called \p Name, or nullptr.
  const TensorSpec *findParameter(std::string_view Name) const;
};

/// Parses \p Text, the manifest at \p Path (which starts every message and
/// whose directory resolves relative library and weight paths).
io::Result<Manifest> parseManifest(std::string_view Text,
                                   const std::string &Path);

/// Reads and parses DIR/manifest.json.
io::Result<Manifest> readManifest(const std::string &Dir);

/// The manifest.json text of \p M: the keys in the order shown above, two
/// spaces per level, shapes and strides on one line, a final newline.
/// Parameters get "offset" and "bytes" (and "init" when ZeroInit), inputs
/// and outputs do not; the
/// weights source is Weights.str(). Path, Dir and LibraryPath are not
/// written. parseManifest(encodeManifest(M), P) gives M back for any M it
/// accepts.
std::string encodeManifest(const Manifest &M);

/// Writes encodeManifest(\p M) to \p Path (created or truncated).
io::Status writeManifest(const Manifest &M, const std::string &Path);

/// "[8,3,224,224]".
std::string formatDims(const std::vector<int64_t> &Dims);

} // namespace memfmt::loader

#endif // MEMFMT_RUNTIME_LOADER_MANIFEST_H
