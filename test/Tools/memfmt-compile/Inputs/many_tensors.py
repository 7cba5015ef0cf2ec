"""A model with more inputs and outputs than any fixed-arity call could take.

`many_tensors.py mlir N FILE` writes a function of N inputs x_i [1, 2, 3, 3]
and N outputs, output i = x_i + x_{(i+1) mod N} * 2 (so that any two swapped
or shifted buffers give wrong values); `many_tensors.py check N DIR PYTHON`
runs the compiled model DIR through the memfmt Python package (from
PYTHON) on seeded inputs and prints one line per check.
"""
import sys

SHAPE = [1, 2, 3, 3]
TYPE = "tensor<1x2x3x3xf32>"


def write_mlir(n, path):
    lines = ["func.func @many(" +
             ", ".join(f"%x{i}: {TYPE}" for i in range(n)) + ") -> (" +
             ", ".join([TYPE] * n) + ") {"]
    for i in range(n):
        j = (i + 1) % n
        lines.append(f"  %d{i} = memfmt.add %x{j}, %x{j} : {TYPE}, {TYPE} "
                     f"-> {TYPE}")
        lines.append(f"  %y{i} = memfmt.add %x{i}, %d{i} : {TYPE}, {TYPE} "
                     f"-> {TYPE}")
    lines.append("  return " + ", ".join(f"%y{i}" for i in range(n)) +
                 " : " + ", ".join([TYPE] * n))
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def check(n, model_dir, python_dir):
    import numpy as np
    sys.path.insert(0, python_dir)
    import memfmt
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(SHAPE, dtype=np.float32) for _ in range(n)]
    model = memfmt.load(model_dir)
    print(f"inputs {len(model.inputs)} outputs {len(model.outputs)}")
    for step in range(2):  # the second run reuses every buffer
        ys = model.run(*xs)
        wrong = [i for i in range(n)
                 if not np.array_equal(ys[i], xs[i] + xs[(i + 1) % n] * 2)]
        print(f"run {step}: {n - len(wrong)} of {n} outputs right" +
              (f" (first wrong: output {wrong[0]})" if wrong else ""))
    model.close()


if __name__ == "__main__":
    if sys.argv[1] == "mlir":
        write_mlir(int(sys.argv[2]), sys.argv[3])
    else:
        check(int(sys.argv[2]), sys.argv[3], sys.argv[4])
