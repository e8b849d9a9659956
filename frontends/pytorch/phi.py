"""Phi as HuggingFace's PhiForCausalLM computes it (family "phi", phi-2's layout).

A re-implementation from the published architecture of what transformers 4.3x's
modeling_phi does in eager mode without a KV cache:

  - one LayerNorm (input_layernorm) feeds both branches of a parallel block:
    attention(ln(x)) + mlp(ln(x)) + x;
  - q_proj, k_proj, v_proj and dense, all with biases; grouped-query attention when
    num_key_value_heads < num_attention_heads (repeat_kv);
  - partial rotary embeddings: the first int(head_dim * partial_rotary_factor)
    dimensions of q and k turned by rotate_half with Llama's tables (indexed by
    position ids), the rest passed through and concatenated back;
  - scores q @ k^T (in float32) divided by sqrt(head_dim), plus the additive finfo.min
    causal and padding mask (llama.decoder_attention_mask); softmax in float32
    (llama.eager_attention);
  - MLP fc2(gelu_new(fc1(x)));
  - final_layernorm and an lm_head with a bias.

Parameter names follow HF's (model.layers.<i>.self_attn.q_proj.weight, ...).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn

from hf_common import ConfigMixin, RotaryEmbedding, apply_rotary_pos_emb, gelu_new, init_weights
from llama import decoder_attention_mask, eager_attention


@dataclass
class PhiConfig(ConfigMixin):
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 4
    hidden_size: int = 32
    intermediate_size: int = 128
    vocab_size: int = 64
    max_position_embeddings: int = 32
    partial_rotary_factor: float = 0.5
    layer_norm_eps: float = 1e-5
    rope_theta: float = 10000.0


PRESETS = {
    "tiny": PhiConfig(),
    "phi-2": PhiConfig(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                       hidden_size=2560, intermediate_size=10240, vocab_size=51200,
                       max_position_embeddings=2048, partial_rotary_factor=0.4),
}


class PhiAttention(nn.Module):
    def __init__(self, cfg: PhiConfig):
        super().__init__()
        self.num_heads = cfg.num_attention_heads
        self.head_dim = cfg.hidden_size // self.num_heads
        self.num_key_value_heads = cfg.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.q_proj = nn.Linear(cfg.hidden_size, self.num_heads * self.head_dim, bias=True)
        self.k_proj = nn.Linear(cfg.hidden_size, self.num_key_value_heads * self.head_dim, bias=True)
        self.v_proj = nn.Linear(cfg.hidden_size, self.num_key_value_heads * self.head_dim, bias=True)
        self.dense = nn.Linear(self.num_heads * self.head_dim, cfg.hidden_size, bias=True)
        self.rotary_ndims = int(self.head_dim * cfg.partial_rotary_factor)
        self.rotary_emb = RotaryEmbedding(self.rotary_ndims, base=cfg.rope_theta)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        cos, sin = self.rotary_emb(value_states, seq_len=key_states.shape[-2])
        query_rot, query_pass = (query_states[..., : self.rotary_ndims],
                                 query_states[..., self.rotary_ndims:])
        key_rot, key_pass = key_states[..., : self.rotary_ndims], key_states[..., self.rotary_ndims:]
        query_rot, key_rot = apply_rotary_pos_emb(query_rot, key_rot, cos, sin, position_ids)
        query_states = torch.cat((query_rot, query_pass), dim=-1)
        key_states = torch.cat((key_rot, key_pass), dim=-1)

        # Phi's scores in float32: the models here are float32 already.
        return self.dense(eager_attention(query_states, key_states, value_states, attention_mask,
                                          self.num_key_value_groups, self.num_heads * self.head_dim))


class PhiMLP(nn.Module):
    def __init__(self, cfg: PhiConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.hidden_size, cfg.intermediate_size)
        self.fc2 = nn.Linear(cfg.intermediate_size, cfg.hidden_size)

    def forward(self, hidden_states):
        return self.fc2(gelu_new(self.fc1(hidden_states)))


class PhiDecoderLayer(nn.Module):
    def __init__(self, cfg: PhiConfig):
        super().__init__()
        self.self_attn = PhiAttention(cfg)
        self.mlp = PhiMLP(cfg)
        self.input_layernorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        attn_outputs = self.self_attn(hidden_states, attention_mask, position_ids)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return attn_outputs + feed_forward_hidden_states + residual


class PhiModel(nn.Module):
    def __init__(self, cfg: PhiConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([PhiDecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.final_layernorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, input_ids, attention_mask=None):
        batch_size, seq_length = input_ids.shape
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        inputs_embeds = self.embed_tokens(input_ids)
        attention_mask = decoder_attention_mask(attention_mask, batch_size, seq_length,
                                                inputs_embeds.dtype)
        hidden_states = inputs_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask, position_ids)
        return self.final_layernorm(hidden_states)


class PhiForCausalLM(nn.Module):
    def __init__(self, cfg: PhiConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.model = PhiModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=True)
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.model(input_ids, attention_mask)).float()


def validate(cfg: PhiConfig):
    if cfg.hidden_size % cfg.num_attention_heads:
        return f"hidden_size {cfg.hidden_size} is not a multiple of num_attention_heads {cfg.num_attention_heads}"
    if cfg.num_attention_heads % cfg.num_key_value_heads:
        return (f"num_attention_heads {cfg.num_attention_heads} is not a multiple of "
                f"num_key_value_heads {cfg.num_key_value_heads}")
    rotary = int(cfg.hidden_size // cfg.num_attention_heads * cfg.partial_rotary_factor)
    if rotary <= 0 or rotary % 2:
        return f"the rotated dimensions per head ({rotary}) must be even and positive"
    return None


def build(cfg: PhiConfig, seed: int = 0) -> PhiForCausalLM:
    torch.manual_seed(seed)
    model = PhiForCausalLM(cfg, seed)
    model.eval()
    return model
