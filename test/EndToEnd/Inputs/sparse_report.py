# sparse_report.py SPARSE.json DENSE.json: what the compile reports of a
# sparse model say against the dense one: the sparse kernels' zeros, weight
# bytes (held / dense) and whether every sparse tile multiplies in fewer
# cycles, and whether the model's cycles per token are no more than dense.
import json
import sys

sparse, dense = (json.load(open(p)) for p in sys.argv[1:3])
kernels = [k for w in sparse["wafers"] for k in w["kernels"] if "sparse" in k]
totals = sparse["sparse_weights"]
print("sparse kernels %d, zeros %s" % (len(kernels), sorted({round(k["sparse"]["zeros"], 2) for k in kernels})))
print("sparsity as zeros: %s" % all(k["sparsity"] == k["sparse"]["zeros"] for k in kernels))
print("weight bytes fall %.1fx" % (totals["dense_weight_bytes"] / totals["weight_bytes"]))
print("tiles faster: %s" % all(k["sparse"]["tile_cycles"] < k["sparse"]["dense_tile_cycles"] for k in kernels))
print("cycles per token <= dense: %s" % (sparse["estimate"]["cycles_per_token"] <= dense["estimate"]["cycles_per_token"]))
