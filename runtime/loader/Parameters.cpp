//===- Parameters.cpp - Reading and writing a model's parameters ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The parameter calls of model.h: a parameter's info, and its value read or
// written as a row-major f32 array through the re-layout helpers of
// Weights.h (which also convert f16/bf16).
//
// Where the values live: in the weights blob, at the manifest's offset and
// strides (a CUDA model's in device memory: a parameter's bytes are copied
// through the host copy of the blob). A training model updates them there
// in place on every run, so reads see every step.
//
// Except where memfmt_prepare overwrote them. The memory plan lets a
// load-time result take the blob slot of an operand nothing else reads (the
// folded convolution weight takes the convolution weight's slot,
// MemoryPlan.cpp), so after loading such a slot no longer holds the
// parameter, and running memfmt_prepare again on the blob would fold twice.
// The loader finds these parameters by hashing every parameter's bytes
// before and after memfmt_prepare (Overwritten). Their values live in a
// second blob, SourceWeights, built on first use from the weight source
// (deterministic: the same seed or file gives the bytes the loader wrote)
// and updated by every write. A write stores the new values and marks the
// load-time results stale; before the next run (memfmt_model::call), the
// overwritten parameters' values are copied back into their slots and
// memfmt_prepare runs once more, however many parameters were written
// (copying a ResNet's parameters into its eval model costs one fold, not
// one per parameter). A parameter that memfmt_prepare then overwrites for
// the first time (its slot held a fixed point of the fold, e.g. zeros)
// joins Overwritten.
// Every write then drops the kernels' per-node caches
// (memfmt_context_invalidate_caches), since they may hold packed copies of
// the old weights.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/model.h"

#include "ModelImpl.h"

#include "memfmt/runtime/loader/Weights.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <string>

using namespace memfmt::loader;

namespace {

/// The parameter \p Name of \p Model, or null after recording why not.
const TensorSpec *findChecked(memfmt_model_t *Model, const char *Function,
                              const char *Name, const void *Values,
                              int64_t Elements, memfmt_status_t &Status) {
  Status = MEMFMT_STATUS_INVALID_ARGUMENT;
  if (!Name) {
    Model->fail(Status, Function, "the parameter name is null");
    return nullptr;
  }
  const TensorSpec *T = Model->M.findParameter(Name);
  if (!T) {
    Status = Model->fail(MEMFMT_STATUS_NOT_FOUND, Function,
                         "the model has no parameter '" + std::string(Name) +
                             "' (it has " +
                             std::to_string(Model->M.Parameters.size()) +
                             "; see memfmt_model_parameter_info)");
    return nullptr;
  }
  if (Elements != T->numElements()) {
    Model->fail(Status, Function,
                "parameter '" + T->Name + "' has shape " +
                    formatDims(T->Shape) + " = " +
                    std::to_string(T->numElements()) + " elements, not " +
                    std::to_string(Elements));
    return nullptr;
  }
  if (!Values && Elements > 0) {
    Model->fail(Status, Function, "values is null");
    return nullptr;
  }
  Status = MEMFMT_STATUS_OK;
  return T;
}

/// Copies \p Bytes bytes at byte \p Offset of the blob between the device
/// and the host copy, and waits for the copy.
memfmt_status_t copyBlob(memfmt_model_t *Model, const char *Function,
                         int64_t Offset, int64_t Bytes, memfmt_copy_kind Kind) {
  if (Bytes <= 0)
    return MEMFMT_STATUS_OK;
  uint8_t *Host = Model->Weights.get() + Offset;
  uint8_t *Device = static_cast<uint8_t *>(Model->DeviceWeights) + Offset;
  bool ToDevice = Kind == MEMFMT_COPY_HOST_TO_DEVICE;
  if (memfmt_device_copy(Model->Ctx, ToDevice ? Device : Host,
                         ToDevice ? Host : Device, Bytes,
                         Kind) != MEMFMT_STATUS_OK ||
      memfmt_context_synchronize(Model->Ctx) != MEMFMT_STATUS_OK)
    return Model->fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                       memfmt_context_last_error(Model->Ctx));
  return MEMFMT_STATUS_OK;
}

