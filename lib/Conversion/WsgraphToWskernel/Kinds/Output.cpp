//===- Output.cpp - the host output kernel kind -----------------------------===//
//
// One PE that keeps a returned value for the host: the rows of a stream as
// they arrive, or an input or constant returned as it is.
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

const KernelKind &wsc::lowering::outputKind() {
  static const OutputKind kind;
  return kind;
}
