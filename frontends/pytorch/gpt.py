"""A small GPT-2 style decoder-only transformer in PyTorch (nanoGPT layout).

This model is the source of the ONNX test inputs and benchmarks of wsc. It is
written for export, not training: there is no dropout and no loss.

Layout (parameter names follow the usual GPT-2 / nanoGPT naming):

  transformer.wte        token embedding      (vocab_size, n_embd)
  transformer.wpe        position embedding   (block_size, n_embd)
  transformer.h.<i>      n_layer pre-LayerNorm blocks:
      ln_1, attn.c_attn (n_embd -> 3*n_embd), attn.c_proj,
      ln_2, mlp.c_fc (n_embd -> 4*n_embd), exact GELU, mlp.c_proj
      attn.bias          causal-mask buffer (1, 1, block_size, block_size)
  transformer.ln_f       final LayerNorm
  lm_head                Linear(n_embd -> vocab_size, no bias), weight tied to wte

Weights are random but deterministic from a seed (see `init_weights`). They are
chosen so that every parameter matters numerically: LayerNorm gammas are
1 + 0.1*randn rather than exactly 1, and biases are 0.02*randn rather than 0, so
a compiler that silently drops a gamma or a bias fails a numeric comparison.
"""

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    vocab_size: int = 64
    block_size: int = 16
    bias: bool = True  # biases in every Linear and LayerNorm (lm_head never has one)
    # How the model writes two forms that exporters differ in: GELU exact ("erf") or
    # as HF's gelu_new ("tanh"); the causal mask as masked_fill with -inf ("fill") or
    # as HF's Where with finfo(float32).min ("where").
    gelu: str = "erf"
    mask: str = "fill"

    def to_dict(self):
        return asdict(self)


PRESETS = {
    "tiny": GPTConfig(n_layer=2, n_head=2, n_embd=32, vocab_size=64, block_size=16),
    "gpt2-small": GPTConfig(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, block_size=1024),
}


class LayerNorm(nn.Module):
    """LayerNorm over the last dimension whose bias can be switched off.

    (torch 1.13's nn.LayerNorm has no bias=False option.)
    """

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        self.n_head = cfg.n_head
        self.n_embd = cfg.n_embd
        self.mask = cfg.mask
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        blk = cfg.block_size
        self.register_buffer("bias", torch.tril(torch.ones(blk, blk)).view(1, 1, blk, blk))

    def forward(self, x):
        B, T, C = x.size()
        hd = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)  # (B, nh, T, hd)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # (B, nh, T, T)
        causal = self.bias[:, :, :T, :T]
        if self.mask == "where":
            att = torch.where(causal.bool(), att, torch.tensor(torch.finfo(att.dtype).min))
        else:
            att = att.masked_fill(causal == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, hd)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.tanh_gelu = cfg.gelu == "tanh"
        self.gelu = nn.GELU()  # exact (erf) GELU, approximate='none'
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x):
        h = self.c_fc(x)
        if self.tanh_gelu:  # gelu_new, written out as HF writes it
            h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        else:
            h = self.gelu(h)
        return self.c_proj(h)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = LayerNorm(cfg.n_embd, cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = LayerNorm(cfg.n_embd, cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
            wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
            ln_f=LayerNorm(cfg.n_embd, cfg.bias),
        ))
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # weight tying
        self.init_weights(seed)

    @torch.no_grad()
    def init_weights(self, seed: int):
        """Deterministic random init; independent of torch's default init order."""
        gen = torch.Generator().manual_seed(seed)
        seen = set()
        for name, mod in self.named_modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                if id(mod.weight) not in seen:  # the tied lm_head weight is wte's
                    seen.add(id(mod.weight))
                    mod.weight.normal_(0.0, 0.02, generator=gen)
                if getattr(mod, "bias", None) is not None:
                    mod.bias.copy_(0.02 * torch.randn(mod.bias.shape, generator=gen))
            elif isinstance(mod, LayerNorm):
                mod.weight.copy_(1.0 + 0.1 * torch.randn(mod.weight.shape, generator=gen))
                if mod.bias is not None:
                    mod.bias.copy_(0.02 * torch.randn(mod.bias.shape, generator=gen))

    def forward(self, idx):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)  # (B, T, C)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        return self.lm_head(x)  # (B, T, vocab)


def build(cfg: GPTConfig, seed: int = 0) -> GPT:
    # torch.manual_seed too, so nothing in construction depends on global RNG state
    # left over from elsewhere (init_weights uses its own generator regardless).
    torch.manual_seed(seed)
    model = GPT(cfg, seed)
    model.eval()
    return model
