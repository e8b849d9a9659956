# rope_tables.py GEN.mlir CONFIG.json: compares the rotary tables that
# --gpt-config generated (the first two [1, 1, T, R] constants: cos, sin)
# with transformers' rotary frequencies for the config's rope_scaling,
# computed in torch's fp32 (_compute_default / _compute_linear /
# _compute_llama3_parameters, written out here).
import json
import math
import re
import struct
import sys

import torch

text = open(sys.argv[1]).read()
cfg = json.load(open(sys.argv[2]))
tables = re.findall(r'wsgraph.constant dense<"0x([0-9A-F]+)"> : tensor<1x1x(\d+)x(\d+)xf32>', text)
(cos_hex, t, r), (sin_hex, _, _) = tables[:2]
t, r = int(t), int(r)
got = [torch.tensor(struct.unpack(f"<{t * r}f", bytes.fromhex(h))).view(t, r) for h in (cos_hex, sin_hex)]

dim = cfg["hidden_size"] // cfg["num_attention_heads"]
inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
rs = cfg.get("rope_scaling") or {}
kind = rs.get("rope_type", rs.get("type"))
if kind == "linear":
    inv_freq = inv_freq / rs["factor"]
elif kind == "llama3":
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > old / low, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old / high) * ~(wavelen > old / low)
    inv_freq = torch.where(medium, smoothed, scaled)
angles = torch.outer(torch.arange(t).float(), inv_freq)
angles = torch.cat((angles, angles), dim=-1)
diff = max(float((g - w).abs().max()) for g, w in zip(got, (angles.cos(), angles.sin())))
scaled_any = bool((inv_freq != 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dim, 2).float() / dim))).any())
print(f"tables {'match' if diff < 1e-6 else 'DIFFER'} ({kind or 'unscaled'}, "
      f"{'some' if scaled_any else 'no'} frequencies scaled)")
