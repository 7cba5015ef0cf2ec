//===- Parallel.h - Threads for the runtime's own loops ---------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's loops run in parallel with OpenMP when the build has it
// (MEMFMT_HAVE_OPENMP), on the same OpenMP runtime as oneDNN (GNU OpenMP on
// Debian), so one thread pool serves both. A ThreadScope sets the calling
// thread's OpenMP thread count to the context's for the duration of a kernel
// call and restores it afterwards, so a caller's own OpenMP settings are left
// alone. parallelFor splits an index range into one contiguous chunk per
// thread; the body must not throw (allocate before the loop). Its parallel
// region is started by a call into the OpenMP library (runOnThreads), not
// by `#pragma omp parallel`: Clang with GNU OpenMP (-fopenmp=libgomp) links
// the library but ignores the pragmas, which left every loop of the runtime
// on one thread.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_PARALLEL_H
#define MEMFMT_RUNTIME_LIB_PARALLEL_H

#include <algorithm>
#include <cstdint>

namespace memfmt::runtime {

/// The number of hardware threads (at least 1).
int hardwareThreads();

/// The number of threads a parallel loop started now would use (1 without
/// OpenMP).
int maxThreads();

/// Index of the calling thread inside a parallel region (0 outside one).
int threadIndex();

/// Number of threads of the enclosing parallel region (1 outside one).
int teamSize();

/// Sets the calling thread's OpenMP thread count for its lifetime.
class ThreadScope {
public:
  explicit ThreadScope(int numThreads);
  ~ThreadScope();
  ThreadScope(const ThreadScope &) = delete;
  ThreadScope &operator=(const ThreadScope &) = delete;

private:
  [[maybe_unused]] int previous; // The thread count to restore.
};

/// Runs `fn(data)` once on each of `threads` threads of the OpenMP pool,
/// the calling thread being thread 0, and returns when every one is done
/// (without OpenMP: once, on the calling thread).
void runOnThreads(int threads, void (*fn)(void *), void *data);

/// Runs `body(begin, end, thread)` over [0, count) split into one contiguous
/// chunk per thread, `thread` in [0, maxThreads()). Runs on the calling
/// thread alone when `count` is below `minPerThread` * 2 or there is one
/// thread.
template <typename Body>
void parallelFor(int64_t count, int64_t minPerThread, Body &&body) {
  if (count <= 0)
    return;
  int64_t wanted = std::min<int64_t>(
      maxThreads(), count / std::max<int64_t>(minPerThread, 1));
  if (wanted <= 1) {
    body(int64_t(0), count, 0);
    return;
  }
  auto region = [&] {
    int64_t team = teamSize();
    int64_t thread = threadIndex();
    int64_t chunk = (count + team - 1) / team;
    int64_t begin = std::min(count, thread * chunk);
    int64_t end = std::min(count, begin + chunk);
    if (begin < end)
      body(begin, end, static_cast<int>(thread));
  };
  using Region = decltype(region);
  runOnThreads(
      static_cast<int>(wanted),
      [](void *data) { (*static_cast<Region *>(data))(); }, &region);
}

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_PARALLEL_H
