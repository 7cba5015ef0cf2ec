/*===- model.h - Loading and running compiled models --------------*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The C API that loads a compiled model directory (written by
 * memfmt-compile: model.so + manifest.json, see
 * memfmt/runtime/loader/Manifest.h) into a context and runs it. Like
 * memfmt_runtime.h it is plain C with opaque handles, status returns and
 * `out_` parameters, and needs no LLVM/MLIR.
 *
 * Loading reads and validates the manifest, opens the model's library,
 * allocates the arena (activations) and the weights blob once, 64-byte
 * aligned, and fills the blob from the weight source: the manifest's, or an
 * override ("synthetic:SEED", "safetensors:PATH" or a path ending in
 * ".safetensors"). Parameter values are logical (NCHW); the loader writes
 * them at the strides the compiler chose, so the re-layout happens once.
 * Running allocates nothing.
 *
 * A model compiled for target "cuda" loads into a CUDA context
 * (MEMFMT_BACKEND_CUDA): the arena, the weights blob (uploaded once) and one
 * staging buffer per input and output live in device memory, allocated at
 * load; loading ends with a warm-up run that chooses the cuDNN algorithms.
 * memfmt_model_run and memfmt_model_run_logical take host buffers and copy
 * them in and out; memfmt_model_run_device takes device buffers
 * (memfmt_device_alloc) and copies nothing. With the context's cuda_graph
 * option (MEMFMT_CUDA_GRAPH=1), the forward pass is captured once as a CUDA
 * graph and replayed by every run.
 *
 * A model is bound to the context it was loaded into; it may be used by one
 * thread at a time (as the context). Every failure returns a status and
 * leaves its message in memfmt_context_last_error(ctx): missing files,
 * dlopen/dlsym errors with the dynamic loader's text, invalid manifests,
 * weights that do not match the model, wrong buffer sizes, and the message
 * of the kernel that failed while running. (With a null context, load only
 * returns MEMFMT_STATUS_INVALID_ARGUMENT.)
 *
 *   memfmt_context_t *ctx;  memfmt_model_t *model;
 *   memfmt_context_create(NULL, &ctx);
 *   if (memfmt_model_load(ctx, "build/resnet50", NULL, &model))
 *     fprintf(stderr, "%s\n", memfmt_context_last_error(ctx));
 *   memfmt_model_run_logical(model, &input, NULL, &output, NULL);
 */

#ifndef MEMFMT_RUNTIME_MODEL_H
#define MEMFMT_RUNTIME_MODEL_H

#include "memfmt/runtime/memfmt_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A loaded model (opaque).
typedef struct memfmt_model memfmt_model_t;

/// One input or output of a model. Pointers stay valid while the model
/// lives.
typedef struct memfmt_model_tensor_info {
  /// The manifest's name ("input_0", "output_0").
  const char *name;
  /// The element type: "f32", "f16", "bf16" or "i64" (the class indices a
  /// training step takes; element_size 8).
  const char *dtype;
  /// Bytes per element.
  int64_t element_size;
  int64_t rank;
  /// The logical shape (NCHW meaning), `rank` entries.
  const int64_t *shape;
  /// The strides in elements of the buffer memfmt_model_run reads or writes
  /// (channels-last for an input of a model compiled with
  /// --input-format channels-last), `rank` entries.
  const int64_t *strides;
  /// The product of the shape.
  int64_t num_elements;
  /// The bytes the strides span: the size of the buffer memfmt_model_run
  /// expects for this tensor (for a parameter, the bytes it spans in the
  /// weights blob).
  int64_t buffer_bytes;
  /// Parameters: 1 for optimizer state the manifest marks `"init": "zeros"`
  /// (a `memfmt.weight {zero_init}`, e.g. `<param>.momentum_buffer`), which
  /// starts as zeros unless the weight source has it; 0 otherwise and for
  /// inputs and outputs.
  int32_t zero_init;
} memfmt_model_tensor_info_t;

