# compare.py GOT.npy WANT.npy REPORT.json: prints whether the emulator's
# logits match the reference (float32 tolerance) and the run's token count.
# Words delivered to a PE that never consumes them mean the compiler routed a
# stream where no receive wants it: that is a mismatch too.
import json
import sys

import numpy

got, want = numpy.load(sys.argv[1]), numpy.load(sys.argv[2])
report = json.load(open(sys.argv[3]))
ok = got.shape == want.shape and numpy.allclose(got, want, rtol=1e-4, atol=1e-5)
verdict = "match" if ok else "DIFFER (max abs error %g)" % abs(got - want).max()
unconsumed = [w for w in report.get("warnings", []) if "never consumed" in w]
if ok and unconsumed:
    verdict = "DIFFER (%s)" % unconsumed[0]
print("logits %s %s, tokens %d" % (got.shape, verdict, report["tokens"]))
