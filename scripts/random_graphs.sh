#!/usr/bin/env bash
# Differential testing on random graphs (rule L8): builds the tools, then
# generates random memfmt graphs, compiles each NCHW and channels-last, runs
# both on the CPU with --check and compares them (test/Random/randgraph.py
# says what is checked). Failing graphs are reduced into
# test/Random/regressions/ (add them to the suite as they are).
#
#   scripts/random_graphs.sh [-n COUNT] [-t SECONDS] [-s SEED] [-j JOBS]
#
# Defaults: 1000 graphs, no time limit, seed 0, 2 jobs. Prints
# "random graphs: G checked, M mismatches"; exits 1 if M > 0.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=1000 BUDGET=0 SEED=0 JOBS=2
while (($#)); do
  case "$1" in
    -n) COUNT=$2; shift 2 ;;
    -t) BUDGET=$2; shift 2 ;;
    -s) SEED=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "random_graphs.sh: unknown argument '$1' (see --help)" >&2
       exit 2 ;;
  esac
done
scripts/setup.sh >/dev/null
scripts/build.sh memfmt-opt memfmt-compile memfmt-run >/dev/null
BIN=${BUILD_DIR:-build}/bin
exec /usr/bin/python3 test/Random/randgraph.py run --seed "$SEED" \
  --count "$COUNT" --time-budget "$BUDGET" --jobs "$JOBS" --batch 4 \
  --bin "$BIN" --reduce-to test/Random/regressions
