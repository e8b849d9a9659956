"""Writes small Einsum models and their inputs into the folder given as argv[1].

Each case NAME gets NAME.onnx (one Einsum node, opset 13, inputs a, b, c as
the equation has operands; output y), NAME.a.npy, NAME.b.npy, ... and
NAME.want.npy, numpy's einsum of the inputs; each BAD case gets NAME.onnx
only. `const` cases hold their first
operand as an initializer, as the rotary tables of Llama and GPT-NeoX do
(torch.outer(t, inv_freq) with both known).

With --run, each case is also compiled with wsc-compile for a small mesh, run
with wsc-run and compared with numpy; one verdict line is printed per case.
"""
import argparse
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (equation, operand shapes, numpy dtype, first operand an initializer)
CASES = {
    "outer": ("i,j->ij", [[4], [3]], np.float32, False),
    "outer_const": ("i,j->ij", [[8], [4]], np.float32, True),
    "rotary_tables": ("i,j->ij", [[8], [4]], np.float32, "both"),
    "matmul_implicit": ("ij,jk", [[2, 3], [3, 4]], np.float32, False),
    "batch_matmul": ("bij, bjk -> bik", [[2, 3, 4], [2, 4, 5]], np.float32, False),
    "scores": ("bhqd,bhkd->bhqk", [[2, 2, 3, 4], [2, 2, 5, 4]], np.float32, False),
    "transpose": ("ij->ji", [[3, 4]], np.float32, False),
    "row_sum": ("ij->i", [[3, 4]], np.float32, False),
    "inner": ("i,i", [[5], [5]], np.float32, False),
    "diagonal": ("ii->i", [[4, 4]], np.float32, False),
    "trace": ("ii", [[3, 3]], np.float32, False),
    "batch_diagonal": ("...ii ->...i", [[2, 3, 3]], np.float32, False),
    "mixed": ("bij,jb->ib", [[2, 3, 4], [4, 2]], np.float32, False),
    "ellipsis": ("...ij,...jk", [[2, 1, 3, 4], [5, 4, 2]], np.float32, False),
    "sum_one_side": ("ij,jk->k", [[2, 3], [3, 4]], np.float32, False),
    "broadcast_one": ("ij,j->i", [[3, 1], [4]], np.float32, False),
    "three": ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]], np.float32, False),
    "integers": ("ij,jk->ik", [[2, 3], [3, 4]], np.int64, False),
    "f64": ("bij,bkj->bik", [[2, 3, 4], [2, 5, 4]], np.float64, False),
}
# Equations that must be refused: name: (equation, operand shapes).
BAD = {
    "bad_count": ("ij,jk,kl->il", [[2, 3], [3, 4]]),
    "bad_char": ("ij,j!->i", [[2, 3], [3]]),
    "bad_rank": ("ijk,jk->i", [[2, 3], [3, 4]]),
    "bad_size": ("ij,jk->ik", [[2, 3], [4, 5]]),
    "bad_output": ("ij,jk->iz", [[2, 3], [3, 4]]),
    "bad_repeat": ("ij,jk->ii", [[2, 3], [3, 4]]),
    "bad_ellipsis": ("...ij->ij", [[5, 2, 3]]),
    "bad_two_ellipses": ("...i...->i", [[5, 2, 3]]),
    "bad_diagonal": ("ii->i", [[2, 3]]),
    "bad_dynamic": ("ij->ji", [["n", 3]]),
}
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.int64: TensorProto.INT64}
NAMES = "abc"


def write(out, name, case, rng):
    eq, shapes, dtype, const = case
    arrays = []
    for s in shapes:
        if dtype == np.int64:
            arrays.append(rng.integers(-5, 6, size=s).astype(dtype))
        else:
            arrays.append(rng.standard_normal(s).astype(dtype))
    want = np.einsum(eq.replace(" ", ""), *arrays)
    names = NAMES[:len(shapes)]
    n_init = {False: 0, True: 1, "both": len(shapes)}[const]
    inits = [numpy_helper.from_array(arrays[k], names[k]) for k in range(n_init)]
    inputs = [helper.make_tensor_value_info(names[k], ONNX_TYPE[dtype], shapes[k])
              for k in range(n_init, len(shapes))]
    node = helper.make_node("Einsum", list(names), ["y"], equation=eq, name=name)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("y", ONNX_TYPE[dtype], want.shape)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    for k in range(n_init, len(shapes)):
        np.save(os.path.join(out, f"{name}.{names[k]}.npy"), arrays[k])
    np.save(os.path.join(out, name + ".want.npy"), want)
    return [names[k] for k in range(n_init, len(shapes))]


def write_bad(out, name, case):
    eq, shapes = case
    names = NAMES[:len(shapes)]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
    node = helper.make_node("Einsum", list(names), ["y"], equation=eq, name=name)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


def run(out, name, eq, feeds):
    base = os.path.join(out, name)
    r = subprocess.run(["wsc-compile", base + ".onnx", "--arch=mesh:8x8", "-o", base + ".wafer"],
                       capture_output=True, text=True)
    if r.returncode:
        return "compile failed: " + r.stderr.strip()
    cmd = ["wsc-run", base + ".wafer", "--output", f"y={base}.got.npy"]
    for n in feeds:
        cmd += ["--input", f"{n}={base}.{n}.npy"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return "run failed: " + r.stderr.strip()
    got, want = np.load(base + ".got.npy"), np.load(base + ".want.npy")
    if got.shape != want.shape:
        return f"wrong shape {got.shape}, numpy's is {want.shape}"
    err = np.abs(got.astype(np.float64) - want.astype(np.float64)).max() if want.size else 0.0
    if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        return f"wrong values (max error {err:.3g})"
    return "ok"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--run", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    for name, case in CASES.items():
        feeds = write(args.out, name, case, rng)
        if args.run:
            print(f"{name} '{case[0]}': {run(args.out, name, case[0], feeds)}")
    for name, case in BAD.items():
        write_bad(args.out, name, case)


if __name__ == "__main__":
    main()
