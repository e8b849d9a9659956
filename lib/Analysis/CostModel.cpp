//===- CostModel.cpp - cycles per token of kernels ------------------------===//
#include "wsc/Analysis/CostModel.h"

#include <algorithm>

using namespace wsc;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The busiest PE of each kernel: receive, compute, relay the column
// partial, finish in the last row, and (the last PE) gather and send.
double CostModel::linear(int64_t k, int64_t n, int64_t h, int64_t w, bool gelu,
                         bool gather) const {
  int64_t kb = ceilDiv(k, h), nb = ceilDiv(n, w);
  double t = words(k) + matvec(kb, nb) + (h > 1 ? relay(nb) : 0.0) + vector(nb);
  if (gelu)
    t += transcendental(nb);
  // Host results: rows above the last pass blocks north to the row that
  // keeps them.
  return t + (gather ? gatherLast(n, nb, w) : h > 1 ? relay(nb) : vector(nb));
}

double CostModel::layerNorm(int64_t c, int64_t w) const {
  int64_t cb = ceilDiv(c, w);
  return words(c) + 4 * vector(c) + transcendental(1) + 3 * vector(cb) + gatherLast(c, cb, w);
}

double CostModel::attention(int64_t t, int64_t d, int64_t heads, int64_t rows) const {
  // A row scores its block of keys, takes a partial softmax, weighs its
  // values, then merges the partial from above and passes it on.
  int64_t tb = ceilDiv(t, rows);
  double merge = rows > 1 ? relay(d + 2) + 2 * transcendental(1) + 3 * vector(d + 1) : 0.0;
  return words(3 * d * heads) + matvec(tb, d) + 4 * vector(tb) + transcendental(tb) +
         matvec(tb, d) + merge + transcendental(d) + gatherLast(d * heads, d, heads);
}

double CostModel::embed(int64_t v, int64_t c, int64_t h, int64_t w, bool positions) const {
  int64_t cb = ceilDiv(c, w);
  return vector(cb) + (h > 1 ? relay(cb) : 0.0) + vector(cb) + (positions ? vector(cb) : 0.0) +
         gatherLast(c, cb, w);
}
