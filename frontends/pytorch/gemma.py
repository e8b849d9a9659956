"""Gemma as HuggingFace's GemmaForCausalLM computes it (family "gemma").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_gemma does in eager mode without a KV cache:

  - the token embeddings times sqrt(hidden_size), as a tensor of the hidden dtype;
  - GemmaRMSNorm: x * rsqrt(mean(x^2) + eps) in float32, times (1 + weight);
  - attention as Llama's (rotate_half rotary by position ids, grouped-query or
    multi-query attention with repeat_kv, the additive finfo.min causal and padding
    masks, softmax in float32) with head_dim a config field of its own, so that
    heads * head_dim need not be hidden_size; no biases;
  - MLP down(gelu_tanh(gate(x)) * up(x)) (gelu_pytorch_tanh);
  - final norm and an lm_head tied to the embeddings.

Parameter names follow HF's (model.layers.<i>.self_attn.q_proj.weight, ...).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from hf_common import ConfigMixin, RotaryEmbedding, apply_rotary_pos_emb, init_weights
from llama import decoder_attention_mask, eager_attention


@dataclass
class GemmaConfig(ConfigMixin):
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 1
    head_dim: int = 16
    hidden_size: int = 32
    intermediate_size: int = 96
    vocab_size: int = 64
    max_position_embeddings: int = 32
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0


PRESETS = {
    "tiny": GemmaConfig(),
    "gemma-2b": GemmaConfig(num_hidden_layers=18, num_attention_heads=8, num_key_value_heads=1,
                            head_dim=256, hidden_size=2048, intermediate_size=16384,
                            vocab_size=256000, max_position_embeddings=8192),
}


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


class GemmaAttention(nn.Module):
    def __init__(self, cfg: GemmaConfig):
        super().__init__()
        self.num_heads = cfg.num_attention_heads
        self.head_dim = cfg.head_dim
        self.num_key_value_heads = cfg.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.q_proj = nn.Linear(cfg.hidden_size, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, cfg.hidden_size, bias=False)
        self.rotary_emb = RotaryEmbedding(self.head_dim, base=cfg.rope_theta)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary_emb(value_states, seq_len=key_states.shape[-2])
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, position_ids)
        return self.o_proj(eager_attention(query_states, key_states, value_states, attention_mask,
                                           self.num_key_value_groups, -1))


class GemmaMLP(nn.Module):
    def __init__(self, cfg: GemmaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))


class GemmaDecoderLayer(nn.Module):
    def __init__(self, cfg: GemmaConfig):
        super().__init__()
        self.self_attn = GemmaAttention(cfg)
        self.mlp = GemmaMLP(cfg)
        self.input_layernorm = GemmaRMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.post_attention_layernorm = GemmaRMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), attention_mask, position_ids)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))
        return residual + hidden_states


class GemmaModel(nn.Module):
    def __init__(self, cfg: GemmaConfig):
        super().__init__()
        self.config = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([GemmaDecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = GemmaRMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)

    def forward(self, input_ids, attention_mask=None):
        batch_size, seq_length = input_ids.shape
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        inputs_embeds = self.embed_tokens(input_ids)
        attention_mask = decoder_attention_mask(attention_mask, batch_size, seq_length,
                                                inputs_embeds.dtype)
        normalizer = torch.tensor(self.config.hidden_size ** 0.5, dtype=inputs_embeds.dtype)
        hidden_states = inputs_embeds * normalizer
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask, position_ids)
        return self.norm(hidden_states)


class GemmaForCausalLM(nn.Module):
    def __init__(self, cfg: GemmaConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.model = GemmaModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tied
        init_weights(self, seed, (GemmaRMSNorm,))

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.model(input_ids, attention_mask)).float()


def validate(cfg: GemmaConfig):
    if cfg.num_attention_heads % cfg.num_key_value_heads:
        return (f"num_attention_heads {cfg.num_attention_heads} is not a multiple of "
                f"num_key_value_heads {cfg.num_key_value_heads}")
    if cfg.head_dim % 2:
        return "head_dim must be even (rotary embeddings)"
    return None


def build(cfg: GemmaConfig, seed: int = 0) -> GemmaForCausalLM:
    torch.manual_seed(seed)
    model = GemmaForCausalLM(cfg, seed)
    model.eval()
    return model
