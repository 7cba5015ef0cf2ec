//===- Model.cpp - Loading and running compiled models (model.h) ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The C API of model.h. Loading reads the manifest, opens the library with
// dlopen (its `_mlir_ciface_memfmt_*` calls resolve against the runtime
// library already in the process), allocates the arena, the weights blob
// and the staging buffers of memfmt_model_run_logical once, and fills the
// blob (Weights.h). Running fills the byte-memref descriptors of the
// arguments (model_abi.h) and calls the entry point with them as one array.
//
// A model loaded into a device context (CUDA) keeps the arena, the weights
// blob and one staging buffer per input and output in device memory
// (memfmt_device_alloc, once): the weights are built and re-laid on the host
// and uploaded once; memfmt_model_run copies inputs in and outputs out around
// the entry call, memfmt_model_run_device passes device buffers through.
// Loading ends with one warm-up run on zeroed inputs, on every target (a
// host model's weights blob is restored after it, so that a training step's
// warm-up changes no state): it builds what the kernels cache per node (oneDNN
// primitives with their packed weights, cuDNN algorithms and workspaces), so
// that no run packs a weight or allocates (memfmt_context_get_counters; checked
// by test/E2E/no-per-run-work.test). With the context's cuda_graph option the
// forward pass is then captured as one CUDA graph and every run replays it
// (captured again only when the buffers passed to memfmt_model_run_device
// change). A training step updates its state in place on every run (its
// manifest marks those parameters "updated"): its weights are never declared
// constant, so that no kernel keeps weights packed from an older step.
// (Device models: CUDA training is not supported yet.)
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/model.h"

#include "ContextError.h"
#include "ModelImpl.h"

#include "memfmt/runtime/loader/Manifest.h"
#include "memfmt/runtime/loader/Weights.h"
#include "memfmt/runtime/loader/model_abi.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace memfmt::loader;
namespace io = memfmt::io;

namespace {

/// "input 0 (input_0)", for messages (built only when one is needed, so a
/// successful run allocates nothing).
std::string describeTensor(const char *Kind, size_t Index,
                           const TensorSpec &T) {
  return std::string(Kind) + " " + std::to_string(Index) + " (" + T.Name + ")";
}

/// Empty when \p Path can be read, else why not (strerror).
std::string unreadableReason(const std::string &Path) {
  if (::access(Path.c_str(), R_OK) == 0)
    return "";
  return std::strerror(errno);
}

} // namespace

