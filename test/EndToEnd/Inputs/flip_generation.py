# flip_generation.py WSC_RUN PROGRAM.wafer PB2_DIR INPUT=FILE OUT_DIR: flips
# each byte of the program's generation section (its tag, length and
# fields), one copy at a time; every copy must be refused when loaded.
import os
import subprocess
import sys

sys.path.insert(0, sys.argv[3])
import wafer_pb2  # noqa: E402

raw = open(sys.argv[2], "rb").read()
program = wafer_pb2.Program.FromString(raw)
section = program.generation.SerializeToString()
# Field 10, length-delimited: tag 0x52, a one-byte length (the section is short).
needle = bytes([0x52, len(section)]) + section
assert len(section) < 128 and raw.count(needle) == 1, "generation section not found once"
at = raw.index(needle)
refused, kinds = 0, set()
for i in range(at, at + len(needle)):
    bad = bytearray(raw)
    bad[i] ^= 0x01
    path = os.path.join(sys.argv[5], "flip.wafer")
    open(path, "wb").write(bad)
    run = subprocess.run([sys.argv[1], path, "--input", sys.argv[4]], capture_output=True, text=True)
    if run.returncode == 1 and "error:" in run.stderr:
        refused += 1
        kinds.add("digest" if "does not match its digest" in run.stderr else "parse")
    else:
        print("BAD: byte %d flipped: exit %d %s" % (i - at, run.returncode, run.stderr.strip()))
print("generation bytes %d: refused %d (%s)" % (len(needle), refused, " ".join(sorted(kinds))))
