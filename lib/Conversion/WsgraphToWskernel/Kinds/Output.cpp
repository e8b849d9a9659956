//===- Output.cpp - the host output kernel kind -----------------------------===//
//
// The PEs that keep a returned value for the host: the rows of a stream as
// they arrive (on one PE, a column of PEs by rows, or a row of PEs by
// columns), or an input or constant returned as it is.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;

namespace {

class OutputKind : public KernelKind {
public:
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;

private:
  /// A result too large for one PE, kept by a column of h PEs, rows in order.
  static std::pair<int64_t, double> writeRowsOverPes(Body &k, const KernelPlan &p, int64_t rows,
                                                     const CostModel &cost, int64_t tokensPerRun);
  /// A result whose rows are too wide for one PE, kept by a row of w PEs,
  /// each a slice of every row.
  static std::pair<int64_t, double> writeColumnsOverPes(Body &k, const KernelPlan &p,
                                                        int64_t rows, const CostModel &cost,
                                                        int64_t tokensPerRun);
};

} // namespace

std::pair<int64_t, double> OutputKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                      int64_t tokens, const CostModel &cost) const {
  Sram sram;
  // The host output: every row of the result (a token's vector) lands in
  // this PE's SRAM; an input or a constant returned as it is is placed there.
  if (!k.isStream(0)) {
    Value v = k.kernel().getInputs()[0];
    int64_t n = cast<ShapedType>(v.getType()).getNumElements(), cols = streamWords(v);
    int64_t held = sram.words(n);
    if (isa<BlockArgument>(v))
      wk::HostInputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, held, nullptr, nullptr);
    else
      k.initTile(0, held, n / cols, cols, {0, 0}, {0, 0});
    wk::HostOutputOp::create(k.builder(), k.builder().getUnknownLoc(), 0, held, n / cols, cols,
                             k.builder().getDenseI64ArrayAttr({0, 0}),
                             k.builder().getDenseI64ArrayAttr({0, 0}), nullptr);
    return {sram.next, 0.0};
  }
  int64_t n = k.words(0);
  int64_t rows = cast<ShapedType>(k.kernel()->getResult(0).getType()).getNumElements() / n;
  if (p.h > 1)
    return writeRowsOverPes(k, p, rows, cost, batch * tokens);
  if (p.w > 1)
    return writeColumnsOverPes(k, p, rows, cost, batch * tokens);
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

std::pair<int64_t, double> OutputKind::writeRowsOverPes(Body &k, const KernelPlan &p,
                                                        int64_t rows, const CostModel &cost,
                                                        int64_t tokensPerRun) {
  // PE py keeps rows [py*r, py*r + r) (the last PE the rest): its routers'
  // filters give its core just those, a period being the whole tensor.
  Sram sram;
  OpBuilder &b = k.builder();
  int64_t n = k.words(0), h = p.h, r = ceilDiv(rows, h), lastRows = rows - (h - 1) * r;
  int64_t result = sram.words(r * n);
  wk::HostOutputOp::create(b, b.getUnknownLoc(), 0, result, r, n, b.getDenseI64ArrayAttr({r, 0}),
                           b.getDenseI64ArrayAttr({0, 0}), nullptr);
  ArrayAttr most = k.pes(0, 0, 0, h - 2), last = k.pes(0, 0, h - 1, h - 1);
  for (const InBlock &block : k.input(0).blocks) {
    IntegerAttr period = b.getI64IntegerAttr(rows * block.size);
    wk::FilterOp::create(b, b.getUnknownLoc(), block.port, k.aff(0, {}, 0, r * block.size),
                         k.aff(r * block.size), most, period);
    wk::FilterOp::create(b, b.getUnknownLoc(), block.port, k.aff((h - 1) * r * block.size),
                         k.aff(lastRows * block.size), last, period);
  }
  for (auto [count, when] : {std::pair<int64_t, ArrayAttr>{r, most}, {lastRows, last}})
    k.loop(count, [&] {
      for (const InBlock &block : k.input(0).blocks)
        k.recv(block.port, k.aff(result + 4 * block.offset, {4 * n}), k.aff(block.size), "copy",
               when);
    });
  return {sram.next, cost.words(r * n) / double(tokensPerRun)};
}

std::pair<int64_t, double> OutputKind::writeColumnsOverPes(Body &k, const KernelPlan &p,
                                                           int64_t rows, const CostModel &cost,
                                                           int64_t tokensPerRun) {
  // PE px keeps words [px*cb, px*cb + cb) of every row (the last PE fewer).
  Sram sram;
  OpBuilder &b = k.builder();
  int64_t n = k.words(0), cb = ceilDiv(n, p.w);
  int64_t result = sram.words(rows * cb);
  wk::HostOutputOp::create(b, b.getUnknownLoc(), 0, result, rows, cb,
                           b.getDenseI64ArrayAttr({0, 0}), b.getDenseI64ArrayAttr({0, cb}), nullptr);
  int64_t got = 0;
  k.loop(rows, [&] {
    got = k.recvRange(0, 0, cb, p.w, n, k.aff(result, {4 * cb}), /*byRow=*/false);
  });
  return {sram.next, cost.words(got) * double(rows) / double(tokensPerRun)};
}

const KernelKind &wsc::lowering::outputKind() {
  static const OutputKind kind;
  return kind;
}