namespace {

memfmt_status_t failLoad(memfmt_context_t *Ctx, memfmt_status_t Status,
                         const std::string &Message) {
  setContextError(Ctx, "memfmt_model_load: " + Message);
  return Status;
}

memfmt_status_t loadModel(memfmt_context_t *Ctx, const char *Dir,
                          const char *WeightsOverride, bool AnyTarget,
                          memfmt_model_t **OutModel) {
  auto Model = std::make_unique<memfmt_model>();
  Model->Ctx = Ctx;

  // The manifest. A directory or file that cannot be read is an I/O error;
  // a manifest that can be read but is wrong is an invalid argument.
  std::string DirPath = Dir;
  io::Result<Manifest> M = readManifest(DirPath);
  if (!M) {
    std::string Clean = DirPath;
    while (Clean.size() > 1 && Clean.back() == '/')
      Clean.pop_back();
    bool Readable = unreadableReason(Clean + "/manifest.json").empty();
    return failLoad(
        Ctx, Readable ? MEMFMT_STATUS_INVALID_ARGUMENT : MEMFMT_STATUS_IO_ERROR,
        M.error());
  }
  Model->M = M.take();
  Manifest &Man = Model->M;

  // The target must be the context's device family.
  memfmt_context_options_t Options;
  memfmt_context_options_init(&Options);
  if (memfmt_context_get_options(Ctx, &Options) != MEMFMT_STATUS_OK)
    return failLoad(Ctx, MEMFMT_STATUS_INVALID_ARGUMENT,
                    "cannot read the context's options");
  const char *Backend = Options.backend == MEMFMT_BACKEND_CUDA ? "cuda" : "cpu";
  Model->OnDevice = Options.backend != MEMFMT_BACKEND_CPU;
  Model->UseGraph = Model->OnDevice && Options.cuda_graph == MEMFMT_SWITCH_ON;
  if (Man.Target != Backend && !AnyTarget)
    return failLoad(Ctx, MEMFMT_STATUS_UNSUPPORTED,
                    Man.Path + ": the model was compiled for target '" +
                        Man.Target + "' but the context runs on '" + Backend +
                        "'");

  // The weight source, checked before anything expensive happens.
  WeightsSource Source = Man.Weights;
  if (WeightsOverride) {
    io::Result<WeightsSource> Override =
        parseWeightsSource(WeightsOverride, "", /*AllowBarePath=*/true);
    if (!Override)
      return failLoad(Ctx, MEMFMT_STATUS_INVALID_ARGUMENT, Override.error());
    Source = *Override;
  }
  Model->Source = Source;
  Model->WeightsSourceText = Source.str();
  if (Source.K == WeightsSource::Kind::SafeTensors) {
    std::string Why = unreadableReason(Source.Path);
    if (!Why.empty())
      return failLoad(Ctx, MEMFMT_STATUS_IO_ERROR,
                      Source.Path + ": " + Why + " (weights source " +
                          Source.str() + ")");
  }

  // The library and its entry point.
  std::string Why = unreadableReason(Man.LibraryPath);
  if (!Why.empty())
    return failLoad(Ctx, MEMFMT_STATUS_IO_ERROR,
                    Man.LibraryPath + ": " + Why + " (the 'library' of " +
                        Man.Path + ")");
  Model->Library = ::dlopen(Man.LibraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Model->Library) {
    const char *DlError = ::dlerror();
    return failLoad(Ctx, MEMFMT_STATUS_IO_ERROR,
                    "dlopen failed: " +
                        std::string(DlError ? DlError : Man.LibraryPath));
  }
  ::dlerror();
  Model->Entry =
      reinterpret_cast<EntryFn>(::dlsym(Model->Library, Man.Entry.c_str()));
  if (!Model->Entry) {
    const char *DlError = ::dlerror();
    return failLoad(Ctx, MEMFMT_STATUS_NOT_FOUND,
                    Man.LibraryPath + " has no entry point '" + Man.Entry +
                        "' (the 'entry' of " + Man.Path +
                        "): " + (DlError ? DlError : "dlsym returned null"));
  }

  // Buffers, allocated once.
  auto Allocate = [&](AlignedBuffer &Buffer, int64_t Bytes, const char *What) {
    if (Buffer.allocate(Bytes))
      return true;
    failLoad(Ctx, MEMFMT_STATUS_OUT_OF_MEMORY,
             "cannot allocate " + std::to_string(Bytes) + " bytes for " + What);
    return false;
  };
  if (!Allocate(Model->Arena, Model->OnDevice ? 0 : Man.ArenaBytes,
                "the arena") ||
      !Allocate(Model->Weights, Man.WeightsBytes, "the weights"))
    return MEMFMT_STATUS_OUT_OF_MEMORY;
  Model->InputStage.resize(Man.Inputs.size());
  Model->OutputStage.resize(Man.Outputs.size());
  for (size_t I = 0; I < Man.Inputs.size(); ++I)
    if (!Allocate(Model->InputStage[I], Man.Inputs[I].extentBytes(),
                  "an input buffer"))
      return MEMFMT_STATUS_OUT_OF_MEMORY;
  for (size_t I = 0; I < Man.Outputs.size(); ++I)
    if (!Allocate(Model->OutputStage[I], Man.Outputs[I].extentBytes(),
                  "an output buffer"))
      return MEMFMT_STATUS_OUT_OF_MEMORY;
  for (AlignedBuffer &B : Model->InputStage)
    Model->InputStagePointers.push_back(B.get());
  for (AlignedBuffer &B : Model->OutputStage)
    Model->OutputStagePointers.push_back(B.get());

  // The weights.
  io::Status Filled = buildWeights(Man, Source, Model->Weights.get());
  if (!Filled)
    return failLoad(Ctx, MEMFMT_STATUS_INVALID_ARGUMENT, Filled.error());

  // Device models: the arena, the weights (uploaded once) and the staging
  // buffers of memfmt_model_run, all allocated now.
  if (Model->OnDevice) {
    auto DeviceAlloc = [&](void **P, int64_t Bytes, const char *What) {
      if (memfmt_device_alloc(Ctx, Bytes, P) == MEMFMT_STATUS_OK)
        return MEMFMT_STATUS_OK;
      return failLoad(Ctx, MEMFMT_STATUS_OUT_OF_MEMORY,
                      "cannot allocate " + std::to_string(Bytes) +
                          " bytes of device memory for " + What + ": " +
                          memfmt_context_last_error(Ctx));
    };
    if (memfmt_status_t S =
            DeviceAlloc(&Model->DeviceArena, Man.ArenaBytes, "the arena"))
      return S;
    if (memfmt_status_t S =
            DeviceAlloc(&Model->DeviceWeights, Man.WeightsBytes, "the weights"))
      return S;
    Model->DeviceInputs.assign(Man.Inputs.size(), nullptr);
    Model->DeviceOutputs.assign(Man.Outputs.size(), nullptr);
    for (size_t I = 0; I < Man.Inputs.size(); ++I)
      if (memfmt_status_t S =
              DeviceAlloc(&Model->DeviceInputs[I], Man.Inputs[I].extentBytes(),
                          "an input buffer"))
        return S;
    for (size_t I = 0; I < Man.Outputs.size(); ++I)
      if (memfmt_status_t S =
              DeviceAlloc(&Model->DeviceOutputs[I],
                          Man.Outputs[I].extentBytes(), "an output buffer"))
        return S;
    if (memfmt_device_copy(Ctx, Model->DeviceWeights, Model->Weights.get(),
                           Man.WeightsBytes,
                           MEMFMT_COPY_HOST_TO_DEVICE) != MEMFMT_STATUS_OK ||
        memfmt_context_synchronize(Ctx) != MEMFMT_STATUS_OK)
      return failLoad(Ctx, MEMFMT_STATUS_BACKEND_ERROR,
                      std::string("uploading the weights failed: ") +
                          memfmt_context_last_error(Ctx));
  }

  // Load-time work the compiler left (e.g. batch norm folded into conv
  // weights): once, now, never per run. Models without it have no symbol.
  Model->Prepare = reinterpret_cast<PrepareFn>(
      ::dlsym(Model->Library,
              MEMFMT_MODEL_CIFACE_PREFIX MEMFMT_MODEL_PREPARE_FUNCTION));
  Model->Overwritten.assign(Man.Parameters.size(), false);
  if (Model->Prepare) {
    std::vector<uint64_t> Before = hashParameters(Man, Model->Weights.get());
    if (memfmt_status_t S = Model->prepareWeights("memfmt_model_load"))
      return S;
    std::vector<uint64_t> After = hashParameters(Man, Model->Weights.get());
    for (size_t I = 0; I < Before.size(); ++I)
      Model->Overwritten[I] = Before[I] != After[I];
  }

  // From here on the weights of an inference model never change: kernels
  // may pack them once. A training step updates its state in the blob on
  // every run, so kernels must read it afresh each time.
  bool UpdatesState = std::any_of(
      Man.Parameters.begin(), Man.Parameters.end(),
      [](const TensorSpec &P) { return P.Updated; });
  if (!UpdatesState &&
      memfmt_context_declare_constant(Ctx, Model->weightsBase(),
                                      Man.WeightsBytes) == MEMFMT_STATUS_OK)
    Model->WeightsDeclared = true;

  // The entry's arguments: arena and weights are fixed, the tensors' are
  // filled per run.
  size_t NumArgs = 2 + Man.Inputs.size() + Man.Outputs.size();
  Model->Descriptors.assign(NumArgs, memfmt_byte_memref_t{});
  Model->Descriptors[0] = {Model->arenaBase(), Model->arenaBase(), 0,
                           Man.ArenaBytes, 1};
  Model->Descriptors[1] = {Model->weightsBase(), Model->weightsBase(), 0,
                           Man.WeightsBytes, 1};
  for (memfmt_byte_memref_t &D : Model->Descriptors)
    Model->Args.push_back(&D);

  for (const TensorSpec &T : Man.Inputs)
    Model->InputInfo.push_back(tensorInfo(T));
  for (const TensorSpec &T : Man.Outputs)
    Model->OutputInfo.push_back(tensorInfo(T));

  // One warm-up run on the zeroed staging buffers builds every per-node
  // cache: host models pack their weights for oneDNN here; device models
  // choose the algorithms, size the workspaces (and capture the graph).
  if (!Model->OnDevice) {
    // A run may update model state in the weights blob (a training step's
    // memfmt.assign_weight: parameters, momentum buffers, running
    // statistics); the warm-up run must not, so such a blob is put back.
    std::vector<uint8_t> Saved;
    if (UpdatesState && Man.WeightsBytes > 0) {
      const auto *Blob = static_cast<const uint8_t *>(Model->weightsBase());
      Saved.assign(Blob, Blob + Man.WeightsBytes);
    }
    if (memfmt_status_t S = Model->call(Model->InputStagePointers.data(),
                                        Model->OutputStagePointers.data(),
                                        "memfmt_model_load (warm-up run)"))
      return S;
    if (!Saved.empty())
      std::memcpy(Model->weightsBase(), Saved.data(), Saved.size());
  } else {
    std::vector<const void *> In(Model->DeviceInputs.begin(),
                                 Model->DeviceInputs.end());
    const char *WarmUp = "memfmt_model_load (warm-up run)";
    // Eagerly first (nothing may be chosen or allocated during a capture),
    // then, with graphs, once more to capture and replay.
    bool Graph = Model->UseGraph;
    Model->UseGraph = false;
    memfmt_status_t S = Model->call(In.data(), Model->DeviceOutputs.data(),
                                    WarmUp, /*DeviceBuffers=*/true);
    Model->UseGraph = Graph;
    if (S == MEMFMT_STATUS_OK && Graph)
      S = Model->call(In.data(), Model->DeviceOutputs.data(), WarmUp,
                      /*DeviceBuffers=*/true);
    if (S == MEMFMT_STATUS_OK && memfmt_context_synchronize(Ctx))
      S = Model->fail(MEMFMT_STATUS_BACKEND_ERROR,
                      "memfmt_model_load (warm-up run)",
                      memfmt_context_last_error(Ctx));
    // A training step's warm-up runs updated the device blob; the host copy
    // still holds the loaded state, so it goes back up.
    if (S == MEMFMT_STATUS_OK && UpdatesState && Man.WeightsBytes > 0 &&
        (memfmt_device_copy(Ctx, Model->DeviceWeights, Model->Weights.get(),
                            Man.WeightsBytes,
                            MEMFMT_COPY_HOST_TO_DEVICE) != MEMFMT_STATUS_OK ||
         memfmt_context_synchronize(Ctx) != MEMFMT_STATUS_OK))
      S = Model->fail(MEMFMT_STATUS_BACKEND_ERROR,
                      "memfmt_model_load (warm-up run)",
                      std::string("restoring the state after the warm-up "
                                  "failed: ") +
                          memfmt_context_last_error(Ctx));
    if (S != MEMFMT_STATUS_OK)
      return S;
  }

  *OutModel = Model.release();
  return MEMFMT_STATUS_OK;
}

} // namespace

