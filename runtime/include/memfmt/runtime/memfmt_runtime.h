/*===- memfmt_runtime.h - The runtime's public C API --------------*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The C API of the memfmt runtime: the library a compiled model links
 * against and calls (DESIGN.md §3). It is plain C with opaque handles, status
 * returns and `out_` parameters, and has no LLVM/MLIR dependency.
 *
 * A model runs inside a context (memfmt_context_t). The context selects the
 * backend (the CPU, or a CUDA GPU when the runtime is built with the CUDA
 * toolkit), the kernel family (oneDNN and layout-specialised loops, or the
 * plain reference kernels) and the thread count; it keeps per-node caches
 * (oneDNN primitives, prepacked weights, cuDNN algorithms), the message of
 * the last error and, when enabled, a per-node profile. The kernels
 * themselves are declared in kernel_abi.h, generated from Kernels.def.
 *
 * On the CUDA backend every tensor a kernel gets is in device memory, and
 * kernels run asynchronously on the context's CUDA stream, in call order.
 * The device functions below (memory, copies, synchronisation, timers and
 * CUDA graphs) are the backend-neutral way to drive that: on the CPU backend
 * "device memory" is host memory and everything is synchronous.
 *
 * Threading: a context may be used by one thread at a time. Different
 * contexts may be used concurrently from different threads.
 */

#ifndef MEMFMT_RUNTIME_MEMFMT_RUNTIME_H
#define MEMFMT_RUNTIME_MEMFMT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define MEMFMT_RUNTIME_EXPORT __declspec(dllexport)
#else
#define MEMFMT_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/// The result of every runtime call (kernels return it as an int32). Zero is
/// success; the values are part of the ABI and never change.
typedef enum memfmt_status {
  /// Success.
  MEMFMT_STATUS_OK = 0,
  /// A null pointer, a bad rank or shape, an attribute out of range, an
  /// output shape that does not match the attributes.
  MEMFMT_STATUS_INVALID_ARGUMENT = 1,
  /// A valid request this build or backend cannot serve (an element type or
  /// backend that is not implemented, a rank above the runtime's maximum).
  MEMFMT_STATUS_UNSUPPORTED = 2,
  /// An allocation failed.
  MEMFMT_STATUS_OUT_OF_MEMORY = 3,
  /// A backend library (oneDNN, later cuDNN/cuBLAS) reported an error.
  MEMFMT_STATUS_BACKEND_ERROR = 4,
  /// Reading or writing a file failed (weights, inputs).
  MEMFMT_STATUS_IO_ERROR = 5,
  /// The requested device does not exist on this machine.
  MEMFMT_STATUS_NO_DEVICE = 6,
  /// Something that was looked up (a weight name, a profile entry) is absent.
  MEMFMT_STATUS_NOT_FOUND = 7,
  /// A bug in the runtime: an invariant did not hold.
  MEMFMT_STATUS_INTERNAL = 8,
  /// Not a status: makes the type 32 bits wide and every int32 value >= 0 a
  /// valid value of it, so that future codes pass through old code safely.
  MEMFMT_STATUS_MAX_ENUM = 0x7FFFFFFF,
} memfmt_status_t;

/// A short, static, human-readable name for `status` ("ok",
/// "invalid argument", ...); "unknown status" for values outside the enum.
MEMFMT_RUNTIME_EXPORT const char *memfmt_status_string(memfmt_status_t status);

/*===----------------------------------------------------------------------===*
 * Contexts
 *===----------------------------------------------------------------------===*/

/// An execution context (opaque).
typedef struct memfmt_context memfmt_context_t;

/// The device family a context runs kernels on.
typedef enum memfmt_backend {
  /// The host CPU: reference kernels, layout-specialised loops and oneDNN.
  MEMFMT_BACKEND_CPU = 0,
  /// An NVIDIA GPU: own kernels, cuDNN and cuBLAS. A runtime built without
  /// the CUDA toolkit answers MEMFMT_STATUS_UNSUPPORTED; a machine without a
  /// usable GPU or driver MEMFMT_STATUS_NO_DEVICE.
  MEMFMT_BACKEND_CUDA = 1,
  /// Not a backend (makes the type 32 bits wide, as for memfmt_status_t).
  MEMFMT_BACKEND_MAX_ENUM = 0x7FFFFFFF,
} memfmt_backend_t;

