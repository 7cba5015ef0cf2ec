//===- Data.cpp - memfmt-train's data: arrays, batches, shuffle -----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Loading and checking the data arrays, the shuffle permutations and the
// batch buffers of Data.h. A batch is copied only when it must be: rows out
// of order (shuffle, a padded eval batch) are gathered, and data in another
// layout than the model's input is converted element by element through the
// model's strides.
//
//===----------------------------------------------------------------------===//

#include "Data.h"

#include "ToolError.h"

#include "memfmt/runtime/io/Npz.h"
#include "memfmt/runtime/loader/Random.h"

#include <cstring>

namespace memfmt::train {

using run::fail;

ImageInput imageInput(memfmt_model_t *Model, const std::string &What) {
  ImageInput In;
  if (memfmt_model_input_info(Model, 0, &In.Info) != MEMFMT_STATUS_OK)
    fail(What + " has no inputs");
  const memfmt_model_tensor_info_t &I = In.Info;
  if (std::strcmp(I.dtype, "f32") != 0 || I.rank != 4)
    fail(What + ": input 0 (" + I.name + ") is " + I.dtype + " of rank " +
         std::to_string(I.rank) + "; memfmt-train feeds f32 images [N,C,H,W]");
  In.N = I.shape[0];
  In.C = I.shape[1];
  In.H = I.shape[2];
  In.W = I.shape[3];
  return In;
}

namespace {

std::string describe(const io::Tensor &T) {
  return std::string(io::dtypeName(T.Type)) + " " + io::formatShape(T.Shape);
}

} // namespace

Dataset loadDataset(const std::string &Path, DataFormat Format,
                    const ImageInput &Input) {
  io::Result<io::NpzArrays> Arrays = io::readNpz(Path);
  if (!Arrays)
    fail(Arrays.error());
  Dataset D;
  D.Path = Path;
  D.Format = Format;
  for (const char *Name : {"x", "y"})
    if (!Arrays->count(Name))
      fail(Path + ": no array '" + Name +
           "' (a data file holds x: float32 images and y: int64 labels)");
  D.X = std::move(Arrays->at("x"));
  D.Y = std::move(Arrays->at("y"));
  bool ChannelsLast = Format == DataFormat::ChannelsLast;
  std::vector<int64_t> Row =
      ChannelsLast ? std::vector<int64_t>{Input.H, Input.W, Input.C}
                   : std::vector<int64_t>{Input.C, Input.H, Input.W};
  const char *Dims = ChannelsLast ? "[M,H,W,C]" : "[M,C,H,W]";
  if (D.X.Type != io::DType::F32 || D.X.Shape.size() != 4 ||
      std::vector<int64_t>(D.X.Shape.begin() + 1, D.X.Shape.end()) != Row)
    fail(Path + ": x is " + describe(D.X) + "; the model takes F32 [M," +
         std::to_string(Row[0]) + "," + std::to_string(Row[1]) + "," +
         std::to_string(Row[2]) + "] (" + Dims +
         (ChannelsLast ? ", --data-format channels-last)"
                       : "; use --data-format channels-last for [M,H,W,C] "
                         "data)"));
  D.Rows = D.X.Shape[0];
  if (D.Y.Type != io::DType::I64 || D.Y.Shape != std::vector<int64_t>{D.Rows})
    fail(Path + ": y is " + describe(D.Y) + "; expected I64 [" +
         std::to_string(D.Rows) + "] (one class index per row of x)");
  return D;
}

RowOrder::RowOrder(int64_t Rows, std::optional<uint64_t> Seed)
    : Rows(Rows), Seed(Seed), Rng(Seed.value_or(0)) {
  Order.resize(static_cast<size_t>(Rows));
  for (int64_t I = 0; I < Rows; ++I)
    Order[static_cast<size_t>(I)] = I;
}

const std::vector<int64_t> &RowOrder::epoch(int64_t Epoch) {
  if (!Seed)
    return Order;
  while (Current < Epoch) {
    for (int64_t I = 0; I < Rows; ++I)
      Order[static_cast<size_t>(I)] = I;
    for (int64_t I = Rows - 1; I > 0; --I) {
      uint64_t J = Rng.next() % static_cast<uint64_t>(I + 1);
      std::swap(Order[static_cast<size_t>(I)], Order[J]);
    }
    ++Current;
  }
  return Order;
}

namespace {

/// The strides of a dense [N,C,H,W] tensor in \p Format.
std::vector<int64_t> denseStrides(const ImageInput &In, DataFormat Format) {
  if (Format == DataFormat::ChannelsLast)
    return {In.H * In.W * In.C, 1, In.W * In.C, In.C};
  return {In.C * In.H * In.W, In.H * In.W, In.W, 1};
}

/// Whether \p A and \p B address the same elements of a tensor of \p Shape
/// (dimensions of size 1 do not count, L2).
bool sameStrides(const int64_t *Shape, const int64_t *A,
                 const std::vector<int64_t> &B) {
  for (size_t D = 0; D < B.size(); ++D)
    if (Shape[D] != 1 && A[D] != B[D])
      return false;
  return true;
}

} // namespace

BatchFeeder::BatchFeeder(const Dataset &Data, const ImageInput &Input)
    : Data(Data), Input(Input) {
  SameLayout = sameStrides(Input.Info.shape, Input.Info.strides,
                           denseStrides(Input, Data.Format));
  ImageStage.assign(static_cast<size_t>(Input.Info.buffer_bytes / 4), 0.0f);
  LabelStage.assign(static_cast<size_t>(Input.N), 0);
}

const void *BatchFeeder::images(const int64_t *Rows, int64_t Count) {
  const int64_t RowSize = Input.C * Input.H * Input.W;
  const float *X = reinterpret_cast<const float *>(Data.X.Data.data());
  bool Consecutive = Count == Input.N;
  for (int64_t I = 1; I < Count && Consecutive; ++I)
    Consecutive = Rows[I] == Rows[0] + I;
  if (SameLayout && Consecutive)
    return X + Rows[0] * RowSize;
  if (SameLayout) {
    // Gather whole rows; zeros after the last one.
    for (int64_t I = 0; I < Input.N; ++I) {
      float *Dst = ImageStage.data() + I * Input.Info.strides[0];
      if (I < Count)
        std::memcpy(Dst, X + Rows[I] * RowSize, RowSize * sizeof(float));
      else
        std::memset(Dst, 0, RowSize * sizeof(float));
    }
    return ImageStage.data();
  }
  // Convert: element (n, c, h, w) from the data's layout to the model's.
  std::vector<int64_t> From = denseStrides(Input, Data.Format);
  const int64_t *To = Input.Info.strides;
  for (int64_t N = 0; N < Input.N; ++N) {
    const float *Src = N < Count ? X + Rows[N] * RowSize : nullptr;
    for (int64_t C = 0; C < Input.C; ++C)
      for (int64_t H = 0; H < Input.H; ++H)
        for (int64_t W = 0; W < Input.W; ++W)
          ImageStage[N * To[0] + C * To[1] + H * To[2] + W * To[3]] =
              Src ? Src[C * From[1] + H * From[2] + W * From[3]] : 0.0f;
  }
  ++Conversions;
  return ImageStage.data();
}

const void *BatchFeeder::labels(const int64_t *Rows, int64_t Count) {
  const int64_t *Y = reinterpret_cast<const int64_t *>(Data.Y.Data.data());
  bool Consecutive = Count == Input.N;
  for (int64_t I = 1; I < Count && Consecutive; ++I)
    Consecutive = Rows[I] == Rows[0] + I;
  if (Consecutive)
    return Y + Rows[0];
  for (int64_t I = 0; I < Input.N; ++I)
    LabelStage[static_cast<size_t>(I)] = I < Count ? Y[Rows[I]] : 0;
  return LabelStage.data();
}

} // namespace memfmt::train
