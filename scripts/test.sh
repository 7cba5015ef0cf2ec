#!/usr/bin/env bash
# Runs the whole memfmt test suite: installs what is missing (Debian
# packages), builds, then runs lit over the FileCheck tests and the
# GoogleTest binaries. lit prints the summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ninja -C "${BUILD_DIR:-build}" check-memfmt
