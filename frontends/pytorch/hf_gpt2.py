"""GPT-2 as HuggingFace's GPT2LMHeadModel computes it (family "hf-gpt2").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_gpt2 does in eager mode without a KV cache, so that its ONNX export has the
op patterns of users' exports of HF GPT-2 (unlike gpt.py's nanoGPT layout):

  - Conv1D layers: weight stored [in, out], computed as
    torch.addmm(bias, x.view(-1, in), weight).view(..., out)  (ONNX Gemm + Reshapes);
  - the fused c_attn output split into q, k, v, heads by view + permute;
  - scores divided by torch.full([], sqrt(head_dim));
  - causal mask as torch.where(bool_buffer[:, :, k-q:k, :k], scores, finfo.min);
  - the padding attention_mask as (1 - mask[:, None, None, :]) * finfo.min, added;
  - gelu_new written out with tanh;
  - position ids torch.arange(T).unsqueeze(0).view(-1, T), wte + wpe;
  - ln_f, lm_head tied to wte.

Parameter names follow HF's (transformer.h.<i>.attn.c_attn.weight, ...).
"""

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn

from hf_common import ConfigMixin, Conv1D, additive_padding_mask, gelu_new, init_weights


@dataclass
class GPT2Config(ConfigMixin):
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 32
    n_inner: Optional[int] = None  # None: 4 * n_embd
    vocab_size: int = 64
    n_positions: int = 32
    layer_norm_epsilon: float = 1e-5


PRESETS = {
    "tiny": GPT2Config(),
    "gpt2-small": GPT2Config(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_positions=1024),
}


class GPT2Attention(nn.Module):
    def __init__(self, cfg: GPT2Config):
        super().__init__()
        max_positions = cfg.n_positions
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False)
        self.embed_dim = cfg.n_embd
        self.num_heads = cfg.n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        return torch.matmul(attn_weights, value)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, attention_mask=None, layer_past=None):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if layer_past is not None:  # HF's use_cache: the past keys and values come first
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        attn_output = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        return self.c_proj(attn_output), (key, value)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, cfg: GPT2Config):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, cfg.n_embd)
        self.c_proj = Conv1D(cfg.n_embd, intermediate_size)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = gelu_new(hidden_states)
        return self.c_proj(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, cfg: GPT2Config):
        super().__init__()
        inner_dim = cfg.n_inner if cfg.n_inner is not None else 4 * cfg.n_embd
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = GPT2Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.mlp = GPT2MLP(inner_dim, cfg)

    def forward(self, hidden_states, attention_mask=None, layer_past=None):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output, present = self.attn(hidden_states, attention_mask=attention_mask,
                                         layer_past=layer_past)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return residual + feed_forward_hidden_states, present


class GPT2Model(nn.Module):
    def __init__(self, cfg: GPT2Config):
        super().__init__()
        self.embed_dim = cfg.n_embd
        self.wte = nn.Embedding(cfg.vocab_size, self.embed_dim)
        self.wpe = nn.Embedding(cfg.n_positions, self.embed_dim)
        self.h = nn.ModuleList([GPT2Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=cfg.layer_norm_epsilon)

    def forward(self, input_ids, attention_mask=None, past_key_values=None):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        dtype = self.wte.weight.dtype
        past_length = 0 if past_key_values is None else past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long,
                                    device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        if attention_mask is not None:
            attention_mask = additive_padding_mask(attention_mask, batch_size, dtype)
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        output_shape = (-1,) + input_shape[1:] + (hidden_states.size(-1),)
        presents = []
        for i, block in enumerate(self.h):
            layer_past = None if past_key_values is None else past_key_values[i]
            hidden_states, present = block(hidden_states, attention_mask=attention_mask,
                                           layer_past=layer_past)
            presents.append(present)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states.view(output_shape), presents


class GPT2LMHeadModel(nn.Module):
    def __init__(self, cfg: GPT2Config, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.transformer = GPT2Model(cfg)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None, past_key_values=None):
        """The logits; with past_key_values (one (key, value) [B, H, P, d] pair per
        layer) also each layer's present (key, value), [B, H, P + T, d]."""
        hidden_states, presents = self.transformer(input_ids, attention_mask=attention_mask,
                                                   past_key_values=past_key_values)
        logits = self.lm_head(hidden_states)
        return logits if past_key_values is None else (logits, presents)

    def cache_shape(self):
        """(layers, heads, head dim) of the cache."""
        c = self.config
        return c.n_layer, c.n_head, c.n_embd // c.n_head


def validate(cfg: GPT2Config):
    if cfg.n_embd % cfg.n_head:
        return f"n_embd {cfg.n_embd} is not a multiple of n_head {cfg.n_head}"
    return None


def build(cfg: GPT2Config, seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(cfg, seed)
    model.eval()
    return model
