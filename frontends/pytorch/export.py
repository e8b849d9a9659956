#!/usr/bin/python3
"""Export the GPT of gpt.py to ONNX together with reference data.

Writes into --out DIR:
  model.onnx              the graph (input `idx` int64 (B,T), output `logits` float32 (B,T,vocab))
  model.onnx.data         all initializers, with --external-data one
  <tensor-name>           one file per initializer, with --external-data many
                          (name sanitized to [A-Za-z0-9._-])
  idx.npy, logits.npy     the example input and torch's float32 output for it
  idx_<sfx>.npy, logits_<sfx>.npy   extra reference pairs (--extra-ref, --dynamic only)
  config.json             every setting, the list of files written, and the reference pairs

The output is deterministic: the same command gives byte-identical files.

Examples:
  /usr/bin/python3 frontends/pytorch/export.py --preset tiny --opset 17 --seq 8 --out /tmp/t
  /usr/bin/python3 frontends/pytorch/export.py --preset tiny --opset 13 --dynamic \\
      --extra-ref 2x8 --out /tmp/d
"""

import argparse
import copy
import io
import json
import os
import re
import sys
import warnings

import numpy as np
import onnx
import onnx.external_data_helper as exdata
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402

MODEL_FILE = "model.onnx"
ONE_DATA_FILE = "model.onnx.data"
RESERVED = {MODEL_FILE, ONE_DATA_FILE, "config.json"}


def parse_bxt(s):
    m = re.fullmatch(r"(\d+)x(\d+)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"expected BxT (e.g. 2x8), got {s!r}")
    return int(m.group(1)), int(m.group(2))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(gpt.PRESETS), default="tiny")
    p.add_argument("--layers", type=int, help="override n_layer")
    p.add_argument("--heads", type=int, help="override n_head")
    p.add_argument("--embd", type=int, help="override n_embd")
    p.add_argument("--vocab", type=int, help="override vocab_size")
    p.add_argument("--block", type=int, help="override block_size")
    p.add_argument("--no-bias", action="store_true", help="no biases in Linear and LayerNorm")
    p.add_argument("--gelu", choices=["erf", "tanh"], default="erf",
                   help="GELU exact (erf) or as HF's gelu_new written with tanh")
    p.add_argument("--mask", choices=["fill", "where"], default="fill",
                   help="causal mask by masked_fill with -inf, or HF's Where with finfo.min")
    p.add_argument("--seed", type=int, default=0, help="weight / input seed (default 0)")
    p.add_argument("--opset", type=int, choices=range(13, 18), default=17, metavar="{13..17}")
    p.add_argument("--dynamic", action="store_true",
                   help="dynamic batch and sequence axes on idx and logits (default: static shapes)")
    p.add_argument("--batch", type=int, default=1, help="batch of the example input (default 1)")
    p.add_argument("--seq", type=int, default=8, help="sequence length of the example input (default 8)")
    p.add_argument("--extra-ref", type=parse_bxt, action="append", default=[], metavar="BxT",
                   help="also write idx_<sfx>.npy/logits_<sfx>.npy for a BxT input (repeatable; "
                        "<sfx> is b<B> if T equals --seq, else b<B>_t<T>); needs --dynamic "
                        "unless BxT equals --batch x --seq")
    p.add_argument("--ref-storage", choices=["fp16", "bf16"], action="append", default=[],
                   help="also write logits_<fp16|bf16>.npy for the main input, computed in float32 "
                        "with every matrix and table (2-D weight) rounded to that storage precision, "
                        "as wsc holds them with precision=fp16|bf16 (repeatable)")
    p.add_argument("--external-data", choices=["none", "one", "many"], default="none",
                   help="none: weights inside model.onnx; one: all initializers in model.onnx.data; "
                        "many: one file per initializer (every initializer, however small)")
    p.add_argument("--no-check", action="store_true", help="skip onnx.checker on the result")
    p.add_argument("--out", required=True, help="output directory")
    a = p.parse_args(argv)

    cfg = gpt.GPTConfig(**gpt.PRESETS[a.preset].to_dict())
    for opt, field in [("layers", "n_layer"), ("heads", "n_head"), ("embd", "n_embd"),
                       ("vocab", "vocab_size"), ("block", "block_size")]:
        if getattr(a, opt) is not None:
            setattr(cfg, field, getattr(a, opt))
    if a.no_bias:
        cfg.bias = False
    cfg.gelu, cfg.mask = a.gelu, a.mask
    if cfg.n_embd % cfg.n_head:
        p.error(f"n_embd {cfg.n_embd} is not a multiple of n_head {cfg.n_head}")
    for b, t in [(a.batch, a.seq)] + a.extra_ref:
        if b < 1 or t < 1 or t > cfg.block_size:
            p.error(f"bad input shape {b}x{t} (need B>=1, 1<=T<=block_size={cfg.block_size})")
        if not a.dynamic and (b, t) != (a.batch, a.seq):
            p.error(f"--extra-ref {b}x{t} differs from the static input shape; use --dynamic")
    a.cfg = cfg
    return a


