//===- StagedRun.h - Runs on buffers in the model's layout ------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// What --bench and --profile time: memfmt_model_run on input and output
// buffers already in the model's layouts (host memory aligned to
// MEMFMT_MODEL_BUFFER_ALIGNMENT), or for a model on a device
// memfmt_model_run_device on copies of them in device memory, without waiting
// for the device. Staging happens once, before any timed run.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_STAGEDRUN_H
#define MEMFMT_TOOLS_MEMFMT_RUN_STAGEDRUN_H

#include "ModelIO.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace memfmt::run {

/// Buffers in the model's layouts, for memfmt_model_run (host memory), and
/// for a device model their copies in device memory, for
/// memfmt_model_run_device.
struct ModelBuffers {
  struct Free {
    void operator()(void *P) const { std::free(P); }
  };
  std::vector<std::unique_ptr<void, Free>> Storage;
  std::vector<const void *> Inputs;
  std::vector<void *> Outputs;
  memfmt_context_t *DeviceCtx = nullptr;
  std::vector<void *> DeviceStorage;
  std::vector<const void *> DeviceInputs;
  std::vector<void *> DeviceOutputs;

  ModelBuffers() = default;
  ModelBuffers(ModelBuffers &&) = default;
  ~ModelBuffers();

  /// Device memory holding a copy of `Bytes` at `Host`.
  void *toDevice(const void *Host, int64_t Bytes);
  /// Zeroed host memory of at least `Bytes` (at least one), aligned to
  /// MEMFMT_MODEL_BUFFER_ALIGNMENT.
  void *allocate(int64_t Bytes);
};

/// Inputs in the model's layouts; for a model on a device (`DeviceCtx` not
/// null) also copied to device memory.
ModelBuffers stageInputs(const Tensors &T,
                         const std::vector<std::vector<float>> &Logical,
                         memfmt_context_t *DeviceCtx);

/// One run: on host buffers (CPU), or on device buffers without waiting for
/// the device (CUDA).
void runRaw(memfmt_model_t *Model, const ModelBuffers &B);

/// Waits for the work queued on \p Model's context.
void synchronize(memfmt_model_t *Model);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_STAGEDRUN_H