/// Which kernel family a context uses.
typedef enum memfmt_kernels {
  /// Read the environment variable MEMFMT_KERNELS ("fast" or "reference");
  /// FAST when it is unset or empty.
  MEMFMT_KERNELS_DEFAULT = 0,
  /// oneDNN and layout-specialised loops (channels-last, contiguous); general
  /// strides fall back to the reference kernels.
  MEMFMT_KERNELS_FAST = 1,
  /// Only the reference kernels: straightforward loops over any strides,
  /// accumulating in double. The oracle the fast kernels are tested against.
  MEMFMT_KERNELS_REFERENCE = 2,
  /// Not a kernel family (makes the type 32 bits wide).
  MEMFMT_KERNELS_MAX_ENUM = 0x7FFFFFFF,
} memfmt_kernels_t;

/// A yes/no option whose default comes from an environment variable.
typedef enum memfmt_switch {
  /// Read the option's environment variable ("1"/"on"/"true" or
  /// "0"/"off"/"false"); when it is unset or empty, the option's own default
  /// (OFF unless the option says otherwise).
  MEMFMT_SWITCH_DEFAULT = 0,
  MEMFMT_SWITCH_ON = 1,
  MEMFMT_SWITCH_OFF = 2,
  /// Not a value (makes the type 32 bits wide).
  MEMFMT_SWITCH_MAX_ENUM = 0x7FFFFFFF,
} memfmt_switch_t;

/// Options of memfmt_context_create. Initialise with
/// memfmt_context_options_init so that fields added later get defaults.
typedef struct memfmt_context_options {
  /// The device family (default MEMFMT_BACKEND_CPU).
  memfmt_backend_t backend;
  /// The kernel family (default MEMFMT_KERNELS_DEFAULT: environment).
  memfmt_kernels_t kernels;
  /// Threads for the runtime's loops and oneDNN. 0 (the default) takes
  /// MEMFMT_NUM_THREADS, else OMP_NUM_THREADS (its first value), else the
  /// number of hardware threads. Negative values are invalid.
  int32_t num_threads;
  /// CUDA: the device ordinal (default 0; MEMFMT_CUDA_DEVICE when 0 and set).
  /// Ignored by the CPU backend. Negative values are invalid.
  int32_t device;
  /// CUDA: let f32 convolutions and linear layers use TF32 tensor cores
  /// (PyTorch's allow_tf32). Default: MEMFMT_ALLOW_TF32, else off.
  memfmt_switch_t allow_tf32;
  /// CUDA: a loaded model captures its whole forward pass in one CUDA graph
  /// and replays it on every run (see model.h). Default: MEMFMT_CUDA_GRAPH,
  /// else off. The CPU backend ignores it.
  memfmt_switch_t cuda_graph;
  /// CUDA: the most bytes of workspace one cuDNN convolution may use (its
  /// algorithm is chosen within it). 0 (the default) takes
  /// MEMFMT_CUDNN_WORKSPACE_MB, else 1 GiB. Negative values are invalid.
  int64_t workspace_limit;
  /// CPU: let f32 3x3 convolutions with unit stride and dilation and one
  /// group run Winograd's F(4x4, 3x3) algorithm (oneDNN's jit_wino, on
  /// AVX-512) where oneDNN has it: about twice as fast as direct
  /// convolution, with rounding errors a few times larger (measured on
  /// ResNet-50: 2e-6 of the output's largest value). It applies to their
  /// gradients (convolution_backward) too. Default: MEMFMT_WINOGRAD, else
  /// ON.
  memfmt_switch_t winograd;
  /// CPU: let f32 convolutions and their gradients (convolution_backward)
  /// multiply in bf16 with f32 accumulation, on oneDNN's bf16 kernels (AMX
  /// tiles or AVX-512 BF16 dot products): each call rounds its input,
  /// weights and output gradient to bf16 and keeps its outputs (and every
  /// other op, parameter and optimizer state) in f32 -- mixed precision
  /// with f32 master weights, as PyTorch's CPU fp32_precision "bf16" for
  /// oneDNN convolutions. Several times faster where the CPU has AMX, with
  /// rounding errors of bf16 (relative 1e-2). A CPU without bf16
  /// instructions keeps f32 (the device description says which). Default:
  /// MEMFMT_ALLOW_BF16, else OFF.
  memfmt_switch_t allow_bf16;
} memfmt_context_options_t;

