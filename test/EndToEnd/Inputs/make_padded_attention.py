"""Writes, into argv[1], a one-block GPT whose attention masks the future with
-inf (masked_fill) and adds a key padding mask (1 - attention_mask) * finfo.min
to its scores, exported with inputs input_ids and attention_mask; and torch's
logits for a batch of two sequences of 8 tokens, the second's first 3 (with
--left) or last 3 tokens padded out."""
import math
import sys

import numpy as np
import torch
import torch.nn as nn

out, left = sys.argv[1], "--left" in sys.argv
torch.manual_seed(0)
V, C, H, T = 64, 32, 2, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.qkv, self.proj, self.head = nn.Linear(C, 3 * C), nn.Linear(C, C), nn.Linear(C, V)
        self.register_buffer("causal", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, input_ids, attention_mask):
        b, t = input_ids.shape
        x = self.wte(input_ids) + self.wpe(torch.arange(t))
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (z.view(b, t, H, C // H).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
        att = att.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        pad = (1.0 - attention_mask[:, None, None, :].to(att.dtype)) * torch.finfo(att.dtype).min
        att = torch.softmax(att + pad, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, C)
        return self.head(x + self.proj(y))


model = Block().eval()
ids = torch.randint(0, V, (2, T))
mask = torch.ones(2, T, dtype=torch.int64)
if left:
    mask[1, :3] = 0
else:
    mask[1, -3:] = 0
torch.onnx.export(model, (ids, mask), f"{out}/model.onnx", input_names=["input_ids", "attention_mask"],
                  output_names=["logits"], opset_version=17)
np.save(f"{out}/input_ids.npy", ids.numpy())
np.save(f"{out}/attention_mask.npy", mask.numpy())
with torch.no_grad():
    np.save(f"{out}/logits.npy", model(ids, mask).numpy())
