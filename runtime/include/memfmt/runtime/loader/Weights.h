//===- Weights.h - Building the weights blob and re-laying tensors --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A compiled model reads all its parameters from one weights blob whose
// layout the manifest gives (Manifest.h). Parameter values are logical (NCHW
// meaning, as saved by PyTorch); the loader writes element idx of a
// parameter at byte `offset + sum(idx[d] * strides[d]) * element size`, so
// the re-layout to channels-last happens once, at load time, and saved
// weights stay valid whatever layout the compiler chose (L7, L8).
//
// Two sources fill the blob:
//
//  * synthetic:SEED - deterministic values with the statistics of a trained
//    or freshly initialised network, so every operator matters and outputs
//    stay finite through 50+ layers. Each parameter draws from its own
//    stream keyed by (SEED, name) (Random.h), so every machine gives the
//    same bytes. The distribution follows the name and rank (see
//    syntheticInit).
//  * safetensors:PATH - a torchvision state_dict saved as .safetensors:
//    every parameter must be present with exactly its shape, in F32, F16 or
//    BF16 (converted to the parameter's element type); every missing,
//    mis-shaped or wrongly typed tensor and every unexpected one (except
//    training-only state the model lacks, isTrainingOnlyState:
//    `*.num_batches_tracked`, which state_dicts carry, and the momentum
//    buffers and step count of a memfmt checkpoint) is listed by name in
//    one message.
//
// A parameter marked "init": "zeros" (optimizer state: a momentum buffer)
// starts as zeros unless a safetensors source has a tensor of its name
// (then it must match like any parameter); synthetic sources give zeros.
// So do i64 parameters (integer state) from a synthetic source.
//
// The re-layout helpers also serve inputs and outputs (memfmt_model_run_
// logical, memfmt-run): they move elements between a row-major f32 array
// and a strided buffer of any supported element type (i64 elements are
// rounded to the nearest integer on the way in).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LOADER_WEIGHTS_H
#define MEMFMT_RUNTIME_LOADER_WEIGHTS_H

#include "memfmt/runtime/io/Tensor.h"
#include "memfmt/runtime/loader/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memfmt::loader {

//===----------------------------------------------------------------------===//
// Re-layout
//===----------------------------------------------------------------------===//

/// Writes the row-major f32 values \p Src of \p T's shape into \p Dst laid
/// out with \p T's strides and element type (f16/bf16 round to nearest
/// even). \p Dst points at element 0; bytes between elements are untouched.
void scatterFromRowMajor(const float *Src, const TensorSpec &T, void *Dst);

/// Reads the tensor at \p Src (element 0, \p T's strides and element type)
/// into the row-major f32 array \p Dst of \p T's shape.
void gatherToRowMajor(const void *Src, const TensorSpec &T, float *Dst);

//===----------------------------------------------------------------------===//
// Synthetic weights
//===----------------------------------------------------------------------===//

/// How synthetic:SEED initialises one parameter.
struct SyntheticInit {
  enum class Kind { Normal, Uniform };
  Kind K = Kind::Normal;
  /// Normal: mean and standard deviation. Uniform: the range [A, B).
  double A = 0.0;
  double B = 0.0;
  /// A short description for messages and docs, e.g. "he-normal(fan_in=147)".
  std::string Rule;
};

/// The distribution of parameter \p Index of \p M, by name suffix and rank:
///  * 4-D `*.weight` (convolution): He normal, mean 0, std sqrt(2 / fan_in)
///    with fan_in = shape[1] * shape[2] * shape[3] (C / groups * KH * KW);
///  * 2-D `*.weight` (linear): uniform(-1/sqrt(in), 1/sqrt(in)), in =
///    shape[1] (PyTorch's default);
///  * 1-D `*.weight` with a sibling `*.running_var` (batch norm scale), and
///    any other 1-D `*.weight` (a norm layer's scale): uniform [0.5, 1.5);
///  * `*.running_var`: uniform [0.5, 1.5);
///  * `*.running_mean`: normal(0, 0.1);
///  * 1-D `*.bias` whose sibling `*.weight` is 2-D (linear bias): uniform
///    (-1/sqrt(in), 1/sqrt(in)); any other 1-D `*.bias`: normal(0, 0.1);
///  * anything else: He normal over fan_in = product of shape[1:] for rank
///    >= 2, normal(0, 0.1) for rank 0 and 1.
SyntheticInit syntheticInit(const Manifest &M, size_t Index);

/// The logical (row-major) synthetic values of parameter \p Index for
/// \p Seed: draws from the stream streamKey(Seed, name) in row-major order.
std::vector<float> syntheticValues(const Manifest &M, size_t Index,
                                   uint64_t Seed);

/// Fills every parameter of \p Blob (M.WeightsBytes bytes, which the caller
/// zeroes) with synthetic values for \p Seed.
void fillSynthetic(const Manifest &M, uint64_t Seed, uint8_t *Blob);

//===----------------------------------------------------------------------===//
// Safetensors weights
//===----------------------------------------------------------------------===//

/// Fills every parameter of \p Blob from the .safetensors file at \p Path,
/// after checking that it holds exactly the model's parameters (see the file
/// comment).
io::Status fillFromSafeTensors(const Manifest &M, const std::string &Path,
                               uint8_t *Blob);

/// Zeroes \p Blob and fills it from \p Source.
io::Status buildWeights(const Manifest &M, const WeightsSource &Source,
                        uint8_t *Blob);

} // namespace memfmt::loader

#endif // MEMFMT_RUNTIME_LOADER_WEIGHTS_H
