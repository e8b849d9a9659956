"""GPT-NeoX (Pythia) as HuggingFace's GPTNeoXForCausalLM computes it (family "neox").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_gpt_neox does in eager mode without a KV cache:

  - a fused query_key_value Linear whose output is viewed per head as
    [B, T, heads, 3*head_size] and sliced into q, k, v (q, k, v interleaved per head,
    not in three blocks as GPT-2's c_attn);
  - partial rotary embeddings: the first rotary_pct of each head's dims rotated
    (tables computed in forward, indexed by position ids, rotate_half), the rest passed
    through and concatenated back;
  - scores by torch.baddbmm(zeros, q, k^T, beta=1, alpha=1/sqrt(head_size)) on
    [B*heads, T, T];
  - causal mask by torch.where(bool_buffer[:, :, k-q:k, :k], scores, finfo.min) and the
    padding attention_mask as (1 - mask[:, None, None, :]) * finfo.min, added;
  - parallel residual: x + attn(ln1(x)) + mlp(ln2(x)), exact GELU MLP with biases;
  - final_layer_norm and a separate (untied) embed_out.

Parameter names follow HF's (gpt_neox.layers.<i>.attention.query_key_value.weight, ...).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from hf_common import ConfigMixin, RotaryEmbedding, additive_padding_mask, apply_rotary_pos_emb, init_weights


@dataclass
class GPTNeoXConfig(ConfigMixin):
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    hidden_size: int = 32
    intermediate_size: int = 128
    vocab_size: int = 64
    max_position_embeddings: int = 32
    rotary_pct: float = 0.25
    rotary_emb_base: float = 10000.0
    layer_norm_eps: float = 1e-5
    use_parallel_residual: bool = True


PRESETS = {
    "tiny": GPTNeoXConfig(),
    # EleutherAI/pythia-70m's published configuration
    "pythia-70m": GPTNeoXConfig(num_hidden_layers=6, num_attention_heads=8, hidden_size=512,
                                intermediate_size=2048, vocab_size=50304, max_position_embeddings=2048),
}


class GPTNeoXAttention(nn.Module):
    def __init__(self, cfg: GPTNeoXConfig):
        super().__init__()
        self.num_attention_heads = cfg.num_attention_heads
        self.hidden_size = cfg.hidden_size
        self.head_size = self.hidden_size // self.num_attention_heads
        self.rotary_ndims = int(self.head_size * cfg.rotary_pct)
        max_positions = cfg.max_position_embeddings
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False)
        self.rotary_emb = RotaryEmbedding(self.rotary_ndims, base=cfg.rotary_emb_base)
        self.norm_factor = self.head_size ** -0.5
        self.query_key_value = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, hidden_states, attention_mask, position_ids):
        qkv = self.query_key_value(hidden_states)
        # [B, T, heads * 3 * head_size] -> [B, T, heads, 3 * head_size]
        new_qkv_shape = qkv.size()[:-1] + (self.num_attention_heads, 3 * self.head_size)
        qkv = qkv.view(*new_qkv_shape)
        # -> 3 x [B, heads, T, head_size]
        query = qkv[..., : self.head_size].permute(0, 2, 1, 3)
        key = qkv[..., self.head_size: 2 * self.head_size].permute(0, 2, 1, 3)
        value = qkv[..., 2 * self.head_size:].permute(0, 2, 1, 3)

        query_rot = query[..., : self.rotary_ndims]
        query_pass = query[..., self.rotary_ndims:]
        key_rot = key[..., : self.rotary_ndims]
        key_pass = key[..., self.rotary_ndims:]
        seq_len = key.shape[-2]
        cos, sin = self.rotary_emb(value, seq_len=seq_len)
        query, key = apply_rotary_pos_emb(query_rot, key_rot, cos, sin, position_ids)
        query = torch.cat((query, query_pass), dim=-1)
        key = torch.cat((key, key_pass), dim=-1)

        attn_output = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_attention_heads, self.head_size)
        return self.dense(attn_output)

    @classmethod
    def _merge_heads(cls, tensor, num_attention_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size(0), tensor.size(1), num_attention_heads * attn_head_size)

    def _attn(self, query, key, value, attention_mask=None):
        batch_size, num_attention_heads, query_length, attn_head_size = query.size()
        key_length = key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        query = query.view(batch_size * num_attention_heads, query_length, attn_head_size)
        key = key.view(batch_size * num_attention_heads, key_length, attn_head_size)
        attn_scores = torch.zeros(batch_size * num_attention_heads, query_length, key_length,
                                  dtype=query.dtype, device=key.device)
        attn_scores = torch.baddbmm(attn_scores, query, key.transpose(1, 2), beta=1.0, alpha=self.norm_factor)
        attn_scores = attn_scores.view(batch_size, num_attention_heads, query_length, key_length)
        mask_value = torch.finfo(attn_scores.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_scores.dtype).to(attn_scores.device)
        attn_scores = torch.where(causal_mask, attn_scores, mask_value)
        if attention_mask is not None:
            attn_scores = attn_scores + attention_mask
        attn_weights = F.softmax(attn_scores, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        return torch.matmul(attn_weights, value)


class GPTNeoXMLP(nn.Module):
    def __init__(self, cfg: GPTNeoXConfig):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(cfg.hidden_size, cfg.intermediate_size)
        self.dense_4h_to_h = nn.Linear(cfg.intermediate_size, cfg.hidden_size)

    def forward(self, hidden_states):
        hidden_states = self.dense_h_to_4h(hidden_states)
        hidden_states = F.gelu(hidden_states)  # exact (erf)
        return self.dense_4h_to_h(hidden_states)


class GPTNeoXLayer(nn.Module):
    def __init__(self, cfg: GPTNeoXConfig):
        super().__init__()
        self.use_parallel_residual = cfg.use_parallel_residual
        self.input_layernorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.post_attention_layernorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.attention = GPTNeoXAttention(cfg)
        self.mlp = GPTNeoXMLP(cfg)

    def forward(self, hidden_states, attention_mask, position_ids):
        attn_output = self.attention(self.input_layernorm(hidden_states), attention_mask, position_ids)
        if self.use_parallel_residual:
            # x = x + attn(ln1(x)) + mlp(ln2(x))
            mlp_output = self.mlp(self.post_attention_layernorm(hidden_states))
            return mlp_output + attn_output + hidden_states
        attn_output = attn_output + hidden_states
        mlp_output = self.mlp(self.post_attention_layernorm(attn_output))
        return mlp_output + attn_output


class GPTNeoXModel(nn.Module):
    def __init__(self, cfg: GPTNeoXConfig):
        super().__init__()
        self.embed_in = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([GPTNeoXLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.final_layer_norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, input_ids, attention_mask=None):
        batch_size, seq_length = input_ids.size()
        position_ids = torch.arange(0, seq_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0)
        inputs_embeds = self.embed_in(input_ids)
        if attention_mask is not None:
            attention_mask = additive_padding_mask(attention_mask, batch_size, inputs_embeds.dtype)
        hidden_states = inputs_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask, position_ids)
        return self.final_layer_norm(hidden_states)


class GPTNeoXForCausalLM(nn.Module):
    def __init__(self, cfg: GPTNeoXConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.gpt_neox = GPTNeoXModel(cfg)
        self.embed_out = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)  # untied
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.gpt_neox(input_ids, attention_mask)
        return self.embed_out(hidden_states)


def validate(cfg: GPTNeoXConfig):
    if cfg.hidden_size % cfg.num_attention_heads:
        return f"hidden_size {cfg.hidden_size} is not a multiple of num_attention_heads {cfg.num_attention_heads}"
    rot = int(cfg.hidden_size // cfg.num_attention_heads * cfg.rotary_pct)
    if rot < 2 or rot % 2:
        return f"rotary_pct {cfg.rotary_pct} gives {rot} rotary dims per head; need an even number >= 2"
    return None


def build(cfg: GPTNeoXConfig, seed: int = 0) -> GPTNeoXForCausalLM:
    torch.manual_seed(seed)
    model = GPTNeoXForCausalLM(cfg, seed)
    model.eval()
    return model
