//===- OnnxNgrams.cpp - TfIdfVectorizer as comparisons and sums
//------------===//
//
// The n-gram pool is a compile-time constant, so counting its n-grams in a
// sequence of ids is elementwise: for each n and skip, the sequence shifted
// by k * (skip + 1) is compared with every n-gram's k-th item at once, the
// comparisons of the n items are and-ed, and the matches are summed along
// the sequence. A constant matrix then moves each n-gram's count to its
// output index (times its weight).
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

using namespace wsc::onnx_import;

bool wsc::onnx_import::isNgramOp(StringRef op) { return op == "TfIdfVectorizer"; }

/// The pool's n-grams of one length.
struct wsc::onnx_import::NgramGroup {
  int64_t n = 0;
  SmallVector<SmallVector<int64_t>> items; // [k][gram]
  SmallVector<int64_t> outputs;            // each gram's output index
};

/// The n-grams of each length in the pool, in pool order; empty on error.
static FailureOr<SmallVector<NgramGroup>>
ngramGroups(ArrayRef<int64_t> counts, ArrayRef<int64_t> pool, ArrayRef<int64_t> indexes) {
  SmallVector<NgramGroup> groups;
  size_t gram = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t n = int64_t(i) + 1, lo = counts[i];
    int64_t hi = i + 1 < counts.size() ? counts[i + 1] : int64_t(pool.size());
    if (lo < 0 || hi < lo || hi > int64_t(pool.size()) || (hi - lo) % n)
      return failure();
    NgramGroup g;
    g.n = n;
    g.items.resize(n);
    for (int64_t at = lo; at < hi; at += n, ++gram) {
      if (gram >= indexes.size() || indexes[gram] < 0)
        return failure();
      for (int64_t k = 0; k < n; ++k)
        g.items[k].push_back(pool[at + k]);
      g.outputs.push_back(indexes[gram]);
    }
    groups.push_back(std::move(g));
  }
  if (gram != indexes.size())
    return failure();
  return groups;
}

/// [N, grams] counts of one group's n-grams in the rows of `x` [N, C],
/// over every skip from 0 to `maxSkip` (a 1-gram has no skip).
Value Importer::countNgrams(Composer &c, Value x, const NgramGroup &g, int64_t maxSkip) {
  auto type = typeOf(x);
  int64_t rows = type.getDimSize(0), length = type.getDimSize(1);
  int64_t grams = int64_t(g.outputs.size());
  Type element = type.getElementType(), f32 = builder.getF32Type();
  SmallVector<Value> perSkip;
  for (int64_t skip = 0; skip <= (g.n == 1 ? 0 : maxSkip); ++skip) {
    int64_t span = (g.n - 1) * (skip + 1), starts = length - span;
    if (starts <= 0)
      break;
    Value match;
    for (int64_t k = 0; k < g.n; ++k) {
      Value shifted = c.reshape(c.sliceAlong(x, 1, k * (skip + 1), starts), {rows, starts, 1});
      Value item = constant(
          DenseElementsAttr::get(RankedTensorType::get({grams}, element),
                                 ArrayRef<APInt>(llvm::map_to_vector(g.items[k], [&](int64_t v) {
                                   return APInt(element.getIntOrFloatBitWidth(), uint64_t(v), true);
                                 }))));
      Value eq = c.equal(shifted, item);
      match = match ? c.op(wg::AndOp::getOperationName(), {match, eq}) : eq;
    }
    Value hits = c.op(wg::CastOp::getOperationName(), {match}, {},
                      RankedTensorType::get({rows, starts, grams}, f32));
    perSkip.push_back(c.op(wg::ReduceSumOp::getOperationName(), {hits},
                           {attr("axes", builder.getDenseI64ArrayAttr({1})),
                            attr("keepdims", builder.getBoolAttr(false))}));
  }
  return perSkip.empty() ? Value()
                         : c.pairwise(perSkip, [&](Value a, Value b) { return c.add(a, b); });
}

LogicalResult Importer::convertNgramOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  if (!isa<IntegerType>(type.getElementType()) || type.getRank() < 1 || type.getRank() > 2)
    return nodeError("counts the n-grams of integer ids [C] or [N, C] (the "
                     "wafer holds no "
                     "strings)"),
           failure();
  const onnx::AttributeProto *modeAttr = findAttr(node, "mode");
  std::string mode = modeAttr ? modeAttr->s() : "";
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return nodeError("mode must be TF, IDF or TFIDF"), failure();
  auto counts = intsAttr(node, "ngram_counts"), indexes = intsAttr(node, "ngram_indexes"),
       pool = intsAttr(node, "pool_int64s");
  if (!counts || !indexes || !pool || indexes->empty())
    return nodeError("needs ngram_counts, ngram_indexes and pool_int64s"), failure();
  auto groups = ngramGroups(*counts, *pool, *indexes);
  if (::failed(groups))
    return nodeError("ngram_counts, ngram_indexes and the pool do not agree"), failure();
  SmallVector<float> weights(indexes->size(), 1.0f);
  if (const onnx::AttributeProto *w = findAttr(node, "weights")) {
    if (size_t(w->floats_size()) != indexes->size())
      return nodeError("has " + std::to_string(w->floats_size()) + " weights for " +
                       std::to_string(indexes->size()) + " n-grams"),
             failure();
    weights.assign(w->floats().begin(), w->floats().end());
  }
  int64_t minN = intAttr(node, "min_gram_length", 1), maxN = intAttr(node, "max_gram_length", 1);
  int64_t maxSkip = intAttr(node, "max_skip_count", 0);
  int64_t outputs = *llvm::max_element(*indexes) + 1,
          rows = type.getRank() == 2 ? type.getDimSize(0) : 1;
  Type f32 = builder.getF32Type();
  Value rowsOfIds = c.reshape(x, {rows, type.getShape().back()});
  SmallVector<Value> parts;
  size_t first = 0; // the group's first gram in pool order
  for (const NgramGroup &g : *groups) {
    size_t grams = g.outputs.size();
    Value counted =
        g.n >= minN && g.n <= maxN && grams ? countNgrams(c, rowsOfIds, g, maxSkip) : Value();
    if (counted) {
      if (mode == "IDF") // presence, not count
        counted = c.min(counted, scalarConstant(f32, 1));
      SmallVector<float> move(grams * outputs, 0.0f);
      for (size_t j = 0; j < grams; ++j)
        move[j * outputs + g.outputs[j]] = mode == "TF" ? 1.0f : weights[first + j];
      parts.push_back(c.op(wg::MatmulOp::getOperationName(),
                           {counted, constant(DenseElementsAttr::get(
                                         RankedTensorType::get({int64_t(grams), outputs}, f32),
                                         ArrayRef<float>(move)))}));
    }
    first += grams;
  }
  Value y =
      parts.empty()
          ? constant(DenseElementsAttr::get(RankedTensorType::get({rows, outputs}, f32), 0.0f))
          : c.pairwise(parts, [&](Value a, Value b) { return c.add(a, b); });
  if (type.getRank() == 1)
    y = c.reshape(y, {outputs});
  return c.finish(results, {y});
}
