# ===- machine.py - The CPU line of a recorded benchmark ------------------=== #
#
# Part of the memfmt project.
#
# ===----------------------------------------------------------------------=== #
"""The CPU a benchmark ran on, for the "Machine:" line of bench/RESULTS.md.

Virtual machines often report a bare model name ("AMD EPYC"), which does not
tell an AMD Zen 4 (x86 family 25) from a Zen 5 (family 26, full-width
AVX-512 and twice the f32 FMA peak per core), so the family and model
numbers and the ISA flags that decide oneDNN's kernels come with it.
"""


def cpu_line(path="/proc/cpuinfo"):
    """'AMD EPYC (x86 family 26 model 2; avx512f, avx512_bf16, AMX: no)'."""
    fields = {}
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return "unknown CPU"
    flags = set(fields.get("flags", "").split())
    isa = [f for f in ("avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16")
           if f in flags] or ["no AVX-512"]
    amx = "yes" if "amx_tile" in flags else "no"
    return (f"{fields.get('model name', 'unknown CPU')} (x86 family "
            f"{fields.get('cpu family', '?')} model {fields.get('model', '?')}"
            f"; {', '.join(isa)}, AMX: {amx})")


if __name__ == "__main__":
    print(cpu_line())
