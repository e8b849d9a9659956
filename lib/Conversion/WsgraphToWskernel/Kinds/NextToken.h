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

  /// A sample's [temperature, seed] or [temperature, seed, top_k], or null
  /// (an argmax).
  static Value paramsOf(Operation *pick) {
    auto sample = dyn_cast<wsgraph::SampleOp>(pick);
    return sample ? sample.getParams() : Value();
  }
  /// Do a sample's params take top_k?
  static bool takesTopK(Value params) {
    auto type = params ? dyn_cast<ShapedType>(params.getType()) : nullptr;
    return type && type.hasRank() && type.getRank() == 1 && type.getDimSize(0) == 3;
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
  /// Sampling's words: [temperature, seed(, top_k)] from the host, the
  /// position's counter and key, its scores (0: greedy).
  int64_t params = 0, counter = 0, key = 0, scores = 0;
  /// Top-k's (keepTopK): the key bits a step settles (0: no top-k), the
  /// logits' order keys, a broadcast, the candidates and their counts,
  /// top_k as each count's bound, and the scalars (sel + 4 i): the bound
  /// so far, the step's unit, the radix, 2^24, top_k in use, scratch.
  int64_t topKBits = 0, keys = 0, spread = 0, cands = 0, counts = 0, bound = 0, sel = 0;

  /// `params`: the kernel operand of a sample's [temperature, seed] (or
  /// with `topKBits`, [temperature, seed, top_k]), if any.
  static NextToken allocate(Body &k, Sram &sram, unsigned indices, int64_t nb, int64_t all,
                            std::optional<unsigned> params = std::nullopt,
                            int64_t topKBits = 0) {
    // Top-k broadcasts its 2^bits - 1 words from `zeros` too.
    int64_t zeroWords = std::max<int64_t>(nb, topKBits ? int64_t(1) << topKBits : 0);
    NextToken t{sram.words(nb), sram.words(zeroWords), sram.words(nb), sram.words(nb),
                sram.words(2),  sram.words(2),         sram.words(2),  sram.words(all)};
    OpBuilder::InsertionGuard guard(k.builder()); // before the kernel's loops
    k.builder().setInsertionPointToStart(k.top());
    k.initTile(k.operand(indices), t.index, 1, nb, {0, 0}, {0, nb});
    k.imm("fill", k.aff(t.never), k.aff(0), std::numeric_limits<float>::infinity(), k.aff(nb));
    if (params) {
      t.params = sram.words(topKBits ? 3 : 2), t.counter = sram.words(1), t.key = sram.words(1);
      t.scores = sram.words(nb);
      wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), k.operand(*params), t.params,
                              k.lastRow(), nullptr);
      k.imm("fill", k.aff(t.counter), k.aff(0), 0.0f, k.aff(1), k.lastRow());
    }
    if (params && topKBits) {
      int64_t m = (int64_t(1) << topKBits) - 1;
      t.topKBits = topKBits, t.keys = sram.words(nb), t.spread = sram.words(std::max(nb, m));
      t.cands = sram.words(m + 1), t.counts = sram.words(m), t.bound = sram.words(m);
      t.sel = sram.words(6);
      k.imm("fill", k.aff(t.sel + 8), k.aff(0), float(int64_t(1) << topKBits), k.aff(1),
            k.lastRow(), nullptr, "i32");
      k.imm("fill", k.aff(t.sel + 12), k.aff(0), float(int64_t(1) << 24), k.aff(1), k.lastRow());
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

  /// Top-k: the scores at `part` of the logits at `logits` below the
  /// top_k-th largest of the row's n become -inf (ties stay). A radix
  /// select finds that logit's order key (its float's bits as an int32 in
  /// the floats' order: a negative float's b becomes INT32_MAX - b): each
  /// step counts, over the row, the keys at least each of 2^bits - 1
  /// candidates above the bound so far (a row all-reduce of the counts),
  /// and moves the bound to the largest candidate with top_k of them; 32 /
  /// bits steps settle every bit. top_k 0 or less keeps every logit.
  void keepTopK(Body &k, int64_t logits, int64_t part, int64_t nb, int64_t n,
                ArrayAttr row) const {
    if (!topKBits)
      return;
    int64_t w = k.kernel().getWidth(), y = k.kernel().getHeight() - 1;
    int64_t m = (int64_t(1) << topKBits) - 1;
    int64_t lo = sel, unit = sel + 4, radix = sel + 8, all = sel + 12, topK = sel + 16,
            scratch = sel + 20;
    auto a = [&](int64_t at, ArrayRef<int64_t> loop = {}) { return k.aff(at, loop); };
    // x + 0 makes -0 +0; a negative float's keys: -b + INT32_MIN - 1.
    k.imm("add", a(keys), a(logits), 0.0f, a(nb), row);
    k.unary("neg", a(picked), a(keys), a(nb), row, nullptr, "i32");
    k.imm("add", a(picked), a(picked), -2147483648.0f, a(nb), row, nullptr, "i32");
    k.imm("add", a(picked), a(picked), -1.0f, a(nb), row, nullptr, "i32");
    k.vector("ge", a(spread), a(keys), a(zeros), a(nb), row, nullptr, "i32");
    wk::SelectOp::create(k.builder(), k.builder().getUnknownLoc(), a(keys), a(spread), a(keys),
                         a(picked), a(nb), row, nullptr);
    // The last column's words past the vocabulary take the least key.
    if (int64_t valid = n - (w - 1) * nb; valid < nb)
      k.imm("fill", a(keys + 4 * valid), a(0), -2147483648.0f, a(nb - valid),
            k.pes(w - 1, w - 1, y, y), nullptr, "i32");
    k.vector("gt", a(scratch), a(params + 8), a(zeros), a(1), row);
    wk::SelectOp::create(k.builder(), k.builder().getUnknownLoc(), a(topK), a(scratch),
                         a(params + 8), a(all), a(1), row, nullptr);
    k.scalar("add", a(bound), a(zeros), a(topK), a(m), row);
    k.imm("fill", a(lo), a(0), -2147483648.0f, a(1), row, nullptr, "i32");
    k.imm("fill", a(unit), a(0), float(int64_t(1) << (32 - topKBits)), a(1), row, nullptr, "i32");
    k.loop(32 / topKBits, [&] {
      k.unary("copy", a(cands), a(lo), a(1), row);
      k.loop(m, [&] {
        k.scalar("add", a(cands + 4, {4}), a(cands, {4}), a(unit), a(1), row, nullptr, "i32");
      });
      k.loop(m, [&] {
        k.scalar("add", a(spread), a(zeros), a(cands + 4, {4}), a(nb), row, nullptr, "i32");
        k.vector("ge", a(spread), a(keys), a(spread), a(nb), row, nullptr, "i32");
        k.reduce("sum", a(counts, {4}), a(spread), a(nb), row, nullptr, "i32");
      });
      k.unary("to_float", a(counts), a(counts), a(m), row);
      k.rowAllReduce(counts, m, y);
      k.vector("ge", a(spread), a(counts), a(bound), a(m), row);
      k.reduce("sum", a(scratch), a(spread), a(m), row, nullptr, "i32");
      k.vector("mul", a(scratch), a(scratch), a(unit), a(1), row, nullptr, "i32");
      k.vector("add", a(lo), a(lo), a(scratch), a(1), row, nullptr, "i32");
      k.scalar("div", a(unit), a(unit), a(radix), a(1), row, nullptr, "i32");
    });
    k.scalar("add", a(spread), a(zeros), a(lo), a(nb), row, nullptr, "i32");
    k.vector("ge", a(spread), a(keys), a(spread), a(nb), row, nullptr, "i32");
    k.imm("fill", a(picked), a(0), -std::numeric_limits<float>::infinity(), a(nb), row);
    wk::SelectOp::create(k.builder(), k.builder().getUnknownLoc(), a(part), a(spread), a(part),
                         a(picked), a(nb), row, nullptr);
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
    keepTopK(k, logits, part, nb, n, row);
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
  /// With top-k (`topKBits`), its all-reduces' relays wait for each
  /// delivery too (cycles counts their hops).
  static double chainCycles(int64_t w, const CostModel &cost, int64_t topKBits = 0) {
    double relays = topKBits ? double(32 / topKBits) * 2.0 * double(w - 1) : 0.0;
    return double(w - 1) *
               (cost.forwarded(2) + 2 * cost.vector(1) + cost.vector(2) + cost.words(2)) +
           relays * cost.delivery();
  }

  /// Top-k's cycles per token with `bits` a step: the keys, top_k and the
  /// steps (candidates, their counts, the all-reduce, the new bound), then
  /// the scores' mask.
  static double topKCycles(int64_t nb, int64_t w, int64_t bits, const CostModel &cost) {
    int64_t m = (int64_t(1) << bits) - 1;
    double step = double(m + 1) * cost.vector(1) + double(m) * 3 * cost.vector(nb) +
                  3 * cost.vector(m) + cost.rowAllReduce(w, m) + 2 * cost.vector(1) +
                  cost.transcendental(1);
    return 6 * cost.vector(nb) + 4 * cost.vector(1) + cost.vector(m) + double(32 / bits) * step +
           4 * cost.vector(nb);
  }
  /// The bits a top-k step settles: 2 or 4, whichever takes fewer cycles.
  static int64_t topKBitsFor(int64_t nb, int64_t w, const CostModel &cost) {
    return topKCycles(nb, w, 2, cost) <= topKCycles(nb, w, 4, cost) ? 2 : 4;
  }

  /// The max, the comparison, the selection and the two reductions over a
  /// block, then the pair from the west, compared and chosen; sampling's
  /// key, counter and noise before them, and top-k's mask.
  static double cycles(int64_t nb, int64_t w, const CostModel &cost, bool samples = false,
                       int64_t topKBits = 0) {
    double noise = samples ? 2 * cost.vector(1) + 4 * cost.vector(nb) + 2 * cost.transcendental(nb)
                           : 0.0;
    double topK = topKBits ? topKCycles(nb, w, topKBits, cost) : 0.0;
    return noise + topK + 5 * cost.vector(nb) +
           (w > 1 ? cost.forwarded(2) + 3 * cost.vector(2) : 0.0) + cost.vector(1);
  }
};


} // namespace wsc::lowering

#endif