/// What a model is. Strings stay valid while the model lives.
typedef struct memfmt_model_info {
  /// The model's name ("resnet50").
  const char *name;
  /// "cpu" or "cuda".
  const char *target;
  /// "f32", "f16" or "bf16".
  const char *precision;
  /// The compiled memory format: "channels-last" or "contiguous".
  const char *memory_format;
  /// The layout of the input buffers: "contiguous" or "channels-last".
  const char *input_format;
  /// The weight source in use: "synthetic:SEED" or "safetensors:PATH".
  const char *weights_source;
  /// The model directory and the path of its library.
  const char *directory;
  const char *library_path;
  int64_t num_inputs;
  int64_t num_outputs;
  int64_t num_parameters;
  /// Number of nodes (node ids run from 0 to num_nodes - 1; see
  /// memfmt_model_node_name).
  int64_t num_nodes;
  /// The activation arena and the bytes of it live at the peak.
  int64_t arena_bytes;
  int64_t peak_live_bytes;
  /// The weights blob.
  int64_t weights_bytes;
} memfmt_model_info_t;

/// Loads the compiled model in directory `dir` into `ctx`; the model's
/// target must be the context's backend ("cpu" or "cuda").
/// `weights_override` may be null (use the manifest's "weights_source"),
/// "synthetic" / "synthetic:SEED", "safetensors:PATH" or a path ending in
/// ".safetensors" (relative paths are relative to the current directory).
/// On success stores the model in `*out_model`; on failure stores null and
/// returns IO_ERROR (missing or unreadable files, dlopen failure),
/// NOT_FOUND (the entry point), INVALID_ARGUMENT (bad arguments, an invalid
/// manifest, weights that do not match), UNSUPPORTED (a target the context
/// cannot run) or OUT_OF_MEMORY.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_model_load(memfmt_context_t *ctx, const char *dir,
                  const char *weights_override, memfmt_model_t **out_model);

/// Like memfmt_model_load, but accepts a model compiled for any target: the
/// compiled code is the same for every target (the runtime dispatches), so a
/// CUDA model can run in a CPU context, e.g. on the reference kernels as the
/// oracle of memfmt-run --check.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_load_any_target(
    memfmt_context_t *ctx, const char *dir, const char *weights_override,
    memfmt_model_t **out_model);

/// Destroys a model (frees its buffers, closes its library). Null is a
/// no-op. The context must still be alive.
MEMFMT_RUNTIME_EXPORT void memfmt_model_destroy(memfmt_model_t *model);

/// The context `model` was loaded into.
MEMFMT_RUNTIME_EXPORT memfmt_context_t *
memfmt_model_context(const memfmt_model_t *model);

/// Stores what `model` is in `*out_info`.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_get_info(
    const memfmt_model_t *model, memfmt_model_info_t *out_info);

/// Stores input `index` (0 <= index < num_inputs) in `*out_info`;
/// NOT_FOUND when out of range.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_model_input_info(const memfmt_model_t *model, int64_t index,
                        memfmt_model_tensor_info_t *out_info);

/// Stores output `index` (0 <= index < num_outputs) in `*out_info`;
/// NOT_FOUND when out of range.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_model_output_info(const memfmt_model_t *model, int64_t index,
                         memfmt_model_tensor_info_t *out_info);

/// Stores the name of node `node` ("memfmt.conv2d at loc(...)", the node
/// ids of profiles and kernel errors) in `*out_name`; NOT_FOUND when out of
/// range.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_node_name(
    const memfmt_model_t *model, int64_t node, const char **out_name);

/// Stores a read-only view of the weights blob (parameters at the
/// manifest's offsets and strides) in `*out_data` and its size in
/// `*out_bytes`. For a device model it is the host copy of the blob, equal
/// to the device's after loading.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_weights(
    const memfmt_model_t *model, const void **out_data, int64_t *out_bytes);

