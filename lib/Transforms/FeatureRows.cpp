//===- FeatureRows.cpp - an MLP's feature rows as the tokens of fused linears ===//
//
// The fused kernel kinds stream [batch, tokens, C] activations. A model
// without token ids whose input is a batch of feature rows [R, C] (an MLP,
// a classifier head) has linears on [R, K]: this pass gives them the
// [1, R, K] form, so that a layer larger than a PE runs on a linear kernel
// instead of a generic one holding its whole weight, and moves the
// elementwise activations between them inside the reshapes, which then
// cancel.
//
//===----------------------------------------------------------------------===//
#include "FusePatterns.h"
#include "wsc/Analysis/TokenGeometry.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace wsc {
#define GEN_PASS_DEF_WSGRAPHFEATUREROWS
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
using namespace wsc::wsgraph;
using namespace wsc::fuse;

namespace {

/// linear(x, W, b) on the [R, K] feature rows of a function without token
/// ids (an MLP; tokenGeometry's (1, R)) is the linear of [1, R, K]: the
/// fused linear kernel takes it, streaming the rows as tokens.
struct LinearOnFeatureRows : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto out = cast<RankedTensorType>(op.getType());
    func::FuncOp func = op->getParentOfType<func::FuncOp>();
    if (!func || tokenIds(func) || in.getRank() != 2 || !in.hasStaticShape() ||
        tokenGeometry(func) != std::make_pair(int64_t(1), in.getDimSize(0)))
      return failure();
    auto rows = [](RankedTensorType t) {
      return RankedTensorType::get({1, t.getDimSize(0), t.getDimSize(1)}, t.getElementType());
    };
    Value x = ReshapeOp::create(rewriter, op.getLoc(), rows(in), op.getInput());
    Value y = LinearOp::create(rewriter, op.getLoc(), rows(out), x, op.getWeight(), op.getBias());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, out, y);
    return success();
  }
};

/// f(reshape(x)) for an elementwise f of one operand is reshape(f(x)): the
/// reshapes around an MLP's activation (LinearOnFeatureRows) then cancel,
/// and the activation works on the linear's rows as they stream.
struct ElementwiseBeforeReshape : OpTraitRewritePattern<OpTrait::Elementwise> {
  using OpTraitRewritePattern::OpTraitRewritePattern;
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    auto reshape = op->getNumOperands() == 1 && op->getNumResults() == 1 &&
                           isa<WsgraphDialect>(op->getDialect())
                       ? singleUseDef<ReshapeOp>(op->getOperand(0))
                       : ReshapeOp();
    if (!reshape)
      return failure();
    Operation *before = rewriter.clone(*op);
    before->setOperand(0, reshape.getInput());
    before->getResult(0).setType(reshape.getInput().getType());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op->getResult(0).getType(), before->getResult(0));
    return success();
  }
};

struct WsgraphFeatureRowsPass : wsc::impl::WsgraphFeatureRowsBase<WsgraphFeatureRowsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LinearOnFeatureRows, ElementwiseBeforeReshape>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
