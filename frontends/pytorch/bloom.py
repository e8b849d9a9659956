"""BLOOM as HuggingFace's BloomForCausalLM computes it (family "bloom").

A re-implementation from the published architecture of what transformers 4.3x's
modeling_bloom does in eager mode without a KV cache (bigscience/bloom-560m and up):

  - word_embeddings followed by word_embeddings_layernorm; no position embeddings;
  - ALiBi from the attention mask (build_alibi_tensor): per-head slopes from the closest
    power of 2 at or below the head count (and the extra, odd-power slopes of the next
    power of 2 for the heads beyond it), times the positions
    ((mask.cumsum(-1) - 1) * mask)[:, None, :], reshaped [B*heads, 1, T];
  - a fused query_key_value Linear viewed [B, T, heads, 3, head_dim] and split; q as
    [B*heads, T, hd], k as [B*heads, hd, T]; the scores
    alibi.baddbmm(batch1=q, batch2=k, beta=1.0, alpha=1/sqrt(hd)) viewed [B, heads, T, T];
  - the boolean mask (causal seq_ids[:, None] < seq_ids[None, :] | ~padding) applied by
    masked_fill with finfo.min; softmax in float32; bmm with v; heads merged;
  - dense with bias and the residual; post_attention_layernorm; dense_h_to_4h,
    bloom_gelu_forward (tanh form with 0.79788456), dense_4h_to_h, residual;
  - ln_f and an lm_head tied to word_embeddings, no bias.

BLOOM's MLP width is always 4 * hidden_size (HF's BloomConfig has no intermediate size).
ALiBi needs no position table: seq_length (a field of bigscience's config.json files, not
used by the model) only bounds export.py's --seq.

Parameter names follow HF's (transformer.h.<i>.self_attention.query_key_value.weight, ...).
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from hf_common import ConfigMixin, init_weights


@dataclass
class BloomConfig(ConfigMixin):
    n_layer: int = 2
    n_head: int = 4
    hidden_size: int = 32
    vocab_size: int = 64
    seq_length: int = 32
    layer_norm_epsilon: float = 1e-5
    apply_residual_connection_post_layernorm: bool = False


PRESETS = {
    "tiny": BloomConfig(),
    # bigscience/bloom-560m's published configuration
    "bloom-560m": BloomConfig(n_layer=24, n_head=16, hidden_size=1024, vocab_size=250880, seq_length=2048),
}


def build_alibi_tensor(attention_mask, num_heads, dtype):
    """[B*heads, 1, T]: each head's slope times each position (padding counts none)."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))),
                        device=attention_mask.device, dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, device=attention_mask.device, dtype=torch.int32)
    slopes = torch.pow(base, powers)

    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))),
                                  device=attention_mask.device, dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, device=attention_mask.device,
                                    dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)

    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def dropout_add(x, residual, prob, training):
    out = F.dropout(x, p=prob, training=training)
    return residual + out


def bloom_gelu_forward(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class BloomGelu(nn.Module):
    def forward(self, x):
        return bloom_gelu_forward(x)


class BloomAttention(nn.Module):
    def __init__(self, cfg: BloomConfig):
        super().__init__()
        self.hidden_size = cfg.hidden_size
        self.num_heads = cfg.n_head
        self.head_dim = self.hidden_size // self.num_heads
        self.split_size = self.hidden_size
        self.hidden_dropout = 0.0
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0
        self.query_key_value = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias=True)
        self.dense = nn.Linear(self.hidden_size, self.hidden_size)

    def _split_heads(self, fused_qkv):
        """[B, T, 3*hidden] -> 3 x [B, T, heads, head_dim] (q, k, v interleaved per head)."""
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
        return fused_qkv[..., 0, :], fused_qkv[..., 1, :], fused_qkv[..., 2, :]

    def _merge_heads(self, x):
        """[B*heads, T, head_dim] -> [B, T, hidden]."""
        batch_size_and_num_heads, seq_length, _ = x.shape
        batch_size = batch_size_and_num_heads // self.num_heads
        x = x.view(batch_size, self.num_heads, seq_length, self.head_dim)
        x = x.permute(0, 2, 1, 3)
        return x.reshape(batch_size, seq_length, self.num_heads * self.head_dim)

    def forward(self, hidden_states, residual, alibi, attention_mask):
        fused_qkv = self.query_key_value(hidden_states)
        (query_layer, key_layer, value_layer) = self._split_heads(fused_qkv)
        batch_size, q_length, _, _ = query_layer.shape

        query_layer = query_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        key_layer = key_layer.permute(0, 2, 3, 1).reshape(batch_size * self.num_heads, self.head_dim, q_length)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        _, _, kv_length = key_layer.shape

        # alibi + (q @ k) / sqrt(head_dim)
        matmul_result = alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=self.beta,
                                      alpha=self.inv_norm_factor)
        attention_scores = matmul_result.view(batch_size, self.num_heads, q_length, kv_length)

        input_dtype = attention_scores.dtype
        if input_dtype == torch.float16:
            attention_scores = attention_scores.to(torch.float)
        attn_weights = torch.masked_fill(attention_scores, attention_mask,
                                         torch.finfo(attention_scores.dtype).min)
        attention_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(input_dtype)

        attention_probs_reshaped = attention_probs.view(batch_size * self.num_heads, q_length, kv_length)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = self._merge_heads(context_layer)
        output_tensor = self.dense(context_layer)
        return dropout_add(output_tensor, residual, self.hidden_dropout, self.training)


