//===- OnnxScatter.cpp - ONNX ops that index by data, from wsgraph ops ----===//
//
// Ops whose indices are runtime data: ScatterElements (and the older
// Scatter), ScatterND, GatherND, ReverseSequence and MaxUnpool. A gather by
// data is a wsgraph gather of computed flat indices. A scatter compares
// each update's flat target with the flat positions of the result ([rows,
// updates], a one-hot per row): "none" gathers the last update that hits a
// row (as the reference does for duplicates), "add" sums the hits (a matmul
// for floats), "mul", "max" and "min" (and "add" of integers) combine
// per-update masked copies pairwise. Integers stay in integer ops (matmul
// multiplies in f32), so they stay exact.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isScatterOp(StringRef op) {
  return llvm::is_contained(
      {"ScatterElements", "Scatter", "ScatterND", "GatherND", "ReverseSequence", "MaxUnpool"}, op);
}

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

Value Importer::indexPositions(ArrayRef<int64_t> shape, int64_t axis, int64_t scale) {
  SmallVector<int64_t> values;
  int64_t n = shape[axis];
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i * scale);
  SmallVector<int64_t> dims(shape.size(), 1);
  dims[axis] = n;
  return constant(DenseElementsAttr::get(RankedTensorType::get(dims, builder.getIntegerType(64)),
                                         ArrayRef<int64_t>(values)));
}

/// `index` (int64) with negative entries counted back from `n`.
static Value fromEnd(Composer &c, function_ref<Value(double)> k, Value index, int64_t n) {
  return c.where(c.less(index, k(0)), c.add(index, k(n)), index);
}

Value Importer::scatterRows(Composer &c, Value data, Value target, Value updates, int64_t rows,
                            StringRef reduction) {
  if (!target || !updates)
    return c.ok = false, Value();
  auto updType = typeOf(updates);
  int64_t m = updType.getDimSize(0);
  Type element = updType.getElementType();
  Type i64 = builder.getIntegerType(64);
  auto k = [&](double v) { return scalarConstant(i64, v); };
  // hits[n, j]: update j lands on row n.
  Value row = indexPositions({rows, 1}, 0, 1);
  Value hits = c.equal(row, c.reshape(target, ArrayRef<int64_t>{1, m}));
  if (reduction == "none") {
    Value order = indexPositions({1, m}, 1, 1);
    Value last = c.op(wg::ReduceMaxOp::getOperationName(), {c.where(hits, order, k(-1))},
                      {attr("axes", builder.getDenseI64ArrayAttr({1})),
                       attr("keepdims", builder.getBoolAttr(true))});
    Value picked = c.op(wg::GatherOp::getOperationName(),
                        {updates, c.reshape(c.max(last, k(0)), ArrayRef<int64_t>{rows})},
                        {attr("axis", builder.getI64IntegerAttr(0))});
    return c.where(c.greater(last, k(-1)), picked, data);
  }
  if (reduction == "add" && isa<FloatType>(element)) {
    auto maskType = RankedTensorType::get({rows, m}, element);
    Value mask = c.op(wg::CastOp::getOperationName(), {hits}, {}, maskType);
    return c.add(data, c.op(wg::MatmulOp::getOperationName(), {mask, updates}));
  }
  // One masked copy per update: where it does not land, the identity of
  // "add" or "mul", or the data itself for "max" and "min".
  bool extreme = reduction == "max" || reduction == "min";
  Value fill = extreme ? data : scalarConstant(element, reduction == "mul" ? 1 : 0);
  SmallVector<Value> copies;
  for (int64_t j = 0; j < m; ++j)
    copies.push_back(c.where(c.sliceAlong(hits, 1, j, 1), c.sliceAlong(updates, 0, j, 1), fill));
  auto combine = [&](Value a, Value b) {
    if (reduction == "add")
      return c.add(a, b);
    if (reduction == "mul")
      return c.mul(a, b);
    return reduction == "max" ? c.max(a, b) : c.min(a, b);
  };
  return combine(data, c.pairwise(copies, combine));
}

LogicalResult Importer::convertScatterOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  size_t need = op == "ReverseSequence" || op == "GatherND" || op == "MaxUnpool" ? 2 : 3;
  if (in.size() < need || llvm::any_of(in.take_front(need), [](Value v) { return !v; }))
    return nodeError("expects " + std::to_string(need) + " inputs"), failure();
  if (llvm::any_of(in, [](Value v) { return v && !typeOf(v).hasStaticShape(); }))
    return nodeError("an input's shape is not static"), failure();
  if (op == "GatherND")
    return convertGatherND(node, in, results);
  if (op == "ReverseSequence")
    return convertReverseSequence(node, in, results);
  if (op == "MaxUnpool")
    return convertMaxUnpool(node, in, results);
  const onnx::AttributeProto *r = findAttr(node, "reduction");
  std::string reduction = r ? r->s() : "none";
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return nodeError("reduction '" + reduction + "' is not none, add, mul, max or min"), failure();
  if (op == "ScatterND")
    return convertScatterND(node, in, reduction, results);
  return convertScatterElements(node, in, reduction, results);
}

