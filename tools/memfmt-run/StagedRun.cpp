//===- StagedRun.cpp - Runs on buffers already in the model's layout ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Staging a run's buffers once (scattered into the model's strides, copied
// to the device for a device model) and the untimed single run that --bench
// and --profile repeat; see StagedRun.h.
//
//===----------------------------------------------------------------------===//

#include "StagedRun.h"

#include "ToolError.h"

#include "memfmt/runtime/loader/Weights.h"
#include "memfmt/runtime/loader/model_abi.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace memfmt::run {

ModelBuffers::~ModelBuffers() {
  for (void *P : DeviceStorage)
    memfmt_device_free(DeviceCtx, P);
}

void *ModelBuffers::toDevice(const void *Host, int64_t Bytes) {
  void *P = nullptr;
  if (memfmt_device_alloc(DeviceCtx, Bytes, &P) != MEMFMT_STATUS_OK ||
      memfmt_device_copy(DeviceCtx, P, Host, Bytes,
                         MEMFMT_COPY_HOST_TO_DEVICE) != MEMFMT_STATUS_OK)
    fail(memfmt_context_last_error(DeviceCtx));
  DeviceStorage.push_back(P);
  return P;
}

void *ModelBuffers::allocate(int64_t Bytes) {
  // aligned_alloc takes a multiple of the alignment.
  constexpr size_t Alignment = MEMFMT_MODEL_BUFFER_ALIGNMENT;
  size_t Size =
      (static_cast<size_t>(std::max<int64_t>(Bytes, 1)) + Alignment - 1) /
      Alignment * Alignment;
  void *P = std::aligned_alloc(Alignment, Size);
  if (!P)
    fail("cannot allocate " + std::to_string(Bytes) + " bytes");
  std::memset(P, 0, Size);
  Storage.emplace_back(P);
  return P;
}

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

} // namespace memfmt::run
