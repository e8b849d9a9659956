"""Falcon as HuggingFace's FalconForCausalLM computes it (family "falcon", falcon-7b's layout).

A re-implementation from the published architecture of what transformers 4.3x's
modeling_falcon does in eager mode without a KV cache, for the original decoder
(new_decoder_architecture false), multi_query true, parallel_attn true, no ALiBi:

  - one fused query_key_value projection to H + 2 heads of head_dim: the H query
    heads, then one key head and one value head (multi-query), split by _split_heads;
  - q and k turned by rotate_half rotary (FalconRotaryEmbedding: cos/sin of positions
    x inv_freq, cat(freqs, freqs)) on [B * H, T, d] and [B, T, d] layouts;
  - scores q @ k^T over heads with the single key head broadcast, divided by
    sqrt(head_dim), plus the additive finfo.min causal and padding mask, softmax in the
    hidden dtype, times v;
  - parallel block: attention(ln(x)) + mlp(ln(x)) + x with one input_layernorm;
    MLP dense_4h_to_h(gelu(dense_h_to_4h(x))), exact GELU;
  - no biases; final ln_f; lm_head tied to the word embeddings.

Parameter names follow HF's (transformer.h.<i>.self_attention.query_key_value.weight, ...).
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from hf_common import ConfigMixin, RotaryEmbedding, init_weights, rotate_half
from llama import decoder_attention_mask


@dataclass
class FalconConfig(ConfigMixin):
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    hidden_size: int = 32
    vocab_size: int = 64
    max_position_embeddings: int = 32
    layer_norm_epsilon: float = 1e-5
    rope_theta: float = 10000.0


PRESETS = {
    "tiny": FalconConfig(),
    "falcon-7b": FalconConfig(num_hidden_layers=32, num_attention_heads=71, hidden_size=4544,
                              vocab_size=65024, max_position_embeddings=2048),
}


class FalconAttention(nn.Module):
    def __init__(self, cfg: FalconConfig):
        super().__init__()
        self.num_heads = cfg.num_attention_heads
        self.head_dim = cfg.hidden_size // self.num_heads
        self.query_key_value = nn.Linear(cfg.hidden_size, cfg.hidden_size + 2 * self.head_dim, bias=False)
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size, bias=False)
        self.rotary_emb = RotaryEmbedding(self.head_dim, base=cfg.rope_theta)

    def _split_heads(self, fused_qkv):
        batch_size, seq_length, _ = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads + 2, self.head_dim)
        return fused_qkv[..., :-2, :], fused_qkv[..., [-2], :], fused_qkv[..., [-1], :]

    def forward(self, hidden_states, attention_mask, position_ids):
        batch_size, query_length, _ = hidden_states.shape
        query_layer, key_layer, value_layer = self._split_heads(self.query_key_value(hidden_states))
        query_layer = query_layer.transpose(1, 2).reshape(batch_size, self.num_heads, query_length, self.head_dim)
        key_layer = key_layer.transpose(1, 2).reshape(batch_size, 1, query_length, self.head_dim)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size, 1, query_length, self.head_dim)

        cos, sin = self.rotary_emb(value_layer, seq_len=query_length)
        cos = cos[position_ids].unsqueeze(1)
        sin = sin[position_ids].unsqueeze(1)
        query_layer = (query_layer * cos) + (rotate_half(query_layer) * sin)
        key_layer = (key_layer * cos) + (rotate_half(key_layer) * sin)

        attention_scores = query_layer @ key_layer.transpose(-1, -2)
        attention_scores /= math.sqrt(self.head_dim)
        attention_scores = F.softmax(attention_scores + attention_mask, dim=-1, dtype=hidden_states.dtype)
        attn_output = attention_scores @ value_layer
        attn_output = attn_output.view(batch_size, self.num_heads, query_length, self.head_dim)
        attn_output = attn_output.permute(0, 2, 1, 3).reshape(batch_size, query_length,
                                                             self.num_heads * self.head_dim)
        return self.dense(attn_output)


class FalconMLP(nn.Module):
    def __init__(self, cfg: FalconConfig):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(cfg.hidden_size, 4 * cfg.hidden_size, bias=False)
        self.dense_4h_to_h = nn.Linear(4 * cfg.hidden_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(x)))


class FalconDecoderLayer(nn.Module):
    def __init__(self, cfg: FalconConfig):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_epsilon)
        self.self_attention = FalconAttention(cfg)
        self.mlp = FalconMLP(cfg)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        attention_layernorm_out = self.input_layernorm(hidden_states)
        attention_output = self.self_attention(attention_layernorm_out, attention_mask, position_ids)
        mlp_output = self.mlp(attention_layernorm_out)
        return mlp_output + attention_output + residual


class FalconModel(nn.Module):
    def __init__(self, cfg: FalconConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.h = nn.ModuleList([FalconDecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.ln_f = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_epsilon)

    def forward(self, input_ids, attention_mask=None):
        batch_size, seq_length = input_ids.shape
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        hidden_states = self.word_embeddings(input_ids)
        attention_mask = decoder_attention_mask(attention_mask, batch_size, seq_length,
                                                hidden_states.dtype)
        for block in self.h:
            hidden_states = block(hidden_states, attention_mask, position_ids)
        return self.ln_f(hidden_states)


class FalconForCausalLM(nn.Module):
    def __init__(self, cfg: FalconConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.transformer = FalconModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.word_embeddings.weight  # tied
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.transformer(input_ids, attention_mask)).float()


def validate(cfg: FalconConfig):
    if cfg.hidden_size % cfg.num_attention_heads:
        return f"hidden_size {cfg.hidden_size} is not a multiple of num_attention_heads {cfg.num_attention_heads}"
    if (cfg.hidden_size // cfg.num_attention_heads) % 2:
        return "the head dimension must be even (rotary embeddings)"
    return None


def build(cfg: FalconConfig, seed: int = 0) -> FalconForCausalLM:
    torch.manual_seed(seed)
    model = FalconForCausalLM(cfg, seed)
    model.eval()
    return model
