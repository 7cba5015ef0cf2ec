//===- ParallelTest.cpp - The runtime's own loops run on threads ----------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// parallelFor (runtime/lib/Parallel.h) with Parallel.cpp compiled in as the
// runtime compiles it (the runtime library exports only its C API): with
// two threads allowed, a loop runs its chunks on two threads, each index
// exactly once; with one thread allowed, or too few indices per thread, on
// the calling thread alone. The runtime once started its regions with
// `#pragma omp parallel`, which Clang with -fopenmp=libgomp compiles to
// nothing: every loop ran on one thread and no test noticed.
//
//===----------------------------------------------------------------------===//

#include "lib/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace memfmt::runtime;

namespace {

/// What one parallelFor call did: how often each index ran, and on which
/// threads (OS threads and the `thread` argument).
struct LoopRun {
  std::vector<int> visits;
  std::set<std::thread::id> threads;
  std::set<int> indices;
};

LoopRun runLoop(int64_t count, int64_t minPerThread) {
  LoopRun run;
  std::vector<std::atomic<int>> visits(static_cast<size_t>(count));
  std::mutex mutex;
  parallelFor(count, minPerThread, [&](int64_t begin, int64_t end, int thread) {
    for (int64_t i = begin; i < end; ++i)
      ++visits[static_cast<size_t>(i)];
    std::lock_guard<std::mutex> lock(mutex);
    run.threads.insert(std::this_thread::get_id());
    run.indices.insert(thread);
  });
  for (const std::atomic<int> &v : visits)
    run.visits.push_back(v.load());
  return run;
}

TEST(ParallelTest, TwoThreadsShareALoop) {
  ThreadScope scope(2);
  if (maxThreads() < 2)
    GTEST_SKIP() << "the runtime is built without OpenMP";
  LoopRun run = runLoop(1000, 1);
  EXPECT_EQ(run.visits, std::vector<int>(1000, 1));
  EXPECT_EQ(run.threads.size(), 2u);
  EXPECT_EQ(run.indices, (std::set<int>{0, 1}));
}

TEST(ParallelTest, OneThreadOrFewIndicesStayOnTheCaller) {
  for (int threads : {1, 2}) {
    ThreadScope scope(threads);
    // One thread allowed: any loop; two: fewer than 2 x minPerThread.
    LoopRun run = threads == 1 ? runLoop(1000, 1) : runLoop(7, 4);
    EXPECT_EQ(run.visits, std::vector<int>(run.visits.size(), 1));
    EXPECT_EQ(run.threads,
              std::set<std::thread::id>{std::this_thread::get_id()});
    EXPECT_EQ(run.indices, std::set<int>{0});
  }
}

} // namespace
