#!/usr/bin/env bash
# Runs the whole memfmt test suite: installs what is missing (Debian
# packages), builds, then runs lit over the FileCheck tests and the
# GoogleTest binaries. lit prints the summary line.
#
# Then the same suite again in the sanitizer build (scripts/sanitize.sh:
# AddressSanitizer + UBSan, plus the bounded fuzz runs that only that build
# has), with its own summary line; the exit status is non-zero if either
# suite fails. Measured cold on a 2-core AMD EPYC (AVX2): setup 2
# minutes, build 10, suite 18; the sanitizer half about 20 to build and 20
# to test. MEMFMT_SANITIZE_TESTS=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ninja -C "${BUILD_DIR:-build}" check-memfmt
if [[ ${MEMFMT_SANITIZE_TESTS:-1} != 0 ]]; then
  scripts/sanitize.sh
fi
