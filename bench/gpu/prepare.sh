#!/usr/bin/env bash
# bench/gpu/prepare.sh - build everything the GPU server needs, here.
#
# A GPU server has PyTorch but no LLVM/MLIR, so the compiler runs on this
# machine and the server gets one folder of prebuilt artifacts,
# bench/gpu/artifacts/ (git-ignored, well under 64 MiB):
#
#   lib/libmemfmt_runtime.so   the runtime with the CUDA backend (sm_80 and
#                              sm_90 SASS + sm_90 PTX; CUDA runtime linked
#                              statically; needs libcudnn.so.9, libcublas.so.13
#                              and libcublasLt.so.13 at run time), built
#                              runtime-only, without oneDNN
#   lib/fake_model.so          the loader tests' hand-written model
#   lib/fallback/              libgomp, used only if the server lacks it
#   bin/memfmt-run             the model runner (--check, --bench, --cuda-graph)
#   bin/memfmt-train           the training driver (built without MPI)
#   bin/RuntimeCudaTests       every CUDA kernel against the CPU reference
#   bin/RuntimeKernelTests     the CPU kernel tests (the reference itself)
#   models/resnet50-<fmt>-<prec>-b<N>/   model.so + manifest.json for
#                              fmt in cl (channels-last, channels-last input)
#                              and nchw, prec in f32 and bf16, N in 1, 32, 256
#   models/train-<net>-<target>/  training steps (with eval/) for the
#                              GPU-vs-CPU check: net tiny (test/Tools/
#                              memfmt-compile/Inputs/tiny.mlir), tiny-bf16
#                              (the same, --precision bf16), tiny-scaled
#                              (--grad-scaler), tiny-f16 (cuda only,
#                              --precision f16, loss scaled) and resnet18
#                              (batch 4, 64x64), target cuda and cpu
#   models/train-resnet50-<fmt>-b<N>/  ResNet-50 training steps for the
#                              benchmark: fmt cl, nchw and cl-bf16
#                              (--precision bf16), N in 32 and 256
#   COMMIT                     the commit (and whether the tree was dirty)
#
# Then, on the GPU server: bench/gpu/run.sh (see bench/gpu/README.md).
#
# Usage: bench/gpu/prepare.sh            (from anywhere; takes a few minutes
#                                         the first time, with -j2)
# Environment: JOBS (default 2), BUILD_DIR (the full build, default
# build-cuda), BUNDLE_BUILD_DIR (the runtime-only build, default build-gpu),
# SKIP_FULL_BUILD=1 (use the memfmt-compile already in BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
JOBS=${JOBS:-2}
BUILD_DIR=${BUILD_DIR:-build-cuda}
BUNDLE_BUILD_DIR=${BUNDLE_BUILD_DIR:-build-gpu}
OUT=bench/gpu/artifacts
ARCHS="80-real;90"

step() { echo "== prepare: $*" >&2; }

command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]] || {
  echo "prepare.sh: the CUDA toolkit (nvcc) is needed" >&2; exit 1; }

# 1. The full build (memfmt-compile), with the CUDA backend.
step "full build in $BUILD_DIR (memfmt-compile)"
if [[ ${SKIP_FULL_BUILD:-0} == 1 && -x $BUILD_DIR/bin/memfmt-compile ]]; then
  step "SKIP_FULL_BUILD=1: using $BUILD_DIR/bin/memfmt-compile as it is"
