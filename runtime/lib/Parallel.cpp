//===- Parallel.cpp - Threads for the runtime's own loops -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The OpenMP calls behind Parallel.h. Clang with GNU OpenMP
// (-fopenmp=libgomp) finds no <omp.h>, so the four standard OpenMP API
// functions used here are declared by hand when the header is missing; their
// C signatures are fixed by the OpenMP specification. Parallel regions start
// with GOMP_parallel, the entry point GCC compiles `#pragma omp parallel`
// to (GNU OpenMP's ABI since GCC 4.9; LLVM's OpenMP library exports it
// too), because Clang generates nothing for the pragma with libgomp.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"

#include <thread>

#ifdef MEMFMT_HAVE_OPENMP
#if __has_include(<omp.h>)
#include <omp.h>
#else
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
}
#endif
extern "C" void GOMP_parallel(void (*fn)(void *), void *data,
                              unsigned numThreads, unsigned flags);
#endif

using namespace memfmt::runtime;

int memfmt::runtime::hardwareThreads() {
  unsigned count = std::thread::hardware_concurrency();
  return count ? static_cast<int>(count) : 1;
}

#ifdef MEMFMT_HAVE_OPENMP
void memfmt::runtime::runOnThreads(int threads, void (*fn)(void *),
                                   void *data) {
  GOMP_parallel(fn, data, static_cast<unsigned>(threads), 0);
}

int memfmt::runtime::maxThreads() { return omp_get_max_threads(); }
int memfmt::runtime::threadIndex() { return omp_get_thread_num(); }
int memfmt::runtime::teamSize() { return omp_get_num_threads(); }

ThreadScope::ThreadScope(int numThreads) : previous(omp_get_max_threads()) {
  if (numThreads > 0 && numThreads != previous)
    omp_set_num_threads(numThreads);
}

ThreadScope::~ThreadScope() {
  if (omp_get_max_threads() != previous)
    omp_set_num_threads(previous);
}
#else
void memfmt::runtime::runOnThreads(int, void (*fn)(void *), void *data) {
  fn(data);
}
int memfmt::runtime::maxThreads() { return 1; }
int memfmt::runtime::threadIndex() { return 0; }
int memfmt::runtime::teamSize() { return 1; }
ThreadScope::ThreadScope(int) : previous(1) {}
ThreadScope::~ThreadScope() = default;
#endif
