# kinds.py REPORT.json: the kernel kinds of a compile report, sorted, and how
# many kernels are generic (with the first few names).
import json
import sys

report = json.load(open(sys.argv[1]))
kernels = [k for w in report["wafers"] for k in w["kernels"]]
print("kinds:", " ".join(sorted({k["kind"] for k in kernels})))
generic = [k["name"] for k in kernels if k["kind"] == "generic"]
print("generic:", len(generic), " ".join(generic[:8]))
