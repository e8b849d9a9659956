//===- FeatureRows.cpp - an MLP's feature rows as the tokens of fused linears ===//
//
// The fused kernel kinds stream [batch, tokens, C] activations. A model
// without token ids whose input is a batch of feature rows [R, C] (an MLP,
// a classifier head) has linears on [R, K]: this pass gives them the
// [1, R, K] form, so that a layer larger than a PE runs on a linear kernel
// instead of a generic one holding its whole weight, and moves the
// elementwise activations between them inside the reshapes, which then
// cancel. Rows flattened from tokens (OPT's MLP on hidden.reshape(-1, C))
// go back to the tokens the same way.
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

/// Is `v` a reshape of [..., C] tokens (rank 3 or more) into [R, C] rows,
/// the last dimension kept (OPT's MLP runs on hidden.reshape(-1, C))?
static ReshapeOp flattenedRows(Value v) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  auto in = cast<RankedTensorType>(reshape.getInput().getType());
  auto out = cast<RankedTensorType>(reshape.getType());
  if (in.getRank() < 3 || out.getRank() != 2 || !in.hasStaticShape() ||
      in.getShape().back() != out.getShape().back())
    return {};
  return reshape;
}

/// The type of `op`'s result on the unflattened tokens of `rows`.
static RankedTensorType onTokens(ReshapeOp rows, Type result) {
  auto tokens = cast<RankedTensorType>(rows.getInput().getType());
  SmallVector<int64_t> shape(tokens.getShape().drop_back());
  shape.push_back(cast<RankedTensorType>(result).getShape().back());
  return RankedTensorType::get(shape, cast<RankedTensorType>(result).getElementType());
}

/// A linear or a last-axis layer norm on rows flattened from tokens is the
/// same op on the tokens, flattened after: the fused kinds then take it.
template <typename OpTy>
struct RowOpOnTokens : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    ReshapeOp rows = flattenedRows(op->getOperand(0));
    if (!rows)
      return failure();
    if constexpr (std::is_same_v<OpTy, LayerNormOp>)
      if (op.getAxis() != -1 && op.getAxis() != 1)
        return failure();
    Operation *onRows = rewriter.clone(*op);
    if constexpr (std::is_same_v<OpTy, LayerNormOp>)
      cast<LayerNormOp>(onRows).setAxis(-1);
    onRows->setOperand(0, rows.getInput());
    onRows->getResult(0).setType(onTokens(rows, op.getType()));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), onRows->getResult(0));
    return success();
  }
};

/// f(reshape(x), ...) for an elementwise f is reshape(f(x, ...)) when every
/// operand is a reshape of the same shape (one operand: of a single use):
/// the reshapes around an MLP's activation and its residual then cancel,
/// and the op works on the linears' rows as they stream.
struct ElementwiseBeforeReshape : RewritePattern {
  ElementwiseBeforeReshape(MLIRContext *ctx) : RewritePattern(MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    // Binary ops broadcast, so they lack the Elementwise trait; on operands
    // of one shape they are elementwise all the same.
    bool elementwise = op->hasTrait<OpTrait::Elementwise>() ||
                       isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp>(op);
    if (!elementwise || op->getNumResults() != 1 || op->getNumOperands() == 0 ||
        !isa<WsgraphDialect>(op->getDialect()))
      return failure();
    SmallVector<Value> inputs;
    for (Value v : op->getOperands()) {
      auto reshape = op->getNumOperands() == 1 ? singleUseDef<ReshapeOp>(v)
                                               : v.getDefiningOp<ReshapeOp>();
      if (!reshape ||
          cast<ShapedType>(reshape.getType()).getShape() !=
              cast<ShapedType>(op->getResult(0).getType()).getShape() ||
          (!inputs.empty() && reshape.getInput().getType() != inputs.front().getType()))
        return failure();
      inputs.push_back(reshape.getInput());
    }
    auto before = cast<RankedTensorType>(inputs.front().getType());
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(inputs);
    moved->getResult(0).setType(before.clone(
        cast<RankedTensorType>(op->getResult(0).getType()).getElementType()));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op->getResult(0).getType(), moved->getResult(0));
    return success();
  }
};

struct WsgraphFeatureRowsPass : wsc::impl::WsgraphFeatureRowsBase<WsgraphFeatureRowsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LinearOnFeatureRows, RowOpOnTokens<LinearOp>, RowOpOnTokens<LayerNormOp>,
                 ElementwiseBeforeReshape>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
