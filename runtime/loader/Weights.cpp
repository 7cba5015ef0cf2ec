//===- Weights.cpp - Building the weights blob and re-laying tensors ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The strided walk behind every re-layout (row-major index on one side,
// strided element offset on the other, one row of the innermost dimension
// at a time), the synthetic initialiser's rules and the safetensors source
// with its all-problems-at-once validation. Parameters marked "init":
// "zeros" (optimizer state) stay zeros unless the safetensors file has them.
// See Weights.h for the contract.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/loader/Weights.h"

#include "memfmt/runtime/io/HalfFloat.h"
#include "memfmt/runtime/io/SafeTensors.h"
#include "memfmt/runtime/loader/Random.h"

#include <cmath>
#include <cstring>
#include <unordered_set>

namespace memfmt::loader {

using io::Failure;

//===----------------------------------------------------------------------===//
// Re-layout
//===----------------------------------------------------------------------===//

namespace {

/// Calls F(RowMajorIndex, ElementOffset, Count, Stride) for each row of the
/// innermost dimension of \p T: the row holds Count elements, the first at
/// row-major index RowMajorIndex and strided offset ElementOffset, the next
/// ones Stride elements apart.
template <typename Fn> void forEachRow(const TensorSpec &T, Fn &&F) {
  int64_t Count = T.numElements();
  if (Count == 0)
    return;
  size_t Rank = T.Shape.size();
  if (Rank == 0) {
    F(int64_t(0), int64_t(0), int64_t(1), int64_t(1));
    return;
  }
  int64_t Inner = T.Shape[Rank - 1];
  int64_t InnerStride = T.Strides[Rank - 1];
  std::vector<int64_t> Index(Rank, 0);
  int64_t Offset = 0;
  for (int64_t Linear = 0; Linear < Count; Linear += Inner) {
    F(Linear, Offset, Inner, InnerStride);
    for (size_t D = Rank - 1; D-- > 0;) {
      if (++Index[D] < T.Shape[D]) {
        Offset += T.Strides[D];
        break;
      }
      Offset -= (T.Shape[D] - 1) * T.Strides[D];
      Index[D] = 0;
    }
  }
}

} // namespace

void scatterFromRowMajor(const float *Src, const TensorSpec &T, void *Dst) {
  switch (T.Type) {
  case ElementType::F32: {
    float *Out = static_cast<float *>(Dst);
    forEachRow(T, [&](int64_t In, int64_t Off, int64_t N, int64_t Stride) {
      for (int64_t I = 0; I < N; ++I)
        Out[Off + I * Stride] = Src[In + I];
    });
    return;
  }
  case ElementType::F16:
  case ElementType::BF16: {
    bool Half = T.Type == ElementType::F16;
    uint16_t *Out = static_cast<uint16_t *>(Dst);
    forEachRow(T, [&](int64_t In, int64_t Off, int64_t N, int64_t Stride) {
      for (int64_t I = 0; I < N; ++I)
        Out[Off + I * Stride] = Half ? io::floatToHalf(Src[In + I])
                                     : io::floatToBFloat16(Src[In + I]);
    });
    return;
  }
  case ElementType::I64: {
    int64_t *Out = static_cast<int64_t *>(Dst);
    forEachRow(T, [&](int64_t In, int64_t Off, int64_t N, int64_t Stride) {
      for (int64_t I = 0; I < N; ++I)
        Out[Off + I * Stride] = std::llround(Src[In + I]);
    });
    return;
  }
  }
}

/// Integer state (a step count) is copied exactly, not through f32.
static void scatterI64FromRowMajor(const uint8_t *Src, const TensorSpec &T,
                                   uint8_t *Dst) {
  forEachRow(T, [&](int64_t In, int64_t Off, int64_t N, int64_t Stride) {
    for (int64_t I = 0; I < N; ++I)
      std::memcpy(Dst + (Off + I * Stride) * 8, Src + (In + I) * 8, 8);
  });
}

void gatherToRowMajor(const void *Src, const TensorSpec &T, float *Dst) {
  switch (T.Type) {
  case ElementType::F32: {
    const float *In = static_cast<const float *>(Src);
    forEachRow(T, [&](int64_t Out, int64_t Off, int64_t N, int64_t Stride) {
      for (int64_t I = 0; I < N; ++I)
        Dst[Out + I] = In[Off + I * Stride];
    });
    return;
  }
  case ElementType::F16:
  case ElementType::BF16: {
    bool Half = T.Type == ElementType::F16;
    const uint16_t *In = static_cast<const uint16_t *>(Src);
    forEachRow(T, [&](int64_t Out, int64_t Off, int64_t N, int64_t Stride) {
      for (int64_t I = 0; I < N; ++I)
        Dst[Out + I] = Half ? io::halfToFloat(In[Off + I * Stride])
                            : io::bfloat16ToFloat(In[Off + I * Stride]);
    });
    return;
  }
  case ElementType::I64: {
    const int64_t *In = static_cast<const int64_t *>(Src);
    forEachRow(T, [&](int64_t Out, int64_t Off, int64_t N, int64_t Stride) {
      for (int64_t I = 0; I < N; ++I)
        Dst[Out + I] = static_cast<float>(In[Off + I * Stride]);
    });
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Synthetic weights
//===----------------------------------------------------------------------===//

namespace {

/// Splits "layer1.0.bn1.weight" into ("layer1.0.bn1", "weight"); a name
/// without a dot is all suffix.
std::pair<std::string, std::string> splitName(const std::string &Name) {
  size_t Dot = Name.find_last_of('.');
  if (Dot == std::string::npos)
    return {"", Name};
  return {Name.substr(0, Dot), Name.substr(Dot + 1)};
}

/// The sibling of \p Prefix with \p Suffix, or nullptr.
const TensorSpec *sibling(const Manifest &M, const std::string &Prefix,
                          const char *Suffix) {
  return M.findParameter(Prefix.empty() ? std::string(Suffix)
                                        : Prefix + "." + Suffix);
}

SyntheticInit normal(double Mean, double Std, std::string Rule) {
  return {SyntheticInit::Kind::Normal, Mean, Std, std::move(Rule)};
}

SyntheticInit uniform(double Lo, double Hi, std::string Rule) {
  return {SyntheticInit::Kind::Uniform, Lo, Hi, std::move(Rule)};
}

SyntheticInit heNormal(int64_t FanIn) {
  FanIn = FanIn > 0 ? FanIn : 1;
  return normal(0.0, std::sqrt(2.0 / static_cast<double>(FanIn)),
                "he-normal(fan_in=" + std::to_string(FanIn) + ")");
}

SyntheticInit linearUniform(int64_t In, const char *What) {
  In = In > 0 ? In : 1;
  double Bound = 1.0 / std::sqrt(static_cast<double>(In));
  return uniform(-Bound, Bound,
                 std::string(What) + "-uniform(in=" + std::to_string(In) + ")");
}

} // namespace

SyntheticInit syntheticInit(const Manifest &M, size_t Index) {
  const TensorSpec &P = M.Parameters[Index];
  auto [Prefix, Suffix] = splitName(P.Name);
  size_t Rank = P.Shape.size();
  if (Suffix == "weight" && Rank == 4)
    return heNormal(P.Shape[1] * P.Shape[2] * P.Shape[3]);
  if (Suffix == "weight" && Rank == 2)
    return linearUniform(P.Shape[1], "linear");
  if (Suffix == "weight" && Rank == 1) {
    if (!sibling(M, Prefix, "running_var"))
      return uniform(0.5, 1.5, "scale-uniform");
    // The last batch norm of a residual branch (bn2 of a basic block, bn3 of
    // a bottleneck: "<block>.bnK" with a "<block>.conv1" and no
    // "<block>.bn<K+1>") gets a small scale, as in trained ResNets (and
    // torchvision's zero_init_residual), so that activations stay O(1)
    // through deep residual stacks instead of doubling per block.
    auto [Block, Layer] = splitName(Prefix);
    if (!Block.empty() && Layer.size() > 2 && Layer.compare(0, 2, "bn") == 0 &&
        sibling(M, Block, "conv1.weight")) {
      std::string Next = "bn" + std::to_string(std::atoi(Layer.c_str() + 2) + 1);
      if (!sibling(M, Block, (Next + ".weight").c_str()))
        return uniform(0.1, 0.3, "residual-bn-scale-uniform");
    }
    return uniform(0.5, 1.5, "bn-scale-uniform");
  }
  if (Suffix == "running_var")
    return uniform(0.5, 1.5, "running-var-uniform");
  if (Suffix == "running_mean")
    return normal(0.0, 0.1, "running-mean-normal");
  if (Suffix == "bias" && Rank == 1) {
    const TensorSpec *Weight = sibling(M, Prefix, "weight");
    if (Weight && Weight->Shape.size() == 2)
      return linearUniform(Weight->Shape[1], "linear-bias");
    return normal(0.0, 0.1, "bias-normal");
  }
  if (Rank >= 2) {
    int64_t FanIn = 1;
    for (size_t D = 1; D < Rank; ++D)
      FanIn *= P.Shape[D];
    return heNormal(FanIn);
  }
  return normal(0.0, 0.1, "normal");
}

std::vector<float> syntheticValues(const Manifest &M, size_t Index,
                                   uint64_t Seed) {
  const TensorSpec &P = M.Parameters[Index];
  SyntheticInit Init = syntheticInit(M, Index);
  NormalGenerator Gen(streamKey(Seed, P.Name));
  std::vector<float> Values(static_cast<size_t>(P.numElements()));
  if (Init.K == SyntheticInit::Kind::Normal) {
    for (float &V : Values)
      V = static_cast<float>(Init.A + Init.B * Gen.next());
  } else {
    double Width = Init.B - Init.A;
    for (float &V : Values)
      V = static_cast<float>(Init.A + Width * Gen.uniform());
  }
  return Values;
}

void fillSynthetic(const Manifest &M, uint64_t Seed, uint8_t *Blob) {
  for (size_t I = 0; I < M.Parameters.size(); ++I) {
    const TensorSpec &P = M.Parameters[I];
    // Optimizer state and integer state (a step count) start as zeros: the
    // blob is zeroed before (buildWeights).
    if (P.ZeroInit || P.Type == ElementType::I64)
      continue;
    std::vector<float> Values = syntheticValues(M, I, Seed);
    scatterFromRowMajor(Values.data(), P, Blob + P.Offset);
  }
}

//===----------------------------------------------------------------------===//
// Safetensors weights
//===----------------------------------------------------------------------===//

namespace {

/// "N what (a, b, c)" for the message listing problems.
void appendGroup(std::string &Out, const std::vector<std::string> &Items,
                 const char *What) {
  if (Items.empty())
    return;
  if (!Out.empty())
    Out += "; ";
  Out += std::to_string(Items.size()) + " " + What + ": ";
  for (size_t I = 0; I < Items.size(); ++I)
    Out += (I ? ", " : "") + Items[I];
}

} // namespace

io::Status fillFromSafeTensors(const Manifest &M, const std::string &Path,
                               uint8_t *Blob) {
  io::Result<io::SafeTensorsFile> File = io::SafeTensorsFile::open(Path);
  if (!File)
    return Failure{File.error()};

  std::vector<std::string> Missing, WrongShape, WrongType, Unexpected;
  std::unordered_set<std::string> Names;
  for (const TensorSpec &P : M.Parameters) {
    Names.insert(P.Name);
    const io::TensorView *T = File->find(P.Name);
    if (!T) {
      if (!P.ZeroInit) // Optimizer state absent from the file: zeros.
        Missing.push_back(P.Name);
      continue;
    }
    if (P.Type == ElementType::I64) {
      if (T->Type != io::DType::I64) // A step count.
        WrongType.push_back(P.Name + " is " + io::dtypeName(T->Type) +
                            ", expected I64");
    } else if (T->Type != io::DType::F32 && T->Type != io::DType::F16 &&
               T->Type != io::DType::BF16) {
      WrongType.push_back(P.Name + " is " + io::dtypeName(T->Type));
    }
    if (T->Shape != P.Shape)
      WrongShape.push_back(P.Name + " is " + formatDims(T->Shape) +
                           ", the model expects " + formatDims(P.Shape));
  }
  for (const io::TensorView &T : File->tensors())
    if (!Names.count(T.Name) && !isTrainingOnlyState(T.Name))
      Unexpected.push_back(T.Name);

  std::string Problems;
  appendGroup(Problems, Missing, "missing");
  appendGroup(Problems, WrongShape, "with the wrong shape");
  appendGroup(Problems, WrongType,
              "with an unsupported dtype (expected F32, F16 or BF16)");
  appendGroup(Problems, Unexpected, "not parameters of the model");
  if (!Problems.empty())
    return Failure{Path + ": does not match model '" + M.Model + "' (" +
                   M.Path + "): " + Problems};

  for (const TensorSpec &P : M.Parameters) {
    const io::TensorView *T = File->find(P.Name);
    if (!T)
      continue; // A zero-initialised state: zeros (the blob is zeroed).
    if (P.Type == ElementType::I64) {
      scatterI64FromRowMajor(T->Data, P, Blob + P.Offset);
      continue;
    }
    io::Result<std::vector<float>> Values =
        io::convertToF32(T->Type, T->Data, T->NumBytes);
    if (!Values)
      return Failure{Path + ": tensor '" + P.Name + "': " + Values.error()};
    scatterFromRowMajor(Values->data(), P, Blob + P.Offset);
  }
  return io::Status::success();
}

io::Status buildWeights(const Manifest &M, const WeightsSource &Source,
                        uint8_t *Blob) {
  if (M.WeightsBytes > 0)
    std::memset(Blob, 0, static_cast<size_t>(M.WeightsBytes));
  if (Source.K == WeightsSource::Kind::Synthetic) {
    fillSynthetic(M, Source.Seed, Blob);
    return io::Status::success();
  }
  return fillFromSafeTensors(M, Source.Path, Blob);
}

} // namespace memfmt::loader
