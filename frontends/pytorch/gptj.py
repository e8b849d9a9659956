"""GPT-J as HuggingFace's GPTJForCausalLM computes it (family "gptj").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_gptj does in eager mode without a KV cache (EleutherAI/gpt-j-6b):

  - wte only, no position embedding table;
  - separate q_proj / k_proj / v_proj / out_proj without bias;
  - rotary embeddings on the first rotary_dim dims of each head, GPT-J style
    (interleaved pairs): the table create_sinusoidal_positions(max_positions, rotary_dim)
    = cat(sin, cos) of positions x inv_freq, a constant; as HF's code does when traced
    (torch.jit.is_tracing(): get_embed_positions) the table repeated over the batch and
    gathered by torch.gather(table, 1, position_ids repeated over the last axis), split
    into sin and cos, each repeat_interleave'd by 2 on a new head axis, and applied with
    rotate_every_two (stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)); position_ids
    = arange(T).unsqueeze(0);
  - scores of q and k cast to float32: matmul(q, k^T), then
    torch.where(bool_buffer[:, :, k-q:k, :k], scores, torch.tensor(finfo.min)), divided
    by scale_attn (sqrt(head_dim) as a tensor), plus the padding mask
    (1 - mask[:, None, None, :]) * finfo.min; softmax; matmul with v;
  - parallel residual: attn(ln_1(x)) + mlp(ln_1(x)) + x, one layer norm per block;
    mlp fc_in, gelu_new (tanh form), fc_out, with biases;
  - ln_f and an untied lm_head WITH bias, its output cast to float32.

Parameter names follow HF's (transformer.h.<i>.attn.q_proj.weight, ...).
"""

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn

from hf_common import ConfigMixin, additive_padding_mask, gelu_new, init_weights


@dataclass
class GPTJConfig(ConfigMixin):
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 32
    n_inner: Optional[int] = None  # None: 4 * n_embd
    vocab_size: int = 64
    n_positions: int = 32
    rotary_dim: Optional[int] = 4  # None: the whole head
    layer_norm_epsilon: float = 1e-5


PRESETS = {
    "tiny": GPTJConfig(),
    # EleutherAI/gpt-j-6b's published configuration
    "gpt-j-6b": GPTJConfig(n_layer=28, n_head=16, n_embd=4096, vocab_size=50400, n_positions=2048,
                           rotary_dim=64),
}


