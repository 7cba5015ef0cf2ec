/*===- model_abi.h - The entry point of a compiled model ----------*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * How the loader calls a compiled model's library (model.so). The manifest's
 * "entry" (normally `memfmt_forward_packed`) is
 *
 *   int32_t entry(memfmt_context_t *ctx, memfmt_byte_memref_t *const *buffers);
 *
 * where `buffers` points to the arena's, the weights blob's, then one per
 * manifest input and one per output, in manifest order: one pointer per
 * buffer, however many tensors the model has (a training step that returns
 * every gradient of a ResNet-152 has 468). The compiler emits it as a
 * wrapper of
 *
 *   int32_t _mlir_ciface_memfmt_forward(memfmt_context_t *ctx,
 *                                       memfmt_byte_memref_t *arena,
 *                                       memfmt_byte_memref_t *weights,
 *                                       memfmt_byte_memref_t *input_0, ...,
 *                                       memfmt_byte_memref_t *output_0, ...);
 *
 * (what `llvm.emit_c_interface` makes of `func.func @memfmt_forward`), as
 * MLIR's ExecutionEngine wraps a function for its `invokePacked`. Each
 * memfmt_byte_memref_t is MLIR's descriptor of a 1-D memref of i8 (what
 * `llvm.emit_c_interface` passes for `memref<?xi8>`): the tensor's bytes
 * start at aligned + offset, `size` is its byte count and `stride` is 1. The
 * arena and the weights blob are 64-byte aligned. The result is 0 or a
 * memfmt_status_t whose message is in memfmt_context_last_error(ctx).
 *
 * This header is the one home of every fact the compiler (memfmt-compile,
 * the lowering) and the runtime (the loader) must agree on: the entry
 * points' names, the manifest format version and the buffer alignment. It
 * has no MLIR dependency; both sides include it.
 */

#ifndef MEMFMT_RUNTIME_LOADER_MODEL_ABI_H
#define MEMFMT_RUNTIME_LOADER_MODEL_ABI_H

#include "memfmt/runtime/memfmt_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// MLIR's descriptor of a 1-D memref of bytes.
typedef struct memfmt_byte_memref {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} memfmt_byte_memref_t;

/// The alignment of the arena and the weights blob, and of every buffer the
/// compiler places in them, in bytes.
#define MEMFMT_MODEL_BUFFER_ALIGNMENT 64

/// The function a compiled model runs per batch, as the compiler names it
/// (`func.func @memfmt_forward`); its C symbol carries MLIR's C-interface
/// prefix (MEMFMT_MODEL_CIFACE_PREFIX).
#define MEMFMT_MODEL_FORWARD_FUNCTION "memfmt_forward"

/// The entry point the loader calls (the manifest's "entry"): the forward
/// function with its buffers passed as one array (see above).
#define MEMFMT_MODEL_ENTRY_FUNCTION "memfmt_forward_packed"

/// The function the loader runs once after filling the weights blob,
/// `int32_t memfmt_prepare(memfmt_context_t *ctx, memfmt_byte_memref_t
/// *weights)`: it computes the load-time ops (e.g. batch norm folded into
/// convolution weights) into the blob. Optional: a model without load-time
/// ops has none.
#define MEMFMT_MODEL_PREPARE_FUNCTION "memfmt_prepare"

/// The prefix `llvm.emit_c_interface` gives the C symbols of the above.
#define MEMFMT_MODEL_CIFACE_PREFIX "_mlir_ciface_"

/// The manifest.json format version memfmt-compile writes and the loader
/// reads (it rejects any other). Version 2: the entry takes its buffers as
/// one array (version 1's took one argument each).
#define MEMFMT_MANIFEST_FORMAT_VERSION 2

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMFMT_RUNTIME_LOADER_MODEL_ABI_H */
