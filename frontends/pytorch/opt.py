"""OPT as HuggingFace's OPTForCausalLM computes it (family "opt").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_opt does in eager mode without a KV cache (facebook/opt-125m and up):

  - learned positions from the attention mask (OPTLearnedPositionalEmbedding, offset 2):
    positions = (cumsum(mask, dim=1).type_as(mask) * mask).long() - 1, looked up at
    positions + 2 (so left padding shifts the positions as HF's does);
  - pre-LN decoder layers (do_layer_norm_before=True): self_attn_layer_norm, attention,
    residual; final_layer_norm, fc1, ReLU, fc2 on the [B*T, hidden] rows, residual;
  - attention the bmm way: q_proj(h) * head_dim**-0.5, q/k/v shaped
    [B*heads, T, head_dim], torch.bmm(q, k^T) viewed [B, heads, T, T] plus the 4-D mask,
    clamped by torch.max(scores, torch.tensor(finfo.min)), viewed back, softmax, bmm
    with v; q/k/v/out_proj all with bias;
  - the 4-D additive mask of _prepare_decoder_attention_mask: _make_causal_mask
    (torch.full((T, T), finfo.min) masked_fill_'ed with 0 where arange < (arange + 1)
    as a column) plus _expand_mask ((1 - mask) masked_fill'ed with finfo.min);
  - the decoder's final_layer_norm, and an lm_head tied to embed_tokens, no bias.

word_embed_proj_dim other than hidden_size (opt-350m) adds the bias-free project_in /
project_out around the decoder, as HF's does.

Parameter names follow HF's (model.decoder.layers.<i>.self_attn.q_proj.weight, ...).
"""

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn

from hf_common import ConfigMixin, init_weights


@dataclass
class OPTConfig(ConfigMixin):
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    hidden_size: int = 32
    ffn_dim: int = 128
    vocab_size: int = 64
    max_position_embeddings: int = 32
    word_embed_proj_dim: Optional[int] = None  # None: hidden_size
    do_layer_norm_before: bool = True
    enable_bias: bool = True
    layer_norm_elementwise_affine: bool = True


PRESETS = {
    "tiny": OPTConfig(),
    # facebook/opt-125m's published configuration
    "opt-125m": OPTConfig(num_hidden_layers=12, num_attention_heads=12, hidden_size=768, ffn_dim=3072,
                          vocab_size=50272, max_position_embeddings=2048),
}


class OPTLearnedPositionalEmbedding(nn.Embedding):
    """Positions from the attention mask, looked up 2 rows further on (HF's offset)."""

    def __init__(self, num_embeddings, embedding_dim):
        self.offset = 2
        super().__init__(num_embeddings + self.offset, embedding_dim)

    def forward(self, attention_mask, past_key_values_length=0):
        attention_mask = attention_mask.long()
        positions = (torch.cumsum(attention_mask, dim=1).type_as(attention_mask) * attention_mask).long() - 1
        positions = positions[:, past_key_values_length:]
        return super().forward(positions + self.offset)


class OPTAttention(nn.Module):
    def __init__(self, cfg: OPTConfig):
        super().__init__()
        self.embed_dim = cfg.hidden_size
        self.num_heads = cfg.num_attention_heads
        self.head_dim = self.embed_dim // self.num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=cfg.enable_bias)
        self.v_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=cfg.enable_bias)
        self.q_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=cfg.enable_bias)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim, bias=cfg.enable_bias)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states, attention_mask=None):
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
        value_states = self._shape(self.v_proj(hidden_states), -1, bsz)

        proj_shape = (bsz * self.num_heads, -1, self.head_dim)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.view(*proj_shape)
        value_states = value_states.view(*proj_shape)

        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        if attention_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len) + attention_mask
            attn_weights = torch.max(
                attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min, device=attn_weights.device))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        if attn_weights.dtype == torch.float16:
            attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(torch.float16)
        else:
            attn_weights = nn.functional.softmax(attn_weights, dim=-1)

        attn_output = torch.bmm(attn_weights, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, tgt_len, self.head_dim)
        attn_output = attn_output.transpose(1, 2)
        attn_output = attn_output.reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn_output)


class OPTDecoderLayer(nn.Module):
    def __init__(self, cfg: OPTConfig):
        super().__init__()
        self.embed_dim = cfg.hidden_size
        self.self_attn = OPTAttention(cfg)
        self.do_layer_norm_before = cfg.do_layer_norm_before
        self.activation_fn = nn.ReLU()
        self.self_attn_layer_norm = nn.LayerNorm(
            self.embed_dim, elementwise_affine=cfg.layer_norm_elementwise_affine)
        self.fc1 = nn.Linear(self.embed_dim, cfg.ffn_dim, bias=cfg.enable_bias)
        self.fc2 = nn.Linear(cfg.ffn_dim, self.embed_dim, bias=cfg.enable_bias)
        self.final_layer_norm = nn.LayerNorm(self.embed_dim, elementwise_affine=cfg.layer_norm_elementwise_affine)

    def forward(self, hidden_states, attention_mask=None):
        residual = hidden_states
        if self.do_layer_norm_before:
            hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask=attention_mask)
        hidden_states = residual + hidden_states
        if not self.do_layer_norm_before:
            hidden_states = self.self_attn_layer_norm(hidden_states)

        # Fully connected, on the [B*T, hidden] rows
        hidden_states_shape = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, hidden_states.size(-1))
        residual = hidden_states
        if self.do_layer_norm_before:
            hidden_states = self.final_layer_norm(hidden_states)
        hidden_states = self.fc1(hidden_states)
        hidden_states = self.activation_fn(hidden_states)
        hidden_states = self.fc2(hidden_states)
        hidden_states = (residual + hidden_states).view(hidden_states_shape)
        if not self.do_layer_norm_before:
            hidden_states = self.final_layer_norm(hidden_states)
        return hidden_states


