//===- KernelBodies.cpp - the SPMD body of each kernel kind ----------------===//
//
// Every kernel follows one dataflow skeleton, per token:
//   1. each PE receives the part of the input vector it needs: the blocks of
//      the producer's result that the part touches, and no others;
//   2. each PE computes a partial result block from its SRAM-resident tile;
//   3. partials are summed down each column ("col" channel, chain south);
//   4. the last row finishes its block (bias, GELU, residual, positions);
//   5. each last-row PE sends its block as a result of its own ("out<px>"),
//      so consumers subscribe to the blocks they need. In weight streaming
//      (whose feedback is one stream) the blocks are gathered west to east
//      along the last row ("row" channel) and the last PE sends "out0".
// Weights are tiled [rows per PE-row] x [columns per PE-column], padded with
// zeros, so every PE runs the same code with coordinate-affine addresses.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "Kinds/Generic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;

SmallVector<LogicalInput> wsc::lowering::logicalInputs(wk::KernelOp kernel) {
  SmallVector<LogicalInput> ins;
  OpResult previous;
  for (auto [i, v] : llvm::enumerate(kernel.getInputs())) {
    auto stream = dyn_cast<wk::StreamType>(v.getType());
    auto result = dyn_cast<OpResult>(v);
    std::string port = "in" + std::to_string(i);
    if (stream && result && previous && !ins.back().blocks.empty() &&
        result.getOwner() == previous.getOwner() &&
        result.getResultNumber() == previous.getResultNumber() + 1) {
      LogicalInput &in = ins.back();
      in.blocks.push_back({port, in.words(), stream.getSize()});
    } else {
      ins.push_back({unsigned(i), v.getType(), {}});
      if (stream)
        ins.back().blocks.push_back({port, 0, stream.getSize()});
    }
    previous = stream ? result : OpResult();
  }
  return ins;
}

