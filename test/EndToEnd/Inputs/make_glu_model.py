"""Writes, into --out, a tiny model of --layers blocks, each a linear with a
residual add (where attention would be) and a gated MLP, act(x Wg + bg) *
(x Wu + bu), then the down projection and a residual add (an embedding
before the blocks, a head after), exported by torch at opset 17:
model.onnx, idx.npy and torch's logits.npy. --act silu is SwiGLU (torch
writes Sigmoid and Mul), gelu and gelu-tanh are GeGLU; --bias gives both
projections biases; --up-first computes up(x) * act(gate(x)), the up
projection first; --ref-storage fp16|bf16 also writes logits_<it>.npy,
torch's logits with the weight matrices and the table rounded to it (as
precision= holds them)."""
import argparse
import copy
import numpy as np
import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--act", choices=["silu", "gelu", "gelu-tanh"], default="silu")
p.add_argument("--bias", action="store_true")
p.add_argument("--up-first", action="store_true")
p.add_argument("--layers", type=int, default=1)
p.add_argument("--embd", type=int, default=32)
p.add_argument("--inter", type=int, default=96)
p.add_argument("--batch", type=int, default=2)
p.add_argument("--seq", type=int, default=8)
p.add_argument("--ref-storage", choices=["fp16", "bf16"], action="append", default=[])
p.add_argument("--out", required=True)
args = p.parse_args()
torch.manual_seed(0)
vocab = 64


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = torch.nn.Linear(args.embd, args.embd, bias=False)
        self.gate = torch.nn.Linear(args.embd, args.inter, bias=args.bias)
        self.up = torch.nn.Linear(args.embd, args.inter, bias=args.bias)
        self.down = torch.nn.Linear(args.inter, args.embd, bias=False)

    def act(self, g):
        if args.act == "silu":
            return F.silu(g)
        return F.gelu(g, approximate="tanh" if args.act == "gelu-tanh" else "none")

    def forward(self, x):
        x = x + self.mix(x)
        if args.up_first:
            u = self.up(x)
            h = u * self.act(self.gate(x))
        else:
            h = self.act(self.gate(x)) * self.up(x)
        return x + self.down(h)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, args.embd)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(args.layers))
        self.head = torch.nn.Linear(args.embd, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Model().eval()
idx = torch.randint(0, vocab, (args.batch, args.seq))
torch.onnx.export(model, (idx,), f"{args.out}/model.onnx", input_names=["idx"],
                  output_names=["logits"], opset_version=17)
np.save(f"{args.out}/idx.npy", idx.numpy())
with torch.no_grad():
    np.save(f"{args.out}/logits.npy", model(idx).numpy())
    for prec in args.ref_storage:
        dtype = torch.float16 if prec == "fp16" else torch.bfloat16
        rounded = copy.deepcopy(model)
        for param in rounded.parameters():
            if param.dim() == 2:
                param.copy_(param.to(dtype).to(torch.float32))
        np.save(f"{args.out}/logits_{prec}.npy", rounded(idx).numpy())
