//===- ModelImpl.h - The state of a loaded model ----------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The definition of the opaque memfmt_model of model.h, private to the
// loader: Model.cpp loads and runs it, Parameters.cpp reads and writes its
// parameters. It holds the manifest, the library and its entry points, the
// arena and weights blob (host, and device memory for CUDA models), the
// staging buffers and the descriptors the entry point is called with.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LOADER_MODELIMPL_H
#define MEMFMT_RUNTIME_LOADER_MODELIMPL_H

#include "ContextError.h"

#include "memfmt/runtime/loader/Manifest.h"
#include "memfmt/runtime/loader/model_abi.h"
#include "memfmt/runtime/model.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <vector>

namespace memfmt::loader {

/// A zeroed buffer of at least one byte, aligned to
/// MEMFMT_MODEL_BUFFER_ALIGNMENT, whose size is rounded up to it.
struct AlignedBuffer {
  struct Free {
    void operator()(uint8_t *P) const { std::free(P); }
  };
  std::unique_ptr<uint8_t, Free> Data;
  int64_t Bytes = 0;

  /// False when the allocation fails.
  bool allocate(int64_t Size) {
    constexpr int64_t Align = MEMFMT_MODEL_BUFFER_ALIGNMENT;
    int64_t Rounded = (std::max<int64_t>(Size, 1) + Align - 1) / Align * Align;
    void *P = std::aligned_alloc(Align, static_cast<size_t>(Rounded));
    if (!P)
      return false;
    std::memset(P, 0, static_cast<size_t>(Rounded));
    Data.reset(static_cast<uint8_t *>(P));
    Bytes = Size;
    return true;
  }
  uint8_t *get() const { return Data.get(); }
};

/// The info of a parameter, input or output (pointers into \p T).
inline memfmt_model_tensor_info_t tensorInfo(const TensorSpec &T) {
  memfmt_model_tensor_info_t Info;
  Info.name = T.Name.c_str();
  Info.dtype = toString(T.Type);
  Info.element_size = static_cast<int64_t>(elementSize(T.Type));
  Info.rank = static_cast<int64_t>(T.Shape.size());
  Info.shape = T.Shape.data();
  Info.strides = T.Strides.data();
  Info.num_elements = T.numElements();
  Info.buffer_bytes = T.extentBytes();
  Info.zero_init = 0;
  return Info;
}

/// A hash of the bytes each parameter spans in \p Blob, in manifest order:
/// the loader compares them before and after memfmt_prepare to find the
/// parameters whose slots it overwrote.
std::vector<uint64_t> hashParameters(const Manifest &M, const uint8_t *Blob);

/// The signature of memfmt_prepare (model_abi.h).
using PrepareFn = int32_t (*)(memfmt_context_t *, memfmt_byte_memref_t *);

/// The entry point (model_abi.h): the context and the buffers' descriptor
/// pointers (arena, weights, inputs, outputs) as one array.
using EntryFn = int32_t (*)(memfmt_context_t *, memfmt_byte_memref_t *const *);

} // namespace memfmt::loader