elif [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  MEMFMT_CMAKE_ARGS="-DMEMFMT_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$ARCHS ${MEMFMT_CMAKE_ARGS:-}" \
    BUILD_DIR="$BUILD_DIR" scripts/build.sh -j"$JOBS" memfmt-compile memfmt-run
else
  ninja -C "$BUILD_DIR" -j"$JOBS" memfmt-compile memfmt-run
fi

# 2. The runtime-only bundle: no LLVM, no oneDNN (the server has neither).
step "runtime-only build in $BUNDLE_BUILD_DIR"
if [[ ! -f "$BUNDLE_BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUNDLE_BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMEMFMT_RUNTIME_ONLY=ON \
    -DMEMFMT_ENABLE_CUDA=ON \
    -DMEMFMT_ENABLE_ONEDNN=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
fi
ninja -C "$BUNDLE_BUILD_DIR" -j"$JOBS" MemFmtRuntime memfmt-run memfmt-train \
  RuntimeCudaTests RuntimeKernelTests memfmt_fake_model

# 3. The folder.
step "assembling $OUT"
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib/fallback" "$OUT/models"
cp "$BUNDLE_BUILD_DIR/lib/libmemfmt_runtime.so" "$OUT/lib/"
cp "$BUNDLE_BUILD_DIR/runtime/loader/fake_model.so" "$OUT/lib/"
cp "$BUNDLE_BUILD_DIR/bin/memfmt-run" "$BUNDLE_BUILD_DIR/bin/memfmt-train" \
   "$OUT/bin/"
if ldd "$OUT/bin/memfmt-train" | grep -q libmpi; then
  echo "prepare.sh: memfmt-train links MPI; remove $BUNDLE_BUILD_DIR and" \
       "run again (the bundle is configured without it)" >&2; exit 1
fi
cp "$BUNDLE_BUILD_DIR/test/unittests/RuntimeCudaTests" \
   "$BUNDLE_BUILD_DIR/test/unittests/RuntimeKernelTests" "$OUT/bin/"
gomp=$(ldconfig -p | awk '/libgomp\.so\.1 .*x86-64/ {p = $NF} END {print p}')
[[ -n "$gomp" ]] && cp -L "$gomp" "$OUT/lib/fallback/libgomp.so.1"
strip --strip-unneeded "$OUT/lib/libmemfmt_runtime.so" "$OUT/bin/"* \
  "$OUT/lib/fake_model.so" 2>/dev/null || true

# 4. ResNet-50 for the GPU: both memory formats, f32 and bf16, batch 1, 32
# and 256. Channels-last models take channels-last input (as PyTorch's
# channels-last runs do: the input conversion is not timed); weights are
# synthetic at compile time and replaced at run time (--weights) by the
# torchvision weights the server exports.
step "compiling ResNet-50 models"
for fmt in cl nchw; do
  if [[ $fmt == cl ]]; then mf=channels-last; inf=channels-last
  else mf=contiguous; inf=contiguous; fi
  for prec in f32 bf16; do
    for batch in 1 32 256; do
      dir="$OUT/models/resnet50-$fmt-$prec-b$batch"
      "$BUILD_DIR/bin/memfmt-compile" --model resnet50 --target cuda \
        --memory-format "$mf" --input-format "$inf" --precision "$prec" \
        --batch "$batch" -o "$dir.tmp" 2>/dev/null
      mkdir -p "$dir"
      mv "$dir.tmp/model.so" "$dir.tmp/manifest.json" "$dir/"
      rm -rf "$dir.tmp"
    done
  done
done

# 5. Training steps: the GPU-vs-CPU check's (both targets, same synthetic
# weights) and ResNet-50's for the benchmark (channels-last models take
# channels-last data, as PyTorch's channels-last runs).
step "compiling training steps"
train_model() { # DIR, then memfmt-compile's arguments
  local dir=$1; shift
  "$BUILD_DIR/bin/memfmt-compile" "$@" --train -o "$dir.tmp" 2>/dev/null
  mkdir -p "$dir/eval"
  mv "$dir.tmp/model.so" "$dir.tmp/manifest.json" "$dir/"
  mv "$dir.tmp/eval/model.so" "$dir.tmp/eval/manifest.json" "$dir/eval/"
  rm -rf "$dir.tmp"
}
for target in cuda cpu; do
  train_model "$OUT/models/train-tiny-$target" \
    test/Tools/memfmt-compile/Inputs/tiny.mlir --target "$target"
  train_model "$OUT/models/train-tiny-bf16-$target" \
    test/Tools/memfmt-compile/Inputs/tiny.mlir --target "$target" \
    --precision bf16
  # Dynamic loss scaling from a scale the tiny network's f16 gradients
  # stay finite at (GradScaler's 65536 overflows them: skipped steps).
  train_model "$OUT/models/train-tiny-scaled-$target" \
    test/Tools/memfmt-compile/Inputs/tiny.mlir --target "$target" \
    --grad-scaler --grad-scaler-init-scale 128 --grad-scaler-growth-interval 2
  train_model "$OUT/models/train-resnet18-$target" --model resnet18 \
    --target "$target" --batch 4 --height 64 --width 64
done
train_model "$OUT/models/train-tiny-f16-cuda" \
  test/Tools/memfmt-compile/Inputs/tiny.mlir --target cuda --precision f16 \
  --grad-scaler-init-scale 128 --grad-scaler-growth-interval 2
for batch in 32 256; do
  train_model "$OUT/models/train-resnet50-cl-b$batch" --model resnet50 \
    --target cuda --memory-format channels-last --input-format channels-last \
    --batch "$batch"
  train_model "$OUT/models/train-resnet50-nchw-b$batch" --model resnet50 \
    --target cuda --memory-format contiguous --batch "$batch"
  train_model "$OUT/models/train-resnet50-cl-bf16-b$batch" --model resnet50 \
    --target cuda --memory-format channels-last --input-format channels-last \
    --precision bf16 --batch "$batch"
done
# 6. Provenance, and a check that the bundle is whole and small.
{
  git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown
  if [[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    echo "dirty"
  fi
} > "$OUT/COMMIT"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{ "$nvcc" --version | tail -1; echo "CUDA architectures: $ARCHS"; } \
  > "$OUT/TOOLCHAIN"
size=$(du -sm "$OUT" | cut -f1)
step "done: $OUT is ${size} MiB ($(find "$OUT" -type f | wc -l) files); commit $(head -1 "$OUT/COMMIT")"
if (( size > 64 )); then
  echo "prepare.sh: $OUT is over 64 MiB" >&2; exit 1
fi