/// Fills `opts` with the defaults (CPU, kernels from the environment, default
/// thread count). Does nothing when `opts` is null.
MEMFMT_RUNTIME_EXPORT void
memfmt_context_options_init(memfmt_context_options_t *opts);

/// Creates a context. `opts` may be null (all defaults). On success stores
/// the context in `*out_ctx` and returns MEMFMT_STATUS_OK; on failure stores
/// null and returns INVALID_ARGUMENT (bad option or environment value),
/// UNSUPPORTED (backend not built in), NO_DEVICE, OUT_OF_MEMORY or
/// BACKEND_ERROR. The reason of a failure is memfmt_context_last_error(NULL)
/// on the calling thread.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_context_create(
    const memfmt_context_options_t *opts, memfmt_context_t **out_ctx);

/// Destroys a context and everything it caches. Null is a no-op.
MEMFMT_RUNTIME_EXPORT void memfmt_context_destroy(memfmt_context_t *ctx);

/// Stores the context's resolved options (environment applied, thread count
/// resolved to a positive number) in `*out_opts`.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_context_get_options(
    const memfmt_context_t *ctx, memfmt_context_options_t *out_opts);

/// The message of the last failed call on `ctx`, naming the kernel, the node
/// id and what is wrong, e.g. "memfmt_conv2d_f32 (node 3): output has shape
/// [1, 64, 56, 56], expected [1, 64, 112, 112] ...". Empty when no call has
/// failed since the context was created or the error was cleared. With `ctx`
/// null, the message of the calling thread's last failure that had no
/// context to hold it (memfmt_context_create, a kernel called with a null
/// context). The string stays valid until the next runtime call on the same
/// context (or thread).
MEMFMT_RUNTIME_EXPORT const char *
memfmt_context_last_error(const memfmt_context_t *ctx);

/// Clears the last error of `ctx` (or of the calling thread when null).
MEMFMT_RUNTIME_EXPORT void memfmt_context_clear_error(memfmt_context_t *ctx);

/// Sets the last error of `ctx` (or of the calling thread when null) to a
/// copy of `message` (null clears it), for libraries layered on the runtime,
/// such as the model loader, that report through the same context.
MEMFMT_RUNTIME_EXPORT void memfmt_context_set_error(memfmt_context_t *ctx,
                                                    const char *message);

/// Drops every per-node cache of `ctx` (oneDNN primitives, prepacked
/// weights). The fast kernels prepack a node's weights once, when they lie
/// in memory declared constant (memfmt_context_declare_constant), and reuse
/// them while the node is called with the same weight buffer, shape and
/// strides: call this after overwriting constant weights in place. Weights
/// elsewhere (a model input, say) are repacked on every call.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_invalidate_caches(memfmt_context_t *ctx);

/// Declares that the `bytes` bytes at `data` keep their values while
/// declared (a compiled model's weights, after its load-time preparation):
/// kernels may then keep what they derive from tensors inside them, such as
/// weights packed for oneDNN. The model loader declares each model's
/// weights and forgets them when the model is destroyed.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_context_declare_constant(
    memfmt_context_t *ctx, const void *data, int64_t bytes);

/// Ends a declaration of memfmt_context_declare_constant made with `data`,
/// and drops every per-node cache (the memory may be reused for other
/// values).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_forget_constant(memfmt_context_t *ctx, const void *data);

/*===----------------------------------------------------------------------===*
 * Data parallelism
 *===----------------------------------------------------------------------===*/

