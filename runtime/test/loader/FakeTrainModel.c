/*===- FakeTrainModel.c - A stand-in for a training-step model ----*- C -*-===*\
|*                                                                            *|
|* Part of the memfmt project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * What memfmt-compile --train would emit for a softmax regression, written
 * by hand so memfmt-train's tests (test/Tools/memfmt-train) need neither the
 * compiler nor the training kernels: entry points with the model ABI
 * (model_abi.h) over a weights blob laid out as
 * test/Tools/memfmt-train/Inputs/make_train_dir.py's manifests say.
 *
 *   x [4,2,2,2] f32 (contiguous, or channels-last for fake_train_step_cl),
 *   y [4] i64 in [0, 3), features f[n][c*4 + h*2 + w] = x[n,c,h,w]
 *   fc.weight [3,8] at byte 0, fc.bias [3] at 128, bn.running_mean [2] at
 *   192, fc.weight.momentum_buffer [3,8] at 256, fc.bias.momentum_buffer [3]
 *   at 384 (all contiguous f32)
 *
 * One step: logits = f W^T + b; loss = mean cross-entropy; SGD with lr 0.1
 * and momentum 0.9 (buf = 0.9 buf + grad; param -= 0.1 buf), and
 * bn.running_mean = 0.9 running_mean + 0.1 (mean of x over n, h, w per
 * channel); output: the loss (f32, shape []). A label out of range goes to
 * the runtime's cross_entropy_loss kernel, whose message is then the one
 * memfmt-train must show, as for a compiled model.
 *
 * Entry points (model_abi.h: the buffers arena, weights, inputs, outputs as
 * one array):
 *   memfmt_forward_packed  the step on a contiguous x
 *   fake_train_step_cl     the step on a channels-last x
 *   fake_train_eval        the inference model: logits [4,3]
 */

#include "memfmt/runtime/kernel_abi.h"
#include "memfmt/runtime/loader/model_abi.h"

#include <math.h>
#include <stdint.h>

enum { N = 4, C = 2, H = 2, W = 2, F = C * H * W, K = 3 };

static const float LearningRate = 0.1f, Momentum = 0.9f, BnMomentum = 0.1f;

static void *at(memfmt_byte_memref_t *m, int64_t byte_offset) {
  return (char *)m->aligned + m->offset + byte_offset;
}

static void features(const float *x, int channels_last, float f[N][F]) {
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w)
          f[n][c * H * W + h * W + w] = channels_last
                                            ? x[n * F + h * W * C + w * C + c]
                                            : x[n * F + c * H * W + h * W + w];
}

static void logits(const float *wt, const float *b, float f[N][F],
                   double out[N][K]) {
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      double s = b[k];
      for (int j = 0; j < F; ++j)
        s += (double)wt[k * F + j] * f[n][j];
      out[n][k] = s;
    }
}

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Desc2;
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} Desc1;
typedef struct {
  void *allocated, *aligned;
  int64_t offset;
} Desc0;

/* Hands the batch to the runtime's loss kernel, which rejects the label. */
static int32_t reportBadLabel(memfmt_context_t *ctx, const int64_t *y) {
  static float l[N * K], out;
  Desc2 dl = {l, l, 0, {N, K}, {K, 1}};
  Desc1 dy = {(void *)y, (void *)y, 0, {N}, {1}};
  Desc0 dout = {&out, &out, 0};
  memfmt_memref_t ml = {2, &dl}, my = {1, &dy}, mout = {0, &dout};
  int32_t status =
      _mlir_ciface_memfmt_cross_entropy_loss_f32(ctx, 0, &ml, &my, &mout);
  return status ? status : MEMFMT_STATUS_INVALID_ARGUMENT;
}

static int32_t step(memfmt_context_t *ctx, memfmt_byte_memref_t *weights,
                    memfmt_byte_memref_t *xm, memfmt_byte_memref_t *ym,
                    memfmt_byte_memref_t *lossm, int channels_last) {
  if (weights->size < 448 || xm->size != N * F * 4 || ym->size != N * 8 ||
      lossm->size != 4)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  float *wt = at(weights, 0), *b = at(weights, 128), *rm = at(weights, 192),
        *mw = at(weights, 256), *mb = at(weights, 384);
  const float *x = at(xm, 0);
  const int64_t *y = at(ym, 0);
  for (int n = 0; n < N; ++n)
    if (y[n] < 0 || y[n] >= K)
      return reportBadLabel(ctx, y);
  float f[N][F];
  double l[N][K], loss = 0, g[N][K];
  features(x, channels_last, f);
  logits(wt, b, f, l);
  for (int n = 0; n < N; ++n) {
    double m = l[n][0], s = 0;
    for (int k = 1; k < K; ++k)
      m = l[n][k] > m ? l[n][k] : m;
    for (int k = 0; k < K; ++k)
      s += exp(l[n][k] - m);
    loss += (m + log(s) - l[n][y[n]]) / N;
    for (int k = 0; k < K; ++k)
      g[n][k] = (exp(l[n][k] - m) / s - (k == y[n])) / N;
  }
  for (int k = 0; k < K; ++k) {
    double gb = 0;
    for (int n = 0; n < N; ++n)
      gb += g[n][k];
    mb[k] = (float)(Momentum * mb[k] + gb);
    b[k] -= LearningRate * mb[k];
    for (int j = 0; j < F; ++j) {
      double gw = 0;
      for (int n = 0; n < N; ++n)
        gw += g[n][k] * f[n][j];
      mw[k * F + j] = (float)(Momentum * mw[k * F + j] + gw);
      wt[k * F + j] -= LearningRate * mw[k * F + j];
    }
  }
  for (int c = 0; c < C; ++c) {
    double s = 0;
    for (int n = 0; n < N; ++n)
      for (int j = c * H * W; j < (c + 1) * H * W; ++j)
        s += f[n][j];
    rm[c] = (float)((1 - BnMomentum) * rm[c] + BnMomentum * s / (N * H * W));
  }
  *(float *)at(lossm, 0) = (float)loss;
  return MEMFMT_STATUS_OK;
}

/* buffers: arena, weights, x, y, loss. */
int32_t memfmt_forward_packed(memfmt_context_t *ctx,
                              memfmt_byte_memref_t *const *buffers) {
  return step(ctx, buffers[1], buffers[2], buffers[3], buffers[4], 0);
}

int32_t fake_train_step_cl(memfmt_context_t *ctx,
                           memfmt_byte_memref_t *const *buffers) {
  return step(ctx, buffers[1], buffers[2], buffers[3], buffers[4], 1);
}

/* buffers: arena, weights, x, logits. */
int32_t fake_train_eval(memfmt_context_t *ctx,
                        memfmt_byte_memref_t *const *buffers) {
  (void)ctx;
  memfmt_byte_memref_t *weights = buffers[1], *xm = buffers[2],
                       *out = buffers[3];
  if (weights->size < 200 || xm->size != N * F * 4 || out->size != N * K * 4)
    return MEMFMT_STATUS_INVALID_ARGUMENT;
  float f[N][F];
  double l[N][K];
  features(at(xm, 0), 0, f);
  logits(at(weights, 0), at(weights, 128), f, l);
  float *o = at(out, 0);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      o[n * K + k] = (float)l[n][k];
  return MEMFMT_STATUS_OK;
}
