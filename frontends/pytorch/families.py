"""The HuggingFace-style model families export.py --family knows besides nanoGPT (gpt.py).

Each family names its module (build, validate, PRESETS, its config class) and how
export.py's size options map onto that config's (HF-named) fields.
"""

from dataclasses import dataclass

import hf_gpt2
import llama
import neox
import opt
import bloom
import gptj
import qwen2
import phi
import gemma
import falcon


@dataclass(frozen=True)
class Family:
    name: str
    module: object
    # export.py option (dest) -> config field; options not listed do not apply
    fields: dict
    # the config field bounding the sequence length
    max_positions: str
    # the lowest ONNX opset torch 1.13 exports it at (llama's triu needs Trilu, opset 14)
    min_opset: int = 13


FAMILIES = {
    "hf-gpt2": Family("hf-gpt2", hf_gpt2, {
        "layers": "n_layer", "heads": "n_head", "embd": "n_embd", "inter": "n_inner",
        "vocab": "vocab_size", "block": "n_positions",
    }, "n_positions"),
    "llama": Family("llama", llama, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
        "embd": "hidden_size", "inter": "intermediate_size", "vocab": "vocab_size",
        "block": "max_position_embeddings",
    }, "max_position_embeddings", min_opset=14),
    "qwen2": Family("qwen2", qwen2, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
        "embd": "hidden_size", "inter": "intermediate_size", "vocab": "vocab_size",
        "block": "max_position_embeddings",
    }, "max_position_embeddings", min_opset=14),
    "phi": Family("phi", phi, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
        "embd": "hidden_size", "inter": "intermediate_size", "vocab": "vocab_size",
        "block": "max_position_embeddings",
    }, "max_position_embeddings", min_opset=14),
    # head_dim is a field of its own: --embd does not set it
    "gemma": Family("gemma", gemma, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
        "embd": "hidden_size", "inter": "intermediate_size", "vocab": "vocab_size",
        "block": "max_position_embeddings",
    }, "max_position_embeddings", min_opset=14),
    "falcon": Family("falcon", falcon, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "embd": "hidden_size",
        "vocab": "vocab_size", "block": "max_position_embeddings",
    }, "max_position_embeddings"),
    "neox": Family("neox", neox, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "embd": "hidden_size",
        "inter": "intermediate_size", "vocab": "vocab_size", "block": "max_position_embeddings",
        "rotary_pct": "rotary_pct",
    }, "max_position_embeddings"),
    "opt": Family("opt", opt, {
        "layers": "num_hidden_layers", "heads": "num_attention_heads", "embd": "hidden_size",
        "inter": "ffn_dim", "vocab": "vocab_size", "block": "max_position_embeddings",
    }, "max_position_embeddings"),
    # BLOOM's MLP is always 4 * hidden_size; ALiBi has no table, seq_length bounds --seq
    "bloom": Family("bloom", bloom, {
        "layers": "n_layer", "heads": "n_head", "embd": "hidden_size", "vocab": "vocab_size",
        "block": "seq_length",
    }, "seq_length"),
    "gptj": Family("gptj", gptj, {
        "layers": "n_layer", "heads": "n_head", "embd": "n_embd", "inter": "n_inner",
        "vocab": "vocab_size", "block": "n_positions", "rotary_dim": "rotary_dim",
    }, "n_positions"),
}

# Every size option any family takes (export.py's dest names).
SIZE_OPTIONS = ["layers", "heads", "kv_heads", "embd", "inter", "vocab", "block", "rotary_pct", "rotary_dim"]
