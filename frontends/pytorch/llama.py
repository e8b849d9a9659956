"""Llama as HuggingFace's LlamaForCausalLM computes it (family "llama").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_llama does in eager mode without a KV cache:

  - RMSNorm in float32: x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight;
  - rotary embeddings: cos/sin tables computed in forward (inv_freq, outer product with
    the positions, cat(freqs, freqs), cos, sin), indexed by position ids
    (cos[position_ids].unsqueeze(1)), applied with rotate_half;
  - separate q_proj / k_proj / v_proj / o_proj without bias;
  - grouped-query attention: num_key_value_heads < num_attention_heads, keys and values
    repeated by repeat_kv (expand of a new axis, then reshape);
  - causal mask torch.full((T, T), finfo.min).triu(1), plus the padding mask
    (1 - mask) masked_fill'ed with finfo.min, both added to the scores;
  - softmax in float32; SwiGLU MLP down(silu(gate(x)) * up(x));
  - final norm and an untied lm_head; no biases (attention_bias: on q, k, v and o).

Parameter names follow HF's (model.layers.<i>.self_attn.q_proj.weight, ...).
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from hf_common import ConfigMixin, RMSNorm, RotaryEmbedding, apply_rotary_pos_emb, init_weights


@dataclass
class LlamaConfig(ConfigMixin):
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    hidden_size: int = 32
    intermediate_size: int = 64
    vocab_size: int = 64
    max_position_embeddings: int = 32
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    attention_bias: bool = False  # HF's: biases on q, k, v and o


PRESETS = {
    "tiny": LlamaConfig(),
}


def repeat_kv(hidden_states, n_rep):
    """[B, kv_heads, T, D] -> [B, kv_heads * n_rep, T, D], each kv head n_rep times."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention(query_states, key_states, value_states, attention_mask, n_rep, width):
    """Llama's eager attention (Qwen2, Gemma and Phi write it alike): keys and values
    repeated for the query heads, q @ k^T / sqrt(d) plus the additive mask, softmax in
    float32, times v; the heads merged back into [B, T, width] (-1 as Gemma writes it,
    which a static export traces as a shape computation)."""
    bsz, _, q_len, head_dim = query_states.shape
    key_states = repeat_kv(key_states, n_rep)
    value_states = repeat_kv(value_states, n_rep)
    attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(head_dim)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output.reshape(bsz, q_len, width)


class LlamaAttention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.hidden_size = cfg.hidden_size
        self.num_heads = cfg.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_key_value_heads = cfg.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        # Qwen2 biases q, k and v alone (qwen2.py).
        qkv_bias = cfg.attention_bias or getattr(cfg, "qkv_bias", False)
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=qkv_bias)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=qkv_bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=cfg.attention_bias)
        self.rotary_emb = RotaryEmbedding(self.head_dim, base=cfg.rope_theta)

    def forward(self, hidden_states, attention_mask, position_ids, past_key_value=None):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        past_length = 0 if past_key_value is None else past_key_value[0].shape[-2]
        kv_seq_len = key_states.shape[-2] + past_length
        cos, sin = self.rotary_emb(value_states, seq_len=kv_seq_len)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, position_ids)
        if past_key_value is not None:  # HF's cache: the past (rotated) keys and values first
            key_states = torch.cat([past_key_value[0], key_states], dim=2)
            value_states = torch.cat([past_key_value[1], value_states], dim=2)
        present = (key_states, value_states)

        attn_output = eager_attention(query_states, key_states, value_states, attention_mask,
                                      self.num_key_value_groups, self.hidden_size)
        return self.o_proj(attn_output), present


class LlamaMLP(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.self_attn = LlamaAttention(cfg)
        self.mlp = LlamaMLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)

    def forward(self, hidden_states, attention_mask, position_ids, past_key_value=None):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, present = self.self_attn(hidden_states, attention_mask, position_ids,
                                                past_key_value)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states, present


def decoder_attention_mask(attention_mask, batch_size, seq_length, dtype, past_length=0):
    """The 4-D additive mask [B, 1, T, P + T]: causal triu(1) of finfo.min, plus padding.

    As transformers 4.3x's _prepare_decoder_attention_mask: the expanded padding mask
    (1 - mask) with its nonzeros set to finfo.min, plus the causal mask (where both mask
    a score the sum is -inf; softmax gives it 0 all the same), the P past keys visible
    to every query.
    """
    min_dtype = torch.finfo(dtype).min
    causal_mask = torch.full((seq_length, seq_length), min_dtype, dtype=dtype).triu(1)
    if past_length > 0:
        causal_mask = torch.cat([torch.zeros(seq_length, past_length, dtype=dtype), causal_mask], dim=-1)
    total = past_length + seq_length
    causal_mask = causal_mask[None, None, :, :].expand(batch_size, 1, seq_length, total)
    if attention_mask is None:
        return causal_mask
    bsz, src_len = attention_mask.size()
    expanded_mask = attention_mask[:, None, None, :].expand(bsz, 1, seq_length, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    padding_mask = inverted_mask.masked_fill(inverted_mask.to(torch.bool), min_dtype)
    return padding_mask + causal_mask


class LlamaModel(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)

    def forward(self, input_ids, attention_mask=None, past_key_values=None):
        batch_size, seq_length = input_ids.shape
        past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        position_ids = torch.arange(past_length, past_length + seq_length, dtype=torch.long,
                                    device=input_ids.device)
        position_ids = position_ids.unsqueeze(0)
        inputs_embeds = self.embed_tokens(input_ids)
        attention_mask = decoder_attention_mask(attention_mask, batch_size, seq_length,
                                                inputs_embeds.dtype, past_length)
        hidden_states = inputs_embeds
        presents = []
        for i, layer in enumerate(self.layers):
            past = None if past_key_values is None else past_key_values[i]
            hidden_states, present = layer(hidden_states, attention_mask, position_ids, past)
            presents.append(present)
        return self.norm(hidden_states), presents


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg: LlamaConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.model = LlamaModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)  # untied
        init_weights(self, seed, (RMSNorm,))

    def forward(self, input_ids, attention_mask=None, past_key_values=None):
        """The logits; with past_key_values (one (key, value) [B, kv_heads, P, d] pair
        per layer, keys rotated) also each layer's present (key, value)."""
        hidden_states, presents = self.model(input_ids, attention_mask, past_key_values)
        logits = self.lm_head(hidden_states).float()
        return logits if past_key_values is None else (logits, presents)

    def cache_shape(self):
        """(layers, kv heads, head dim) of the cache."""
        c = self.config
        return c.num_hidden_layers, c.num_key_value_heads, c.hidden_size // c.num_attention_heads


def validate(cfg: LlamaConfig):
    if cfg.hidden_size % cfg.num_attention_heads:
        return f"hidden_size {cfg.hidden_size} is not a multiple of num_attention_heads {cfg.num_attention_heads}"
    if cfg.num_attention_heads % cfg.num_key_value_heads:
        return (f"num_attention_heads {cfg.num_attention_heads} is not a multiple of "
                f"num_key_value_heads {cfg.num_key_value_heads}")
    if (cfg.hidden_size // cfg.num_attention_heads) % 2:
        return "the head dimension must be even (rotary embeddings)"
    return None


def build(cfg: LlamaConfig, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg, seed)
    model.eval()
    return model