int64_t Body::recvRanges(unsigned in, ArrayRef<Range> ranges, int64_t step, int64_t parts,
                         bool byRow, ArrayAttr when, std::optional<Product> product,
                         ArrayAttr guard, bool async) {
  // One range: a block holds one piece of a part, with nothing to drop
  // around it (the filter or the whole block).
  assert((!product || ranges.size() == 1) && "a product takes one range");
  assert((!product || (!guard && !async)) && "a product is received on the core, always");
  // The PEs of parts [c0, c1], inside `when` (one range), or null if none.
  auto select = [&](int64_t c0, int64_t c1) -> ArrayAttr {
    int64_t x0 = byRow ? 0 : c0, x1 = byRow ? w - 1 : c1;
    int64_t y0 = byRow ? c0 : 0, y1 = byRow ? c1 : h - 1;
    if (when) {
      auto c = cast<wk::PeRangeAttr>(when[0]);
      x0 = std::max(x0, c.getX0()), x1 = std::min(x1, c.getX1());
      y0 = std::max(y0, c.getY0()), y1 = std::min(y1, c.getY1());
    }
    return x0 <= x1 && y0 <= y1 ? pes(x0, x1, y0, y1) : nullptr;
  };
  struct Piece {
    int64_t first, count, at; // in the block; how many; where in the range's part
    size_t range;
    bool operator<(const Piece &o) const { return first < o.first; }
  };
  std::vector<int64_t> received(parts, 0);
  for (const InBlock &block : ins[in].blocks) {
    int64_t lo = block.offset, hi = block.offset + block.size;
    // Part c's pieces of this block, in block order.
    auto pieces = [&](int64_t c) {
      SmallVector<Piece, 3> out;
      for (auto [r, range] : llvm::enumerate(ranges)) {
        int64_t from = range.base + c * step;
        int64_t to = std::min(from + (range.width ? range.width : step), range.end);
        int64_t a = std::max(from, lo), z = std::min(to, hi);
        if (a < z)
          out.push_back({a - lo, z - a, a - from, r});
      }
      llvm::sort(out);
      return out;
    };
    // Runs of parts whose pieces differ only by a shift of `step`: one
    // sequence of receives, the first words affine in the coordinate.
    auto shifted = [&](ArrayRef<Piece> a, ArrayRef<Piece> b, int64_t by) {
      if (a.size() != b.size())
        return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i].count != b[i].count || a[i].at != b[i].at || a[i].range != b[i].range ||
            b[i].first != a[i].first + by)
          return false;
      return true;
    };
    for (int64_t c = 0; c < parts;) {
      SmallVector<Piece, 3> p0 = pieces(c);
      if (p0.empty()) {
        ++c;
        continue;
      }
      int64_t c1 = c;
      while (c1 + 1 < parts && shifted(p0, pieces(c1 + 1), (c1 + 1 - c) * step))
        ++c1;
      ArrayAttr sel = select(c, c1);
      if (sel) {
        // Affine in the coordinate over the run (constant for one part, so
        // that empty drops vanish).
        int64_t slope = c == c1 ? 0 : step;
        auto at = [&](int64_t first) {
          int64_t base = first - c * slope;
          return byRow ? aff(base, {}, 0, slope) : aff(base, {}, slope, 0);
        };
        // What the core gets of the block: all of it, or, when its pieces
        // follow one another, just their window (the router's filter drops
        // the rest).
        wk::AffAttr cursor = aff(0), end = aff(block.size);
        bool adjoining = true;
        for (size_t i = 1; i < p0.size(); ++i)
          adjoining &= p0[i].first == p0[i - 1].first + p0[i - 1].count;
        int64_t window = p0.back().first + p0.back().count - p0[0].first;
        if (adjoining && window < block.size) {
          cursor = at(p0[0].first);
          end = aff(cursor.getBase() + window, {}, cursor.getPx(), cursor.getPy());
          bool filtered = llvm::any_of(topBlock->getOps<wk::FilterOp>(), [&](wk::FilterOp f) {
            return f.getPort() == block.port && f.getWhenAttr() == sel;
          });
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(topBlock);
          if (!filtered)
            wk::FilterOp::create(b, loc(), block.port, cursor, aff(window), sel);
        }
        int64_t gets = end.getBase() - cursor.getBase();
        for (const Piece &piece : p0) {
          wk::AffAttr first = at(piece.first);
          drop(block.port, aff(first.getBase() - cursor.getBase(), {},
                               first.getPx() - cursor.getPx(), first.getPy() - cursor.getPy()),
               sel, guard, async);
          const Range &range = ranges[piece.range];
          wk::AffAttr dst = range.dst;
          if (product) // the piece at `at` of the part meets rows from `at` on
            recvProduct(block.port, dst, aff(piece.count),
                        aff(product->matrix + 4 * piece.at * product->cols), aff(product->cols),
                        /*accumulate=*/piece.at > 0, sel);
          else
            recv(block.port,
                 aff(dst.getBase() + 4 * piece.at, dst.getLoop(), dst.getPx(), dst.getPy()),
                 aff(piece.count), "copy", sel, bothGuards(range.keep, guard), async);
          for (ArrayAttr other : range.otherwise)
            recv(block.port, aff(0), aff(piece.count), "discard", sel, bothGuards(other, guard),
                 async);
          cursor = aff(first.getBase() + piece.count, {}, first.getPx(), first.getPy());
        }
        drop(block.port,
             aff(end.getBase() - cursor.getBase(), {}, end.getPx() - cursor.getPx(),
                 end.getPy() - cursor.getPy()),
             sel, guard, async);
        for (int64_t i = c; i <= c1; ++i)
          received[i] += gets;
      }
      c = c1 + 1;
    }
  }
  return *std::max_element(received.begin(), received.end());
}