/// The collectives of a group of replicas, each running the same compiled
/// model in its own context (one per process, usually): the runtime calls
/// them from the `all_reduce` kernel of a data-parallel training step.
/// The runtime links no collective library itself; the program that starts
/// the replicas supplies these functions from one (memfmt-train: Open MPI).
/// Each returns 0 on success, or non-zero after writing a message of at
/// most `error_size` bytes (NUL included) to `error`.
typedef struct memfmt_communicator {
  /// This replica's number, 0 <= rank < size, and the number of replicas.
  int64_t rank;
  int64_t size;
  /// Passed back to the functions.
  void *user;
  /// Sums `count` floats at `data` (host memory) over the replicas, in
  /// place: on return every replica holds the same sums.
  int (*all_reduce_sum_f32)(void *user, float *data, int64_t count,
                            char *error, size_t error_size);
  /// The same for doubles (the statistics of synchronised batch norm).
  int (*all_reduce_sum_f64)(void *user, double *data, int64_t count,
                            char *error, size_t error_size);
  /// Non-zero: training batch norm (native_batch_norm and its backward)
  /// takes its statistics over every replica's batch, as
  /// torch.nn.SyncBatchNorm does; zero: each replica's own (as
  /// DistributedDataParallel keeps them). Needs all_reduce_sum_f64.
  int sync_batch_norm;
  /// Copies `bytes` at `data` (host memory) from replica 0 to every other
  /// replica. A CUDA context needs it with more than one replica: it sets
  /// up NCCL with it (replica 0's NCCL unique id); CPU contexts do not call
  /// it, and it may be null there.
  int (*broadcast)(void *user, void *data, int64_t bytes, char *error,
                   size_t error_size);
} memfmt_communicator_t;

/// Makes `ctx` one replica of `communicator` (copied; null makes it the
/// only one again). Without a communicator, or with size 1, the collectives
/// of a compiled model are the identity. Every replica calls it: a CUDA
/// context joins an NCCL communicator of the replicas here (NCCL is loaded
/// then; BACKEND_ERROR, with the reason, when it cannot be), and its
/// all_reduce kernels run ncclAllReduce, even with one replica.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_context_set_communicator(
    memfmt_context_t *ctx, const memfmt_communicator_t *communicator);

/*===----------------------------------------------------------------------===*
 * Device memory, copies, streams and graphs
 *===----------------------------------------------------------------------===*/

/// The direction of memfmt_device_copy.
typedef enum memfmt_copy_kind {
  MEMFMT_COPY_HOST_TO_DEVICE = 0,
  MEMFMT_COPY_DEVICE_TO_HOST = 1,
  MEMFMT_COPY_DEVICE_TO_DEVICE = 2,
  /// Not a value (makes the type 32 bits wide).
  MEMFMT_COPY_MAX_ENUM = 0x7FFFFFFF,
} memfmt_copy_kind_t;

/// A human-readable description of the context's device, e.g. "NVIDIA H200
/// (sm_90, 132 SMs, 139.8 GiB; driver 13.0, runtime 13.0, cuDNN 91900,
/// cuBLAS 130100)" or "CPU (16 threads, oneDNN 2.6.3 on avx512_core_amx)"
/// (the oneDNN part with the fast kernels only: its version and the best
/// instruction set it dispatches to here). Valid while the context lives.
MEMFMT_RUNTIME_EXPORT const char *
memfmt_context_device_description(const memfmt_context_t *ctx);

/// Allocates `bytes` (>= 0) of zeroed device memory, aligned to at least 256
/// bytes, and stores it in `*out_ptr` (host memory on the CPU backend).
/// OUT_OF_MEMORY when the device has too little.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_device_alloc(
    memfmt_context_t *ctx, int64_t bytes, void **out_ptr);

/// Frees memory from memfmt_device_alloc of the same context. Null is a
/// no-op. Waits for the context's pending work first.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_device_free(memfmt_context_t *ctx,
                                                         void *ptr);

/// Copies `bytes` from `src` to `dst`, ordered after the kernels already
/// called on the context. A copy to the host returns when the data is there;
/// the others may return before they finish (the host source of a
/// host-to-device copy must stay unchanged until the next
/// memfmt_context_synchronize).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_device_copy(memfmt_context_t *ctx, void *dst, const void *src,
                   int64_t bytes, memfmt_copy_kind_t kind);

/// Waits until every kernel and copy called on the context has finished, and
/// reports an asynchronous failure of any of them.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_synchronize(memfmt_context_t *ctx);

/// Starts timing the context's work: on CUDA, records an event on its stream.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_timer_start(memfmt_context_t *ctx);

