#!/usr/bin/python3
"""Export a GPT to ONNX together with reference data.

--family picks the model:
  gpt2     (default) the nanoGPT-layout GPT of gpt.py; input `idx`
  hf-gpt2  HuggingFace's GPT2LMHeadModel as its code computes it (hf_gpt2.py)
  llama    HuggingFace's LlamaForCausalLM: RMSNorm, rotary, grouped-query attention (llama.py)
  neox     HuggingFace's GPTNeoXForCausalLM (Pythia): fused per-head qkv, partial rotary,
           parallel residual (neox.py)
  opt      HuggingFace's OPTForCausalLM: positions from the mask (offset 2), bmm attention
           clamped by torch.max, ReLU MLP, tied lm_head (opt.py)
  bloom    HuggingFace's BloomForCausalLM: ALiBi by baddbmm, boolean masked_fill mask,
           fused per-head qkv, tied lm_head (bloom.py)
  gptj     HuggingFace's GPTJForCausalLM: interleaved partial rotary (rotate_every_two),
           parallel residual on one layer norm, lm_head with bias (gptj.py)
The HF families take inputs `input_ids` and `attention_mask` (int64 (B,T), 1 = attend,
0 = padding); --pad N masks out N tokens of the second sequence of the example batch
(at its end, or with --pad-left at its start), and torch's reference logits are
computed with that mask.

Writes into --out DIR:
  model.onnx              the graph (input `idx` int64 (B,T), output `logits` float32 (B,T,vocab);
                          HF families: inputs `input_ids`, `attention_mask`)
  model.onnx.data         all initializers, with --external-data one
  <tensor-name>           one file per initializer, with --external-data many
                          (name sanitized to [A-Za-z0-9._-])
  idx.npy, logits.npy     the example input and torch's float32 output for it
                          (HF families: input_ids.npy, attention_mask.npy, logits.npy)
  idx_<sfx>.npy, logits_<sfx>.npy   extra reference pairs (--extra-ref, --dynamic only)
  config.json             every setting, the list of files written, and the reference pairs

The output is deterministic: the same command gives byte-identical files.

Examples:
  /usr/bin/python3 frontends/pytorch/export.py --preset tiny --opset 17 --seq 8 --out /tmp/t
  /usr/bin/python3 frontends/pytorch/export.py --preset tiny --opset 13 --dynamic \\
      --extra-ref 2x8 --out /tmp/d
  /usr/bin/python3 frontends/pytorch/export.py --family llama --opset 17 --batch 2 --seq 8 \\
      --pad 3 --dynamic --out /tmp/l
"""

import argparse
import copy
import io
import json
import math
import os
import re
import sys
import warnings

import numpy as np
import onnx
import onnx.external_data_helper as exdata
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families  # noqa: E402
import gpt  # noqa: E402
import sampling  # noqa: E402

MODEL_FILE = "model.onnx"
ONE_DATA_FILE = "model.onnx.data"
RESERVED = {MODEL_FILE, ONE_DATA_FILE, "config.json"}


