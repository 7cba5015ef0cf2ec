#!/usr/bin/env bash
# Runs the whole memfmt test suite: installs what is missing (Debian
# packages), builds, then runs lit over the FileCheck tests and the
# GoogleTest binaries. lit prints the summary line.
#
# Then the same suite again in the sanitizer build (scripts/sanitize.sh:
# AddressSanitizer + UBSan, plus the bounded fuzz runs that only that build
# has), with its own summary line; the exit status is non-zero if either
# suite fails. On a 2-core machine the second half adds about 10 minutes
# cold (6 to build, 4 to test) and keeps a whole CI run near 15 minutes.
# MEMFMT_SANITIZE_TESTS=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ninja -C "${BUILD_DIR:-build}" check-memfmt
if [[ ${MEMFMT_SANITIZE_TESTS:-1} != 0 ]]; then
  scripts/sanitize.sh
fi
