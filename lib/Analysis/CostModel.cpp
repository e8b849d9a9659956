//===- CostModel.cpp - cycles per token of kernels ------------------------===//
#include "wsc/Analysis/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace wsc;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The busiest PE of each kernel: receive, compute, relay the column
// partial, finish in the last row, and (the last PE) gather and send.
double CostModel::sparseMatvec(int64_t rows, int64_t entries) const {
  return double(ceilDiv(entries + rows, arch.getFmacFp32()));
}

int64_t CostModel::densestTileEntries(int64_t elements, double density) {
  double mean = density * double(elements);
  double spread = std::sqrt(mean * (1.0 - density));
  return std::min<int64_t>(elements, int64_t(std::ceil(mean + 3.0 * spread)) + 1);
}

double CostModel::linear(int64_t k, int64_t n, int64_t h, int64_t w, bool gelu, Output out,
                         int64_t in, int64_t group, int64_t inLast, bool handOnRow,
                         bool streamed, bool asyncSums, int64_t tileEntries,
                         bool turns) const {
  int64_t nb = ceilDiv(n, w);
  double finish = vector(nb) + (gelu ? transcendental(nb) : 0.0) + (turns ? turnPairs(nb) : 0.0);
  double handOn = output(out, n, nb, w, h, group);
  auto multiply = [&](int64_t kb) {
    return tileEntries >= 0 ? sparseMatvec(kb, tileEntries) : matvec(kb, nb);
  };
  // Taking the slice of x and multiplying it: one after the other, or side
  // by side when the words stream into the multiply-adds.
  auto product = [&](int64_t kb) {
    return streamed ? std::max(words(in), multiply(kb)) : words(in) + multiply(kb);
  };
  if (finishingRow(h, out)) {
    // Weight rows pass their sums on; the finishing row receives and
    // finishes, and hands the result on or sends it to the gather row.
    int64_t kb = ceilDiv(k, tileRows(h, out, handOnRow));
    double rows = asyncSums && !tokenAlone ? std::max(product(kb), forwarded(nb))
                                           : product(kb) + forwarded(nb);
    double last = words(nb) + words(inLast) + finish + (handOnRow ? words(nb) : handOn);
    if (tokenAlone) // its rows' sums, then the finishing work on them
      return rows + finish;
    return std::max({rows, last, handOnRow ? words(nb) + handOn : 0.0});
  }
  int64_t kb = ceilDiv(k, h);
  return product(kb) + words(inLast) + (h > 1 ? forwarded(nb) : 0.0) + finish + handOn;
}

double CostModel::gatedLinear(int64_t k, int64_t n, int64_t h, int64_t w, bool silu,
                              int64_t biases, int64_t in, int64_t group, bool handOnRow,
                              bool asyncSums, int64_t gateEntries, int64_t upEntries) const {
  int64_t nb = ceilDiv(n, w);
  // Biases, the activation (a sigmoid and g times it, or one GELU) and the
  // product with the up sum, on nb words each.
  double finish = double(biases) * vector(nb) + transcendental(nb) +
                  (silu ? 2.0 : 1.0) * vector(nb);
  double handOn = output(Output::Blocks, n, nb, w, h, group);
  // x is stored, then meets both tiles (one multiply-add pass each).
  auto multiply = [&](int64_t kb, int64_t entries) {
    return entries >= 0 ? sparseMatvec(kb, entries) : matvec(kb, nb);
  };
  auto product = [&](int64_t kb) {
    return words(in) + multiply(kb, gateEntries) + multiply(kb, upEntries);
  };
  if (finishingRow(h, Output::Blocks)) {
    int64_t kb = ceilDiv(k, tileRows(h, Output::Blocks, handOnRow));
    double sums = forwarded(2 * nb);
    double rows = asyncSums && !tokenAlone ? std::max(product(kb), sums) : product(kb) + sums;
    double last = words(2 * nb) + finish + (handOnRow ? words(nb) : handOn);
    if (tokenAlone)
      return rows + finish;
    return std::max({rows, last, handOnRow ? words(nb) + handOn : 0.0});
  }
  int64_t kb = ceilDiv(k, h);
  return product(kb) + (h > 1 ? forwarded(2 * nb) : 0.0) + finish + handOn;
}