def parse_bxt(s):
    m = re.fullmatch(r"(\d+)x(\d+)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"expected BxT (e.g. 2x8), got {s!r}")
    return int(m.group(1)), int(m.group(2))


def parse_lengths(s):
    try:
        lengths = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected P[,P...], got {s!r}")
    if not lengths or min(lengths) < 1:
        raise argparse.ArgumentTypeError(f"prompt lengths must be positive, got {s!r}")
    return lengths


def sample_pick(temperature, seed, top_k=0):
    """wsgraph.sample's pick from a position's logits, as torch tensors."""
    return lambda logits, g: sampling.pick(logits.numpy(), g, temperature, seed, top_k)


def parse_sample(s):
    try:
        fields = s.split(",")
        if len(fields) not in (2, 3):
            raise ValueError
        top_k = int(fields[2]) if len(fields) == 3 else 0
        if top_k < 0:
            raise ValueError
        return float(fields[0]), int(fields[1]), top_k
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected T,SEED[,TOP_K], got {s!r}")


def write_greedy(model, ids, lengths, hf, out, pick=None, name="greedy"):
    """torch's greedy loop on each sequence's prompt (its first P tokens), one
    sequence at a time and without padding, up to ids' T positions; with
    `pick`, its choice of the token after position g = b * T + t instead.

    prompt.npy: the prompts, -1 after each (a generating program's input);
    <name>.npy: prompt then generated tokens [B, T]; <name>_logits.npy: the
    logits of the final sequences [B, T, V] (position t's are the step that
    picked token t + 1: causal, so the same as when it was picked).
    """
    b, t = ids.shape
    if len(lengths) == 1:
        lengths = lengths * b
    if len(lengths) != b or max(lengths) > t:
        sys.exit(f"--greedy: {len(lengths)} prompt lengths for batch {b}, each at most --seq {t}")
    prompt = torch.full((b, t), -1, dtype=torch.int64)
    seqs, logits = [], []
    for i, n in enumerate(lengths):
        prompt[i, :n] = ids[i, :n]
        seq = ids[i:i + 1, :n].clone()
        while seq.shape[1] < t:
            args = (seq, torch.ones_like(seq)) if hf else (seq,)
            step = model(*args)[0, -1].to(torch.float32)
            token = pick(step, i * t + seq.shape[1] - 1) if pick else int(step.argmax())
            seq = torch.cat([seq, torch.tensor([[token]])], dim=1)
        args = (seq, torch.ones_like(seq)) if hf else (seq,)
        logits.append(model(*args).to(torch.float32))
        seqs.append(seq)
    np.save(os.path.join(out, "prompt.npy"), prompt.numpy())
    np.save(os.path.join(out, f"{name}.npy"), torch.cat(seqs).numpy())
    np.save(os.path.join(out, f"{name}_logits.npy"), torch.cat(logits).numpy())
    return ["prompt.npy", f"{name}.npy", f"{name}_logits.npy"]


class WithPast(torch.nn.Module):
    """forward(input_ids, attention_mask, past key, past value, ...) -> (logits,
    present key, present value, ...): HF optimum's decoder-with-past signature."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, *past):
        pairs = [(past[i], past[i + 1]) for i in range(0, len(past), 2)]
        logits, presents = self.model(input_ids, attention_mask, past_key_values=pairs)
        return (logits,) + tuple(t for pair in presents for t in pair)


def with_past(model, cfg, example, past_length=2):
    """The model, example, names and dynamic axes of a decoder-with-past export, traced
    with a past of `past_length` positions (attention_mask covers past and input)."""
    ids, mask = example
    b = ids.shape[0]
    layers, heads, d = model.cache_shape()
    gen = torch.Generator().manual_seed(7)
    past = [torch.randn((b, heads, past_length, d), generator=gen) for _ in range(2 * layers)]
    mask = torch.cat([torch.ones((b, past_length), dtype=mask.dtype), mask], dim=1)
    kinds = [f"{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    inputs = ["input_ids", "attention_mask"] + [f"past_key_values.{k}" for k in kinds]
    outputs = ["logits"] + [f"present.{k}" for k in kinds]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    axes.update({n: {0: "batch_size", 2: "past_sequence_length"} for n in inputs[2:]})
    axes.update({n: {0: "batch_size", 2: "past_sequence_length + sequence_length"}
                 for n in outputs[1:]})
    return WithPast(model), (ids, mask, *past), inputs, outputs, axes


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", choices=["gpt2"] + sorted(families.FAMILIES), default="gpt2",
                   help="gpt2: nanoGPT (gpt.py, default); hf-gpt2, llama, neox, opt, bloom, gptj: "
                        "HuggingFace's models")
    presets = sorted(set(gpt.PRESETS).union(*(f.module.PRESETS for f in families.FAMILIES.values())))
    p.add_argument("--preset", choices=presets, default="tiny",
                   help="gpt2: tiny, gpt2-small; hf-gpt2: tiny, gpt2-small; llama: tiny; "
                        "neox: tiny, pythia-70m; opt: tiny, opt-125m; bloom: tiny, bloom-560m; "
                        "gptj: tiny, gpt-j-6b")
    p.add_argument("--layers", type=int, help="override n_layer")
    p.add_argument("--heads", type=int, help="override n_head")
    p.add_argument("--kv-heads", type=int, help="override num_key_value_heads (llama)")
    p.add_argument("--embd", type=int, help="override n_embd (hidden size)")
    p.add_argument("--inter", type=int, help="override the MLP's intermediate size (HF families)")
    p.add_argument("--rotary-pct", type=float, help="override rotary_pct (neox)")
    p.add_argument("--rotary-dim", type=int, help="override rotary_dim, rotated dims per head (gptj)")
    p.add_argument("--vocab", type=int, help="override vocab_size")
    p.add_argument("--block", type=int, help="override block_size (max positions)")
    p.add_argument("--no-bias", action="store_true", help="no biases in Linear and LayerNorm (gpt2)")
    p.add_argument("--gelu", choices=["erf", "tanh"], default=None,
                   help="GELU exact (erf, default) or as HF's gelu_new written with tanh (gpt2)")
    p.add_argument("--mask", choices=["fill", "where"], default=None,
                   help="causal mask by masked_fill with -inf (default), or HF's Where with "
                        "finfo.min (gpt2)")
    p.add_argument("--pad", type=int, default=0, metavar="N",
                   help="HF families: mask out (attention_mask 0) N tokens of the second sequence "
                        "of every reference batch of 2 or more; at its end (right padding) unless "
                        "--pad-left")
    p.add_argument("--pad-left", action="store_true", help="with --pad: pad at the start (left padding)")
    p.add_argument("--seed", type=int, default=0, help="weight / input seed (default 0)")
    p.add_argument("--weight-scale", type=float, default=1.0, metavar="K",
                   help="multiply every matrix (linears, embeddings) by K after the init: at "
                        "K = 10 a tiny model's greedy loop picks varied tokens instead of "
                        "repeating one (default 1)")
    p.add_argument("--opset", type=int, choices=range(13, 18), default=17, metavar="{13..17}")
    p.add_argument("--dynamic", action="store_true",
                   help="dynamic batch and sequence axes on the inputs and logits (default: static shapes)")
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
    p.add_argument("--prune", type=float, default=0.0, metavar="S",
                   help="prune every linear weight but the LM head and those tied to an embedding by magnitude: the "
                        "fraction S of its elements with the smallest magnitudes become zeros "
                        "(an SPDF-style sparse checkpoint); references and export use the result")
    p.add_argument("--ref-sparsity", type=float, action="append", default=[], metavar="S",
                   help="also write logits_sparse<S>.npy for the main input, from the model with "
                        "its linear weights pruned by magnitude to S, as wsc-compile --sparsity=S "
                        "prunes them (repeatable)")
    p.add_argument("--external-data", choices=["none", "one", "many"], default="none",
                   help="none: weights inside model.onnx; one: all initializers in model.onnx.data; "
                        "many: one file per initializer (every initializer, however small)")
    p.add_argument("--greedy", type=parse_lengths, metavar="P[,P...]",
                   help="also write torch's greedy generation from the example input's first P "
                        "tokens of each sequence up to --seq positions: prompt.npy, greedy.npy, "
                        "greedy_logits.npy")
    p.add_argument("--sample", type=parse_sample, metavar="T,SEED[,TOP_K]",
                   help="with --greedy, also write the loop that samples at temperature T with "
                        "seed SEED (among the TOP_K largest logits; default 0: all) as "
                        "wsc-compile --sampling does (wsgraph.sample): sample.npy, "
                        "sample_logits.npy")
    p.add_argument("--past", action="store_true",
                   help="hf-gpt2, llama: export with past keys and values, as HF optimum's "
                        "decoder-with-past (inputs past_key_values.<i>.key/.value [B, H, P, d], "
                        "outputs present.<i>.key/.value; dynamic batch, sequence and past axes); "
                        "the reference files are those of the model without a past")
    p.add_argument("--no-check", action="store_true", help="skip onnx.checker on the result")
    p.add_argument("--out", required=True, help="output directory")
    a = p.parse_args(argv)

    if a.sample and not a.greedy:
        p.error("--sample needs --greedy's prompt lengths")
    if a.past and a.family not in ("hf-gpt2", "llama"):
        p.error("--past is written for --family hf-gpt2 and llama")
    a.dynamic |= a.past  # its batch, sequence and past axes are dynamic
    if a.family != "gpt2":
        return parse_family_args(p, a)
    for opt in ("kv_heads", "inter", "rotary_pct", "rotary_dim"):
        if getattr(a, opt) is not None:
            p.error(f"--{opt.replace('_', '-')} does not apply to --family gpt2")
    if a.pad or a.pad_left:
        p.error("--pad/--pad-left need an HF family (gpt2 has no attention_mask input)")
    if a.preset not in gpt.PRESETS:
        p.error(f"--family gpt2 has no preset {a.preset!r} (presets: {', '.join(sorted(gpt.PRESETS))})")
    cfg = gpt.GPTConfig(**gpt.PRESETS[a.preset].to_dict())
    for opt, field in [("layers", "n_layer"), ("heads", "n_head"), ("embd", "n_embd"),
                       ("vocab", "vocab_size"), ("block", "block_size")]:
        if getattr(a, opt) is not None:
            setattr(cfg, field, getattr(a, opt))
    if a.no_bias:
        cfg.bias = False
    cfg.gelu, cfg.mask = a.gelu or "erf", a.mask or "fill"
    if cfg.n_embd % cfg.n_head:
        p.error(f"n_embd {cfg.n_embd} is not a multiple of n_head {cfg.n_head}")
    check_shapes(p, a, cfg.block_size)
    a.cfg = cfg
    return a


def parse_family_args(p, a):
    fam = families.FAMILIES[a.family]
    mod = fam.module
    if a.preset not in mod.PRESETS:
        p.error(f"--family {a.family} has no preset {a.preset!r} (presets: {', '.join(sorted(mod.PRESETS))})")
    for opt, given in [("no-bias", a.no_bias), ("gelu", a.gelu), ("mask", a.mask)]:
        if given:
            p.error(f"--{opt} applies to --family gpt2 only (the HF families compute as HF does)")
    if a.opset < fam.min_opset:
        p.error(f"--family {a.family} needs --opset {fam.min_opset} or later")
    cfg = type(mod.PRESETS[a.preset])(**mod.PRESETS[a.preset].to_dict())
    for opt in families.SIZE_OPTIONS:
        val = getattr(a, opt)
        if val is None:
            continue
        if opt not in fam.fields:
            p.error(f"--{opt.replace('_', '-')} does not apply to --family {a.family}")
        setattr(cfg, fam.fields[opt], val)
    err = mod.validate(cfg)
    if err:
        p.error(err)
    check_shapes(p, a, getattr(cfg, fam.max_positions))
    if a.pad < 0:
        p.error("--pad must be >= 0")
    if a.pad_left and not a.pad:
        p.error("--pad-left needs --pad N")
    if a.pad:
        if a.batch < 2:
            p.error("--pad pads the second sequence of the batch: needs --batch 2 or more")
        for b, t in [(a.batch, a.seq)] + a.extra_ref:
            if b >= 2 and a.pad >= t:
                p.error(f"--pad {a.pad} leaves no token of a {b}x{t} batch's second sequence")
    a.cfg = cfg
    return a


def check_shapes(p, a, max_len):
    for b, t in [(a.batch, a.seq)] + a.extra_ref:
        if b < 1 or t < 1 or t > max_len:
            p.error(f"bad input shape {b}x{t} (need B>=1, 1<=T<=block_size={max_len})")
        if not a.dynamic and (b, t) != (a.batch, a.seq):
            p.error(f"--extra-ref {b}x{t} differs from the static input shape; use --dynamic")


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
        if base.startswith(("idx", "logits", "config", "model.onnx", "input_ids", "attention_mask")):
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


def reference_inputs_gpt2(a, cfg):
    """(suffix, batch, seq, {input name: tensor}, extra config.json fields) of each pair."""
    gen = torch.Generator().manual_seed(a.seed + 1)
    refs = [("", a.batch, a.seq)] + [(ref_suffix(b, t, a.seq), b, t) for b, t in a.extra_ref]
    for sfx, b, t in refs:
        idx = torch.randint(0, cfg.vocab_size, (b, t), generator=gen, dtype=torch.int64)
        yield sfx, b, t, {"idx": idx}, {}


def reference_inputs_family(a, cfg):
    """As reference_inputs_gpt2, for the HF families: input_ids and attention_mask.

    The second sequence of a batch of 2 or more has --pad tokens masked out (at its end,
    or at its start with --pad-left); the token ids there stay random.
    """
    gen = torch.Generator().manual_seed(a.seed + 1)
    refs = [("", a.batch, a.seq)] + [(ref_suffix(b, t, a.seq), b, t) for b, t in a.extra_ref]
    for sfx, b, t in refs:
        ids = torch.randint(0, cfg.vocab_size, (b, t), generator=gen, dtype=torch.int64)
        mask = torch.ones((b, t), dtype=torch.int64)
        pad = a.pad if b >= 2 else 0
        if pad:
            if a.pad_left:
                mask[1, :pad] = 0
            else:
                mask[1, t - pad:] = 0
        yield sfx, b, t, {"input_ids": ids, "attention_mask": mask}, {"pad": pad, "pad_left": a.pad_left}


def prune_linear_weights(model, sparsity):
    """Magnitude pruning per matrix, as wsc's wsgraph-sparsify does: in each
    linear weight (nn.Linear, and GPT-2's Conv1D) but the LM head's and those
    tied to an embedding, the floor(sparsity * size) elements of smallest
    magnitude become zero (equal magnitudes: the first in wsc's [in, out]
    layout first, which is Conv1D's and nn.Linear's transposed)."""
    tied = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    with torch.no_grad():
        for name, m in model.named_modules():
            linear = isinstance(m, torch.nn.Linear)
            head = name.split(".")[-1] in ("lm_head", "embed_out")
            if not (linear or type(m).__name__ == "Conv1D") or id(m.weight) in tied or head:
                continue
            w = m.weight.detach()
            w = (w.t() if linear else w).contiguous().numpy().reshape(-1).copy()  # [in, out]
            count = int(math.floor(sparsity * w.size))
            order = np.lexsort((np.arange(w.size), np.abs(w)))
            w[order[:count]] = 0.0
            pruned = torch.from_numpy(w).reshape(m.weight.shape[::-1] if linear else m.weight.shape)
            m.weight.copy_(pruned.t() if linear else pruned)


def main(argv=None):
    a = parse_args(argv)
    cfg = a.cfg
    out = a.out
    os.makedirs(out, exist_ok=True)
    remove_previous(out)

    hf = a.family != "gpt2"
    if hf:
        model = families.FAMILIES[a.family].module.build(cfg, a.seed)
        input_names = ["input_ids", "attention_mask"]
        ref_inputs = reference_inputs_family(a, cfg)
    else:
        model = gpt.build(cfg, a.seed)
        input_names = ["idx"]
        ref_inputs = reference_inputs_gpt2(a, cfg)
    if a.weight_scale != 1.0:
        with torch.no_grad():
            for param in model.parameters():
                if param.dim() == 2:
                    param.mul_(a.weight_scale)
    if a.prune:
        prune_linear_weights(model, a.prune)

    # Reference inputs: one generator, drawn in a fixed order (main pair first).
    ref_files, written = [], []
    with torch.no_grad():
        for sfx, b, t, inputs, extra in ref_inputs:
            args = tuple(inputs[n] for n in input_names)
            logits = model(*args).to(torch.float32)
            stem = f"_{sfx}" if sfx else ""
            ref = {}
            for name, tensor in inputs.items():
                np.save(os.path.join(out, f"{name}{stem}.npy"), tensor.numpy())
                ref[name] = f"{name}{stem}.npy"
                written.append(f"{name}{stem}.npy")
            np.save(os.path.join(out, f"logits{stem}.npy"), logits.numpy())
            ref.update({"logits": f"logits{stem}.npy", "batch": b, "seq": t}, **extra)
            ref_files.append(ref)
            written.append(f"logits{stem}.npy")
            if not sfx:
                example = args
                if a.greedy:
                    written += write_greedy(model, args[0], a.greedy, hf, out)
                if a.greedy and a.sample:
                    written += write_greedy(model, args[0], a.greedy, hf, out,
                                            sample_pick(*a.sample), "sample")[1:]
            del logits
        for prec in a.ref_storage:
            rounded = copy.deepcopy(model)
            dtype = torch.float16 if prec == "fp16" else torch.bfloat16
            for param in rounded.parameters():
                if param.dim() == 2:
                    param.copy_(param.to(dtype).to(torch.float32))
            logits = rounded(*example).to(torch.float32)
            np.save(os.path.join(out, f"logits_{prec}.npy"), logits.numpy())
            written.append(f"logits_{prec}.npy")
            del rounded, logits
        for sparsity in a.ref_sparsity:
            pruned = copy.deepcopy(model)
            prune_linear_weights(pruned, sparsity)
            logits = pruned(*example).to(torch.float32)
            name = f"logits_sparse{sparsity:g}.npy"
            np.save(os.path.join(out, name), logits.numpy())
            written.append(name)
            del pruned, logits

    dynamic_axes = None
    if a.dynamic:
        dynamic_axes = {n: {0: "batch", 1: "seq"} for n in input_names + ["logits"]}
    output_names = ["logits"]
    if a.past:
        model, example, input_names, output_names, dynamic_axes = with_past(model, cfg, example)
    model_path = os.path.join(out, MODEL_FILE)
    export_kwargs = dict(
        export_params=True,
        opset_version=a.opset,
        do_constant_folding=True,
        input_names=input_names,
        output_names=output_names,
        dynamic_axes=dynamic_axes,
        training=torch.onnx.TrainingMode.EVAL,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
        if a.external_data == "none":
            # Straight to the file: no Python-side copy of the (possibly large) proto.
            torch.onnx.export(model, example, model_path, **export_kwargs)
            written.append(MODEL_FILE)
            del model
        else:
            buf = io.BytesIO()
            torch.onnx.export(model, example, buf, **export_kwargs)
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
        "weight_scale": a.weight_scale,
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
    if hf:
        # The HF families' own fields; the nanoGPT family's config.json stays as it was.
        del conf["input"]
        conf.update({
            "family": a.family,
            "inputs": [{"name": n, "dtype": "float32" if n.startswith("past") else "int64"}
                       for n in input_names],
            "pad": a.pad,
            "pad_left": a.pad_left,
        })
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(out, n)) for n in conf["files"])
    fam = f"{a.family} " if hf else ""
    print(f"exported {out}: {fam}opset {a.opset} {'dynamic' if a.dynamic else 'static'} "
          f"{len(conf['files'])} files, {size} bytes")


if __name__ == "__main__":
    main()
