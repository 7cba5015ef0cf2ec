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

/// The alignment of the arena and the weights blob, in bytes.
#define MEMFMT_MODEL_BUFFER_ALIGNMENT 64

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMFMT_RUNTIME_LOADER_MODEL_ABI_H */