def _make_causal_mask(input_ids_shape, dtype, device, past_key_values_length=0):
    """[B, 1, T, T + past]: 0 on and below the diagonal, finfo.min above."""
    bsz, tgt_len = input_ids_shape
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
    mask_cond = torch.arange(mask.size(-1), device=device)
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    if past_key_values_length > 0:
        mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype, device=device), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)


def _expand_mask(mask, dtype, tgt_len=None):
    """[B, S] 1/0 -> [B, 1, T, S]: 0 where attended, finfo.min where padding."""
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


class OPTDecoder(nn.Module):
    def __init__(self, cfg: OPTConfig):
        super().__init__()
        proj_dim = cfg.word_embed_proj_dim or cfg.hidden_size
        self.embed_tokens = nn.Embedding(cfg.vocab_size, proj_dim)
        self.embed_positions = OPTLearnedPositionalEmbedding(cfg.max_position_embeddings, cfg.hidden_size)
        if proj_dim != cfg.hidden_size:
            self.project_out = nn.Linear(cfg.hidden_size, proj_dim, bias=False)
            self.project_in = nn.Linear(proj_dim, cfg.hidden_size, bias=False)
        else:
            self.project_out = None
            self.project_in = None
        # opt-350m (do_layer_norm_before=False) has no final layer norm
        if cfg.do_layer_norm_before:
            self.final_layer_norm = nn.LayerNorm(
                cfg.hidden_size, elementwise_affine=cfg.layer_norm_elementwise_affine)
        else:
            self.final_layer_norm = None
        self.layers = nn.ModuleList([OPTDecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])

    def _prepare_decoder_attention_mask(self, attention_mask, input_shape, inputs_embeds, past_key_values_length):
        combined_attention_mask = None
        if input_shape[-1] > 1:
            combined_attention_mask = _make_causal_mask(input_shape, inputs_embeds.dtype, inputs_embeds.device,
                                                        past_key_values_length=past_key_values_length)
        if attention_mask is not None:
            expanded_attn_mask = _expand_mask(attention_mask, inputs_embeds.dtype, tgt_len=input_shape[-1]).to(
                inputs_embeds.device)
            combined_attention_mask = (expanded_attn_mask if combined_attention_mask is None
                                       else expanded_attn_mask + combined_attention_mask)
        return combined_attention_mask

    def forward(self, input_ids, attention_mask=None):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        inputs_embeds = self.embed_tokens(input_ids)
        batch_size, seq_length = input_shape
        past_key_values_length = 0
        mask_seq_length = past_key_values_length + seq_length
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, mask_seq_length, device=inputs_embeds.device)
        causal_attention_mask = self._prepare_decoder_attention_mask(
            attention_mask, input_shape, inputs_embeds, past_key_values_length)
        pos_embeds = self.embed_positions(attention_mask, past_key_values_length)
        if self.project_in is not None:
            inputs_embeds = self.project_in(inputs_embeds)
        hidden_states = inputs_embeds + pos_embeds
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, attention_mask=causal_attention_mask)
        if self.final_layer_norm is not None:
            hidden_states = self.final_layer_norm(hidden_states)
        if self.project_out is not None:
            hidden_states = self.project_out(hidden_states)
        return hidden_states


class OPTModel(nn.Module):
    def __init__(self, cfg: OPTConfig):
        super().__init__()
        self.decoder = OPTDecoder(cfg)

    def forward(self, input_ids, attention_mask=None):
        return self.decoder(input_ids, attention_mask)


class OPTForCausalLM(nn.Module):
    def __init__(self, cfg: OPTConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.model = OPTModel(cfg)
        proj_dim = cfg.word_embed_proj_dim or cfg.hidden_size
        self.lm_head = nn.Linear(proj_dim, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.model.decoder.embed_tokens.weight  # tied
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.model(input_ids, attention_mask)
        logits = self.lm_head(hidden_states).contiguous()
        return logits.float()


def validate(cfg: OPTConfig):
    if cfg.hidden_size % cfg.num_attention_heads:
        return f"hidden_size {cfg.hidden_size} is not a multiple of num_attention_heads {cfg.num_attention_heads}"
    return None


def build(cfg: OPTConfig, seed: int = 0) -> OPTForCausalLM:
    torch.manual_seed(seed)
    model = OPTForCausalLM(cfg, seed)
    model.eval()
    return model
