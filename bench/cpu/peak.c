/* peak.c - this CPU's measured fp32 peak, for bench/cpu/run.py.
 *
 * Measures this CPU's fp32 peak: each thread runs 12 independent chains of
 * fused multiply-adds on the widest vectors the compiler targets
 * (-march=native), so that neither latency nor anything but the FMA units
 * limits it. Prints GFLOP/s (2 per multiply-add) for the given thread count.
 * A nominal figure (cores x base clock x FMA width) misses turbo clocks:
 * on this project's 2-vCPU machines it says 320 GFLOP/s where this
 * measures about 520. With "bf16" (CPUs with AVX-512 BF16) the chains are
 * bf16 dot products instead (vdpbf16ps: 32 bf16 multiply-adds into 16 f32
 * per instruction), the most a bf16 convolution can do without AMX.
 *
 *   cc -O2 -march=native -ffp-contract=fast -pthread peak.c -o peak
 *   ./peak THREADS [bf16]
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
/* The chains, named so that each is its own register variable. */
#define CHAINS 12
#define FOR_EACH_CHAIN(M)                                                      \
  M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)
#define ITERS 500000000L

typedef float vec __attribute__((vector_size(LANES * 4)));

/* Keeps a value in a vector register and opaque to the optimiser. */
#define KEEP(x) __asm__ volatile("" : "+v"(x))
#define START(c) vec x##c = a * (float)c;
#define STEP(c) x##c = x##c * a + b; KEEP(x##c);
#define SUM(c) + x##c[0]

static void *run(void *out) {
  vec a, b;
  for (int l = 0; l < LANES; ++l) {
    a[l] = 0.999999f;
    b[l] = 1e-7f;
  }
  FOR_EACH_CHAIN(START)
  for (long i = 0; i < ITERS; ++i) {
    FOR_EACH_CHAIN(STEP)
  }
  *(float *)out = 0 FOR_EACH_CHAIN(SUM);
  return NULL;
}

#ifdef __AVX512BF16__
#define BF16_START(c) __m512 y##c = _mm512_set1_ps((float)c);
#define BF16_STEP(c)                                                           \
  y##c = _mm512_dpbf16_ps(y##c, p, q);                                         \
  KEEP(y##c);
#define BF16_SUM(c) +_mm512_reduce_add_ps(y##c)

/* The same chains of bf16 dot products (2 x 32 flops each). */
static void *runBf16(void *out) {
  __m512bh p = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.5f));
  __m512bh q = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  FOR_EACH_CHAIN(BF16_START)
  for (long i = 0; i < ITERS; ++i) {
    FOR_EACH_CHAIN(BF16_STEP)
  }
  *(float *)out = 0 FOR_EACH_CHAIN(BF16_SUM);
  return NULL;
}
#endif

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int bf16 = argc > 2 && strcmp(argv[2], "bf16") == 0;
  void *(*body)(void *) = run;
  double flopsPerStep = 2.0 * LANES;
  const char *kind = "FMA";
  if (bf16) {
#ifdef __AVX512BF16__
    body = runBf16;
    flopsPerStep = 2.0 * 32;
    kind = "bf16 dot-product";
#else
    fprintf(stderr, "peak: this CPU (or compiler) has no AVX-512 BF16\n");
    return 1;
#endif
  }
  pthread_t ids[256];
  float sums[256];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], NULL, body, &sums[t]);
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  double flops = flopsPerStep * threads * ITERS * CHAINS;
  printf("%.1f GFLOP/s (%d threads, %s, %.2f s, checksum %g)\n",
         flops / seconds * 1e-9, threads, kind, seconds, sums[0]);
  return 0;
}