/// Runs the model once. `inputs[i]` holds input i in the model's layout
/// (its info's strides and dtype, `buffer_bytes` bytes, aligned to the
/// element size); the model only reads it. `outputs[i]` receives output i
/// in its info's layout. Allocates nothing. `inputs` may be null for a model
/// without inputs (num_inputs 0, e.g. an ONNX graph of constants).
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_run(
    memfmt_model_t *model, const void *const *inputs, void *const *outputs);

/// memfmt_model_run on buffers in the context's device memory (from
/// memfmt_device_alloc; host memory on the CPU, where it is
/// memfmt_model_run). On CUDA it only enqueues the work on the context's
/// stream: call memfmt_context_synchronize before reading the outputs (or
/// time it with memfmt_context_timer_start/stop). With CUDA graphs, passing
/// other buffers than last time captures the graph again.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_run_device(
    memfmt_model_t *model, const void *const *inputs, void *const *outputs);

/// Runs the model on logical data: `inputs[i]` is input i as a row-major
/// (NCHW) f32 array of its shape, `outputs[i]` receives output i as a
/// row-major f32 array of its shape; the loader re-lays and converts both
/// through buffers allocated at load (an i64 input, class indices, takes
/// each float rounded to the nearest integer). `input_elements` and
/// `output_elements` may be null; otherwise entry i must equal the number
/// of elements of input/output i (INVALID_ARGUMENT naming the tensor and
/// both sizes when not).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_model_run_logical(memfmt_model_t *model, const float *const *inputs,
                         const int64_t *input_elements, float *const *outputs,
                         const int64_t *output_elements);

/*===----------------------------------------------------------------------===*
 * Parameters (Parameters.cpp)
 *
 * The model's state tensors by name (the manifest's "parameters": weights,
 * batch-norm running statistics and, for a training model, momentum
 * buffers), read and written as row-major f32 arrays of their logical
 * (NCHW) shape whatever strides and element type the compiler chose: f16
 * and bf16 parameters are widened on read and rounded to nearest even on
 * write; a CUDA model's values are copied from and to device memory. A
 * training model updates its parameters in place on every run, so a read
 * after a run gives the updated values.
 *
 * A write keeps the model consistent: the kernels' per-node caches of the
 * weights (oneDNN's packed weights) are dropped, and the load-time ops
 * (memfmt_prepare, e.g. batch norm folded into the convolution weights) run
 * again on the new values before the next run. Where memfmt_prepare overwrote a parameter's own
 * slot of the blob (the folded convolution weight takes the convolution
 * weight's slot), the model keeps that parameter's values in a second blob
 * from its first read or write on, built again from the weight source (the
 * same seed or file as at load) and updated by every write: reads give the
 * values the parameters were given, never the folded ones, and memfmt_prepare
 * never folds twice. The load-time ops run once before the next run, however
 * many parameters were written; that run also repacks the weights.
 * memfmt_model_weights shows the blob as of the last memfmt_prepare.
 *===----------------------------------------------------------------------===*/

/// Stores parameter `index` (0 <= index < num_parameters) in `*out_info`:
/// its name, element type, logical shape and strides in the weights blob;
/// NOT_FOUND when out of range.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_model_parameter_info(const memfmt_model_t *model, int64_t index,
                            memfmt_model_tensor_info_t *out_info);

/// Copies parameter `name` into `values`, a row-major f32 array of its
/// logical shape with `elements` entries (an i64 parameter, a step count,
/// converted: exact below 2^24; checkpoints store it as I64). NOT_FOUND for an
/// unknown name, INVALID_ARGUMENT when `elements` is not the parameter's
/// element count (the message names the parameter, its shape and both counts).
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_model_read_parameter(
    memfmt_model_t *model, const char *name, float *values, int64_t elements);

/// Makes the row-major f32 array `values` (`elements` entries, the
/// parameter's logical shape) the value of parameter `name` from the next
/// run on (see above); errors as memfmt_model_read_parameter, or the status
/// and message of memfmt_prepare when it fails.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_model_write_parameter(memfmt_model_t *model, const char *name,
                             const float *values, int64_t elements);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMFMT_RUNTIME_MODEL_H */