struct memfmt_model {
  memfmt_context_t *Ctx = nullptr;
  memfmt::loader::Manifest M;
  /// The weight source the blob was built from, and its text.
  memfmt::loader::WeightsSource Source;
  std::string WeightsSourceText;
  void *Library = nullptr;
  memfmt::loader::EntryFn Entry = nullptr;
  /// memfmt_prepare, or null for a model without load-time ops.
  memfmt::loader::PrepareFn Prepare = nullptr;
  memfmt::loader::AlignedBuffer Arena;
  memfmt::loader::AlignedBuffer Weights;
  /// Per parameter: memfmt_prepare overwrote its slot in the blob (the
  /// folded convolution weight takes the convolution weight's slot).
  std::vector<bool> Overwritten;
  /// Once an overwritten parameter has been read or written: a blob whose
  /// overwritten parameters' slots hold their values as the weight source
  /// and the writes made them (Parameters.cpp).
  memfmt::loader::AlignedBuffer SourceWeights;
  /// memfmt_model_run_logical's buffers in the model's layouts, and their
  /// addresses as memfmt_model_run takes them.
  std::vector<memfmt::loader::AlignedBuffer> InputStage;
  std::vector<memfmt::loader::AlignedBuffer> OutputStage;
  std::vector<const void *> InputStagePointers;
  std::vector<void *> OutputStagePointers;
  /// The entry's arguments: arena, weights, inputs, outputs.
  std::vector<memfmt_byte_memref_t> Descriptors;
  std::vector<memfmt_byte_memref_t *> Args;
  std::vector<memfmt_model_tensor_info_t> InputInfo;
  std::vector<memfmt_model_tensor_info_t> OutputInfo;

  /// Device models: buffers from memfmt_device_alloc (freed with the model).
  bool OnDevice = false;
  void *DeviceArena = nullptr;
  void *DeviceWeights = nullptr;
  std::vector<void *> DeviceInputs;
  std::vector<void *> DeviceOutputs;
  /// The CUDA graph of the forward pass and the tensor pointers it was
  /// captured with.
  bool UseGraph = false;
  memfmt_graph_t *Graph = nullptr;
  std::vector<void *> GraphPointers;

  /// The weights blob was declared constant to the context (after
  /// memfmt_prepare), so kernels may keep what they derive from it.
  bool WeightsDeclared = false;

  ~memfmt_model() {
    if (WeightsDeclared)
      memfmt_context_forget_constant(Ctx, weightsBase());
    if (Graph)
      memfmt_graph_destroy(Ctx, Graph);
    for (void *P : DeviceInputs)
      memfmt_device_free(Ctx, P);
    for (void *P : DeviceOutputs)
      memfmt_device_free(Ctx, P);
    memfmt_device_free(Ctx, DeviceArena);
    memfmt_device_free(Ctx, DeviceWeights);
    if (Library)
      ::dlclose(Library);
  }

  /// The arena and weights the entry point gets (device or host memory).
  void *arenaBase() { return OnDevice ? DeviceArena : Arena.get(); }
  void *weightsBase() { return OnDevice ? DeviceWeights : Weights.get(); }

  /// Records "<function> (<model>): <message>" in the context.
  memfmt_status_t fail(memfmt_status_t Status, const char *Function,
                       const std::string &Message) {
    memfmt::loader::setContextError(Ctx, std::string(Function) + " (" +
                                             M.Model + "): " + Message);
    return Status;
  }

  /// A parameter was written since memfmt_prepare last ran: call()
  /// refreshes the load-time values first.
  bool LoadTimeStale = false;

  /// Copies the overwritten parameters' values back into their slots and
  /// runs memfmt_prepare again; a parameter it overwrites for the first time
  /// joins Overwritten with its values (Parameters.cpp).
  memfmt_status_t refreshLoadTimeValues(const char *Function);

  /// Runs memfmt_prepare on the blob (device or host) and, on a device,
  /// copies the result back to the host copy; on failure the message names
  /// \p Function.
  memfmt_status_t prepareWeights(const char *Function);

  /// Calls the entry point on the given buffers (checked by the caller):
  /// host buffers, or buffers in the context's device memory when
  /// `DeviceBuffers` (the same thing on the CPU).
  memfmt_status_t call(const void *const *Inputs, void *const *Outputs,
                       const char *Function, bool DeviceBuffers = false);

  /// Runs the entry point on the descriptors as they are (replaying or
  /// capturing the graph when UseGraph).
  memfmt_status_t invoke(const char *Function);

  /// Calls the entry point once, turning its result into a status and
  /// message.
  memfmt_status_t invokeEntry(const char *Function);
};

#endif // MEMFMT_RUNTIME_LOADER_MODELIMPL_H
