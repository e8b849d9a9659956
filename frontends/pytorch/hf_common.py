"""Pieces shared by the HuggingFace-style model re-implementations.

hf_gpt2.py, llama.py and neox.py re-implement, from the published architectures,
the computations of HuggingFace's GPT2LMHeadModel, LlamaForCausalLM and
GPTNeoXForCausalLM (transformers 4.3x, eager attention, no KV cache), written the way
that code writes them, so that their ONNX exports have the op patterns users' exports
of those models have. They are written for export: no dropout, no loss, no cache.

This module holds what they share: the deterministic weight init (like gpt.py's: every
parameter matters numerically), the rotary embedding of Llama and GPT-NeoX, and the
padding-mask helpers.
"""

import math
from dataclasses import asdict

import torch
import torch.nn as nn


class ConfigMixin:
    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    """LlamaRMSNorm: x * rsqrt(mean(x^2) + eps) * weight, computed in float32."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class Conv1D(nn.Module):
    """GPT-2's Conv1D: a linear layer whose weight is stored [in, out], applied by addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class RotaryEmbedding(nn.Module):
    """Rotary position embedding tables (Llama / GPT-NeoX), computed in forward.

    As transformers 4.3x builds its cos/sin cache: inv_freq, the outer product with the
    positions 0..seq_len-1, cat(freqs, freqs), cos and sin. The caller indexes the tables
    by position ids (apply_rotary_pos_emb).
    """

    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.dim = dim
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, seq_len):
        t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def gelu_new(x):
    """HF's gelu_new (GPT-2, GPT-J): the tanh GELU written out."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids, unsqueeze_dim=1):
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)  # [B, 1, T, dim]
    sin = sin[position_ids].unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def additive_padding_mask(attention_mask, batch_size, dtype):
    """GPT-2 / GPT-NeoX: (1 - mask[:, None, None, :]) * finfo.min, added to the scores."""
    attention_mask = attention_mask.view(batch_size, -1)
    attention_mask = attention_mask[:, None, None, :]
    attention_mask = attention_mask.to(dtype=dtype)
    return (1.0 - attention_mask) * torch.finfo(dtype).min


@torch.no_grad()
def init_weights(model, seed, norm_types):
    """Deterministic random init, in module registration order, from its own generator.

    Linear / Conv1D / Embedding weights ~ N(0, 0.02) (a tied weight once), biases
    0.02*randn, norm weights 1 + 0.1*randn and norm biases 0.02*randn: no parameter is
    exactly 0 or 1, so a compiler that drops one fails a numeric comparison.
    """
    gen = torch.Generator().manual_seed(seed)
    done = set()

    def draw(param, scale, offset=0.0):
        if param is not None and id(param) not in done:  # a tied weight is drawn once
            done.add(id(param))
            param.copy_(offset + scale * torch.randn(param.shape, generator=gen))

    for _, mod in model.named_modules():
        if isinstance(mod, (nn.Linear, nn.Embedding, Conv1D)):
            draw(mod.weight, 0.02)
            draw(getattr(mod, "bias", None), 0.02)
        elif isinstance(mod, norm_types):
            draw(mod.weight, 0.1, 1.0)
            draw(getattr(mod, "bias", None), 0.02)
    unset = [n for n, p in model.named_parameters() if id(p) not in done]
    assert not unset, f"parameters left uninitialized: {unset}"
