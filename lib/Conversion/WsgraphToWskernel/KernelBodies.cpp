//===- KernelBodies.cpp - the SPMD body of each kernel kind ----------------===//
//
// Every kernel follows one dataflow skeleton, per token:
//   1. each PE receives the slice of the input vector it needs (the rest of
//      the multicast stream is dropped);
//   2. each PE computes a partial result block from its SRAM-resident tile;
//   3. partials are summed down each column ("col" channel, chain south);
//   4. the last row finishes its block (bias, GELU, residual, positions);
//   5. blocks stream west to east along the last row ("row" channel), one at
//      a time, and the last PE sends them on "out0" as they arrive.
// Weights are tiled [rows per PE-row] x [columns per PE-column], padded with
// zeros, so every PE runs the same code with coordinate-affine addresses.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;

std::pair<int64_t, double> wsc::lowering::writeBody(Body &k, const KernelPlan &p, ArrayRef<Type> inTypes,
                                     int64_t batch, int64_t tokens, const CostModel &cost) {
  Sram sram;
  int64_t h = p.h, w = p.w;
  auto dim = [&](int i, int d) { return cast<ShapedType>(inTypes[i]).getDimSize(d); };
  auto streamSize = [&](int i) { return cast<wk::StreamType>(inTypes[i]).getSize(); };

  if (p.kind == "embed") {
    // A piece of a split table (rows weightRowBase and on) after the first
    // adds the partial sum of the piece before it, streamed in on in1.
    bool chained = isa<wk::StreamType>(inTypes[1]);
    int at = chained ? 2 : 1;
    int64_t v = dim(at, 0), c = dim(at, 1);
    int64_t vb = ceilDiv(v, h), cb = ceilDiv(c, w), tb = ceilDiv(tokens, h);
    bool positions = static_cast<int>(p.inputs.size()) > at + 1;
    StringRef st = p.storage;
    int64_t idx = sram.words(batch * tokens), table = sram.words(wk::storageWords(st, vb * cb));
    // Positions are a second table, spread over the rows like the first:
    // row py holds positions [py*tb, py*tb + tb) and looks up row t - py*tb,
    // through an index word that stays zero.
    int64_t pos = positions ? sram.words(wk::storageWords(st, tb * cb)) : 0;
    int64_t zero = positions ? sram.words(1) : 0;
    int64_t posPart = positions ? sram.words(cb) : 0;
    int64_t part = sram.words(cb), gather = sram.words(cb);
    int64_t partial = chained ? sram.words(cb) : 0;
    wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, idx, nullptr);
    k.initTile(at, table, vb, cb, {vb, 0}, {0, cb}, st);
    if (positions)
      k.initTile(at + 1, pos, tb, cb, {tb, 0}, {0, cb}, st);
    k.tokenLoops();
    if (chained) {
      // Only the last row adds the partial sum: its block of it.
      if (h > 1)
        k.drop("in1", k.aff(c), k.pes(0, w - 1, 0, h - 2));
      k.recvSlices("in1", c, cb, w, partial, /*byRow=*/false, k.lastRow());
    }
    k.gather(k.aff(part), k.aff(table), k.aff(idx, {4, 4 * tokens}), k.aff(vb), k.aff(cb),
             k.aff(p.weightRowBase, {}, 0, vb), st);
    if (positions) {
      k.gather(k.aff(posPart), k.aff(pos), k.aff(zero), k.aff(tb), k.aff(cb),
               k.aff(0, {-1, 0}, 0, tb), st);
      k.vector("add", k.aff(part), k.aff(part), k.aff(posPart), k.aff(cb));
    }
    k.reduceGatherSend(part, cb, c, gather, [&] {
      if (chained)
        k.vector("add", k.aff(part), k.aff(part), k.aff(partial), k.aff(cb), k.lastRow());
    });
    return {sram.next,
            cost.embed(v, c, h, w, positions) + (chained ? cost.words(c) + cost.vector(cb) : 0.0)};
  }
  if (p.kind == "layer_norm") {
    int64_t c = streamSize(0), cb = ceilDiv(c, w);
    bool bias = p.inputs.size() > 2;
    // Two-pass statistics on the whole vector when it fits beside the rest;
    // otherwise one pass over cb-word chunks: var = E[x^2] - mean^2.
    bool whole = c + 6 * cb + 1024 <= cost.arch.getSramBytes() / 4;
    int64_t x = whole ? sram.words(w * cb) : 0;
    int64_t mean = sram.words(1), var = sram.words(1); // adjacent: summed as a pair
    int64_t gamma = sram.words(cb), beta = bias ? sram.words(cb) : 0;
    int64_t part = sram.words(cb), gather = sram.words(cb);
    k.initTile(1, gamma, 1, cb, {0, 0}, {0, cb});
    if (bias)
      k.initTile(2, beta, 1, cb, {0, 0}, {0, cb});
    k.tokenLoops();
    wk::AffAttr block; // this PE's block of x - mean
    if (whole) {
      // x is centred in place; the variance is x . x, a 1 x c matvec.
      k.recv("in0", k.aff(x), k.aff(c));
      k.reduce("sum", k.aff(mean), k.aff(x), k.aff(c));
      k.imm("mul", k.aff(mean), k.aff(mean), 1.0f / float(c), k.aff(1));
      k.scalar("sub", k.aff(x), k.aff(x), k.aff(mean), k.aff(c));
      k.matvec(k.aff(var), k.aff(x), k.aff(x), k.aff(1), k.aff(c), false);
      k.imm("mul", k.aff(var), k.aff(var), 1.0f / float(c), k.aff(1));
      block = k.aff(x, {}, 4 * cb);
    } else {
      int64_t chunk = sram.words(cb), mine = sram.words(cb), t = sram.words(2);
      k.imm("fill", k.aff(mean), k.aff(0), 0.0f, k.aff(2)); // mean, var hold the sums
      auto accumulate = [&](int64_t n) {
        k.reduce("sum", k.aff(t), k.aff(chunk), k.aff(n));
        k.matvec(k.aff(t + 4), k.aff(chunk), k.aff(chunk), k.aff(1), k.aff(n), false);
        k.vector("add", k.aff(mean), k.aff(mean), k.aff(t), k.aff(2));
      };
      if (w > 1) {
        auto loop = wk::LoopOp::create(k.builder(), k.builder().getUnknownLoc(), w - 1);
        OpBuilder::InsertionGuard inLoop(k.builder());
        k.builder().setInsertionPointToStart(&loop.getBody().emplaceBlock());
        k.recv("in0", k.aff(chunk), k.aff(cb));
        accumulate(cb);
        // Chunk i is this PE's block when i == px.
        k.unary("copy", k.aff(mine), k.aff(chunk), k.aff(cb), nullptr,
                k.guards({k.aff(0, {1}, -1), k.aff(0, {-1}, 1)}));
      }
      int64_t last = c - (w - 1) * cb;
      k.recv("in0", k.aff(chunk), k.aff(last));
      accumulate(last);
      k.unary("copy", k.aff(mine), k.aff(chunk), k.aff(last), k.pes(w - 1, w - 1, 0, 0));
      k.imm("mul", k.aff(mean), k.aff(mean), 1.0f / float(c), k.aff(2));
      k.vector("mul", k.aff(t), k.aff(mean), k.aff(mean), k.aff(1));
      k.vector("sub", k.aff(var), k.aff(var), k.aff(t), k.aff(1));
      k.scalar("sub", k.aff(mine), k.aff(mine), k.aff(mean), k.aff(cb));
      block = k.aff(mine);
    }
    k.imm("add", k.aff(var), k.aff(var), p.epsilon, k.aff(1));
    k.unary("rsqrt", k.aff(var), k.aff(var), k.aff(1));
    k.scalar("mul", k.aff(part), block, k.aff(var), k.aff(cb));
    k.vector("mul", k.aff(part), k.aff(part), k.aff(gamma), k.aff(cb));
    if (bias)
      k.vector("add", k.aff(part), k.aff(part), k.aff(beta), k.aff(cb));
    k.reduceGatherSend(part, cb, c, gather, [] {});
    return {sram.next, cost.layerNorm(c, w)};
  }
  if (p.kind == "linear" || p.kind == "linear_gelu") {
    bool residual = p.inputs.size() > 1 && isa<wk::StreamType>(inTypes[1]);
    int first = residual ? 2 : 1;
    // A column piece computes columns [colLo, colHi) of the weight.
    SmallVector<int64_t, 2> window;
    if (p.colHi)
      window = {p.colLo, p.colHi};
    int64_t kdim = dim(first, 0), n = p.colHi ? p.colHi - p.colLo : dim(first, 1);
    bool bias = static_cast<int>(p.inputs.size()) > first + 1;
    int64_t kb = ceilDiv(kdim, h), nb = ceilDiv(n, w);
    int64_t x = sram.words(kb), weight = sram.words(wk::storageWords(p.storage, kb * nb));
    int64_t b = bias ? sram.words(nb) : 0, r = residual ? sram.words(nb) : 0;
    int64_t part = sram.words(nb), gather = p.hostResult ? -1 : sram.words(nb);
    k.initTile(first, weight, kb, nb, {kb, 0}, {0, nb}, p.storage, window);
    if (bias)
      k.initTile(first + 1, b, 1, nb, {0, 0}, {0, nb}, "f32", window);
    k.tokenLoops();
    // Each PE row keeps its kb-slice of x; the last slice may be shorter.
    // A piece of a split weight uses x[weightRowBase, weightRowBase + kdim).
    int64_t xWords = streamSize(0);
    k.drop("in0", k.aff(p.weightRowBase));
    k.recvSlices("in0", kdim, kb, h, x, /*byRow=*/true);
    k.drop("in0", k.aff(xWords - p.weightRowBase - kdim));
    if (residual) {
      // Only the last row adds the residual: its block of it.
      if (h > 1)
        k.drop("in1", k.aff(n), k.pes(0, w - 1, 0, h - 2));
      k.recvSlices("in1", n, nb, w, r, /*byRow=*/false, k.lastRow());
    }
    k.matvec(k.aff(part), k.aff(weight), k.aff(x), k.aff(kb), k.aff(nb), true, nullptr, nullptr,
             p.storage);
    // A piece of a split weight after the first adds the partial sum of the
    // pieces before it, ahead of the bias and GELU; a real residual follows them.
    bool partialSum = residual && p.weightRowBase > 0;
    auto epilogue = [&] {
      if (partialSum)
        k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), k.lastRow());
      if (bias)
        k.vector("add", k.aff(part), k.aff(part), k.aff(b), k.aff(nb), k.lastRow());
      if (p.kind == "linear_gelu")
        k.unary("gelu", k.aff(part), k.aff(part), k.aff(nb), k.lastRow());
      if (residual && !partialSum)
        k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), k.lastRow());
    };
    if (!p.hostResult) {
      k.reduceGatherSend(part, nb, n, gather, epilogue);
    } else {
      // The host reads the blocks where they are kept, no gather: row py
      // keeps tokens g in [py*tb, py*tb + tb), g = b*T + t. The last row
      // finishes each token's block and keeps it or sends it north ("up")
      // to its row; the rows in between pass it on.
      int64_t all = batch * tokens, tb = ceilDiv(all, h);
      int64_t out = sram.words(tb * nb), relay = h > 1 ? sram.words(nb) : 0;
      wk::AffAttr slot = k.aff(out, {4 * nb, 4 * nb * tokens}, 0, -4 * nb * tb);
      ArrayAttr mine = k.guards({k.aff(0, {1, tokens}, 0, -tb),             // g >= py*tb
                                 k.aff(tb - 1, {-1, -tokens}, 0, tb)});     // g < py*tb + tb
      ArrayAttr above = k.guards({k.aff(-1, {-1, -tokens}, 0, tb)});       // g < py*tb
      ArrayAttr upper = k.pes(0, w - 1, 0, h - 2);
      k.reduceGatherSend(part, nb, n, -1, [&] {
        epilogue();
        k.unary("copy", slot, k.aff(part), k.aff(nb), k.lastRow(), h > 1 ? mine : nullptr);
        if (h == 1)
          return;
        k.send("up", k.aff(part), k.aff(nb), k.lastRow(), above);
        k.recv("up", slot, k.aff(nb), "copy", upper, mine);
        k.recv("up", k.aff(relay), k.aff(nb), "copy", upper, above);
        k.send("up", k.aff(relay), k.aff(nb), upper, above);
      }, true, /*gatherRow=*/false);
      OpBuilder::InsertionGuard guard(k.builder());
      k.builder().setInsertionPointToStart(k.top());
      wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, out, tb, nb,
                               k.builder().getDenseI64ArrayAttr({tb, 0}),
                               k.builder().getDenseI64ArrayAttr({0, nb}), nullptr,
                               k.builder().getDenseI64ArrayAttr(window));
    }
    return {sram.next, cost.linear(kdim, n, h, w, p.kind == "linear_gelu", !p.hostResult) +
                           cost.words(xWords - kdim)};
  }
  if (p.kind == "attention") {
    // Column px is head px; row py holds the keys and values of tokens
    // [py*tb, py*tb + tb). Each row computes a partial softmax over its block
    // (max m, sum s, weighted values o); partials merge down the column and
    // the last row divides o by s. Guards pick the rows by the token index t
    // (loop index 0): "own" holds t, "past" lies wholly before t, "future"
    // lies wholly after it.
    int64_t c3 = streamSize(0), c = c3 / 3, heads = w, d = c / heads, rows = h;
    int64_t tb = ceilDiv(tokens, rows);
    int64_t q = sram.words(d), keys = sram.words(tb * d), vals = sram.words(tb * d);
    int64_t scores = sram.words(tb), acc = sram.words(d + 2), up = sram.words(d + 2);
    int64_t tmp = sram.words(2), gather = sram.words(d);
    int64_t m = acc, sum = acc + 4, o = acc + 8; // acc = [m, s, o[d]]
    k.tokenLoops();
    // Row-relative token position r = t - py*tb; own: 0 <= r <= tb-1.
    wk::AffAttr notBefore = k.aff(0, {1, 0}, 0, -tb);       // r >= 0
    wk::AffAttr notAfter = k.aff(tb - 1, {-1, 0}, 0, tb);   // tb-1-r >= 0
    wk::AffAttr beforeRow = k.aff(-1, {-1, 0}, 0, tb);      // t < py*tb
    wk::AffAttr afterRow = k.aff(-tb, {1, 0}, 0, -tb);      // t >= py*tb + tb
    ArrayAttr own = k.guards({notBefore, notAfter});
    ArrayAttr seen = k.guards({notBefore});                  // own or past
    ArrayAttr future = k.guards({beforeRow});
    wk::AffAttr slot = k.aff(0, {4 * d, 0}, 0, -4 * tb * d); // r * d words, in bytes
    // [q | k | v]: keep q[px]; k[px] and v[px] go into this token's slot on its row.
    k.drop("in0", k.aff(0, {}, d));
    k.recv("in0", k.aff(q), k.aff(d));
    k.drop("in0", k.aff(c - d));
    auto keepOnOwnRow = [&](int64_t cache) {
      k.recv("in0", k.aff(cache + slot.getBase(), slot.getLoop(), 0, slot.getPy()), k.aff(d),
             "copy", nullptr, own);
      k.recv("in0", k.aff(0), k.aff(d), "discard", nullptr, future);
      k.recv("in0", k.aff(0), k.aff(d), "discard", nullptr, k.guards({afterRow}));
    };
    keepOnOwnRow(keys);
    k.drop("in0", k.aff(c - d));
    keepOnOwnRow(vals);
    k.drop("in0", k.aff(c - d, {}, -d));
    // Partial softmax over the block; slots after t score -inf.
    k.matvec(k.aff(scores), k.aff(keys), k.aff(q), k.aff(tb), k.aff(d), false, nullptr, seen);
    k.imm("fill", k.aff(scores + 4, {4, 0}, 0, -4 * tb), k.aff(0),
          -std::numeric_limits<float>::infinity(), k.aff(tb - 1, {-1, 0}, 0, tb), nullptr, own);
    k.imm("mul", k.aff(scores), k.aff(scores), p.scale, k.aff(tb), nullptr, seen);
    k.reduce("max", k.aff(m), k.aff(scores), k.aff(tb), nullptr, seen);
    k.scalar("sub", k.aff(scores), k.aff(scores), k.aff(m), k.aff(tb), nullptr, seen);
    k.unary("exp", k.aff(scores), k.aff(scores), k.aff(tb), nullptr, seen);
    k.reduce("sum", k.aff(sum), k.aff(scores), k.aff(tb), nullptr, seen);
    k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(tb), k.aff(d), true, nullptr, seen);
    // A row wholly in the future contributes nothing: m = -inf, s = 0, o = 0.
    k.imm("fill", k.aff(m), k.aff(0), -std::numeric_limits<float>::infinity(), k.aff(1), nullptr,
          future);
    k.imm("fill", k.aff(sum), k.aff(0), 0.0f, k.aff(d + 1), nullptr, future);
    if (rows > 1) {
      // Merge (m', s', o') from the row above: M = max(m, m');
      // s = s e^(m-M) + s' e^(m'-M); o = o e^(m-M) + o' e^(m'-M). Row 0
      // always holds token 0, so M is finite from there on.
      ArrayAttr below = k.pes(0, w - 1, 1, h - 1);
      int64_t mm = tmp, scale = tmp + 4;
      k.recv("col", k.aff(up), k.aff(d + 2), "copy", below);
      k.vector("max", k.aff(mm), k.aff(m), k.aff(up), k.aff(1), below);
      k.vector("sub", k.aff(scale), k.aff(m), k.aff(mm), k.aff(1), below);
      k.unary("exp", k.aff(scale), k.aff(scale), k.aff(1), below);
      k.scalar("mul", k.aff(sum), k.aff(sum), k.aff(scale), k.aff(d + 1), below);
      k.vector("sub", k.aff(scale), k.aff(up), k.aff(mm), k.aff(1), below);
      k.unary("exp", k.aff(scale), k.aff(scale), k.aff(1), below);
      k.scalar("mul", k.aff(up + 4), k.aff(up + 4), k.aff(scale), k.aff(d + 1), below);
      k.vector("add", k.aff(sum), k.aff(sum), k.aff(up + 4), k.aff(d + 1), below);
      k.unary("copy", k.aff(m), k.aff(mm), k.aff(1), below);
      k.send("col", k.aff(acc), k.aff(d + 2), k.pes(0, w - 1, 0, h - 2));
    }
    k.scalar("div", k.aff(o), k.aff(o), k.aff(sum), k.aff(d), k.lastRow());
    k.reduceGatherSend(o, d, c, gather, [] {}, /*reduceColumns=*/false);
    return {sram.next, cost.attention(tokens, d, heads, rows)};
  }
  if (p.kind == "add") {
    int64_t c = streamSize(0);
    int64_t a = sram.words(c), b = sram.words(c);
    k.tokenLoops();
    k.recv("in0", k.aff(a), k.aff(c));
    k.recv("in1", k.aff(b), k.aff(c));
    k.vector("add", k.aff(a), k.aff(a), k.aff(b), k.aff(c));
    k.send("out0", k.aff(a), k.aff(c));
    return {sram.next, cost.words(2 * c) + cost.vector(c) + cost.words(c)};
  }
  // The host output: every token's vector lands in this PE's SRAM.
  int64_t n = streamSize(0);
  int64_t out = sram.words(batch * tokens * n);
  wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, out, batch * tokens, n,
                           k.builder().getDenseI64ArrayAttr({0, 0}),
                           k.builder().getDenseI64ArrayAttr({0, 0}), nullptr);
  k.tokenLoops();
  k.recv("in0", k.aff(out, {4 * n, 4 * n * tokens}), k.aff(n));
  return {sram.next, cost.words(n)};
}
