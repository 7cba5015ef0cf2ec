/*===- FakeModel.c - A hand-written stand-in for a compiled model -*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * What memfmt-compile would emit for `out = relu(x) + shift`, written by hand
 * so the loader's end-to-end tests need no compiler: entry points with the
 * model ABI (model_abi.h) that build MLIR memref descriptors over the byte
 * buffers they get and call the runtime's kernels (kernel_abi.h).
 *
 * The model (ModelTest.cpp writes the matching manifest.json):
 *   input_0  [2,3,4,5] f32, channels-last strides [60,1,15,3]
 *   shift    [1,3,1,1] f32, strides [3,1,1,1], at byte 64 of the weights
 *   output_0 [2,3,4,5] f32, contiguous
 *   arena    480 bytes: relu(x), contiguous
 *   node 0   relu(input_0) -> arena
 *   node 1   add(arena, shift) -> output_0
 *
 * Entry points (model_abi.h: the buffers arena, weights, input_0, output_0
 * as one array):
 *   memfmt_forward_packed  the model; it checks the buffer sizes the loader
 *                          passes
 *   fake_forward_bad       node 1 gets an output of the wrong shape, so the
 *                          runtime fails with a message
 */

#include "memfmt/runtime/kernel_abi.h"
#include "memfmt/runtime/loader/model_abi.h"

#include <stdint.h>

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
} Desc4;

static Desc4 desc4(const memfmt_byte_memref_t *bytes, int64_t byte_offset,
                   int64_t n, int64_t c, int64_t h, int64_t w, int64_t sn,
                   int64_t sc, int64_t sh, int64_t sw) {
  Desc4 d;
  d.allocated = (float *)bytes->allocated;
  d.aligned = (float *)((char *)bytes->aligned + bytes->offset + byte_offset);
  d.offset = 0;
  d.sizes[0] = n;
  d.sizes[1] = c;
  d.sizes[2] = h;
  d.sizes[3] = w;
  d.strides[0] = sn;
  d.strides[1] = sc;
  d.strides[2] = sh;
  d.strides[3] = sw;
  return d;
}

static int32_t forward(memfmt_context_t *ctx, memfmt_byte_memref_t *arena,
                       memfmt_byte_memref_t *weights,
                       memfmt_byte_memref_t *input,
                       memfmt_byte_memref_t *output, int64_t output_w) {
  if (arena->size < 480 || weights->size < 76 || input->size != 480 ||
      output->size != 480 || input->stride != 1)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  Desc4 x = desc4(input, 0, 2, 3, 4, 5, 60, 1, 15, 3);
  Desc4 r = desc4(arena, 0, 2, 3, 4, 5, 60, 20, 5, 1);
  Desc4 s = desc4(weights, 64, 1, 3, 1, 1, 3, 1, 1, 1);
  Desc4 y = desc4(output, 0, 2, 3, 4, output_w, 60, 20, 5, 1);
  memfmt_memref_t mx = {4, &x}, mr = {4, &r}, ms = {4, &s}, my = {4, &y};
  int32_t status = _mlir_ciface_memfmt_relu_f32(ctx, 0, &mx, &mr);
  if (status)
    return status;
  return _mlir_ciface_memfmt_add_f32(ctx, 1, &mr, &ms, &my);
}

int32_t memfmt_forward_packed(memfmt_context_t *ctx,
                              memfmt_byte_memref_t *const *buffers) {
  return forward(ctx, buffers[0], buffers[1], buffers[2], buffers[3], 5);
}

int32_t fake_forward_bad(memfmt_context_t *ctx,
                         memfmt_byte_memref_t *const *buffers) {
  return forward(ctx, buffers[0], buffers[1], buffers[2], buffers[3], 4);
}
