//===- NextToken.h - greedy decoding's pick of the next token ---*- C++ -*-===//
//
// Shared by the kinds that pick a generating program's next token: the LM
// head's last row (Linear.cpp) and the argmax kind (Argmax.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_CONVERSION_KINDS_NEXTTOKEN_H
#define WSC_CONVERSION_KINDS_NEXTTOKEN_H

#include "Kind.h"

#include "wsgraph/WsgraphDialect.h"

namespace wsc::lowering {

/// The pick of the next token in a kernel's last row (an LM head's, or the
/// argmax kind's only row): each column the first index of its block's
/// largest score, the better (max, index) pair passed east (the west one
/// wins ties: its indices are smaller); the last column keeps the token id
/// for the host and, generating, feeds it back to the embedding. The score
/// is the logit (greedy), or with sampling (wsgraph.sample) the logit plus
/// temperature times Gumbel noise drawn by RANDOM.
struct NextToken {
  /// A generating program's pick of a token from logits [B, T, V]: a
  /// sample, or an argmax over the last axis that keeps the first index.
  static bool picks(Operation *op) {
    if (isa<wsgraph::SampleOp>(op))
      return true;
    auto argmax = dyn_cast<wsgraph::ArgMaxOp>(op);
    return argmax && !argmax.getKeepdims() && !argmax.getSelectLastIndex() &&
           argmax.getInput().getType().getRank() == 3 &&
           *wsgraph::normalizeAxis(argmax.getAxis(), 3) == 2;
  }

  /// A sample's [temperature, seed], or null (an argmax).
  static Value paramsOf(Operation *pick) {
    auto sample = dyn_cast<wsgraph::SampleOp>(pick);
    return sample ? sample.getParams() : Value();
  }

  /// The constant [V] of every logit's index as a float (exact below 2^24):
  /// the tile the pick takes indices from, an input of the kernel.
  static Value indices(Operation *at, int64_t v) {
    OpBuilder b(at);
    SmallVector<float> index(v);
    for (int64_t i = 0; i < v; ++i)
      index[i] = float(i);
    auto type = RankedTensorType::get({v}, b.getF32Type());
    return wsgraph::ConstantOp::create(b, at->getLoc(), DenseElementsAttr::get(type, ArrayRef(index)));
  }

  int64_t index, zeros, never, picked, pair, west, better, kept;
  /// Sampling's words: [temperature, seed] from the host, the position's
  /// counter and key, its scores (0: greedy).
  int64_t params = 0, counter = 0, key = 0, scores = 0;

