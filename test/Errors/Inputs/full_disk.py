"""Compiles a model into output directories on filesystems of growing
size (test/Errors/Inputs/on_full_disk.sh: a tmpfs of its own), so that the
disk fills up at each file memfmt-compile writes in turn: the reports, the
IR, the weights, the object file, the library (ld.lld), the manifest.
Usage: full_disk.py WORK MEMFMT-COMPILE MODEL [FLAGS...]

Every run must either succeed (the output directory is there) or fail
cleanly: exit code 1, an error that says the disk is full, and nothing left
on the filesystem (no partial output). Prints one line per outcome with the
sizes that had it, then `full disk: PASS` or the runs that broke the rule.
"""
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES_KIB = [4 * i for i in range(1, 33)]


def what_failed(stderr):
    """Names the file or step the first error is about."""
    m = re.search(r"cannot write '?[^ ']*/([^/ ':]+)'?:", stderr) or \
        re.search(r"/([^/ ':]+): write error", stderr)
    if m:
        return "writing " + m.group(1)
    m = re.search(r"error: linking \S*?([^/ ]+) failed", stderr)
    if m:
        return "linking " + m.group(1)
    return "emitting model.o" if "emitting the object file" in stderr else "?"


def main():
    work, compiler, model, *flags = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    outcomes = collections.OrderedDict()
    broken = []
    for kib in SIZES_KIB:
        fs = os.path.join(work, f"{kib}k")
        result = subprocess.run(
            [os.path.join(HERE, "on_full_disk.sh"), f"{kib}k", fs, compiler,
             model, *flags, "-o", os.path.join(fs, "m")],
            capture_output=True, text=True, timeout=300)
        with open(fs + ".left") as f:
            left = f.read().split()
        if result.returncode == 0:
            outcome = "compiled"
            ok = left == ["m"]
        else:
            outcome = "disk full " + what_failed(result.stderr)
            ok = (result.returncode == 1 and not left and
                  ("No space left on device" in result.stderr or
                   " is full (" in result.stderr))
        outcomes.setdefault(outcome, []).append(kib)
        if not ok:
            broken.append(f"{kib} KiB: exit {result.returncode}, left "
                          f"{left}\n{result.stderr}")
    for outcome, sizes in outcomes.items():
        print(f"{outcome}: {', '.join(f'{k}k' for k in sizes)}")
    if broken:
        print("full disk: FAIL\n" + "\n".join(broken))
        return 1
    print("full disk: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
