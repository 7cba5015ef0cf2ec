//===- Data.h - memfmt-train's data: arrays, batches, shuffle ---*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What memfmt-train feeds a model: the `x` and `y` arrays of an .npz file,
// checked against the model's input, the order of the rows (the file's, or
// a SplitMix64 Fisher-Yates permutation per epoch, documented in --help),
// and batches in the model's input layout — passed straight from the file's
// array when its rows are consecutive and already in that layout, gathered
// otherwise, and converted (counted) when the layouts differ.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_TRAIN_DATA_H
#define MEMFMT_TOOLS_MEMFMT_TRAIN_DATA_H

#include "Options.h"

#include "memfmt/runtime/io/Tensor.h"
#include "memfmt/runtime/loader/Random.h"
#include "memfmt/runtime/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memfmt::train {

/// The image input of a model: its info and logical NCHW sizes.
struct ImageInput {
  memfmt_model_tensor_info_t Info;
  int64_t N = 0, C = 0, H = 0, W = 0;
};

/// Input 0 of \p Model, which must be f32 [N,C,H,W]; \p What names the
/// model in errors.
ImageInput imageInput(memfmt_model_t *Model, const std::string &What);

/// The rows of a data file.
struct Dataset {
  std::string Path;
  DataFormat Format = DataFormat::Contiguous;
  io::Tensor X, Y;
  int64_t Rows = 0;
};

/// Reads \p Path and checks `x` (f32 [M,C,H,W], or [M,H,W,C] for
/// channels-last) and `y` (i64 [M]) against \p Input.
Dataset loadDataset(const std::string &Path, DataFormat Format,
                    const ImageInput &Input);

/// The row order of every epoch: the file's, or SplitMix64 Fisher-Yates
/// permutations of one stream seeded with the shuffle seed (see --help).
class RowOrder {
public:
  RowOrder(int64_t Rows, std::optional<uint64_t> Seed);
  /// The order of epoch \p Epoch (epochs are asked for in increasing order;
  /// skipped ones are drawn and dropped, so a resumed run sees the order an
  /// uninterrupted one would).
  const std::vector<int64_t> &epoch(int64_t Epoch);
  bool shuffled() const { return Seed.has_value(); }

private:
  int64_t Rows;
  std::optional<uint64_t> Seed;
  loader::SplitMix64 Rng;
  int64_t Current = -1;
  std::vector<int64_t> Order;
};

/// Builds the model's input buffers for batches of rows.
class BatchFeeder {
public:
  BatchFeeder(const Dataset &Data, const ImageInput &Input);

  /// The image buffer for \p Rows (at most N of them; missing rows are
  /// zeros) in the model's input layout: a pointer into the data when the
  /// rows are consecutive and in that layout, else the staging buffer.
  const void *images(const int64_t *Rows, int64_t Count);
  /// The i64 label buffer for \p Rows (missing rows are 0).
  const void *labels(const int64_t *Rows, int64_t Count);
  /// Batches converted from the data's layout to the model's.
  int64_t conversions() const { return Conversions; }

private:
  const Dataset &Data;
  const ImageInput &Input;
  /// The model's input strides equal the data's row layout.
  bool SameLayout = false;
  std::vector<float> ImageStage;
  std::vector<int64_t> LabelStage;
  int64_t Conversions = 0;
};

} // namespace memfmt::train

#endif // MEMFMT_TOOLS_MEMFMT_TRAIN_DATA_H
