"""Qwen2 as HuggingFace's Qwen2ForCausalLM computes it (family "qwen2").

transformers 4.3x's modeling_qwen2 in eager mode is Llama's computation (llama.py:
RMSNorm, rotate_half rotary indexed by position ids, grouped-query attention with
repeat_kv, the additive finfo.min causal and padding masks, SwiGLU, an untied lm_head)
with biases on q_proj, k_proj and v_proj (o_proj has none) and rope_theta 1e6 by
default. Without a sliding window (use_sliding_window false, Qwen2's default) the masks
are Llama's.
"""

from dataclasses import dataclass

import llama
from llama import LlamaConfig


@dataclass
class Qwen2Config(LlamaConfig):
    rope_theta: float = 1000000.0
    qkv_bias = True  # not a field: Qwen2 always biases q, k and v


PRESETS = {
    "tiny": Qwen2Config(),
}

validate = llama.validate
build = llama.build
