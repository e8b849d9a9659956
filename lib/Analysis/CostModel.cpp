//===- CostModel.cpp - cycles per token of kernels ------------------------===//
#include "wsc/Analysis/CostModel.h"

#include <algorithm>

using namespace wsc;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Every kernel's body runs once per token: receive, compute, reduce down the
// columns, gather along the last row, send. The PE that does the most of it
// sets the kernel's time.
double CostModel::linear(int64_t k, int64_t n, int64_t h, int64_t w, bool gelu,
                         bool gather) const {
  int64_t kb = ceilDiv(k, h), nb = ceilDiv(n, w);
  double t = words(k) + matvec(kb, nb) + chain(h - 1, nb) + vector(nb);
  if (gelu)
    t += transcendental(nb);
  return gather ? t + chain(w - 1, nb) + words(n) : t + vector(nb);
}

double CostModel::layerNorm(int64_t c, int64_t w) const {
  int64_t cb = ceilDiv(c, w);
  return words(c) + 4 * vector(c) + transcendental(1) + 3 * vector(cb) + chain(w - 1, cb) +
         words(c);
}

double CostModel::attention(int64_t t, int64_t d, int64_t heads) const {
  // The last token attends to all t keys: scores, softmax, weighted sum.
  return words(3 * d * heads) + 2 * vector(d) + matvec(t, d) + 4 * vector(t) +
         transcendental(2 * t) + matvec(t, d) + chain(heads - 1, d) + words(d * heads);
}

double CostModel::embed(int64_t v, int64_t c, int64_t h, int64_t w) const {
  int64_t cb = ceilDiv(c, w);
  return vector(cb) + chain(h - 1, cb) + vector(cb) + chain(w - 1, cb) + words(c);
}
