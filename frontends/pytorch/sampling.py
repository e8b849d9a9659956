"""wsgraph.sample's pick of a token, in numpy: the reference a sampling
program (wsc-compile --generate --sampling) must reproduce.

The uniform numbers are the ISA's RANDOM (runtime/wafer.proto): a 32-bit
finalizer of a word's bits xor the mixed key. Position g = b * T + t draws
its key from the word float(g) under the seed; index i of its logits draws
u from float(i) under that key; the token is the argmax of
logits - temperature * log(-log(u)) (the Gumbel-max trick). With top_k > 0,
only the logits at least the top_k-th largest (ties kept) can be picked.
"""
import numpy as np


def mix_bits(x):
    """RANDOM's finalizer on uint32 words."""
    x = np.asarray(x, dtype=np.uint32).copy()
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7feb352d)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846ca68b)
    x ^= x >> np.uint32(16)
    return x


def float_bits(v):
    return np.asarray(v, dtype=np.float32).view(np.uint32)


def uniform(words, key):
    """RANDOM: a float32 in (0, 1) per uint32 word, under the key word."""
    h = mix_bits(np.asarray(words, dtype=np.uint32) ^ mix_bits(key))
    return ((h >> np.uint32(9)).astype(np.float32) + np.float32(0.5)) * np.float32(2.0 ** -23)


def pick(logits, g, temperature, seed, top_k=0):
    """The token picked at position g from its logits [V] (float32)."""
    logits = np.asarray(logits, dtype=np.float32)
    key = uniform(float_bits([float(g)]), float_bits(float(seed)))
    u = uniform(float_bits(np.arange(logits.shape[-1], dtype=np.float32)), float_bits(key)[0])
    noise = np.log(-np.log(u)) * np.float32(temperature)
    scores = logits - noise
    if 0 < top_k < logits.shape[-1]:
        kth = np.sort(logits)[-top_k]
        scores = np.where(logits >= kth, scores, np.float32(-np.inf))
    return int(np.argmax(scores))