/// ScatterElements: each update's flat position in the data, from its own
/// position on every axis but `axis`, where its index goes.
LogicalResult Importer::convertScatterElements(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               StringRef reduction,
                                               SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]), idxType = typeOf(in[1]);
  int64_t rank = type.getRank(), axis = intAttr(node, "axis", 0);
  if (axis < -rank || axis >= rank)
    return nodeError("axis " + std::to_string(axis) + " is out of range"), failure();
  axis = axis < 0 ? axis + rank : axis;
  ArrayRef<int64_t> shape = idxType.getShape();
  if (idxType.getRank() != rank || typeOf(in[2]).getShape() != shape ||
      llvm::any_of(llvm::seq<int64_t>(0, rank),
                   [&](int64_t d) { return d != axis && shape[d] > type.getDimSize(d); }))
    return nodeError("indices and updates must have one shape, within the data's"), failure();
  Type i64 = builder.getIntegerType(64);
  auto k = [&](double v) { return scalarConstant(i64, v); };
  Value flat = c.mul(fromEnd(c, k, castTo(c, in[1], i64), type.getDimSize(axis)),
                     k(product(type.getShape().drop_front(axis + 1))));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      flat = c.add(flat, indexPositions(shape, d, product(type.getShape().drop_front(d + 1))));
  int64_t n = type.getNumElements(), m = idxType.getNumElements();
  Value y = scatterRows(c, c.reshape(in[0], ArrayRef<int64_t>{n, 1}), flat,
                        c.reshape(in[2], ArrayRef<int64_t>{m, 1}), n, reduction);
  return c.finish(results, {c.reshape(y, type)});
}

/// The flat row of each index tuple (the last axis of `indices`) into the
/// `dims` of the data it indexes.
Value Importer::flatTuples(Composer &c, Value indices, ArrayRef<int64_t> dims) {
  Type i64 = builder.getIntegerType(64);
  auto k = [&](double v) { return scalarConstant(i64, v); };
  auto shape = typeOf(indices).getShape();
  int64_t last = shape.size() - 1;
  Value idx = castTo(c, indices, i64), flat = k(0);
  for (auto [j, d] : llvm::enumerate(dims)) {
    Value part = fromEnd(c, k, c.sliceAlong(idx, last, j, 1), d);
    flat = c.add(flat, c.mul(part, k(product(dims.drop_front(j + 1)))));
  }
  return c.reshape(flat, shape.drop_back());
}

/// ScatterND: the data as [indexed rows, rest], the updates as [tuples, rest].
LogicalResult Importer::convertScatterND(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         StringRef reduction, SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  auto q = typeOf(in[1]).getShape();
  int64_t kk = q.empty() ? 0 : q.back();
  if (q.empty() || kk < 1 || kk > type.getRank())
    return nodeError("the index tuples' length must be in [1, data rank]"), failure();
  SmallVector<int64_t> want(q.drop_back());
  want.append(type.getShape().begin() + kk, type.getShape().end());
  if (typeOf(in[2]).getShape() != ArrayRef<int64_t>(want))
    return nodeError("updates must be shaped indices[:-1] + data[k:]"), failure();
  int64_t rows = product(type.getShape().take_front(kk));
  int64_t rest = product(type.getShape().drop_front(kk)), m = product(q.drop_back());
  Value flat =
      c.reshape(flatTuples(c, in[1], type.getShape().take_front(kk)), ArrayRef<int64_t>{m});
  Value y = scatterRows(c, c.reshape(in[0], ArrayRef<int64_t>{rows, rest}), flat,
                        c.reshape(in[2], ArrayRef<int64_t>{m, rest}), rows, reduction);
  return c.finish(results, {c.reshape(y, type)});
}

/// GatherND: a gather of the data's [batch * indexed rows, rest...] by each
/// tuple's flat row, offset by its batch's first row.
LogicalResult Importer::convertGatherND(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  auto q = typeOf(in[1]).getShape();
  int64_t b = intAttr(node, "batch_dims", 0), rank = type.getRank();
  int64_t kk = q.empty() ? 0 : q.back();
  if (b < 0 || b >= int64_t(q.size()) || b >= rank ||
      type.getShape().take_front(b) != q.take_front(b))
    return nodeError("batch_dims must be leading axes that indices and data share"), failure();
  if (kk < 1 || b + kk > rank)
    return nodeError("the index tuples' length must be in [1, data rank - "
                     "batch_dims]"),
           failure();
  ArrayRef<int64_t> dims = type.getShape().slice(b, kk);
  int64_t rows = product(type.getShape().take_front(b + kk));
  Value flat = flatTuples(c, in[1], dims);
  if (b > 0) { // the batch's first row, as [batch..., 1...]
    SmallVector<int64_t> firsts, shape(q.drop_back());
    for (int64_t i = 0, n = product(q.take_front(b)); i < n; ++i)
      firsts.push_back(i * product(dims));
    for (int64_t d = b; d < int64_t(shape.size()); ++d)
      shape[d] = 1;
    flat = c.add(flat, constant(DenseElementsAttr::get(
                           RankedTensorType::get(shape, builder.getIntegerType(64)),
                           ArrayRef<int64_t>(firsts))));
  }
  SmallVector<int64_t> table{rows};
  table.append(type.getShape().begin() + b + kk, type.getShape().end());
  Value y = c.op(wg::GatherOp::getOperationName(), {c.reshape(in[0], table), flat},
                 {attr("axis", builder.getI64IntegerAttr(0))});
  return c.finish(results, {y});
}

