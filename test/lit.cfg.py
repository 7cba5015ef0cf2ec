# lit configuration of the memfmt regression suite: FileCheck tests of the
# dialect, passes and tools. GoogleTest binaries are a separate suite
# (unittests/lit.cfg.py), discovered from the same build directory.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "memfmt"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.memfmt_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "unittests"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))

# test/.lit_test_times.txt holds each test's seconds in a whole run on a
# 2-core AMD EPYC (AVX2); lit reads it when the build has no timings of its
# own yet (a fresh clone, as in CI) and starts the longest tests first, so
# that a 10-minute test does not begin when the rest are nearly done. Copy
# build/test/.lit_test_times.txt over it when the long tests change.

# lit runs as many tests at once as there are cores, and each test's
# runtime (oneDNN) and PyTorch start OpenMP teams of their own: with GNU
# OpenMP's default, idle threads spin, taking the cores the other tests need
# (measured on 2 cores: a memfmt and a PyTorch training run side by side took
# 40 and 38 s, 22 and 19 s with passive waiting). Passive waiting changes
# scheduling only, not results.
config.environment["OMP_WAIT_POLICY"] = "PASSIVE"
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%memfmt_src", config.memfmt_src_root))
config.substitutions.append(("%memfmt_bin", config.memfmt_tools_dir))
config.substitutions.append(("%memfmt_lib",
                             os.path.join(config.memfmt_obj_root, "lib")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.memfmt_tools_dir, append_path=True)

tools = ["memfmt-opt", "memfmt-compile", "memfmt-run", "memfmt-train",
         "memfmt-import", "memfmt-count-run-work"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools],
    [config.memfmt_tools_dir])
for t in tools:
    if os.path.exists(os.path.join(config.memfmt_tools_dir, t)):
        config.available_features.add(t)

# The sanitizer build (scripts/sanitize.sh): its allocator is the
# sanitizer's, so tests that count allocations do not apply there.
if getattr(config, "memfmt_sanitize", ""):
    config.available_features.add("sanitizer")

# GPU tests need a CUDA device; they are marked `REQUIRES: cuda`.
if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda")
# The runtime was built with the CUDA backend (the toolkit was found).
if config.memfmt_have_cuda.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("memfmt-cuda")

# The CPU multiplies bf16 natively (AVX-512 BF16 or AMX), where memfmt's
# bf16 kernels run on oneDNN and its own loops rather than on the widened
# reference: tests of a bf16 step's speed-related properties (`REQUIRES:
# cpu-bf16`) need it.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        _flags = cpuinfo.read()
    if "avx512_bf16" in _flags or "amx_bf16" in _flags:
        config.available_features.add("cpu-bf16")
except OSError:
    pass

# memfmt-train was built with MPI and Open MPI's launcher is installed:
# data-parallel training tests (`REQUIRES: mpi`) start it with mpirun.
import shutil
import subprocess
if config.memfmt_have_mpi.upper() in ("ON", "1", "TRUE", "YES") and \
        shutil.which("mpirun"):
    config.available_features.add("mpi")

# Tests of what the tools do when the disk fills up (`REQUIRES: full-disk`)
# give the output directory a small filesystem of its own with
# test/Errors/Inputs/on_full_disk.sh, which needs unprivileged user and mount
# namespaces (unshare) and tmpfs; some containers forbid them.
import tempfile
with tempfile.TemporaryDirectory() as _probe:
    try:
        subprocess.run([os.path.join(config.test_source_root, "Errors",
                                     "Inputs", "on_full_disk.sh"),
                        "64k", os.path.join(_probe, "fs"), "true"],
                       check=True, capture_output=True, timeout=60)
        config.available_features.add("full-disk")
    except Exception:
        pass

# Python modules tests need for /usr/bin/python3 (Debian's packages), each a
# feature: torch (comparisons with PyTorch), python-onnx (tests that write
# and read ONNX files), sklearn (the learning test trains on scikit-learn's
# bundled digits), pytest (the Python package's tests).
for feature, module in (("torch", "torch"), ("python-onnx", "onnx"),
                        ("sklearn", "sklearn.datasets"),
                        ("pytest", "pytest")):
    try:
        subprocess.run([config.python_executable, "-c", f"import {module}"],
                       check=True, capture_output=True, timeout=120)
        config.available_features.add(feature)
    except Exception:
        pass

# The Python package (python/, built when pybind11 is present). A sanitizer
# build's extension would need the sanitizer's runtime preloaded into
# python3, so it is not tested there.
config.memfmt_python_dir = os.path.join(config.memfmt_obj_root, "python")
config.substitutions.append(("%memfmt_python", config.memfmt_python_dir))
import glob
if glob.glob(os.path.join(config.memfmt_python_dir, "memfmt", "_memfmt*.so")) \
        and not getattr(config, "memfmt_sanitize", ""):
    config.available_features.add("python-package")
