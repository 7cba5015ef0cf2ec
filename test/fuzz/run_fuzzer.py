#!/usr/bin/env python3
"""Runs one bounded libFuzzer run for a fuzz test and reports a failure
so that it can be reproduced from the test log alone.

    run_fuzzer.py ARTIFACT_DIR -- FUZZER ARGS...

On success it prints libFuzzer's output unchanged (the tests FileCheck its
"Done ... runs" and stat:: lines). On failure (non-zero exit, or no "Done"
line) it prints the part of the output that explains it -- the sanitizer or
libFuzzer report, at most 60 lines from a few lines before its first --
and then every input libFuzzer left in ARTIFACT_DIR (crash-*, timeout-*,
oom-*, leak-*, slow-unit-*) in base64, with the command that replays it,
and exits 1. The
inputs come last because CI logs keep the end of a long output: a failure
seen only on a CI machine can then be replayed anywhere.
"""

import base64
import os
import re
import subprocess
import sys

# The first line of a report: "==PID==ERROR: AddressSanitizer/
# LeakSanitizer ..." or "==PID== ERROR: libFuzzer: ..." (crash, deadly
# signal, timeout, out-of-memory), UBSan's "runtime error:", or libFuzzer's
# timeout alarm.
REPORT_START = re.compile(r"==\d+== ?ERROR|runtime error:|ALARM:")
# Lines kept before the report: what the target printed before it aborted
# (RuntimeFuzzer's "... failed but changed a buffer").
CONTEXT_LINES = 5
ARTIFACT_PREFIXES = ("crash-", "timeout-", "oom-", "leak-", "slow-unit-")
REPORT_LINES = 60


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: run_fuzzer.py ARTIFACT_DIR -- FUZZER ARGS...")
    artifact_dir, command = argv[1], argv[3:]
    run = subprocess.run(command, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         errors="replace")
    lines = run.stdout.splitlines()
    if run.returncode == 0 and any(l.startswith("Done ") for l in lines):
        sys.stdout.write(run.stdout)
        return 0
    print(f"fuzzer failed (exit code {run.returncode}): {' '.join(command)}")
    first = next((i for i, l in enumerate(lines)
                  if REPORT_START.search(l)), None)
    if first is None:  # Killed from outside, or stopped without a report.
        first = len(lines) - REPORT_LINES
    first = max(0, first - CONTEXT_LINES)
    print("\n".join(lines[first:first + REPORT_LINES]))
    stats = [l for l in lines[first + REPORT_LINES:] if l.startswith("stat::")]
    print("\n".join(stats))
    artifacts = sorted(f for f in os.listdir(artifact_dir)
                       if f.startswith(ARTIFACT_PREFIXES))
    if not artifacts:
        print(f"no input left in {artifact_dir}")
    for name in artifacts:
        with open(os.path.join(artifact_dir, name), "rb") as f:
            data = f.read()
        print(f"input {name} ({len(data)} bytes), replay with: "
              f"base64 -d > {name} <<'EOF' && {command[0]} {name}")
        print(base64.encodebytes(data).decode("ascii") + "EOF")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