/// Builds SourceWeights from the weight source unless it exists.
memfmt_status_t ensureSourceWeights(memfmt_model_t *Model,
                                    const char *Function) {
  if (Model->SourceWeights.get())
    return MEMFMT_STATUS_OK;
  AlignedBuffer Source;
  if (!Source.allocate(Model->M.WeightsBytes))
    return Model->fail(MEMFMT_STATUS_OUT_OF_MEMORY, Function,
                       "cannot allocate " +
                           std::to_string(Model->M.WeightsBytes) +
                           " bytes for the parameters' values");
  memfmt::io::Status Built =
      buildWeights(Model->M, Model->Source, Source.get());
  if (!Built)
    return Model->fail(MEMFMT_STATUS_INVALID_ARGUMENT, Function,
                       "rebuilding the parameters from " +
                           Model->WeightsSourceText +
                           " failed: " + Built.error());
  Model->SourceWeights = std::move(Source);
  return MEMFMT_STATUS_OK;
}

size_t indexOf(const memfmt_model_t *Model, const TensorSpec *T) {
  return static_cast<size_t>(T - Model->M.Parameters.data());
}

memfmt_status_t readParameter(memfmt_model_t *Model, const char *Name,
                              float *Values, int64_t Elements) {
  static const char *const Function = "memfmt_model_read_parameter";
  memfmt_status_t Status;
  const TensorSpec *T =
      findChecked(Model, Function, Name, Values, Elements, Status);
  if (!T)
    return Status;
  const uint8_t *Blob = Model->Weights.get();
  if (Model->Overwritten[indexOf(Model, T)]) {
    if (memfmt_status_t S = ensureSourceWeights(Model, Function))
      return S;
    Blob = Model->SourceWeights.get();
  } else if (Model->OnDevice) {
    if (memfmt_status_t S =
            copyBlob(Model, Function, T->Offset, T->extentBytes(),
                     MEMFMT_COPY_DEVICE_TO_HOST))
      return S;
  }
  gatherToRowMajor(Blob + T->Offset, *T, Values);
  return MEMFMT_STATUS_OK;
}

/// Stores the values of parameter \p T (not overwritten) in the blob and, on
/// a device, uploads them.
memfmt_status_t storeInBlob(memfmt_model_t *Model, const char *Function,
                            const TensorSpec &T, const float *Values) {
  scatterFromRowMajor(Values, T, Model->Weights.get() + T.Offset);
  if (!Model->OnDevice)
    return MEMFMT_STATUS_OK;
  return copyBlob(Model, Function, T.Offset, T.extentBytes(),
                  MEMFMT_COPY_HOST_TO_DEVICE);
}

memfmt_status_t writeParameter(memfmt_model_t *Model, const char *Name,
                               const float *Values, int64_t Elements) {
  static const char *const Function = "memfmt_model_write_parameter";
  memfmt_status_t Status;
  const TensorSpec *T =
      findChecked(Model, Function, Name, Values, Elements, Status);
  if (!T)
    return Status;
  bool AnyOverwritten =
      std::find(Model->Overwritten.begin(), Model->Overwritten.end(), true) !=
      Model->Overwritten.end();
  if (AnyOverwritten)
    if (memfmt_status_t S = ensureSourceWeights(Model, Function))
      return S;
  if (Model->Overwritten[indexOf(Model, T)])
    scatterFromRowMajor(Values, *T, Model->SourceWeights.get() + T->Offset);
  else if (memfmt_status_t S = storeInBlob(Model, Function, *T, Values))
    return S;
  // The load-time ops follow before the next run.
  Model->LoadTimeStale = Model->Prepare != nullptr;
  // Kernels may have packed the old values (declared constant at load).
  if (memfmt_context_invalidate_caches(Model->Ctx) != MEMFMT_STATUS_OK)
    return Model->fail(MEMFMT_STATUS_INTERNAL, Function,
                       memfmt_context_last_error(Model->Ctx));
  return MEMFMT_STATUS_OK;
}

/// Runs \p Body, turning exceptions into statuses with a message.
template <typename Fn>
memfmt_status_t guarded(memfmt_model_t *Model, const char *Function,
                        Fn &&Body) {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    return Model->fail(MEMFMT_STATUS_OUT_OF_MEMORY, Function, "out of memory");
  } catch (const std::exception &E) {
    return Model->fail(MEMFMT_STATUS_INTERNAL, Function,
                       std::string("internal error: ") + E.what());
  }
}

} // namespace