memfmt_status_t memfmt_model::prepareWeights(const char *Function) {
  memfmt_byte_memref_t WeightsDesc = {weightsBase(), weightsBase(), 0,
                                      M.WeightsBytes, 1};
  memfmt_context_clear_error(Ctx);
  int32_t Prepared = Prepare(Ctx, &WeightsDesc);
  if (Prepared != MEMFMT_STATUS_OK)
    return fail(Prepared > 0 && Prepared <= MEMFMT_STATUS_INTERNAL
                    ? static_cast<memfmt_status_t>(Prepared)
                    : MEMFMT_STATUS_INTERNAL,
                Function,
                "memfmt_prepare failed: " +
                    std::string(memfmt_context_last_error(Ctx)));
  // Keep the host copy (memfmt_model_weights) equal to the device blob.
  if (OnDevice &&
      memfmt_device_copy(Ctx, Weights.get(), DeviceWeights, M.WeightsBytes,
                         MEMFMT_COPY_DEVICE_TO_HOST) != MEMFMT_STATUS_OK)
    return fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                std::string("memfmt_prepare failed: ") +
                    memfmt_context_last_error(Ctx));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model::call(const void *const *Inputs,
                                   void *const *Outputs, const char *Function,
                                   bool DeviceBuffers) {
  if (LoadTimeStale)
    if (memfmt_status_t S = refreshLoadTimeValues(Function))
      return S;
  size_t NumInputs = M.Inputs.size();
  bool Stage = OnDevice && !DeviceBuffers;
  for (size_t I = 0; I < NumInputs; ++I) {
    void *Data = const_cast<void *>(Inputs[I]);
    if (Stage) {
      if (memfmt_device_copy(Ctx, DeviceInputs[I], Data,
                             InputInfo[I].buffer_bytes,
                             MEMFMT_COPY_HOST_TO_DEVICE) != MEMFMT_STATUS_OK)
        return fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                    memfmt_context_last_error(Ctx));
      Data = DeviceInputs[I];
    }
    Descriptors[2 + I] = {Data, Data, 0, InputInfo[I].buffer_bytes, 1};
  }
  for (size_t I = 0; I < M.Outputs.size(); ++I) {
    void *Data = Stage ? DeviceOutputs[I] : Outputs[I];
    Descriptors[2 + NumInputs + I] = {Data, Data, 0, OutputInfo[I].buffer_bytes,
                                      1};
  }
  if (memfmt_status_t S = invoke(Function))
    return S;
  if (Stage)
    for (size_t I = 0; I < M.Outputs.size(); ++I)
      if (memfmt_device_copy(Ctx, Outputs[I], DeviceOutputs[I],
                             OutputInfo[I].buffer_bytes,
                             MEMFMT_COPY_DEVICE_TO_HOST) != MEMFMT_STATUS_OK)
        return fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                    memfmt_context_last_error(Ctx));
  if (Stage && M.Outputs.empty() && memfmt_context_synchronize(Ctx))
    return fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                memfmt_context_last_error(Ctx));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model::invoke(const char *Function) {
  if (!UseGraph)
    return invokeEntry(Function);
  std::vector<void *> Pointers;
  for (size_t I = 2; I < Descriptors.size(); ++I)
    Pointers.push_back(Descriptors[I].aligned);
  if (!Graph || Pointers != GraphPointers) {
    // (Re)capture: the graph holds the buffers' addresses.
    if (Graph)
      memfmt_graph_destroy(Ctx, Graph);
    Graph = nullptr;
    if (memfmt_graph_capture_begin(Ctx) != MEMFMT_STATUS_OK)
      return fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                  memfmt_context_last_error(Ctx));
    memfmt_status_t Captured = invokeEntry(Function);
    std::string Message = memfmt_context_last_error(Ctx);
    memfmt_status_t Ended = memfmt_graph_capture_end(Ctx, &Graph);
    if (Captured != MEMFMT_STATUS_OK) {
      if (Graph)
        memfmt_graph_destroy(Ctx, Graph);
      Graph = nullptr;
      return fail(Captured, Function,
                  "while capturing the CUDA graph: " + Message);
    }
    if (Ended != MEMFMT_STATUS_OK)
      return fail(Ended, Function, memfmt_context_last_error(Ctx));
    GraphPointers = Pointers;
  }
  if (memfmt_graph_launch(Ctx, Graph) != MEMFMT_STATUS_OK)
    return fail(MEMFMT_STATUS_BACKEND_ERROR, Function,
                memfmt_context_last_error(Ctx));
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model::invokeEntry(const char *Function) {
  memfmt_context_clear_error(Ctx);
  int32_t Result = Entry(Ctx, Args.data());
  if (Result == MEMFMT_STATUS_OK)
    return MEMFMT_STATUS_OK;
  std::string Message = memfmt_context_last_error(Ctx);
  memfmt_status_t Status = static_cast<memfmt_status_t>(Result);
  if (Result < 0 || Result > MEMFMT_STATUS_INTERNAL) {
    Status = MEMFMT_STATUS_INTERNAL;
    Message = "the model returned " + std::to_string(Result) +
              ", which is not a memfmt_status_t" +
              (Message.empty() ? "" : ": " + Message);
  } else if (Message.empty()) {
    Message = std::string("the model returned status ") +
              memfmt_status_string(Status) + " without a message";
  }
  return fail(Status, Function, Message);
}

