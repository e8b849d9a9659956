//===- Sparsify.cpp - linear weights held as their nonzeros ---------------===//
//
// Marks the matrices that only linear ops take as pruned (on request) and,
// when few of their elements are nonzero, as sparse: the linear kinds then
// hold their tiles in the .wafer's sparse layout (docs/sparsity.md).
//
//===----------------------------------------------------------------------===//
#include "wsc/Analysis/WeightData.h"
#include "wsc/Transforms/Passes.h"

#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace wsc {
#define GEN_PASS_DEF_WSGRAPHSPARSIFY
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

namespace {

/// An f32 matrix that linear ops alone read, as their weight.
bool onlyLinearWeight(Operation *def) {
  Value v = def->getResult(0);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 2 || !type.getElementType().isF32() || v.use_empty())
    return false;
  return llvm::all_of(v.getUses(), [](OpOperand &use) {
    auto linear = dyn_cast<wg::LinearOp>(use.getOwner());
    return linear && linear.getWeight() == use.get();
  });
}

/// Does a linear that takes `def` return its result (the LM head)?
bool feedsHead(Operation *def) {
  return llvm::any_of(def->getResult(0).getUsers(), [](Operation *linear) {
    return llvm::any_of(linear->getResult(0).getUsers(),
                        [](Operation *u) { return isa<func::ReturnOp>(u); });
  });
}

struct WsgraphSparsifyPass : wsc::impl::WsgraphSparsifyBase<WsgraphSparsifyPass> {
  using WsgraphSparsifyBase::WsgraphSparsifyBase;

  void runOnOperation() override {
    if (!(sparsity >= 0 && sparsity < 1) || !(maxDensity >= 0 && maxDensity <= 1)) {
      getOperation().emitError("--wsgraph-sparsify: sparsity must be in [0, 1) and max-density "
                               "in [0, 1]");
      return signalPassFailure();
    }
    Builder b(&getContext());
    WalkResult walk = getOperation().walk([&](Operation *op) {
      if (!isa<wg::WeightOp, wg::ConstantOp>(op) || !onlyLinearWeight(op))
        return WalkResult::advance();
      // The LM head is pruned no more than the embedding it is often tied to.
      bool prune = sparsity > 0 && !feedsHead(op);
      if (prune)
        op->setAttr(kPruneAttr, b.getF64FloatAttr(sparsity));
      auto weight = dyn_cast<wg::WeightOp>(op);
      double density = prune ? 1.0 - sparsity : 1.0;
      if (!weight || !weight.isElided()) {
        FailureOr<std::vector<uint32_t>> bits = readF32Weight(op->getResult(0), op);
        if (failed(bits))
          return WalkResult::interrupt();
        size_t nonzero = llvm::count_if(*bits, [](uint32_t w) { return w != 0; });
        density = bits->empty() ? 1.0 : double(nonzero) / double(bits->size());
      }
      if (density < maxDensity)
        op->setAttr(kDensityAttr, b.getF64FloatAttr(density));
      else
        op->removeAttr(kDensityAttr);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