std::pair<int64_t, double> wsc::lowering::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                                    int64_t tokens, const CostModel &cost) {
  Sram sram;
  int64_t h = p.h, w = p.w;
  auto dim = [&](int i, int d) { return cast<ShapedType>(k.type(i)).getDimSize(d); };
  using Output = CostModel::Output;
  Output out = k.output;
  int64_t g = k.group;

  if (p.kind == "generic")
    return writeGenericBody(k, p, cost, batch * tokens);
  if (p.kind == "embed") {
    // A piece of a split table (rows weightRowBase and on) after the first
    // adds the partial sum of the piece before it, streamed in on in1.
    bool chained = k.isStream(1);
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
    int64_t part = sram.words(cb);
    int64_t partial = chained ? sram.words(cb) : 0;
    wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), k.operand(0), idx, nullptr);
    k.initTile(k.operand(at), table, vb, cb, {vb, 0}, {0, cb}, st);
    if (positions)
      k.initTile(k.operand(at + 1), pos, tb, cb, {tb, 0}, {0, cb}, st);
    k.tokenLoops();
    // Only the last row adds the partial sum: its block of it.
    int64_t in = chained ? k.recvRange(1, 0, cb, w, c, k.aff(partial), /*byRow=*/false, k.lastRow())
                         : 0;
    k.gather(k.aff(part), k.aff(table), k.aff(idx, {4, 4 * tokens}), k.aff(vb), k.aff(cb),
             k.aff(p.weightRowBase, {}, 0, vb), st);
    if (positions) {
      k.gather(k.aff(posPart), k.aff(pos), k.aff(zero), k.aff(tb), k.aff(cb),
               k.aff(0, {-1, 0}, 0, tb), st);
      k.vector("add", k.aff(part), k.aff(part), k.aff(posPart), k.aff(cb));
    }
    k.reduceGatherSend(k.aff(part), cb, c, [&] {
      if (chained)
        k.vector("add", k.aff(part), k.aff(part), k.aff(partial), k.aff(cb), k.lastRow());
    });
    return {sram.next,
            cost.embed(v, c, h, w, positions, out, in, g) + (chained ? cost.vector(cb) : 0.0)};
  }
  if (p.kind == "layer_norm") {
    // PE px normalizes block px of x. The mean and then the variance are
    // all-reduced over the row: sums run east on "row", the last PE's
    // total comes back west on "back" (two passes, as torch computes it).
    // A group of `step` tokens shares each all-reduce's round trip.
    int64_t c = k.words(0), cb = ceilDiv(c, w), step = layerNormTokens(tokens);
    bool bias = p.inputs.size() > 2;
    int64_t x = sram.words(step * cb), stat = sram.words(step);
    int64_t gamma = sram.words(cb), beta = bias ? sram.words(cb) : 0;
    // Token j of the group finishes into part + j*cb: its blocks leave on
    // the async engine while the next token is scaled.
    int64_t part = sram.words(step * cb);
    k.initTile(k.operand(1), gamma, 1, cb, {0, 0}, {0, cb});
    if (bias)
      k.initTile(k.operand(2), beta, 1, cb, {0, 0}, {0, cb});
    k.tokenLoops(step);
    auto allReduce = [&] {
      if (w == 1)
        return;
      k.recv("row", k.aff(stat), k.aff(step), "add", k.pes(1, w - 1, 0, 0));
      k.send("row", k.aff(stat), k.aff(step), k.pes(0, w - 2, 0, 0));
      k.recv("back", k.aff(stat), k.aff(step), "copy", k.pes(0, w - 2, 0, 0));
      k.send("back", k.aff(stat), k.aff(step), k.pes(1, w - 1, 0, 0));
    };
    // Token j of the group: its x at x + j*cb, its statistic at stat + j.
    wk::AffAttr xj = k.aff(x, {4 * cb}), sj = k.aff(stat, {4});
    int64_t in = 0;
    k.loop(step, [&] {
      // The last PE's block may be shorter: the words past it stay zero.
      in = k.recvRange(0, 0, cb, w, c, xj, /*byRow=*/false);
      k.reduce("sum", sj, xj, k.aff(cb));
    });
    allReduce();
    // Padding words are not part of x: zero them again after centring.
    int64_t last = c - (w - 1) * cb;
    k.loop(step, [&] {
      k.imm("mul", sj, sj, 1.0f / float(c), k.aff(1));
      k.scalar("sub", xj, xj, sj, k.aff(cb));
      if (last < cb)
        k.imm("fill", k.aff(x + 4 * last, {4 * cb}), k.aff(0), 0.0f, k.aff(cb - last),
              k.pes(w - 1, w - 1, 0, 0));
      k.matvec(sj, xj, xj, k.aff(1), k.aff(cb), false);
    });
    allReduce();
    k.loop(step, [&] {
      k.imm("mul", sj, sj, 1.0f / float(c), k.aff(1));
      k.imm("add", sj, sj, p.epsilon, k.aff(1));
      k.unary("rsqrt", sj, sj, k.aff(1));
      wk::AffAttr pj = k.aff(part, {4 * cb});
      k.scalar("mul", pj, xj, sj, k.aff(cb));
      k.vector("mul", pj, pj, k.aff(gamma), k.aff(cb));
      if (bias)
        k.vector("add", pj, pj, k.aff(beta), k.aff(cb));
      k.sendGroups(pj, cb, c, 0, /*async=*/true);
    });
    return {sram.next, cost.layerNorm(c, w, out, in, g, step)};
  }
  if (p.kind == "linear" || p.kind == "linear_gelu") {
    bool residual = p.inputs.size() > 1 && k.isStream(1);
    int first = residual ? 2 : 1;
    // A column piece computes columns [colLo, colHi) of the weight.
    SmallVector<int64_t, 2> window;
    if (p.colHi)
      window = {p.colLo, p.colHi};
    int64_t kdim = dim(first, 0), n = p.colHi ? p.colHi - p.colLo : dim(first, 1);
    bool bias = static_cast<int>(p.inputs.size()) > first + 1;
    // With a finishing row, the tiles are on rows 0..h-2 (the last row's
    // tile rows lie past K: zeros it never reads); with a hand-on row below
    // it, on rows 0..h-3.
    bool finishing = CostModel::finishingRow(h, out);
    bool asyncSums = finishing && asyncColumnSums(tokens);
    bool handOnRow = linearHandOnRow(p, kdim, n, p.kind == "linear_gelu", residual, tokens,
                                     cost.arch, asyncColumnSums(tokens));
    int64_t tileRows = CostModel::tileRows(h, out, handOnRow);
    int64_t fin = handOnRow ? h - 2 : h - 1; // the row that finishes
    ArrayAttr finRow = k.pes(0, w - 1, fin, fin);
    int64_t kb = ceilDiv(kdim, tileRows), nb = ceilDiv(n, w);
    bool streamed = streamsX(p.storage);
    int64_t x = streamed ? 0 : sram.words(kb);
    int64_t weight = sram.words(wk::storageWords(p.storage, kb * nb));
    int64_t b = bias ? sram.words(nb) : 0, r = residual ? sram.words(nb) : 0;
    // With async column sums, the weight rows' partial of token t is at
    // part + 4 nb (t mod 2): the engine passes one on while the core
    // computes the other (idx[0] of the parity loop).
    int64_t part = sram.words(asyncSums ? 2 * nb : nb);
    wk::AffAttr rowPart = asyncSums ? k.aff(part, {4 * nb}) : k.aff(part);
    k.initTile(k.operand(first), weight, kb, nb, {kb, 0}, {0, nb}, p.storage, window,
               p.colInterleave);
    if (bias)
      k.initTile(k.operand(first + 1), b, 1, nb, {0, 0}, {0, nb}, "f32", window, p.colInterleave);
    k.tokenLoops(asyncSums ? 2 : 1);
    if (asyncSums)
      k.openLoop(2);
    // Each PE row takes its kb-slice of x; the last slice may be shorter.
    // A piece of a split weight uses x[weightRowBase, weightRowBase + kdim).
    // An f32 tile takes each piece of the slice (a block of x holds it)
    // straight into its rows' multiply-adds; a 16-bit one stores x first.
    int64_t base = p.weightRowBase, in;
    if (streamed) {
      in = k.recvRanges(0, {Body::Range{base, base + kdim, rowPart}}, kb, tileRows,
                        /*byRow=*/true, nullptr, Body::Product{weight, nb});
      // Tile rows past K (kb rounds up) take no x: their partial is zero.
      int64_t holding = ceilDiv(kdim, kb);
      if (holding < tileRows)
        k.imm("fill", rowPart, k.aff(0), 0.0f, k.aff(nb), k.pes(0, w - 1, holding, tileRows - 1));
    } else {
      in = k.recvRange(0, base, kb, tileRows, base + kdim, k.aff(x), /*byRow=*/true);
    }
    // Only the last row adds the residual: its block of it.
    int64_t inLast =
        residual ? k.recvRange(1, 0, nb, w, n, k.aff(r), /*byRow=*/false, finRow) : 0;
    if (!streamed)
      k.matvec(rowPart, k.aff(weight), k.aff(x), k.aff(kb), k.aff(nb), true,
               finishing ? k.pes(0, w - 1, 0, tileRows - 1) : nullptr, nullptr, p.storage);
    // A piece of a split weight after the first adds the partial sum of the
    // pieces before it, ahead of the bias and GELU; a real residual follows them.
    bool partialSum = residual && p.weightRowBase > 0;
    auto epilogue = [&] {
      if (partialSum)
        k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), finRow);
      if (bias)
        k.vector("add", k.aff(part), k.aff(part), k.aff(b), k.aff(nb), finRow);
      if (p.kind == "linear_gelu")
        k.unary("gelu", k.aff(part), k.aff(part), k.aff(nb), finRow);
      if (residual && !partialSum)
        k.vector("add", k.aff(part), k.aff(part), k.aff(r), k.aff(nb), finRow);
    };
    if (!p.hostResult) {
      k.reduceGatherSend(k.aff(part), nb, n, epilogue, true, true, finishing, handOnRow,
                         asyncSums ? rowPart : nullptr);
    } else {
      // The host reads the blocks where they are kept, no gather. When they
      // all fit (HostKept) the last row keeps every token's block; else row
      // py keeps tokens g in [py*tb, py*tb + tb), g = b*T + t: the last row
      // finishes each token's block and keeps it or sends it north ("up")
      // to its row, and the rows in between pass it on. A last row that
      // keeps them all holds no tiles when it finishes (`finishing`).
      bool lastKeeps = out == Output::HostKept && h > 1;
      int64_t all = batch * tokens, tb = lastKeeps ? all : ceilDiv(all, h);
      int64_t kept = sram.words(tb * nb), relay = h > 1 && !lastKeeps ? sram.words(nb) : 0;
      // Token t of batch b is t = 2 i1 + i0 inside the parity loop, which
      // only a last row that keeps every token has (the guards below are
      // for rows that keep some).
      assert((!asyncSums || lastKeeps) && "async sums finish on a row that keeps all");
      SmallVector<int64_t, 3> byToken = {4 * nb, 4 * nb * tokens};
      if (asyncSums)
        byToken = {4 * nb, 8 * nb, 4 * nb * tokens};
      wk::AffAttr slot = k.aff(kept, byToken, 0, lastKeeps ? 0 : -4 * nb * tb);
      ArrayAttr mine = k.guards({k.aff(0, {1, tokens}, 0, -tb),             // g >= py*tb
                                 k.aff(tb - 1, {-1, -tokens}, 0, tb)});     // g < py*tb + tb
      ArrayAttr above = k.guards({k.aff(-1, {-1, -tokens}, 0, tb)});       // g < py*tb
      ArrayAttr upper = k.pes(0, w - 1, 0, h - 2);
      k.reduceGatherSend(k.aff(part), nb, n, [&] {
        epilogue();
        k.unary("copy", slot, k.aff(part), k.aff(nb), k.lastRow(),
                h > 1 && !lastKeeps ? mine : nullptr);
        if (h == 1 || lastKeeps)
          return;
        k.send("up", k.aff(part), k.aff(nb), k.lastRow(), above);
        k.recv("up", slot, k.aff(nb), "copy", upper, mine);
        k.relay("up", "up", k.aff(relay), k.aff(nb), "copy", upper, above);
      }, true, /*gatherRow=*/false, finishing, false, asyncSums ? rowPart : nullptr);
      OpBuilder::InsertionGuard guard(k.builder());
      k.builder().setInsertionPointToStart(k.top());
      wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, kept, tb, nb,
                               k.builder().getDenseI64ArrayAttr({lastKeeps ? 0 : tb, 0}),
                               k.builder().getDenseI64ArrayAttr({0, nb}),
                               lastKeeps ? k.lastRow() : nullptr,
                               k.builder().getDenseI64ArrayAttr(window));
    }
    return {sram.next, cost.linear(kdim, n, h, w, p.kind == "linear_gelu", out, in, g, inLast,
                                   handOnRow, streamed, asyncSums)};
  }
  if (p.kind == "attention") {
    // Head hd runs on columns [hd*parts, hd*parts + parts): column px takes
    // dimensions [px*ds, px*ds + ds) of q, k and v (ds = d / parts, so the
    // offsets are affine in px). Row py holds the keys and values of tokens
    // [py*tb, py*tb + tb). Each row scores its block on its dimensions,
    // all-reduces the scores over the head's columns, takes a partial
    // softmax (max m, sum s, weighted values o); partials merge down each
    // column and the last row divides o by s. Guards pick the rows by the
    // token index t (loop index 0): "own" holds t, "past" lies wholly
    // before t, "future" lies wholly after it.
    int64_t c3 = k.words(0), c = c3 / 3, heads = p.heads, d = c / heads, rows = h;
    int64_t parts = w / heads, ds = d / parts;
    int64_t tb = ceilDiv(tokens, rows);
    int64_t q = sram.words(ds), keys = sram.words(tb * ds), vals = sram.words(tb * ds);
    int64_t scores = sram.words(tb), acc = sram.words(ds + 2), up = sram.words(ds + 2);
    // The last row's result: its blocks leave on the async engine while the
    // next token is scored.
    int64_t tmp = sram.words(2), result = sram.words(ds);
    int64_t m = acc, sum = acc + 4, o = acc + 8; // acc = [m, s, o[ds]]
    k.tokenLoops();
    // Row-relative token position r = t - py*tb; own: 0 <= r <= tb-1.
    wk::AffAttr notBefore = k.aff(0, {1, 0}, 0, -tb);       // r >= 0
    wk::AffAttr notAfter = k.aff(tb - 1, {-1, 0}, 0, tb);   // tb-1-r >= 0
    wk::AffAttr beforeRow = k.aff(-1, {-1, 0}, 0, tb);      // t < py*tb
    wk::AffAttr afterRow = k.aff(-tb, {1, 0}, 0, -tb);      // t >= py*tb + tb
    ArrayAttr own = k.guards({notBefore, notAfter});
    ArrayAttr seen = k.guards({notBefore});                  // own or past
    ArrayAttr future = k.guards({beforeRow});
    wk::AffAttr slot = k.aff(0, {4 * ds, 0}, 0, -4 * tb * ds); // r * ds words, in bytes
    ArrayAttr past = k.guards({afterRow});
    // [q | k | v] of token t + ahead: column px takes its share of q, k and
    // v; the row that holds that token keeps its key and value in its slot,
    // the others drop them.
    auto qkvRanges = [&](int64_t ahead) {
      ArrayAttr holds =
          k.guards({k.aff(ahead, {1, 0}, 0, -tb), k.aff(tb - 1 - ahead, {-1, 0}, 0, tb)});
      SmallVector<ArrayAttr, 2> others = {k.guards({k.aff(-1 - ahead, {-1, 0}, 0, tb)}),
                                          k.guards({k.aff(ahead - tb, {1, 0}, 0, -tb)})};
      auto cacheSlot = [&](int64_t cache) {
        return k.aff(cache + slot.getBase() + 4 * ds * ahead, slot.getLoop(), 0, slot.getPy());
      };
      // In order, q, k and v of column px start at px*ds, c + px*ds and 2c +
      // px*ds. Interleaved by the producer ([3, ds]; the sizer keeps ds),
      // they follow one another from 3ds*px: one window of its blocks.
      SmallVector<Body::Range, 3> ranges = {{0, c, k.aff(q)},
                                            {c, 2 * c, cacheSlot(keys), holds, others},
                                            {2 * c, 3 * c, cacheSlot(vals), holds, others}};
      if (p.qkvUnit) {
        assert(p.qkvUnit == ds && "the sizer keeps an interleaved input's columns");
        for (auto [i, r] : llvm::enumerate(ranges))
          r.base = int64_t(i) * ds, r.end = c3, r.width = ds;
      }
      return ranges;
    };
    int64_t step = p.qkvUnit ? 3 * ds : ds;
    // With `prefetch`, token t+1's words come on the async engines once
    // token t's scores have used q (none after a sequence's last token):
    // the core receives only a sequence's first token.
    bool prefetch = attentionPrefetches(p, tokens);
    ArrayAttr first = prefetch ? k.guards({k.aff(0, {-1, 0})}) : nullptr; // t == 0
    int64_t in = k.recvRanges(0, qkvRanges(0), step, w, /*byRow=*/false, nullptr, std::nullopt,
                              first);
    // Partial scores over the block; summed over the head's columns (a sum
    // chain east, the total back west, inside each head); slots after t
    // score -inf.
    k.matvec(k.aff(scores), k.aff(keys), k.aff(q), k.aff(tb), k.aff(ds), false, nullptr, seen);
    if (prefetch)
      k.recvRanges(0, qkvRanges(1), step, w, /*byRow=*/false, nullptr, std::nullopt,
                   k.guards({k.aff(tokens - 2, {-1, 0})}), /*async=*/true);
    if (parts > 1) {
      auto columns = [&](int64_t from, int64_t to) { // of every head, all rows
        SmallVector<Attribute> r;
        for (int64_t hd = 0; hd < heads; ++hd)
          r.push_back(wk::PeRangeAttr::get(k.builder().getContext(), hd * parts + from,
                                           hd * parts + to, 0, h - 1));
        return k.builder().getArrayAttr(r);
      };
      ArrayAttr notFirst = columns(1, parts - 1), notLast = columns(0, parts - 2);
      k.recv("row", k.aff(scores), k.aff(tb), "add", notFirst, seen);
      k.send("row", k.aff(scores), k.aff(tb), notLast, seen);
      k.recv("back", k.aff(scores), k.aff(tb), "copy", notLast, seen);
      k.send("back", k.aff(scores), k.aff(tb), notFirst, seen);
    }
    k.imm("fill", k.aff(scores + 4, {4, 0}, 0, -4 * tb), k.aff(0),
          -std::numeric_limits<float>::infinity(), k.aff(tb - 1, {-1, 0}, 0, tb), nullptr, own);
    k.imm("mul", k.aff(scores), k.aff(scores), p.scale, k.aff(tb), nullptr, seen);
    k.reduce("max", k.aff(m), k.aff(scores), k.aff(tb), nullptr, seen);
    // A row wholly in the future contributes nothing: m = -inf, s = 0, o = 0.
    k.imm("fill", k.aff(m), k.aff(0), -std::numeric_limits<float>::infinity(), k.aff(1), nullptr,
          future);
    // The partial (m', s', o') of the rows above comes first: the row's
    // exponents are taken against M = max(m, m') directly, so only the one
    // from above is rescaled, s + s' e^(m'-M) and o + o' e^(m'-M) in one
    // multiply-add pass. Row 0 always holds token 0, so m' is finite.
    ArrayAttr below = rows > 1 ? k.pes(0, w - 1, 1, h - 1) : nullptr;
    if (rows > 1) {
      k.recv("col", k.aff(up), k.aff(ds + 2), "copy", below);
      k.vector("max", k.aff(m), k.aff(m), k.aff(up), k.aff(1), below);
    }
    k.scalar("sub", k.aff(scores), k.aff(scores), k.aff(m), k.aff(tb), nullptr, seen);
    k.unary("exp", k.aff(scores), k.aff(scores), k.aff(tb), nullptr, seen);
    k.reduce("sum", k.aff(sum), k.aff(scores), k.aff(tb), nullptr, seen);
    // Prefetching, the row holding t weighs its values up to t only: the
    // next token's may be arriving in the slot after it.
    if (prefetch) {
      k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(1, {1, 0}, 0, -tb), k.aff(ds), true,
               nullptr, own);
      k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(tb), k.aff(ds), true, nullptr, past);
    } else {
      k.matvec(k.aff(o), k.aff(vals), k.aff(scores), k.aff(tb), k.aff(ds), true, nullptr, seen);
    }
    k.imm("fill", k.aff(sum), k.aff(0), 0.0f, k.aff(ds + 1), nullptr, future);
    if (rows > 1) {
      int64_t scale = tmp;
      k.vector("sub", k.aff(scale), k.aff(up), k.aff(m), k.aff(1), below);
      k.unary("exp", k.aff(scale), k.aff(scale), k.aff(1), below);
      k.matvec(k.aff(sum), k.aff(up + 4), k.aff(scale), k.aff(1), k.aff(ds + 1), true, below,
               nullptr, "f32", /*accumulate=*/true);
      // On the async engine: the next token touches acc after its scores.
      k.send("col", k.aff(acc), k.aff(ds + 2), k.pes(0, w - 1, 0, h - 2), nullptr, /*async=*/true);
    }
    // o / s as o * rsqrt(s)^2: one transcendental instead of ds divisions.
    k.unary("rsqrt", k.aff(tmp), k.aff(sum), k.aff(1), k.lastRow());
    k.vector("mul", k.aff(tmp), k.aff(tmp), k.aff(tmp), k.aff(1), k.lastRow());
    k.scalar("mul", k.aff(result), k.aff(o), k.aff(tmp), k.aff(ds), k.lastRow());
    k.sendGroups(k.aff(result), ds, c, h - 1, /*async=*/true);
    return {sram.next, cost.attention(tokens, d, heads, parts, rows, out, in, g, prefetch)};
  }
  if (p.kind == "add") {
    int64_t c = k.words(0);
    int64_t a = sram.words(c), b = sram.words(c);
    k.tokenLoops();
    int64_t in = k.recvAll(0, k.aff(a)) + k.recvAll(1, k.aff(b));
    k.vector("add", k.aff(a), k.aff(a), k.aff(b), k.aff(c));
    k.send("out0", k.aff(a), k.aff(c));
    k.outBlocks.push_back(c);
    return {sram.next, cost.words(in) + cost.vector(c) + cost.words(c)};
  }
  // The host output: every row of the result (a token's vector) lands in
  // this PE's SRAM; an input or a constant returned as it is is placed there.
  if (!k.isStream(0)) {
    Value v = k.kernel().getInputs()[0];
    int64_t n = cast<ShapedType>(v.getType()).getNumElements(), cols = streamWords(v);
    int64_t held = sram.words(n);
    if (isa<BlockArgument>(v))
      wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, held, nullptr);
    else
      k.initTile(0, held, n / cols, cols, {0, 0}, {0, 0});
    wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, held, n / cols, cols,
                             k.builder().getDenseI64ArrayAttr({0, 0}),
                             k.builder().getDenseI64ArrayAttr({0, 0}), nullptr);
    return {sram.next, 0.0};
  }
  int64_t n = k.words(0);
  int64_t rows = cast<ShapedType>(k.kernel()->getResult(0).getType()).getNumElements() / n;
  int64_t result = sram.words(rows * n);
  wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, result, rows, n,
                           k.builder().getDenseI64ArrayAttr({0, 0}),
                           k.builder().getDenseI64ArrayAttr({0, 0}), nullptr);
  if (rows != batch * tokens) {
    int64_t got = 0;
    k.loop(rows, [&] { got = k.recvAll(0, k.aff(result, {4 * n})); });
    return {sram.next, cost.words(got * rows) / double(batch * tokens)};
  }
  k.tokenLoops();
  return {sram.next, cost.words(k.recvAll(0, k.aff(result, {4 * n, 4 * n * tokens})))};
}