/// Stops the timer started last, waits for the work between, and stores the
/// elapsed milliseconds in `*out_ms` (CUDA events on the CUDA backend, a
/// steady clock on the CPU).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_timer_stop(memfmt_context_t *ctx, double *out_ms);

/// A captured sequence of kernel calls that replays as one CUDA graph
/// (opaque).
typedef struct memfmt_graph memfmt_graph_t;

/// Starts capturing the kernels called on the context (CUDA only; the CPU
/// backend answers UNSUPPORTED). Until memfmt_graph_capture_end, kernels
/// are recorded, not run; they must not allocate, so call each kernel once
/// outside a capture first (that is when algorithms are chosen and
/// workspaces sized).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_graph_capture_begin(memfmt_context_t *ctx);

/// Ends the capture and instantiates the graph into `*out_graph` (null on
/// failure; the capture is over either way).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_graph_capture_end(memfmt_context_t *ctx, memfmt_graph_t **out_graph);

/// Replays `graph` on the context's stream (asynchronously).
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_graph_launch(memfmt_context_t *ctx, memfmt_graph_t *graph);

/// Destroys a graph of this context. Null is a no-op.
MEMFMT_RUNTIME_EXPORT void memfmt_graph_destroy(memfmt_context_t *ctx,
                                                memfmt_graph_t *graph);

/*===----------------------------------------------------------------------===*
 * Profiling
 *===----------------------------------------------------------------------===*/

/// Accumulated time of one (node, kernel) pair.
typedef struct memfmt_profile_entry {
  /// The node id the compiled model passed.
  int64_t node;
  /// The kernel's entry-point name without the C-interface prefix, e.g.
  /// "memfmt_conv2d_f32" (static storage).
  const char *kernel;
  /// The implementation of the last call, e.g. "onednn", "channels_last",
  /// "reference" (static storage).
  const char *impl;
  /// Number of calls, failed ones included.
  int64_t calls;
  /// Wall-clock seconds spent in those calls, validation included.
  double total_seconds;
} memfmt_profile_entry_t;

/// Turns per-node profiling on (non-zero) or off. Turning it on does not
/// clear what was recorded before.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_set_profiling(memfmt_context_t *ctx, int enable);

/// Forgets every profile entry.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_profile_reset(memfmt_context_t *ctx);

/// Stores the number of profile entries in `*out_count`.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_profile_count(const memfmt_context_t *ctx, int64_t *out_count);

/// Stores entry `index` (0 <= index < count, in order of first call) in
/// `*out_entry`; MEMFMT_STATUS_NOT_FOUND when `index` is out of range.
MEMFMT_RUNTIME_EXPORT memfmt_status_t
memfmt_context_profile_entry(const memfmt_context_t *ctx, int64_t index,
                             memfmt_profile_entry_t *out_entry);

/*===----------------------------------------------------------------------===*
 * Counters
 *===----------------------------------------------------------------------===*/

/// Work a context's kernels did, counted since the context was created
/// (always on; reading them costs nothing). A compiled model does its
/// one-time work when it is loaded, so a run should leave `weight_packs` and
/// `primitives_built` unchanged.
typedef struct memfmt_context_counters {
  /// Weight tensors reordered into a library's preferred layout (oneDNN's
  /// blocked formats).
  int64_t weight_packs;
  /// Library primitives created (oneDNN convolutions and matmuls).
  int64_t primitives_built;
  /// Library primitives executed.
  int64_t library_calls;
} memfmt_context_counters_t;

/// Stores the context's counters in `*out_counters`.
MEMFMT_RUNTIME_EXPORT memfmt_status_t memfmt_context_get_counters(
    const memfmt_context_t *ctx, memfmt_context_counters_t *out_counters);

/*===----------------------------------------------------------------------===*
 * Build information
 *===----------------------------------------------------------------------===*/

/// Non-zero when this runtime was built with oneDNN (the CPU fast path for
/// convolutions and linear layers).
MEMFMT_RUNTIME_EXPORT int memfmt_runtime_has_onednn(void);

/// Non-zero when this runtime was built with the CUDA backend (whether or
/// not this machine has a GPU).
MEMFMT_RUNTIME_EXPORT int memfmt_runtime_has_cuda(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMFMT_RUNTIME_MEMFMT_RUNTIME_H */
