#!/usr/bin/env python3
"""Writes a synthetic wskernel module for placement and routing: a chain of
kernels of assorted sizes with skip connections (like residual streams).

  gen_kernel_graph.py --kernels 1000 --width 762 --height 1172 [--fill 0.5]
                      [--skip 4] [--seed 1] [-o out.mlir]

Kernel i reads the stream of kernel i-1, and every --skip-th kernel also the
stream of kernel i-skip. Kernel areas average fill * width * height / kernels.
Channels are those of the lowering: "col" when h > 1, "row" when w > 1. Bodies
use ports as the lowering's do (every PE receives its inputs, partials run
down the columns and along the last row, the last PE sends the result), since
routes follow the bodies; they compute nothing: the module is for place and
route only. The module has no arch:
run it with --wsc-set-arch first. Deterministic for a seed."""
import argparse
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", type=int, default=100)
    ap.add_argument("--width", type=int, required=True)
    ap.add_argument("--height", type=int, required=True)
    ap.add_argument("--fill", type=float, default=0.5, help="fraction of the PEs kernels take")
    ap.add_argument("--skip", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    mean_area = a.fill * a.width * a.height / a.kernels
    sizes = [64, 128, 256, 768]
    lines = ["module {", "  func.func @main(%w: tensor<4xf32>) {"]
    streams = []  # (name, size) per kernel output
    for i in range(a.kernels):
        area = max(1.0, mean_area * rng.uniform(0.25, 1.75))
        aspect = math.exp(rng.uniform(-1.1, 1.1))
        h = max(1, min(a.height // 4 or 1, round(math.sqrt(area / aspect))))
        w = max(1, min(a.width // 4 or 1, round(area / h)))
        inputs = []
        if i > 0:
            inputs.append(streams[i - 1])
        if a.skip > 0 and i >= a.skip and i % a.skip == 0:
            inputs.append(streams[i - a.skip])
        if not inputs:
            inputs.append(("%w", None))
        size = rng.choice(sizes)
        last = i == a.kernels - 1
        result = "tensor<4xf32>" if last else f"!wskernel.stream<{size}, f32>"
        in_types = ", ".join("tensor<4xf32>" if s is None else f"!wskernel.stream<{s}, f32>"
                             for _, s in inputs)
        in_names = ", ".join(n for n, _ in inputs)
        cycles = 100 + 2 * sum(s or 0 for _, s in inputs) + 2 * size
        chans = []
        if h > 1:
            chans.append('col = "col_chain"')
        if w > 1:
            chans.append('row = "row_chain"')
        def pes(x0, x1, y0, y1):
            return f"{{when = [#wskernel.pes<x0 = {x0}, x1 = {x1}, y0 = {y0}, y1 = {y1}>]}}"
        body = [f'wskernel.recv "in{j}" to <base = 0> n <base = 4>'
                for j, (_, s) in enumerate(inputs) if s is not None]
        if h > 1:
            body.append(f'wskernel.recv "col" to <base = 0> n <base = 4> {{combine = "add", '
                        f'when = [#wskernel.pes<x0 = 0, x1 = {w - 1}, y0 = 1, y1 = {h - 1}>]}}')
            body.append(f'wskernel.send "col" from <base = 0> n <base = 4> {pes(0, w - 1, 0, h - 2)}')
        if w > 1:
            body.append(f'wskernel.recv "row" to <base = 0> n <base = 4> {pes(1, w - 1, h - 1, h - 1)}')
            body.append(f'wskernel.send "row" from <base = 0> n <base = 4> {pes(0, w - 2, h - 1, h - 1)}')
        if not last:
            body.append(f'wskernel.send "out0" from <base = 0> n <base = 4> {pes(w - 1, w - 1, h - 1, h - 1)}')
        lines.append(f'    %k{i} = wskernel.kernel "k{i}" kind "synthetic" grid [{h}, {w}] sram 64 '
                     f'cycles {cycles}.0 channels {{{", ".join(chans)}}} ({in_names}) : '
                     f'({in_types}) -> {result} {{')
        lines += [f"      {op}" for op in body]
        lines.append("    }")
        streams.append((f"%k{i}", size))
    lines += ["    return", "  }", "}"]
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
