//===- Checkpoint.cpp - memfmt-train's safetensors checkpoints ------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The checkpoint files of Checkpoint.h, written and read with the runtime's
// safetensors library and the parameter C API, and the copy of the trained
// parameters into the eval model.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "ToolError.h"

#include "memfmt/runtime/io/SafeTensors.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <unistd.h>
#include <vector>

namespace memfmt::train {

using run::fail;

namespace {

const std::string NumBatchesTracked = ".num_batches_tracked";
const std::string RunningMean = ".running_mean";

bool endsWith(const std::string &S, const std::string &Suffix) {
  return S.size() >= Suffix.size() &&
         S.compare(S.size() - Suffix.size(), Suffix.size(), Suffix) == 0;
}

std::vector<memfmt_model_tensor_info_t> parameters(memfmt_model_t *Model) {
  memfmt_model_info_t Info;
  memfmt_model_get_info(Model, &Info);
  std::vector<memfmt_model_tensor_info_t> Params(
      static_cast<size_t>(Info.num_parameters));
  for (int64_t I = 0; I < Info.num_parameters; ++I)
    memfmt_model_parameter_info(Model, I, &Params[static_cast<size_t>(I)]);
  return Params;
}

std::vector<float> readParameter(memfmt_model_t *Model,
                                 const memfmt_model_tensor_info_t &P) {
  std::vector<float> V(static_cast<size_t>(P.num_elements));
  if (memfmt_model_read_parameter(Model, P.name, V.data(), P.num_elements))
    fail(memfmt_context_last_error(memfmt_model_context(Model)));
  return V;
}

/// The value of the I64 scalar \p T.
std::optional<int64_t> int64Scalar(const io::TensorView &T) {
  if (T.Type != io::DType::I64 || !T.Shape.empty() || T.NumBytes != 8)
    return std::nullopt;
  int64_t V;
  std::memcpy(&V, T.Data, 8);
  return V;
}

/// The values of the I64 tensor \p T (a step count) as the parameter API's
/// f32, which holds counts below 2^24 exactly.
io::Result<std::vector<float>> int64ToF32(const io::TensorView &T) {
  if (T.Type != io::DType::I64)
    return io::Failure{std::string("is ") + io::dtypeName(T.Type) +
                       ", expected I64 (a step count)"};
  std::vector<float> V(T.NumBytes / 8);
  for (size_t I = 0; I < V.size(); ++I) {
    int64_t Count;
    std::memcpy(&Count, T.Data + 8 * I, 8);
    V[I] = static_cast<float>(Count);
  }
  return V;
}

} // namespace

std::string optimizerPath(const std::string &WeightsPath) {
  const std::string Suffix = ".safetensors";
  return WeightsPath.substr(0, WeightsPath.size() - Suffix.size()) +
         ".optimizer" + Suffix;
}

void checkWritable(const std::string &Path) {
  bool Existed = ::access(Path.c_str(), F_OK) == 0;
  std::FILE *F = std::fopen(Path.c_str(), "ab");
  if (!F)
    fail(Path + ": cannot write: " + std::strerror(errno));
  std::fclose(F);
  if (!Existed)
    std::remove(Path.c_str());
}

int64_t initialStep(memfmt_model_t *Model) {
  memfmt_model_info_t Info;
  memfmt_model_get_info(Model, &Info);
  std::string Source = Info.weights_source;
  const std::string Prefix = "safetensors:";
  if (Source.compare(0, Prefix.size(), Prefix) != 0)
    return 0;
  io::Result<io::SafeTensorsFile> File =
      io::SafeTensorsFile::open(Source.substr(Prefix.size()));
  if (!File)
    fail(File.error());
  for (const io::TensorView &T : File->tensors())
    if (endsWith(T.Name, NumBatchesTracked)) {
      std::optional<int64_t> V = int64Scalar(T);
      if (!V || *V < 0)
        fail(File->path() + ": " + T.Name +
             " is not a non-negative I64 scalar");
      return *V;
    }
  return 0;
}

void saveCheckpoint(memfmt_model_t *Model, const std::string &Path,
                    int64_t Steps) {
  std::deque<std::vector<float>> Values;
  std::deque<int64_t> Counts;
  std::vector<io::TensorView> Weights, Optimizer;
  std::set<std::string> Modules;
  auto View = [](const std::string &Name, io::DType Type,
                 std::vector<int64_t> Shape, const void *Data, size_t Bytes) {
    io::TensorView V;
    V.Name = Name;
    V.Type = Type;
    V.Shape = std::move(Shape);
    V.Data = static_cast<const uint8_t *>(Data);
    V.NumBytes = Bytes;
    return V;
  };
  // Integer optimizer state (a step count), saved as I64.
  std::deque<std::vector<int64_t>> IntValues;
  std::vector<io::TensorView> Integers;
  for (const memfmt_model_tensor_info_t &P : parameters(Model)) {
    Values.push_back(readParameter(Model, P));
    std::string Name = P.name;
    std::vector<int64_t> Shape(P.shape, P.shape + P.rank);
    if (std::string(P.dtype) == "i64") {
      IntValues.emplace_back();
      for (float V : Values.back())
        IntValues.back().push_back(std::llround(V));
      Integers.push_back(View(Name, io::DType::I64, Shape,
                              IntValues.back().data(),
                              IntValues.back().size() * sizeof(int64_t)));
      continue;
    }
    (P.zero_init ? Optimizer : Weights)
        .push_back(View(Name, io::DType::F32, Shape, Values.back().data(),
                        Values.back().size() * sizeof(float)));
    if (!P.zero_init && endsWith(Name, RunningMean))
      Modules.insert(Name.substr(0, Name.size() - RunningMean.size()));
  }
  // I64 first: the data section then keeps every tensor aligned.
  std::vector<io::TensorView> Tracked;
  for (const std::string &Module : Modules) {
    Counts.push_back(Steps);
    Tracked.push_back(View(Module + NumBatchesTracked, io::DType::I64, {},
                           &Counts.back(), sizeof(int64_t)));
  }
  Weights.insert(Weights.begin(), Tracked.begin(), Tracked.end());
  Optimizer.insert(Optimizer.begin(), Integers.begin(), Integers.end());
  if (io::Status S = io::writeSafeTensors(Path, Weights); !S)
    fail(S.error());
  if (io::Status S = io::writeSafeTensors(optimizerPath(Path), Optimizer,
                                          {{"step", std::to_string(Steps)}});
      !S)
    fail(S.error());
}

int64_t resumeOptimizer(memfmt_model_t *Model, const std::string &Path) {
  std::string OptPath = optimizerPath(Path);
  io::Result<io::SafeTensorsFile> File = io::SafeTensorsFile::open(OptPath);
  if (!File)
    fail(File.error() + " (--resume " + Path + " needs the optimizer state " +
         "--save wrote beside it)");
  std::vector<std::string> Problems;
  std::set<std::string> Expected;
  for (const memfmt_model_tensor_info_t &P : parameters(Model)) {
    if (!P.zero_init)
      continue;
    Expected.insert(P.name);
    std::vector<int64_t> Shape(P.shape, P.shape + P.rank);
    const io::TensorView *T = File->find(P.name);
    if (!T) {
      Problems.push_back(std::string("'") + P.name + "' is missing");
      continue;
    }
    if (T->Shape != Shape) {
      Problems.push_back(std::string("'") + P.name + "' has shape " +
                         io::formatShape(T->Shape) + ", the model's is " +
                         io::formatShape(Shape));
      continue;
    }
    io::Result<std::vector<float>> V =
        std::string(P.dtype) == "i64"
            ? int64ToF32(*T)
            : io::convertToF32(T->Type, T->Data, T->NumBytes);
    if (!V) {
      Problems.push_back(std::string("'") + P.name + "': " + V.error());
      continue;
    }
    if (memfmt_model_write_parameter(Model, P.name, V->data(), P.num_elements))
      fail(memfmt_context_last_error(memfmt_model_context(Model)));
  }
  for (const io::TensorView &T : File->tensors())
    if (!Expected.count(T.Name))
      Problems.push_back("'" + T.Name +
                         "' is not optimizer state of the model");
  if (!Problems.empty()) {
    std::string Message = OptPath + " does not match the model:";
    for (const std::string &P : Problems)
      Message += "\n  " + P;
    fail(Message);
  }
  for (const auto &[Key, Value] : File->metadata())
    if (Key == "step") {
      char *End = nullptr;
      long long Step = std::strtoll(Value.c_str(), &End, 10);
      if (Value.empty() || *End || Step < 0)
        fail(OptPath + ": metadata step '" + Value + "' is not a step count");
      return Step;
    }
  fail(OptPath + ": no 'step' in its metadata");
}

void copyParameters(memfmt_model_t *From, memfmt_model_t *To,
                    const std::string &ToName) {
  for (const memfmt_model_tensor_info_t &P : parameters(To)) {
    std::vector<float> V(static_cast<size_t>(P.num_elements));
    if (memfmt_model_read_parameter(From, P.name, V.data(), P.num_elements))
      fail(ToName + " does not match the training model: " +
           memfmt_context_last_error(memfmt_model_context(From)));
    if (memfmt_model_write_parameter(To, P.name, V.data(), P.num_elements))
      fail(memfmt_context_last_error(memfmt_model_context(To)));
  }
}

} // namespace memfmt::train
