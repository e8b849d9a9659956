# greedy.py NEXT_TOKEN.npy LOGITS.npy DIR [LOOP]: a generating program's
# next tokens and logits against torch's greedy loop (export.py --greedy
# writes DIR/prompt.npy, greedy.npy, greedy_logits.npy), or its sampling
# loop with LOOP=sample (export.py --sample: sample.npy, sample_logits.npy).
# Position t's next token is the one picked for position t + 1: past each
# prompt they must be torch's generated tokens; every position's logits
# must match torch's.
import sys

import numpy

nt, logits = numpy.load(sys.argv[1]), numpy.load(sys.argv[2])
prompt = numpy.load(sys.argv[3] + "/prompt.npy")
loop = sys.argv[4] if len(sys.argv) > 4 else "greedy"
want = numpy.load(sys.argv[3] + "/" + loop + ".npy")
want_logits = numpy.load(sys.argv[3] + "/" + loop + "_logits.npy")
for b in range(want.shape[0]):
    p = int((prompt[b] >= 0).sum())
    got = nt[b, p - 1:-1]
    same = got.shape == want[b, p:].shape and (got == want[b, p:]).all()
    print("sequence %d: prompt %d, %d generated tokens %s" % (
        b, p, len(got), "match" if same else "DIFFER: %s, torch %s" % (got.tolist(), want[b, p:].tolist())))
close = logits.shape == want_logits.shape and numpy.allclose(logits, want_logits, rtol=1e-4, atol=1e-5)
print("logits %s %s" % (logits.shape, "match" if close else "DIFFER (max abs error %g)" % abs(logits - want_logits).max()))
