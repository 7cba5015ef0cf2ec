#!/usr/bin/env bash
# Configures (once) and builds memfmt in build/ with clang-22 + lld, ccache
# when present, against Debian's LLVM/MLIR 22 linked as one libMLIR.so.
# Extra arguments are ninja targets (default: everything).
# Environment: BUILD_DIR (default build), MEMFMT_CMAKE_ARGS (extra -D flags).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  # shellcheck disable=SC2086
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DMLIR_LINK_MLIR_DYLIB=ON \
    ${MEMFMT_CMAKE_ARGS:-}
fi
ninja -C "$BUILD_DIR" "$@"