class BloomMLP(nn.Module):
    def __init__(self, cfg: BloomConfig):
        super().__init__()
        hidden_size = cfg.hidden_size
        self.hidden_dropout = 0.0
        self.dense_h_to_4h = nn.Linear(hidden_size, 4 * hidden_size)
        self.gelu_impl = BloomGelu()
        self.dense_4h_to_h = nn.Linear(4 * hidden_size, hidden_size)

    def forward(self, hidden_states, residual):
        hidden_states = self.gelu_impl(self.dense_h_to_4h(hidden_states))
        intermediate_output = self.dense_4h_to_h(hidden_states)
        return dropout_add(intermediate_output, residual, self.hidden_dropout, self.training)


class BloomBlock(nn.Module):
    def __init__(self, cfg: BloomConfig):
        super().__init__()
        hidden_size = cfg.hidden_size
        self.input_layernorm = nn.LayerNorm(hidden_size, eps=cfg.layer_norm_epsilon)
        self.num_heads = cfg.n_head
        self.self_attention = BloomAttention(cfg)
        self.post_attention_layernorm = nn.LayerNorm(hidden_size, eps=cfg.layer_norm_epsilon)
        self.mlp = BloomMLP(cfg)
        self.apply_residual_connection_post_layernorm = cfg.apply_residual_connection_post_layernorm

    def forward(self, hidden_states, alibi, attention_mask):
        layernorm_output = self.input_layernorm(hidden_states)
        if self.apply_residual_connection_post_layernorm:
            residual = layernorm_output
        else:
            residual = hidden_states
        attention_output = self.self_attention(layernorm_output, residual, alibi=alibi,
                                               attention_mask=attention_mask)
        layernorm_output = self.post_attention_layernorm(attention_output)
        if self.apply_residual_connection_post_layernorm:
            residual = layernorm_output
        else:
            residual = attention_output
        return self.mlp(layernorm_output, residual)


def _make_causal_mask(input_ids_shape, device, past_key_values_length):
    """[B, 1, T, T + past] bool: True above the diagonal (masked out)."""
    batch_size, target_length = input_ids_shape
    mask = torch.empty((target_length, target_length + past_key_values_length), dtype=torch.bool, device=device)
    seq_ids = torch.arange(target_length, device=device)
    mask[:, past_key_values_length:] = seq_ids[:, None] < seq_ids[None, :]
    if past_key_values_length > 0:
        mask[:, :past_key_values_length] = False
    return mask[None, None, :, :].expand(batch_size, 1, target_length, target_length + past_key_values_length)


def _expand_mask(mask, tgt_length):
    """[B, S] 1/0 -> [B, 1, T, S] bool: True where padding (masked out)."""
    batch_size, src_length = mask.shape
    tgt_length = tgt_length if tgt_length is not None else src_length
    expanded_mask = ~(mask[:, None, None, :].to(torch.bool))
    return expanded_mask.expand(batch_size, 1, tgt_length, src_length)


class BloomModel(nn.Module):
    def __init__(self, cfg: BloomConfig):
        super().__init__()
        self.embed_dim = cfg.hidden_size
        self.num_heads = cfg.n_head
        self.word_embeddings = nn.Embedding(cfg.vocab_size, self.embed_dim)
        self.word_embeddings_layernorm = nn.LayerNorm(self.embed_dim, eps=cfg.layer_norm_epsilon)
        self.h = nn.ModuleList([BloomBlock(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=cfg.layer_norm_epsilon)

    def build_alibi_tensor(self, attention_mask, num_heads, dtype):
        return build_alibi_tensor(attention_mask, num_heads, dtype)

    def _prepare_attn_mask(self, attention_mask, input_shape, past_key_values_length):
        combined_attention_mask = None
        device = attention_mask.device
        _, src_length = input_shape
        if src_length > 1:
            combined_attention_mask = _make_causal_mask(input_shape, device=device,
                                                        past_key_values_length=past_key_values_length)
        expanded_attn_mask = _expand_mask(attention_mask, tgt_length=src_length)
        combined_attention_mask = (expanded_attn_mask if combined_attention_mask is None
                                   else expanded_attn_mask | combined_attention_mask)
        return combined_attention_mask

    def forward(self, input_ids, attention_mask=None):
        batch_size, seq_length = input_ids.shape
        inputs_embeds = self.word_embeddings(input_ids)
        hidden_states = self.word_embeddings_layernorm(inputs_embeds)
        past_key_values_length = 0
        seq_length_with_past = seq_length + past_key_values_length
        if attention_mask is None:
            attention_mask = torch.ones((batch_size, seq_length_with_past), device=hidden_states.device)
        else:
            attention_mask = attention_mask.to(hidden_states.device)
        alibi = self.build_alibi_tensor(attention_mask, self.num_heads, dtype=hidden_states.dtype)
        causal_mask = self._prepare_attn_mask(attention_mask, input_shape=(batch_size, seq_length),
                                              past_key_values_length=past_key_values_length)
        for block in self.h:
            hidden_states = block(hidden_states, alibi=alibi, attention_mask=causal_mask)
        return self.ln_f(hidden_states)


class BloomForCausalLM(nn.Module):
    def __init__(self, cfg: BloomConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.transformer = BloomModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.word_embeddings.weight  # tied
        init_weights(self, seed, (nn.LayerNorm,))

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.transformer(input_ids, attention_mask)
        logits = self.lm_head(hidden_states)
        return logits.float()


def validate(cfg: BloomConfig):
    if cfg.hidden_size % cfg.n_head:
        return f"hidden_size {cfg.hidden_size} is not a multiple of n_head {cfg.n_head}"
    return None


def build(cfg: BloomConfig, seed: int = 0) -> BloomForCausalLM:
    torch.manual_seed(seed)
    model = BloomForCausalLM(cfg, seed)
    model.eval()
    return model