/// ReverseSequence: along the time axis, position t reads L - 1 - t below its
/// batch entry's length L, else itself: a gather_elements of those sources.
LogicalResult Importer::convertReverseSequence(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  int64_t batch = intAttr(node, "batch_axis", 1), time = intAttr(node, "time_axis", 0);
  if (rank < 2 || !llvm::is_contained({0, 1}, batch) || !llvm::is_contained({0, 1}, time) ||
      batch == time)
    return nodeError("batch_axis and time_axis must be 0 and 1, in either order"), failure();
  if (typeOf(in[1]).getNumElements() != type.getDimSize(batch))
    return nodeError("sequence_lens must hold one length per batch entry"), failure();
  Type i64 = builder.getIntegerType(64);
  auto k = [&](double v) { return scalarConstant(i64, v); };
  SmallVector<int64_t> lensShape(rank, 1);
  lensShape[batch] = type.getDimSize(batch);
  Value lens = c.reshape(castTo(c, in[1], i64), lensShape);
  Value t = indexPositions(type.getShape(), time, 1);
  Value source = c.where(c.less(t, lens), c.sub(c.sub(lens, k(1)), t), t);
  Value full = c.op(wg::ExpandOp::getOperationName(), {source}, {},
                    RankedTensorType::get(type.getShape(), i64));
  Value y = c.op(wg::GatherElementsOp::getOperationName(), {in[0], full},
                 {attr("axis", builder.getI64IntegerAttr(time))});
  return c.finish(results, {y});
}

/// MaxUnpool: X scattered to the flat positions its indices give (MaxPool's,
/// over the whole unpooled output), zeros elsewhere; a larger output_shape
/// adds zeros after the end of each spatial axis, as ONNX's node test has it.
LogicalResult Importer::convertMaxUnpool(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank(), spatial = rank - 2;
  auto kernel = intsAttr(node, "kernel_shape");
  if (rank < 3 || !kernel || int64_t(kernel->size()) != spatial)
    return nodeError("expects [N, C, spatial...] and a kernel_shape for each "
                     "spatial axis"),
           failure();
  if (typeOf(in[1]).getShape() != type.getShape())
    return nodeError("indices must have X's shape"), failure();
  SmallVector<int64_t> strides =
      intsAttr(node, "strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads = intsAttr(node, "pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (int64_t(strides.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return nodeError("strides and pads must match kernel_shape"), failure();
  SmallVector<int64_t> out(type.getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i)
    out.push_back((type.getDimSize(2 + i) - 1) * strides[i] + (*kernel)[i] - pads[i] -
                  pads[spatial + i]);
  if (llvm::any_of(out, [](int64_t d) { return d <= 0; }))
    return nodeError("the output shape is empty"), failure();
  Type element = type.getElementType();
  int64_t n = product(out), m = type.getNumElements();
  Value flat = c.reshape(castTo(c, in[1], builder.getIntegerType(64)), ArrayRef<int64_t>{m});
  Value y = scatterRows(c, scalarConstant(element, 0), flat,
                        c.reshape(in[0], ArrayRef<int64_t>{m, 1}), n, "none");
  y = c.reshape(y, RankedTensorType::get(out, element));
  if (in.size() > 2 && in[2]) { // a larger output: zeros after the end (as the node tests have it)
    auto given = constInts(in[2], "output_shape");
    if (::failed(given))
      return nodeError("output_shape is not a compile-time constant (bind it with --bind)"),
             failure();
    if (given->size() != size_t(rank) || (*given)[0] != out[0] || (*given)[1] != out[1] ||
        llvm::any_of(llvm::seq<int64_t>(2, rank), [&](int64_t d) { return (*given)[d] < out[d]; }))
      return nodeError("output_shape must keep N and C and be no smaller than the unpooled shape"),
             failure();
    for (int64_t d = 2; d < rank; ++d) {
      if ((*given)[d] == out[d])
        continue;
      SmallVector<int64_t> shape(typeOf(y).getShape());
      shape[d] = (*given)[d] - out[d];
      Value zeros = c.op(wg::ExpandOp::getOperationName(), {scalarConstant(element, 0)}, {},
                         RankedTensorType::get(shape, element));
      y = c.concat({y, zeros}, d);
    }
  }
  return c.finish(results, {y});
}
