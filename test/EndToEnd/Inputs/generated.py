# generated.py TOKENS.npy STEPS.npy DIR G [LOOP]: a `wsc-run --generate G`
# run's tokens [B, P_max + G] and step logits [B, G, V] against torch's
# greedy loop (export.py --greedy writes DIR/prompt.npy, greedy.npy,
# greedy_logits.npy), or its sampling loop with LOOP=sample (export.py
# --sample: sample.npy, sample_logits.npy).
# Row b must be its prompt, torch's next G tokens, then -1s; the step logits
# those of positions P_b - 1 .. P_b + G - 2 (each picked the token after it).
import sys

import numpy

tokens, steps = numpy.load(sys.argv[1]), numpy.load(sys.argv[2])
prompt = numpy.load(sys.argv[3] + "/prompt.npy")
loop = sys.argv[5] if len(sys.argv) > 5 else "greedy"
want = numpy.load(sys.argv[3] + "/" + loop + ".npy")
want_logits = numpy.load(sys.argv[3] + "/" + loop + "_logits.npy")
g = int(sys.argv[4])
lengths = [int((row >= 0).sum()) for row in prompt]
print("tokens %s %s, step logits %s %s" % (tokens.shape, tokens.dtype, steps.shape, steps.dtype))
for b, p in enumerate(lengths):
    row = numpy.full(max(lengths) + g, -1, dtype=numpy.int64)
    row[:p + g] = want[b, :p + g]
    same = tokens.shape[1] == len(row) and (tokens[b] == row).all()
    print("sequence %d: prompt %d, %d tokens %s, %d distinct" % (
        b, p, g, "match" if same else "DIFFER: %s, torch %s" % (tokens[b].tolist(), row.tolist()),
        len(set(want[b, p:p + g].tolist()))))
    ref = want_logits[b, p - 1:p - 1 + g]
    close = steps.shape[1:] == ref.shape and numpy.allclose(steps[b], ref, rtol=1e-4, atol=1e-5)
    print("sequence %d: step logits %s" % (
        b, "match" if close else "DIFFER (max abs error %g)" % abs(steps[b] - ref).max()))
