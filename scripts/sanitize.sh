#!/usr/bin/env bash
# The sanitizer build: configures (once) and builds all of memfmt -- the
# compiler, the runtime, the tools, the tests and the libFuzzer targets of
# test/fuzz -- in build-asan with clang-22 and -fsanitize=address,undefined
# (every report fatal; the installed LLVM/MLIR and oneDNN are not
# instrumented), then runs the whole lit suite there: every test of the
# normal suite under the sanitizers but three long end-to-end tests (see
# below), plus the bounded fuzz runs that only this build has. lit prints
# the summary line; the exit status is lit's.
# Environment: SANITIZE_BUILD_DIR (default build-asan), MEMFMT_FUZZ_SECONDS
# (seconds per fuzzer in the suite, default 30), LIT_FILTER_OUT,
# MEMFMT_CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export BUILD_DIR=${SANITIZE_BUILD_DIR:-build-asan}
export MEMFMT_CMAKE_ARGS="-DMEMFMT_SANITIZE=address,undefined \
-DMEMFMT_ENABLE_FUZZERS=ON ${MEMFMT_CMAKE_ARGS:-}"
scripts/build.sh
# Leaks are reported too; a report of any kind fails the test that made it.
# allow_user_poisoning=0: memfmt's instrumented code and the uninstrumented
# libMLIR.so both inline LLVM's BumpPtrAllocator, whose manual poisoning
# then gives false use-after-poison reports (test/fuzz/SanitizerOptions.cpp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Three end-to-end tests are left out here, each many minutes under the
# sanitizers for code paths that other tests run here:
# * E2E/zoo_l8.py compiles and runs all seven zoo models in both formats
#   (85 s in the normal suite, ten minutes here); its paths are those of
#   Tools/memfmt-run/resnet18.test, Tools/memfmt-compile/run.test and
#   E2E/torch_resnet.py;
# * E2E/tile_batch_l8.py runs six tiled zoo models against the reference
#   kernels (78 s in the normal suite, 20 minutes here on a 2-core AMD EPYC
#   with AVX2); memfmt-tile-batch runs here in tile-batch.mlir,
#   no-per-run-work.test and random-graphs.test;
# * E2E/cpu_bf16.py checks bf16 ResNet-18s against the widened reference
#   (12 minutes here without bf16 instructions); the bf16 kernels run here
#   in RuntimeKernelTests.
# LIT_FILTER_OUT='^$' keeps them.
export LIT_FILTER_OUT=${LIT_FILTER_OUT-E2E/(zoo_l8|tile_batch_l8|cpu_bf16)\.py}
ninja -C "$BUILD_DIR" check-memfmt
