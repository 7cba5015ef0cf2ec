#!/usr/bin/env bash
# Runs memfmt's libFuzzer targets (test/fuzz) for a given time each, from
# the test suite's seeds, the committed corpus and the regression inputs,
# keeping what they find in a corpus directory that grows across runs.
#
#   scripts/fuzz.sh [-t SECONDS | -n RUNS] [-j JOBS] [-o DIR] [--merge] [NAME...]
#
# NAME is ir, safetensors, runtime or onnx (default: those built). -t is the time per
# fuzzer (default 600); -n instead stops each fuzzer after RUNS executions
# (wall-clock independent, so a run may be paused with SIGSTOP and resumed
# with SIGCONT); -j how many fuzzers run at once (default 1), -o the
# working directory (default build-asan/fuzz: DIR/NAME is the corpus,
# DIR/NAME.log the log, DIR/NAME-crash-* what crashed). --merge afterwards
# minimises DIR/NAME into test/fuzz/corpus/NAME (the committed corpus).
# Prints one line per fuzzer: executions, seconds, crashes; exits 1 if any
# fuzzer crashed. Builds the targets first in the sanitizer build
# (scripts/sanitize.sh's configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=600 RUNS=0 JOBS=1 MERGE=0 WORK=""
NAMES=()
while (($#)); do
  case "$1" in
    -t) SECONDS_EACH=$2; shift 2 ;;
    -n) RUNS=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -o) WORK=$2; shift 2 ;;
    --merge) MERGE=1; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    ir|safetensors|runtime|onnx) NAMES+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

scripts/setup.sh >/dev/null
export BUILD_DIR=${SANITIZE_BUILD_DIR:-build-asan}
export MEMFMT_CMAKE_ARGS="-DMEMFMT_SANITIZE=address,undefined \
-DMEMFMT_ENABLE_FUZZERS=ON ${MEMFMT_CMAKE_ARGS:-}"
if ((${#NAMES[@]} == 0)); then
  scripts/build.sh build.ninja >/dev/null
  for name in ir safetensors runtime onnx; do
    # memfmt-fuzz-onnx exists only where the ONNX importer is built.
    if ninja -C "$BUILD_DIR" -t query "memfmt-fuzz-$name" >/dev/null 2>&1; then
      NAMES+=("$name")
    fi
  done
fi
scripts/build.sh "${NAMES[@]/#/memfmt-fuzz-}" >/dev/null
WORK=${WORK:-$BUILD_DIR/fuzz}
mkdir -p "$WORK"

run_one() {
  local name=$1 dict=""
  local corpus="$WORK/$name" seeds="$WORK/$name-seeds" log="$WORK/$name.log"
  mkdir -p "$corpus"
  rm -rf "$seeds"
  /usr/bin/python3 test/fuzz/make_seeds.py "$name" . "$seeds" >/dev/null
  [[ -f test/fuzz/$name.dict ]] && dict="-dict=test/fuzz/$name.dict"
  [[ $name == onnx ]] && dict="-max_len=65536"
  local limit="-max_total_time=$SECONDS_EACH"
  ((RUNS > 0)) && limit="-runs=$RUNS"
  local rc=0
  "$BUILD_DIR/test/fuzz/memfmt-fuzz-$name" "$corpus" "$seeds" \
    "test/fuzz/corpus/$name" "test/fuzz/regressions/$name" $dict \
    "$limit" -timeout=60 -rss_limit_mb=3072 \
    -artifact_prefix="$WORK/$name-" -print_final_stats=1 >"$log" 2>&1 ||
    rc=$?
  local execs secs crashes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  crashes=$(ls "$WORK" | grep -cE "^$name-(crash|timeout|oom|leak)-" ||
            true)
  echo "fuzz $name: ${execs:-?} executions in ${secs:-?} s, exit $rc," \
       "$crashes crash/timeout/oom/leak input(s) in $WORK"
  return $rc
}

status=0
pids=()
for name in "${NAMES[@]}"; do
  run_one "$name" & pids+=($!)
  while (($(jobs -rp | wc -l) >= JOBS)); do sleep 1; done
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done

if ((MERGE)); then
  for name in "${NAMES[@]}"; do
    mkdir -p "test/fuzz/corpus/$name.new"
    "$BUILD_DIR/test/fuzz/memfmt-fuzz-$name" -merge=1 \
      "test/fuzz/corpus/$name.new" "test/fuzz/corpus/$name" "$WORK/$name" \
      >"$WORK/$name.merge.log" 2>&1
    rm -rf "test/fuzz/corpus/$name"
    mv "test/fuzz/corpus/$name.new" "test/fuzz/corpus/$name"
    echo "merged $(ls "test/fuzz/corpus/$name" | wc -l) inputs into" \
         "test/fuzz/corpus/$name"
  done
fi
exit $status