memfmt_status_t memfmt_model::refreshLoadTimeValues(const char *Function) {
  LoadTimeStale = false;
  const std::vector<TensorSpec> &Params = M.Parameters;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (!Overwritten[I])
      continue;
    const TensorSpec &T = Params[I];
    std::memcpy(Weights.get() + T.Offset, SourceWeights.get() + T.Offset,
                static_cast<size_t>(T.extentBytes()));
    if (OnDevice)
      if (memfmt_status_t S =
              copyBlob(this, Function, T.Offset, T.extentBytes(),
                       MEMFMT_COPY_HOST_TO_DEVICE))
        return S;
  }
  // On a device the host copy may be behind the runs' in-place updates.
  if (OnDevice)
    if (memfmt_status_t S = copyBlob(this, Function, 0, M.WeightsBytes,
                                     MEMFMT_COPY_DEVICE_TO_HOST))
      return S;
  // Keep the values of the parameters memfmt_prepare has not overwritten
  // so far, in case it does now.
  std::vector<uint64_t> Before = hashParameters(M, Weights.get());
  std::vector<std::vector<uint8_t>> Kept(Params.size());
  for (size_t I = 0; I < Params.size(); ++I)
    if (!Overwritten[I])
      Kept[I].assign(Weights.get() + Params[I].Offset,
                     Weights.get() + Params[I].Offset +
                         Params[I].extentBytes());
  if (memfmt_status_t S = prepareWeights(Function))
    return S;
  std::vector<uint64_t> After = hashParameters(M, Weights.get());
  for (size_t I = 0; I < Params.size(); ++I) {
    if (Overwritten[I] || Before[I] == After[I])
      continue;
    if (memfmt_status_t S = ensureSourceWeights(this, Function))
      return S;
    std::memcpy(SourceWeights.get() + Params[I].Offset, Kept[I].data(),
                Kept[I].size());
    Overwritten[I] = true;
  }
  return MEMFMT_STATUS_OK;
}

std::vector<uint64_t> memfmt::loader::hashParameters(const Manifest &M,
                                                     const uint8_t *Blob) {
  // FNV-1a over 8-byte words (and the tail byte by byte).
  std::vector<uint64_t> Hashes;
  Hashes.reserve(M.Parameters.size());
  for (const TensorSpec &T : M.Parameters) {
    const uint8_t *P = Blob + T.Offset;
    size_t Bytes = static_cast<size_t>(T.extentBytes()), I = 0;
    uint64_t H = 0xcbf29ce484222325ull;
    for (; I + 8 <= Bytes; I += 8) {
      uint64_t Word;
      std::memcpy(&Word, P + I, 8);
      H = (H ^ Word) * 0x100000001b3ull;
    }
    for (; I < Bytes; ++I)
      H = (H ^ P[I]) * 0x100000001b3ull;
    Hashes.push_back(H);
  }
  return Hashes;
}

extern "C" {

memfmt_status_t
memfmt_model_parameter_info(const memfmt_model_t *model, int64_t index,
                            memfmt_model_tensor_info_t *out_info) {
  if (!model || !out_info)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (index < 0 || index >= static_cast<int64_t>(model->M.Parameters.size()))
    return MEMFMT_STATUS_NOT_FOUND;
  const TensorSpec &T = model->M.Parameters[static_cast<size_t>(index)];
  *out_info = tensorInfo(T);
  out_info->zero_init = T.ZeroInit ? 1 : 0;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model_read_parameter(memfmt_model_t *model,
                                            const char *name, float *values,
                                            int64_t elements) {
  if (!model)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  return guarded(model, "memfmt_model_read_parameter",
                 [&] { return readParameter(model, name, values, elements); });
}

memfmt_status_t memfmt_model_write_parameter(memfmt_model_t *model,
                                             const char *name,
                                             const float *values,
                                             int64_t elements) {
  if (!model)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  return guarded(model, "memfmt_model_write_parameter",
                 [&] { return writeParameter(model, name, values, elements); });
}

} // extern "C"