double CostModel::layerNorm(int64_t c, int64_t w, Output out, int64_t in, int64_t group,
                            int64_t step) const {
  // Sum, all-reduce, centre; x . x, all-reduce; rsqrt; scale, gamma, beta.
  // The all-reduces carry `step` tokens' statistics per round trip. The
  // blocks leave on the async engine, beside the next token's work.
  int64_t cb = ceilDiv(c, w);
  double core = words(in) + vector(cb) + 2 * rowAllReduce(w, step) / double(step) +
                4 * vector(1) + vector(cb) + matvec(1, cb) + transcendental(1) + 3 * vector(cb);
  return std::max(core, output(out, c, cb, w, 1, group));
}

double CostModel::rmsNorm(int64_t c, int64_t w, Output out, int64_t in, int64_t group,
                          int64_t step) const {
  // x . x, all-reduce; mean, + eps, rsqrt; scale, weight. No centring: one
  // all-reduce of `step` tokens' sums per round trip, the blocks leaving
  // on the async engine as the layer norm's do.
  int64_t cb = ceilDiv(c, w);
  double core = words(in) + matvec(1, cb) + rowAllReduce(w, step) / double(step) +
                2 * vector(1) + transcendental(1) + 2 * vector(cb);
  return std::max(core, output(out, c, cb, w, 1, group));
}

double CostModel::attention(int64_t t, int64_t d, int64_t heads, int64_t parts, int64_t rows,
                            Output out, int64_t in, int64_t group, bool prefetch,
                            bool sideBySide, int64_t queries) const {
  // A row scores its block of keys on its share of the head's dimensions,
  // all-reduces the scores over the head's columns, takes its softmax (in
  // the pipeline against the larger of its max and the rows above's),
  // weighs its values, merges the partial from above (mergeCycles) and
  // passes it on. Passing it on and the last row's blocks run on the async
  // engine, beside the next token's work, and so does receiving the next
  // token's q, k and v when prefetching. Side by side (generating), the
  // rows above the middle one merge in a tree toward it, which takes one a
  // level and the lower rows' total; those below toward the row under it,
  // one a level (the lowest float's fill and max too: both may be empty).
  // A column's query heads share its all-reduces and messages.
  int64_t tb = ceilDiv(t, rows), ds = ceilDiv(d, parts), q = std::max<int64_t>(1, queries);
  int64_t middle = (rows - 1) / 2;
  double merges = sideBySide ? double(std::max(treeLevels(middle) + 1,
                                               treeLevels(rows - 2 - middle)))
                             : 1.0;
  double mergeOne = mergeCycles(*this, ds, sideBySide) + (sideBySide ? 2 * vector(1) : 0.0);
  double merge = rows > 1 ? merges * (forwarded(q * (ds + 2)) + double(q) * mergeOne) : 0.0;
  double perHead = 2 * matvec(tb, ds) + 4 * vector(tb) + transcendental(tb) + transcendental(1) +
                   vector(1) + vector(ds);
  double core = double(q) * perHead + rowAllReduce(parts, q * tb) + merge;
  double engine = (rows > 1 ? words(q * (ds + 2)) : 0.0) +
                  output(out, d * heads, q * ds, heads / q * parts, rows, group);
  (prefetch ? engine : core) += words(in);
  return std::max(core, engine);
}

double CostModel::embed(int64_t v, int64_t c, int64_t h, int64_t w, bool positions, Output out,
                        int64_t in, int64_t group) const {
  int64_t cb = ceilDiv(c, w);
  return words(in) + vector(cb) + (h > 1 ? forwarded(cb) : 0.0) + vector(cb) +
         (positions ? vector(cb) : 0.0) + output(out, c, cb, w, h, group);
}
