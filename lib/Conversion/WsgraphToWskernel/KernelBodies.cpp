//===- KernelBodies.cpp - the skeleton the kernel kinds' bodies share -----===//
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
        int64_t from = range.start ? range.start(c) : range.base + c * step;
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
        // What the core gets of the block: all of it, or just the window
        // from its first piece to the end of its last (the router's filter
        // drops the rest; the core drops the gaps between pieces).
        wk::AffAttr cursor = aff(0), end = aff(block.size);
        int64_t window = p0.back().first + p0.back().count - p0[0].first;
        if (window < block.size) {
          cursor = at(p0[0].first);
          end = aff(cursor.getBase() + window, {}, cursor.getPx(), cursor.getPy());
          bool filtered = llvm::any_of(topBlock->getOps<wk::FilterOp>(), [&](wk::FilterOp f) {
            return f.getPort() == block.port && f.getWhenAttr() == sel;
          });
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(topBlock);
          if (!filtered)
            wk::FilterOp::create(b, loc(), block.port, cursor, aff(window), sel, nullptr);
        }
        int64_t gets = end.getBase() - cursor.getBase();
        for (const Piece &piece : p0) {
          wk::AffAttr first = at(piece.first);
          drop(block.port, aff(first.getBase() - cursor.getBase(), {},
                               first.getPx() - cursor.getPx(), first.getPy() - cursor.getPy()),
               sel, guard, async);
          const Range &range = ranges[piece.range];
          wk::AffAttr dst = range.dst;
          // The piece at `at` of the part meets rows from `at` on: a dense
          // tile's at their address, a sparse one's found from its counts.
          if (product) {
            bool sparse = product->storage != "f32";
            recvProduct(block.port, dst, aff(piece.count),
                        aff(product->matrix + (sparse ? 0 : 4 * piece.at * product->cols)),
                        aff(product->cols), /*accumulate=*/piece.at > 0, sel, product->storage,
                        product->rows, sparse ? piece.at : 0);
          } else
            recv(block.port, Body::shifted(dst, 4 * piece.at), aff(piece.count), "copy", sel,
                 bothGuards(range.keep, guard), async);
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