  /// `params`: the kernel operand of a sample's [temperature, seed], if any.
  static NextToken allocate(Body &k, Sram &sram, unsigned indices, int64_t nb, int64_t all,
                            std::optional<unsigned> params = std::nullopt) {
    NextToken t{sram.words(nb), sram.words(nb), sram.words(nb), sram.words(nb),
                sram.words(2),  sram.words(2),  sram.words(2),  sram.words(all)};
    OpBuilder::InsertionGuard guard(k.builder()); // before the kernel's loops
    k.builder().setInsertionPointToStart(k.top());
    k.initTile(k.operand(indices), t.index, 1, nb, {0, 0}, {0, nb});
    k.imm("fill", k.aff(t.never), k.aff(0), std::numeric_limits<float>::infinity(), k.aff(nb));
    if (params) {
      t.params = sram.words(2), t.counter = sram.words(1), t.key = sram.words(1);
      t.scores = sram.words(nb);
      wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), k.operand(*params), t.params,
                              k.lastRow(), nullptr);
      k.imm("fill", k.aff(t.counter), k.aff(0), 0.0f, k.aff(1), k.lastRow());
    }
    return t;
  }

  /// Sampling: scores = logits - temperature * log(-log(u)), u uniform from
  /// the index under the position's key, itself drawn from the position
  /// (a counter, g = b*T + t) under the seed. Returns where the scores are.
  int64_t addNoise(Body &k, int64_t part, int64_t nb, ArrayAttr row) const {
    if (!scores)
      return part;
    k.scalar("random", k.aff(key), k.aff(counter), k.aff(params + 4), k.aff(1), row);
    k.imm("add", k.aff(counter), k.aff(counter), 1.0f, k.aff(1), row);
    k.scalar("random", k.aff(scores), k.aff(index), k.aff(key), k.aff(nb), row);
    k.unary("log", k.aff(scores), k.aff(scores), k.aff(nb), row);
    k.unary("neg", k.aff(scores), k.aff(scores), k.aff(nb), row);
    k.unary("log", k.aff(scores), k.aff(scores), k.aff(nb), row);
    k.scalar("mul", k.aff(scores), k.aff(scores), k.aff(params), k.aff(nb), row);
    k.vector("sub", k.aff(scores), k.aff(part), k.aff(scores), k.aff(nb), row);
    return scores;
  }

  /// Picks from the block at `part` (nb words of the n logits per column);
  /// `parity`: the token loop is split in a parity loop (t = 2 i1 + i0).
  /// With `feedBack`, sends the token on port "fb" while the sequence has a
  /// next position.
  void pick(Body &k, int64_t logits, int64_t nb, int64_t n, int64_t tokens, bool parity,
            bool feedBack = true) const {
    int64_t w = k.kernel().getWidth(), h = k.kernel().getHeight();
    OpBuilder &b = k.builder();
    Location loc = b.getUnknownLoc();
    ArrayAttr row = k.lastRow(), last = k.pes(w - 1, w - 1, h - 1, h - 1);
    int64_t part = addNoise(k, logits, nb, row);
    // The last column's words past the vocabulary are never the largest.
    if (int64_t valid = n - (w - 1) * nb; valid < nb)
      k.imm("fill", k.aff(part + 4 * valid), k.aff(0), -std::numeric_limits<float>::infinity(),
            k.aff(nb - valid), last);
    k.reduce("max", k.aff(pair), k.aff(part), k.aff(nb), row);
    k.scalar("sub", k.aff(picked), k.aff(part), k.aff(pair), k.aff(nb), row);
    k.vector("eq", k.aff(picked), k.aff(picked), k.aff(zeros), k.aff(nb), row);
    wk::SelectOp::create(b, loc, k.aff(picked), k.aff(picked), k.aff(index), k.aff(never),
                         k.aff(nb), row, nullptr);
    k.reduce("min", k.aff(pair + 4), k.aff(picked), k.aff(nb), row);
    if (w > 1) {
      ArrayAttr notFirst = k.pes(1, w - 1, h - 1, h - 1);
      k.recv("row", k.aff(west), k.aff(2), "copy", notFirst);
      k.vector("ge", k.aff(better), k.aff(west), k.aff(pair), k.aff(1), notFirst);
      k.unary("copy", k.aff(better + 4), k.aff(better), k.aff(1), notFirst);
      wk::SelectOp::create(b, loc, k.aff(pair), k.aff(better), k.aff(west), k.aff(pair),
                           k.aff(2), notFirst, nullptr);
      k.send("row", k.aff(pair), k.aff(2), k.pes(0, w - 2, h - 1, h - 1));
    }
    // Token t = 2 i1 + i0 inside a parity loop.
    SmallVector<int64_t, 3> byToken = parity ? SmallVector<int64_t, 3>{4, 8, 4 * tokens}
                                             : SmallVector<int64_t, 3>{4, 4 * tokens};
    SmallVector<int64_t, 3> lastBut = parity ? SmallVector<int64_t, 3>{-1, -2, 0}
                                             : SmallVector<int64_t, 3>{-1, 0};
    wk::AffAttr slot = k.aff(kept, byToken);
    k.unary("to_int", slot, k.aff(pair + 4), k.aff(1), last);
    if (feedBack && tokens > 1) // the next position's token, while the sequence has one
      k.send("fb", slot, k.aff(1), last, k.guards({k.aff(tokens - 2, lastBut)}));
  }

  /// The token ids as the kernel's host result `result`.
  void keepForHost(Body &k, unsigned result, int64_t batch, int64_t tokens) const {
    int64_t w = k.kernel().getWidth(), h = k.kernel().getHeight();
    OpBuilder::InsertionGuard guard(k.builder());
    k.builder().setInsertionPointToStart(k.top());
    wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), result, kept, batch, tokens,
                             k.builder().getDenseI64ArrayAttr({0, 0}),
                             k.builder().getDenseI64ArrayAttr({0, 0}),
                             k.pes(w - 1, w - 1, h - 1, h - 1));
  }

  /// One token's wait on the chain east across w columns (decode): each
  /// column takes the pair from the west, compares and chooses, and sends
  /// its pair on before the next column can.
  static double chainCycles(int64_t w, const CostModel &cost) {
    return double(w - 1) *
           (cost.forwarded(2) + 2 * cost.vector(1) + cost.vector(2) + cost.words(2));
  }

  /// The max, the comparison, the selection and the two reductions over a
  /// block, then the pair from the west, compared and chosen; sampling's
  /// key, counter and noise before them.
  static double cycles(int64_t nb, int64_t w, const CostModel &cost, bool samples = false) {
    double noise = samples ? 2 * cost.vector(1) + 4 * cost.vector(nb) + 2 * cost.transcendental(nb)
                           : 0.0;
    return noise + 5 * cost.vector(nb) + (w > 1 ? cost.forwarded(2) + 3 * cost.vector(2) : 0.0) +
           cost.vector(1);
  }
};


} // namespace wsc::lowering

#endif