def create_sinusoidal_positions(num_pos, dim):
    """[num_pos, dim]: cat(sin, cos) of position x inv_freq, each dim / 2 wide."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2) / dim))
    sinusoid_inp = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.float), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)


def get_embed_positions(embed_positions, position_ids):
    return embed_positions.to(position_ids.device).repeat(position_ids.shape[0], 1, 1)


def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)  # in einsum notation: rearrange(x, '... d j -> ... (d j)')


def apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


class GPTJAttention(nn.Module):
    def __init__(self, cfg: GPTJConfig):
        super().__init__()
        max_positions = cfg.n_positions
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False)
        self.embed_dim = cfg.n_embd
        self.num_attention_heads = cfg.n_head
        self.head_dim = self.embed_dim // self.num_attention_heads
        self.scale_attn = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32)).to(torch.get_default_dtype())
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=False)
        self.rotary_dim = cfg.rotary_dim
        pos_embd_dim = self.rotary_dim or self.embed_dim
        # not in the state dict: a constant of the traced graph
        self.register_buffer("embed_positions", create_sinusoidal_positions(max_positions, pos_embd_dim),
                             persistent=False)

    def _split_heads(self, tensor, num_attention_heads, attn_head_size, rotary):
        new_shape = tensor.size()[:-1] + (num_attention_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        if rotary:
            return tensor
        if len(tensor.shape) == 5:
            return tensor.permute(0, 1, 3, 2, 4)  # (batch, blocks, head, block_length, head_features)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_attention_heads, attn_head_size):
        if len(tensor.shape) == 5:
            tensor = tensor.permute(0, 1, 3, 2, 4).contiguous()
        else:
            tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_attention_heads * attn_head_size,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value, attention_mask=None):
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        # attention weights in float32 (avoids overflow)
        query = query.to(torch.float32)
        key = key.to(torch.float32)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = attn_weights / self.scale_attn
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask=None, position_ids=None):
        query = self.q_proj(hidden_states)
        key = self.k_proj(hidden_states)
        value = self.v_proj(hidden_states)
        query = self._split_heads(query, self.num_attention_heads, self.head_dim, True)
        key = self._split_heads(key, self.num_attention_heads, self.head_dim, True)
        value = self._split_heads(value, self.num_attention_heads, self.head_dim, False)

        # HF's traced path (torch.jit.is_tracing()), taken by every ONNX export
        embed_positions = get_embed_positions(self.embed_positions, position_ids)
        repeated_position_ids = position_ids.unsqueeze(-1).repeat(1, 1, embed_positions.shape[-1])
        sincos = torch.gather(embed_positions, 1, repeated_position_ids)
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)

        if self.rotary_dim is not None:
            k_rot = key[:, :, :, : self.rotary_dim]
            k_pass = key[:, :, :, self.rotary_dim:]
            q_rot = query[:, :, :, : self.rotary_dim]
            q_pass = query[:, :, :, self.rotary_dim:]
            k_rot = apply_rotary_pos_emb(k_rot, sin, cos)
            q_rot = apply_rotary_pos_emb(q_rot, sin, cos)
            key = torch.cat([k_rot, k_pass], dim=-1)
            query = torch.cat([q_rot, q_pass], dim=-1)
        else:
            key = apply_rotary_pos_emb(key, sin, cos)
            query = apply_rotary_pos_emb(query, sin, cos)

        key = key.permute(0, 2, 1, 3)
        query = query.permute(0, 2, 1, 3)

        attn_output = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_attention_heads, self.head_dim)
        return self.out_proj(attn_output)


class GPTJMLP(nn.Module):
    def __init__(self, intermediate_size, cfg: GPTJConfig):
        super().__init__()
        embed_dim = cfg.n_embd
        self.fc_in = nn.Linear(embed_dim, intermediate_size)
        self.fc_out = nn.Linear(intermediate_size, embed_dim)

    def forward(self, hidden_states):
        hidden_states = self.fc_in(hidden_states)
        hidden_states = gelu_new(hidden_states)
        return self.fc_out(hidden_states)


class GPTJBlock(nn.Module):
    def __init__(self, cfg: GPTJConfig):
        super().__init__()
        inner_dim = cfg.n_inner if cfg.n_inner is not None else 4 * cfg.n_embd
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = GPTJAttention(cfg)
        self.mlp = GPTJMLP(inner_dim, cfg)

    def forward(self, hidden_states, attention_mask=None, position_ids=None):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states, attention_mask=attention_mask, position_ids=position_ids)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return attn_output + feed_forward_hidden_states + residual


class GPTJModel(nn.Module):
    def __init__(self, cfg: GPTJConfig):
        super().__init__()
        self.embed_dim = cfg.n_embd
        self.wte = nn.Embedding(cfg.vocab_size, self.embed_dim)
        self.h = nn.ModuleList([GPTJBlock(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=cfg.layer_norm_epsilon)

    def forward(self, input_ids, attention_mask=None):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        dtype = self.wte.weight.dtype
        past_length = 0
        position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long,
                                    device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        if attention_mask is not None:
            attention_mask = additive_padding_mask(attention_mask, batch_size, dtype)
        inputs_embeds = self.wte(input_ids)
        hidden_states = inputs_embeds
        output_shape = input_shape + (hidden_states.size(-1),)
        for block in self.h:
            hidden_states = block(hidden_states, attention_mask=attention_mask, position_ids=position_ids)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states.view(output_shape)


class GPTJForCausalLM(nn.Module):
    def __init__(self, cfg: GPTJConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.transformer = GPTJModel(cfg)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size)  # untied, with bias
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.transformer(input_ids, attention_mask)
        return self.lm_head(hidden_states).to(torch.float32)


def validate(cfg: GPTJConfig):
    if cfg.n_embd % cfg.n_head:
        return f"n_embd {cfg.n_embd} is not a multiple of n_head {cfg.n_head}"
    head_dim = cfg.n_embd // cfg.n_head
    if cfg.rotary_dim is None and cfg.n_head > 1:
        # HF sizes the table n_embd wide then: it only fits a single head
        return "rotary_dim None (rotate whole heads) needs n_head 1; give rotary_dim"
    rot = cfg.rotary_dim if cfg.rotary_dim is not None else head_dim
    if rot < 2 or rot % 2 or rot > head_dim:
        return f"rotary_dim {cfg.rotary_dim}: need an even number of dims from 2 to the head dim {head_dim}"
    return None


def build(cfg: GPTJConfig, seed: int = 0) -> GPTJForCausalLM:
    torch.manual_seed(seed)
    model = GPTJForCausalLM(cfg, seed)
    model.eval()
    return model
