/* peak.c - this CPU's measured fp32 peak, for bench/cpu/run.py.
 *
 * Measures this CPU's fp32 peak: each thread runs 12 independent chains of
 * fused multiply-adds on the widest vectors the compiler targets
 * (-march=native), so that neither latency nor anything but the FMA units
 * limits it. Prints GFLOP/s (2 per multiply-add) for the given thread count.
 * A nominal figure (cores x base clock x FMA width) misses turbo clocks:
 * on this project's 2-vCPU machines it says 320 GFLOP/s where this
 * measures about 520.
 *
 *   cc -O2 -march=native -ffp-contract=fast -pthread peak.c -o peak
 *   ./peak THREADS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
#define CHAINS 12
#define ITERS 500000000L

typedef float vec __attribute__((vector_size(LANES * 4)));

/* Keeps a value in a vector register and opaque to the optimiser. */
#define KEEP(x) __asm__ volatile("" : "+v"(x))

static void *run(void *out) {
  vec a, b;
  for (int l = 0; l < LANES; ++l) {
    a[l] = 0.999999f;
    b[l] = 1e-7f;
  }
  vec x0 = a * (float)0;
  vec x1 = a * (float)1;
  vec x2 = a * (float)2;
  vec x3 = a * (float)3;
  vec x4 = a * (float)4;
  vec x5 = a * (float)5;
  vec x6 = a * (float)6;
  vec x7 = a * (float)7;
  vec x8 = a * (float)8;
  vec x9 = a * (float)9;
  vec x10 = a * (float)10;
  vec x11 = a * (float)11;
  for (long i = 0; i < ITERS; ++i) {
    x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a + b; x3 = x3 * a + b; x4 = x4 * a + b; x5 = x5 * a + b; x6 = x6 * a + b; x7 = x7 * a + b; x8 = x8 * a + b; x9 = x9 * a + b; x10 = x10 * a + b; x11 = x11 * a + b;
    KEEP(x0); KEEP(x1); KEEP(x2); KEEP(x3); KEEP(x4); KEEP(x5); KEEP(x6); KEEP(x7); KEEP(x8); KEEP(x9); KEEP(x10); KEEP(x11);
  }
  *(float *)out = x0[0] + x1[0] + x2[0] + x3[0] + x4[0] + x5[0] + x6[0] + x7[0] + x8[0] + x9[0] + x10[0] + x11[0];
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  pthread_t ids[256];
  float sums[256];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], NULL, run, &sums[t]);
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  double flops = 2.0 * threads * ITERS * CHAINS * LANES;
  printf("%.1f GFLOP/s (%d threads, %d-lane FMA, %.2f s, checksum %g)\n",
         flops / seconds * 1e-9, threads, LANES, seconds, sums[0]);
  return 0;
}