def ref_suffix(b, t, seq):
    return f"b{b}" if t == seq else f"b{b}_t{t}"


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def externalize_many(model):
    """Give every initializer its own data file, named after the tensor.

    onnx's own all_tensors_to_one_file=False falls back to a random uuid file name for
    tensor names that are not valid file names (e.g. "onnx::MatMul_123"), which would make
    the export non-deterministic, so the locations are chosen here.
    """
    used = set(RESERVED)
    names = []
    for t in model.graph.initializer:
        if not t.HasField("raw_data"):
            raise RuntimeError(f"initializer {t.name} has no raw_data")
        base = sanitize(t.name) or "tensor"
        if base.startswith(("idx", "logits", "config", "model.onnx")):
            base = "w_" + base  # keep clear of the reference / model file names
        loc, n = base, 1
        while loc in used:
            loc, n = f"{base}.{n}", n + 1
        used.add(loc)
        exdata.set_external_data(t, loc)
        names.append(loc)
    return names


def args_without_out(argv):
    """The command-line arguments minus --out (so config.json does not depend on the path)."""
    res, skip = [], False
    for x in argv:
        if skip:
            skip = False
        elif x == "--out":
            skip = True
        elif not x.startswith("--out="):
            res.append(x)
    return res


def remove_previous(out):
    """Remove the files of a previous export into `out` (external data files are appended to)."""
    old = set(RESERVED)
    cfg_path = os.path.join(out, "config.json")
    if os.path.exists(cfg_path):
        try:
            with open(cfg_path) as f:
                old.update(json.load(f).get("files", []))
        except (ValueError, OSError):
            pass
    for name in old:
        path = os.path.join(out, name)
        if os.path.dirname(os.path.normpath(name)) == "" and os.path.isfile(path):
            os.remove(path)


def main(argv=None):
    a = parse_args(argv)
    cfg = a.cfg
    out = a.out
    os.makedirs(out, exist_ok=True)
    remove_previous(out)

    model = gpt.build(cfg, a.seed)

    # Reference inputs: one generator, drawn in a fixed order (main pair first).
    gen = torch.Generator().manual_seed(a.seed + 1)
    refs = [("", a.batch, a.seq)] + [(ref_suffix(b, t, a.seq), b, t) for b, t in a.extra_ref]
    ref_files, written = [], []
    with torch.no_grad():
        for sfx, b, t in refs:
            idx = torch.randint(0, cfg.vocab_size, (b, t), generator=gen, dtype=torch.int64)
            logits = model(idx).to(torch.float32)
            stem = f"_{sfx}" if sfx else ""
            np.save(os.path.join(out, f"idx{stem}.npy"), idx.numpy())
            np.save(os.path.join(out, f"logits{stem}.npy"), logits.numpy())
            ref_files.append({"idx": f"idx{stem}.npy", "logits": f"logits{stem}.npy",
                              "batch": b, "seq": t})
            written += [f"idx{stem}.npy", f"logits{stem}.npy"]
            if not sfx:
                example = idx
            del logits
        for prec in a.ref_storage:
            rounded = copy.deepcopy(model)
            dtype = torch.float16 if prec == "fp16" else torch.bfloat16
            for param in rounded.parameters():
                if param.dim() == 2:
                    param.copy_(param.to(dtype).to(torch.float32))
            logits = rounded(example).to(torch.float32)
            np.save(os.path.join(out, f"logits_{prec}.npy"), logits.numpy())
            written.append(f"logits_{prec}.npy")
            del rounded, logits

    dynamic_axes = None
    if a.dynamic:
        dynamic_axes = {"idx": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    model_path = os.path.join(out, MODEL_FILE)
    export_kwargs = dict(
        export_params=True,
        opset_version=a.opset,
        do_constant_folding=True,
        input_names=["idx"],
        output_names=["logits"],
        dynamic_axes=dynamic_axes,
        training=torch.onnx.TrainingMode.EVAL,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
        if a.external_data == "none":
            # Straight to the file: no Python-side copy of the (possibly large) proto.
            torch.onnx.export(model, (example,), model_path, **export_kwargs)
            written.append(MODEL_FILE)
            del model
        else:
            buf = io.BytesIO()
            torch.onnx.export(model, (example,), buf, **export_kwargs)
            del model
            proto = onnx.load_from_string(buf.getvalue())
            del buf
            if a.external_data == "one":
                onnx.save_model(proto, model_path, save_as_external_data=True,
                                all_tensors_to_one_file=True, location=ONE_DATA_FILE,
                                size_threshold=0, convert_attribute=False)
                written += [MODEL_FILE, ONE_DATA_FILE]
            else:
                written += externalize_many(proto)
                # Data files were set above; save_model writes them (basepath = out).
                onnx.save_model(proto, model_path)
                written.append(MODEL_FILE)
            del proto

    if not a.no_check:
        onnx.checker.check_model(model_path)  # path form: handles external data and >2GB

    conf = {
        "preset": a.preset,
        "model": cfg.to_dict(),
        "seed": a.seed,
        "opset": a.opset,
        "dynamic": a.dynamic,
        "dynamic_axes": dynamic_axes,
        "batch": a.batch,
        "seq": a.seq,
        "external_data": a.external_data,
        "do_constant_folding": True,
        "input": {"name": "idx", "dtype": "int64"},
        "output": {"name": "logits", "dtype": "float32"},
        "references": ref_files,
        "torch_version": torch.__version__,
        "onnx_version": onnx.__version__,
        "args": args_without_out(sys.argv[1:] if argv is None else argv),
        "files": sorted(set(written)) + ["config.json"],
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(out, n)) for n in conf["files"])
    print(f"exported {out}: opset {a.opset} {'dynamic' if a.dynamic else 'static'} "
          f"{len(conf['files'])} files, {size} bytes")


if __name__ == "__main__":
    main()
