//===- WideWeights.cpp - generic linears whose weight passes a PE -----------===//
//
// A linear that no fused kind takes runs on generic kernels, each holding
// the whole weight. A wide or tall stored weight is cut into views of the
// same file bytes instead (columns side by side, rows summed), so every
// generic kernel holds a part that fits.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "wsc/Analysis/WeightData.h"

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

/// Columns [c0, c1) of a stored weight's last dimension, or of a literal
/// vector: a view at a later offset, or the literal's words.
static Value columnsOf(OpBuilder &b, Value v, int64_t c0, int64_t c1) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = c1 - c0;
  auto sliced = RankedTensorType::get(shape, type.getElementType());
  if (auto c = v.getDefiningOp<wg::ConstantOp>()) {
    auto dense = cast<DenseElementsAttr>(c.getValue());
    SmallVector<Attribute> all(dense.getValues<Attribute>());
    return wg::ConstantOp::create(b, c.getLoc(), sliced,
                                  DenseElementsAttr::get(sliced, ArrayRef(all).slice(c0, c1 - c0)));
  }
  auto w = v.getDefiningOp<wg::WeightOp>();
  SmallVector<int64_t> strides = w.getElementStrides();
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  auto view = wg::WeightOp::create(
      b, w.getLoc(), sliced, w.getNameAttr(), w.getFileAttr(),
      b.getI64IntegerAttr(w.getOffset() + (w.isElided() ? 0 : c0 * strides.back() * bytes)),
      b.getDenseI64ArrayAttr(strides));
  keepAlterations(w, view, c0 * strides.back());
  return view;
}

/// linear(x, W, b) with W's rows in pieces of `rows`: the sum of
/// linear(x[..., k0:k1], W[k0:k1]), the bias on the first.
static Value splitTallWeight(OpBuilder &b, wg::LinearOp linear, wg::WeightOp weight, int64_t rows,
                             int64_t budget, SmallVectorImpl<Operation *> &made) {
  auto x = cast<RankedTensorType>(linear.getInput().getType());
  auto result = cast<RankedTensorType>(linear.getType());
  int64_t k = x.getShape().back();
  Value sum;
  for (int64_t k0 = 0; k0 < k; k0 += rows) {
    int64_t k1 = std::min(k, k0 + rows);
    SmallVector<int64_t> offsets(x.getRank(), 0), sizes(x.getShape()), strides(x.getRank(), 1);
    offsets.back() = k0, sizes.back() = k1 - k0;
    auto part =
        wg::SliceOp::create(b, linear.getLoc(), RankedTensorType::get(sizes, x.getElementType()),
                            linear.getInput(), offsets, sizes, strides);
    wg::WeightOp rowsOf = wg::sliceWeightRows(b, weight, k0, k1);
    keepAlterations(weight, rowsOf, k0 * weight.getElementStrides()[0]);
    auto piece = wg::LinearOp::create(b, linear.getLoc(), result, part.getResult(),
                                      rowsOf.getResult(), k0 ? Value() : linear.getBias());
    made.push_back(part);
    made.push_back(piece);
    if (sum) {
      auto add = wg::AddOp::create(b, linear.getLoc(), result, sum, piece.getResult());
      made.push_back(add);
      sum = add.getResult();
    } else {
      sum = piece.getResult();
    }
  }
  linear.getResult().replaceAllUsesWith(sum);
  return sum;
}

/// A generic linear whose stored weight alone would fill much of a PE
/// (an LSTM's gates, a classifier head after pooling), as linears on column
/// views of the weight, side by side: each generic kernel holds only its
/// columns. One column too tall for that: the sum of linears on row views
/// of the weight and column slices of x, each split by columns in turn.
/// Null when it fits.
Value wsc::lowering::splitWideWeight(Operation *op, int64_t budget,
                                     SmallVectorImpl<Operation *> &made) {
  auto linear = dyn_cast<wg::LinearOp>(op);
  auto weight = linear ? linear.getWeight().getDefiningOp<wg::WeightOp>() : wg::WeightOp();
  Value bias = linear ? linear.getBias() : Value();
  if (!weight || (bias && !isStatic(bias)))
    return {};
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  // A pruned weight's views prune as the whole matrix does.
  if (k * n * 4 <= budget || failed(fixPruneCut(weight, op)))
    return {};
  auto result = cast<RankedTensorType>(linear.getType());
  OpBuilder b(op);
  // Pieces of K narrow enough that x's slices (each row's window, index
  // table and result, for every row a chunk holds) fit a generic kernel.
  if (k * 4 > budget)
    return splitTallWeight(b, linear, weight, budget / 16, budget, made);
  int64_t per = budget / (k * 4);
  SmallVector<Value> parts;
  for (int64_t c0 = 0; c0 < n; c0 += per) {
    int64_t c1 = std::min(n, c0 + per);
    SmallVector<int64_t> shape(result.getShape());
    shape.back() = c1 - c0;
    Value part = wg::LinearOp::create(
        b, op->getLoc(), RankedTensorType::get(shape, result.getElementType()), linear.getInput(),
        columnsOf(b, weight, c0, c1), bias ? columnsOf(b, bias, c0, c1) : Value());
    made.push_back(part.getDefiningOp());
    parts.push_back(part);
  }
  // Joined by a tree of concats: each kernel receives a stream, a color,
  // from at most kJoin parts.
  constexpr size_t kJoin = 8;
  while (parts.size() > 1) {
    SmallVector<Value> joined;
    for (size_t i = 0; i < parts.size(); i += kJoin) {
      ArrayRef<Value> group = ArrayRef(parts).slice(i, std::min(kJoin, parts.size() - i));
      SmallVector<int64_t> shape(result.getShape());
      shape.back() = 0;
      for (Value v : group)
        shape.back() += cast<RankedTensorType>(v.getType()).getShape().back();
      auto concat = wg::ConcatOp::create(b, op->getLoc(),
                                         RankedTensorType::get(shape, result.getElementType()),
                                         group, b.getI64IntegerAttr(result.getRank() - 1));
      made.push_back(concat);
      joined.push_back(concat.getResult());
    }
    parts = std::move(joined);
  }
  linear.getResult().replaceAllUsesWith(parts.front());
  return parts.front();
}
