/*===- model_abi.h - The entry point of a compiled model ----------*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * How the loader calls a compiled model's library (model.so). The manifest's
 * "entry" (normally `_mlir_ciface_memfmt_forward`) is
 *
 *   int32_t entry(memfmt_context_t *ctx, memfmt_byte_memref_t *arena,
 *                 memfmt_byte_memref_t *weights,
 *                 memfmt_byte_memref_t *input_0, ...,
 *                 memfmt_byte_memref_t *output_0, ...);
 *
 * with one argument per manifest input, then one per output, in manifest
 * order. Each memfmt_byte_memref_t is MLIR's descriptor of a 1-D memref of
 * i8 (what `llvm.emit_c_interface` passes for `memref<?xi8>`): the tensor's
 * bytes start at aligned + offset, `size` is its byte count and `stride` is
 * 1. The arena and the weights blob are 64-byte aligned. The result is 0 or
 * a memfmt_status_t whose message is in memfmt_context_last_error(ctx).
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

/// The function the loader runs once after filling the weights blob,
/// `int32_t memfmt_prepare(memfmt_context_t *ctx, memfmt_byte_memref_t
/// *weights)`: it computes the load-time ops (e.g. batch norm folded into
/// convolution weights) into the blob. Optional: a model without load-time
/// ops has none.
#define MEMFMT_MODEL_PREPARE_FUNCTION "memfmt_prepare"

/// The prefix `llvm.emit_c_interface` gives the C symbols of the above.
#define MEMFMT_MODEL_CIFACE_PREFIX "_mlir_ciface_"

/// The manifest.json format version memfmt-compile writes and the loader
/// reads (it rejects any other).
#define MEMFMT_MANIFEST_FORMAT_VERSION 1

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMFMT_RUNTIME_LOADER_MODEL_ABI_H */
