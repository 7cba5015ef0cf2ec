#!/usr/bin/env bash
# memfmt setup: installs every Debian package the build, the tests and the
# main job need (DESIGN.md §5). Idempotent: when everything is present it only
# checks with dpkg and returns in well under a second.
#
# The CUDA toolkit (with cuDNN and cuBLAS) is not installed here: it comes with
# the machine at /usr/local/cuda and the build treats it as optional.
set -euo pipefail

PACKAGES=(
  # Compiler toolchain and MLIR/LLVM 22 (lit and FileCheck live in LLVM's bin/).
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  # clang-22's sanitizer and libFuzzer runtimes (scripts/sanitize.sh, test/fuzz).
  libclang-rt-22-dev
  cmake ninja-build ccache pkg-config
  # Test framework, importers and CPU kernels.
  libgtest-dev libgmock-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev libonnx-testdata
  # The runtime's JSON reader (manifest.json, safetensors headers); header-only.
  nlohmann-json3-dev
  # Inflating and checking the entries of .npz data files (memfmt-train).
  zlib1g-dev
  # Reference implementation for conformance tests.
  python3 python3-numpy python3-torch python3-torchvision python3-onnx
  # The training test's data set (scikit-learn's bundled digits, no download).
  python3-sklearn
  # The Python package (python/): its extension module and its tests.
  python3-dev pybind11-dev python3-pytest
  # Data-parallel training (memfmt-train under mpirun): Open MPI's library,
  # headers and launcher.
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