static memfmt_status_t runModel(memfmt_model_t *model,
                                const void *const *inputs, void *const *outputs,
                                const char *Function, bool DeviceBuffers) {
  if (!model)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  // `inputs` may be null for a model without inputs.
  if ((!inputs && !model->M.Inputs.empty()) || !outputs)
    return model->fail(MEMFMT_STATUS_INVALID_ARGUMENT, Function,
                       outputs ? "inputs is null" : "outputs is null");
  auto Check = [&](const void *P, const TensorSpec &T, const char *Kind,
                   size_t I) {
    if (!P && T.extentBytes() > 0) {
      model->fail(MEMFMT_STATUS_INVALID_ARGUMENT, Function,
                  describeTensor(Kind, I, T) + " is null");
      return false;
    }
    if (reinterpret_cast<uintptr_t>(P) % elementSize(T.Type) != 0) {
      model->fail(MEMFMT_STATUS_INVALID_ARGUMENT, Function,
                  describeTensor(Kind, I, T) +
                      " is not aligned to its element size " +
                      std::to_string(elementSize(T.Type)));
      return false;
    }
    return true;
  };
  for (size_t I = 0; I < model->M.Inputs.size(); ++I)
    if (!Check(inputs[I], model->M.Inputs[I], "input", I))
      return MEMFMT_STATUS_INVALID_ARGUMENT;
  for (size_t I = 0; I < model->M.Outputs.size(); ++I)
    if (!Check(outputs[I], model->M.Outputs[I], "output", I))
      return MEMFMT_STATUS_INVALID_ARGUMENT;
  return model->call(inputs, outputs, Function, DeviceBuffers);
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

extern "C" {

memfmt_status_t memfmt_model_load(memfmt_context_t *ctx, const char *dir,
                                  const char *weights_override,
                                  memfmt_model_t **out_model) {
  if (out_model)
    *out_model = nullptr;
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (!out_model)
    return failLoad(ctx, MEMFMT_STATUS_INVALID_ARGUMENT, "out_model is null");
  if (!dir || !*dir)
    return failLoad(ctx, MEMFMT_STATUS_INVALID_ARGUMENT,
                    "the model directory is null or empty");
  memfmt_context_clear_error(ctx);
  try {
    return loadModel(ctx, dir, weights_override, /*AnyTarget=*/false,
                     out_model);
  } catch (const std::bad_alloc &) {
    return failLoad(ctx, MEMFMT_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &E) {
    return failLoad(ctx, MEMFMT_STATUS_INTERNAL,
                    std::string("internal error: ") + E.what());
  }
}

memfmt_status_t memfmt_model_load_any_target(memfmt_context_t *ctx,
                                             const char *dir,
                                             const char *weights_override,
                                             memfmt_model_t **out_model) {
  if (out_model)
    *out_model = nullptr;
  if (!ctx)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (!out_model)
    return failLoad(ctx, MEMFMT_STATUS_INVALID_ARGUMENT, "out_model is null");
  if (!dir || !*dir)
    return failLoad(ctx, MEMFMT_STATUS_INVALID_ARGUMENT,
                    "the model directory is null or empty");
  memfmt_context_clear_error(ctx);
  try {
    return loadModel(ctx, dir, weights_override, /*AnyTarget=*/true, out_model);
  } catch (const std::bad_alloc &) {
    return failLoad(ctx, MEMFMT_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &E) {
    return failLoad(ctx, MEMFMT_STATUS_INTERNAL,
                    std::string("internal error: ") + E.what());
  }
}

void memfmt_model_destroy(memfmt_model_t *model) { delete model; }

memfmt_context_t *memfmt_model_context(const memfmt_model_t *model) {
  return model ? model->Ctx : nullptr;
}

memfmt_status_t memfmt_model_get_info(const memfmt_model_t *model,
                                      memfmt_model_info_t *out_info) {
  if (!model || !out_info)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  const Manifest &M = model->M;
  memfmt_model_info_t Info;
  Info.name = M.Model.c_str();
  Info.target = M.Target.c_str();
  Info.precision = M.Precision.c_str();
  Info.memory_format = M.MemoryFormat.c_str();
  Info.input_format = M.InputFormat.c_str();
  Info.weights_source = model->WeightsSourceText.c_str();
  Info.directory = M.Dir.c_str();
  Info.library_path = M.LibraryPath.c_str();
  Info.num_inputs = static_cast<int64_t>(M.Inputs.size());
  Info.num_outputs = static_cast<int64_t>(M.Outputs.size());
  Info.num_parameters = static_cast<int64_t>(M.Parameters.size());
  Info.num_nodes = static_cast<int64_t>(M.Nodes.size());
  Info.arena_bytes = M.ArenaBytes;
  Info.peak_live_bytes = M.PeakLiveBytes;
  Info.weights_bytes = M.WeightsBytes;
  *out_info = Info;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model_input_info(const memfmt_model_t *model,
                                        int64_t index,
                                        memfmt_model_tensor_info_t *out_info) {
  if (!model || !out_info)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (index < 0 || index >= static_cast<int64_t>(model->InputInfo.size()))
    return MEMFMT_STATUS_NOT_FOUND;
  *out_info = model->InputInfo[index];
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model_output_info(const memfmt_model_t *model,
                                         int64_t index,
                                         memfmt_model_tensor_info_t *out_info) {
  if (!model || !out_info)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (index < 0 || index >= static_cast<int64_t>(model->OutputInfo.size()))
    return MEMFMT_STATUS_NOT_FOUND;
  *out_info = model->OutputInfo[index];
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model_node_name(const memfmt_model_t *model,
                                       int64_t node, const char **out_name) {
  if (!model || !out_name)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  if (node < 0 || node >= static_cast<int64_t>(model->M.Nodes.size()))
    return MEMFMT_STATUS_NOT_FOUND;
  *out_name = model->M.Nodes[node].c_str();
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model_weights(const memfmt_model_t *model,
                                     const void **out_data,
                                     int64_t *out_bytes) {
  if (!model || !out_data || !out_bytes)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  *out_data = model->Weights.get();
  *out_bytes = model->M.WeightsBytes;
  return MEMFMT_STATUS_OK;
}

memfmt_status_t memfmt_model_run(memfmt_model_t *model,
                                 const void *const *inputs,
                                 void *const *outputs) {
  return runModel(model, inputs, outputs, "memfmt_model_run",
                  /*DeviceBuffers=*/false);
}

memfmt_status_t memfmt_model_run_device(memfmt_model_t *model,
                                        const void *const *inputs,
                                        void *const *outputs) {
  return runModel(model, inputs, outputs, "memfmt_model_run_device",
                  /*DeviceBuffers=*/true);
}

memfmt_status_t memfmt_model_run_logical(memfmt_model_t *model,
                                         const float *const *inputs,
                                         const int64_t *input_elements,
                                         float *const *outputs,
                                         const int64_t *output_elements) {
  static const char *const Function = "memfmt_model_run_logical";
  if (!model)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  // `inputs` may be null for a model without inputs.
  if ((!inputs && !model->M.Inputs.empty()) || !outputs)
    return model->fail(MEMFMT_STATUS_INVALID_ARGUMENT, Function,
                       outputs ? "inputs is null" : "outputs is null");
  auto Check = [&](const void *P, const int64_t *Elements, const TensorSpec &T,
                   const char *Kind, size_t I) {
    if (Elements && Elements[I] != T.numElements()) {
      model->fail(
          MEMFMT_STATUS_INVALID_ARGUMENT, Function,
          describeTensor(Kind, I, T) + " has " + std::to_string(Elements[I]) +
              " elements; the model expects shape " + formatDims(T.Shape) +
              " = " + std::to_string(T.numElements()) + " elements");
      return false;
    }
    if (!P && T.numElements() > 0) {
      model->fail(MEMFMT_STATUS_INVALID_ARGUMENT, Function,
                  describeTensor(Kind, I, T) + " is null");
      return false;
    }
    return true;
  };
  const Manifest &M = model->M;
  for (size_t I = 0; I < M.Inputs.size(); ++I)
    if (!Check(inputs[I], input_elements, M.Inputs[I], "input", I))
      return MEMFMT_STATUS_INVALID_ARGUMENT;
  for (size_t I = 0; I < M.Outputs.size(); ++I)
    if (!Check(outputs[I], output_elements, M.Outputs[I], "output", I))
      return MEMFMT_STATUS_INVALID_ARGUMENT;

  for (size_t I = 0; I < M.Inputs.size(); ++I)
    scatterFromRowMajor(inputs[I], M.Inputs[I], model->InputStage[I].get());
  memfmt_status_t Status =
      model->call(model->InputStagePointers.data(),
                  model->OutputStagePointers.data(), Function);
  if (Status != MEMFMT_STATUS_OK)
    return Status;
  for (size_t I = 0; I < M.Outputs.size(); ++I)
    gatherToRowMajor(model->OutputStage[I].get(), M.Outputs[I], outputs[I]);
  return MEMFMT_STATUS_OK;
}

} // extern "C"
