//===- OnnxAttention.cpp - opset 23's Attention and RotaryEmbedding -------===//
//
// Attention imports as the ops torch exports scaled dot-product attention
// with: q @ k^T times the scale, the masks added (the causal one as a Where
// on a constant), a softmax and a product with v. The fusion pass then
// takes the forms it knows to wsgraph.attention; any other (a softcap, a
// causal mask over more keys than queries without a cache) lowers as the
// ops it is. Grouped-query heads repeat as torch's repeat_kv writes it.
// RotaryEmbedding imports to wsgraph.rotary, its half-width caches widened
// to the rotated dimensions.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

/// "[2, 3, 8]".
static std::string shapeString(RankedTensorType type) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    text += (i ? ", " : "") + std::to_string(d);
  return text + "]";
}

bool wsc::onnx_import::isAttentionOp(StringRef op) {
  return op == "Attention" || op == "RotaryEmbedding" || op == "TensorScatter";
}

LogicalResult Importer::convertAttentionOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                           SmallVectorImpl<Value> &results) {
  if (node.op_type() == "RotaryEmbedding")
    return convertRotaryEmbedding(node, in, results);
  if (node.op_type() == "TensorScatter")
    return convertTensorScatter(node, in, results);
  return convertAttention(node, in, results);
}

/// [B, T, H * D] as [B, H, T, D].
Value wsc::onnx_import::splitHeads(Composer &c, Value x, int64_t heads) {
  if (!x)
    return c.ok = false, Value();
  ArrayRef<int64_t> s = cast<ShapedType>(x.getType()).getShape();
  return c.transpose(c.reshape(x, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

/// [B, H, T, D] as [B, T, H * D].
Value wsc::onnx_import::mergeHeads(Composer &c, Value x) {
  if (!x)
    return Value();
  ArrayRef<int64_t> s = cast<ShapedType>(x.getType()).getShape();
  return c.reshape(c.transpose(x, {0, 2, 1, 3}), {s[0], s[2], s[1] * s[3]});
}

Value wsc::onnx_import::repeatHeads(Composer &c, Value x, int64_t reps) {
  if (reps == 1 || !x)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> s = type.getShape();
  Value one = c.unsqueeze(x, {2});
  Value many =
      c.op(wg::ExpandOp::getOperationName(), {one}, {}, type.clone({s[0], s[1], reps, s[2], s[3]}));
  return c.reshape(many, {s[0], s[1] * reps, s[2], s[3]});
}

/// A tensor input's rank-`rank` form with `heads` heads: 4-D as it is, 3-D
/// [B, T, H * D] split into heads.
FailureOr<Value> Importer::attentionHeads(Composer &c, Value x, const char *what, int64_t heads) {
  auto type = typeOf(x);
  if (type.getRank() == 4)
    return x;
  if (heads <= 0)
    return nodeError(std::string("a 3-D ") + what + " needs the " +
                     (std::string(what) == "Q" ? "q_num_heads" : "kv_num_heads") + " attribute"),
           failure();
  if (type.getDimSize(2) % heads)
    return nodeError(std::string(what) + "'s hidden size " + std::to_string(type.getDimSize(2)) +
                     " is not a multiple of its " + std::to_string(heads) + " heads"),
           failure();
  return splitHeads(c, x, heads);
}

/// The attention mask as a float bias to add to scores [.., T, S]: a bool
/// mask's false is -inf; a mask over fewer than S keys leaves the rest out.
FailureOr<Value> Importer::attentionBias(Composer &c, Value mask, Type element, int64_t keys) {
  auto type = typeOf(mask);
  if (type.getRank() == 0 || type.getDimSize(type.getRank() - 1) > keys)
    return nodeError("attn_mask " + shapeString(type) + " does not end in at most " +
                     std::to_string(keys) + " keys"),
           failure();
  Value none = scalarConstant(element, -INFINITY);
  Value bias =
      type.getElementType().isInteger(1) ? c.where(mask, scalarConstant(element, 0), none) : mask;
  int64_t rank = type.getRank(), have = type.getDimSize(rank - 1);
  if (have == keys)
    return bias;
  SmallVector<int64_t> rest(type.getShape());
  rest.back() = keys - have;
  Value fill =
      c.op(wg::ExpandOp::getOperationName(), {none}, {}, RankedTensorType::get(rest, element));
  return c.concat({bias, fill}, rank - 1);
}

/// Scores [B, H, T, S] with the masks applied: attn_mask added, batch b's
/// keys from nonpad_kv_seqlen[b] on (opset 24) left out, and with is_causal
/// the future keys: query i sees keys up to i + `past` (the cached ones), or
/// without a cache but with nonpad, up to i + nonpad[b] - T.
FailureOr<Value> Importer::maskScores(Composer &c, const onnx::NodeProto &node, Value scores,
                                      Value mask, Value nonpad, int64_t past, bool cached) {
  if (!scores)
    return failure();
  auto type = typeOf(scores);
  Type element = type.getElementType(), i64 = builder.getIntegerType(64);
  int64_t batch = type.getDimSize(0), t = type.getDimSize(2), s = type.getDimSize(3);
  Value none = scalarConstant(element, -INFINITY);
  if (mask) {
    auto bias = attentionBias(c, mask, element, s);
    if (::failed(bias))
      return failure();
    scores = c.add(scores, *bias);
  }
  Value keyAt, shift;
  if (nonpad) {
    keyAt = indexPositions({1, 1, 1, s}, 3, 1);
    Value count = c.reshape(castTo(c, nonpad, i64), {batch, 1, 1, 1});
    scores = c.where(c.op(wg::GreaterEqualOp::getOperationName(), {keyAt, count}), none, scores);
    shift = c.sub(count, scalarConstant(i64, double(t)));
  }
  if (!intAttr(node, "is_causal", 0))
    return scores;
  if (nonpad && !cached)
    return c.where(c.greater(keyAt, c.add(indexPositions({1, 1, t, 1}, 2, 1), shift)), none,
                   scores);
  if (boundedProduct({t, s}, kMaxImportTable) < 0)
    return nodeError("a causal mask of " + std::to_string(t) + " x " + std::to_string(s) +
                     " is more than the importer builds"),
           failure();
  SmallVector<bool> future(t * s);
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < s; ++j)
      future[i * s + j] = j > i + past;
  Value cond = constant(DenseElementsAttr::get(RankedTensorType::get({t, s}, builder.getI1Type()),
                                               ArrayRef<bool>(future)));
  return c.where(cond, none, scores);
}

/// Q [B, Hq, T, D] (or 3-D), K [B, Hkv, S, D], V [B, Hkv, S, Dv], then
/// attn_mask, past_key, past_value and nonpad_kv_seqlen; outputs Y, present_key,
/// present_value and qk_matmul_output (modes 0 and 3: the scaled scores,
/// the softmax).
LogicalResult Importer::convertAttention(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  if (!at(0) || !at(1) || !at(2))
    return nodeError("expects Q, K and V"), failure();
  if (!staticInputs(in))
    return failure();
  Composer c = composer();
  int64_t rank = typeOf(in[0]).getRank();
  if ((rank != 3 && rank != 4) || typeOf(in[1]).getRank() != rank ||
      typeOf(in[2]).getRank() != rank)
    return nodeError("Q, K and V must all be 3-D or all 4-D"), failure();
  int64_t mode = intAttr(node, "qk_matmul_output_mode", 0);
  bool wantScores = node.output_size() > 3 && !node.output(3).empty();
  if (wantScores && mode != 0 && mode != 3)
    return nodeError("qk_matmul_output_mode " + std::to_string(mode) +
                     " is not supported (0, the scaled scores, or 3, the softmax)"),
           failure();
  int64_t kvHeads = intAttr(node, "kv_num_heads", 0);
  FailureOr<Value> q = attentionHeads(c, in[0], "Q", intAttr(node, "q_num_heads", 0)), k, v;
  if (::failed(q) || ::failed(k = attentionHeads(c, in[1], "K", kvHeads)) ||
      ::failed(v = attentionHeads(c, in[2], "V", kvHeads)))
    return failure();
  Value pastK = at(4), pastV = at(5);
  if (bool(pastK) != bool(pastV))
    return nodeError("past_key and past_value come together"), failure();
  int64_t past = pastK ? typeOf(pastK).getDimSize(2) : 0;
  Value key = pastK ? c.concat({pastK, *k}, 2) : *k;
  Value value = pastV ? c.concat({pastV, *v}, 2) : *v;
  if (!c.ok)
    return failure();
  ArrayRef<int64_t> qs = typeOf(*q).getShape(), ks = typeOf(key).getShape();
  ArrayRef<int64_t> vs = typeOf(value).getShape();
  if (ks[1] != vs[1] || ks[1] == 0 || qs[1] % ks[1] || qs[3] != ks[3] || ks[2] != vs[2])
    return nodeError("Q " + shapeString(typeOf(*q)) + ", K " + shapeString(typeOf(key)) +
                     " and V " + shapeString(typeOf(value)) +
                     " do not make attention heads (K and V heads dividing Q's, one head size "
                     "for Q and K, one length for K and V)"),
           failure();
  Type element = typeOf(*q).getElementType();
  auto *scaleAttr = findAttr(node, "scale");
  double scale = scaleAttr ? scaleAttr->f() : 1.0 / std::sqrt(double(qs[3]));
  Value kT = c.transpose(repeatHeads(c, key, qs[1] / ks[1]), {0, 1, 3, 2});
  Value scores =
      c.mul(c.op(wg::MatmulOp::getOperationName(), {*q, kT}), scalarConstant(element, scale));
  Value scaled = scores;
  if (double cap = floatAttr(node, "softcap", 0); cap > 0) {
    Value capValue = scalarConstant(element, cap);
    scores = c.mul(c.tanh(c.div(scores, capValue)), capValue);
  }
  auto masked = maskScores(c, node, scores, at(3), at(6), past, bool(pastK));
  if (::failed(masked))
    return failure();
  scores = *masked;
  Value probs =
      c.op(wg::SoftmaxOp::getOperationName(), {scores},
           {attr("axis", builder.getI64IntegerAttr(-1))}, scores ? scores.getType() : Type());
  Value y = c.op(wg::MatmulOp::getOperationName(), {probs, repeatHeads(c, value, qs[1] / ks[1])});
  if (rank == 3)
    y = mergeHeads(c, y);
  return c.finish(results, {y, key, value, mode == 3 ? probs : scaled});
}

/// TensorScatter (opset 24): the cache with `update` written along `axis`
/// from each batch's write index (circular: modulo the cache's length).
/// Read as a gather: cache position p takes update[p - index[b]] inside the
/// written window and keeps its own word elsewhere.
LogicalResult Importer::convertTensorScatter(const onnx::NodeProto &node, ArrayRef<Value> in,
                                             SmallVectorImpl<Value> &results) {
  if (in.size() < 2 || !in[1])
    return nodeError("expects past_cache and update"), failure();
  Composer c = composer();
  auto cache = typeOf(in[0]), update = typeOf(in[1]);
  int64_t rank = cache.getRank(), axis = intAttr(node, "axis", -2);
  axis = axis < 0 ? axis + rank : axis;
  bool fits = cache.hasStaticShape() && update.hasStaticShape() && update.getRank() == rank &&
              axis > 0 && axis < rank && cache.getElementType() == update.getElementType();
  for (int64_t i = 0; fits && i < rank; ++i)
    fits = i == axis ? update.getDimSize(i) <= cache.getDimSize(i)
                     : update.getDimSize(i) == cache.getDimSize(i);
  if (!fits)
    return nodeError("update " + shapeString(update) + " does not fit past_cache " +
                     shapeString(cache) + " along an axis after the batch's"),
           failure();
  std::string mode = stringAttr(node, "mode", "linear");
  if (mode != "linear" && mode != "circular")
    return nodeError("mode '" + mode + "' is not linear or circular"), failure();
  Type i64 = builder.getIntegerType(64);
  int64_t batch = cache.getDimSize(0);
  SmallVector<int64_t> perBatch(rank, 1);
  perBatch[0] = batch;
  Value start = in.size() > 2 && in[2]
                    ? c.reshape(castTo(c, in[2], i64), perBatch)
                    : constant(DenseElementsAttr::get(RankedTensorType::get(perBatch, i64),
                                                      builder.getI64IntegerAttr(0)));
  return c.finish(results, {writeWindow(c, in[0], in[1], start, axis, mode == "circular")});
}

Value Importer::writeWindow(Composer &c, Value cache, Value update, Value start, int64_t axis,
                            bool circular) {
  if (!c.ok || !cache || !update || !start)
    return c.ok = false, Value();
  auto type = typeOf(cache);
  Type i64 = builder.getIntegerType(64);
  int64_t length = type.getDimSize(axis);
  SmallVector<int64_t> along(type.getRank(), 1);
  along[axis] = length;
  Value from = c.sub(indexPositions(along, axis, 1), start);
  if (circular)
    from = c.op(wg::ModOp::getOperationName(), {from, scalarConstant(i64, double(length))},
                {attr("fmod", builder.getBoolAttr(false))});
  Value written =
      c.op(wg::AndOp::getOperationName(),
           {c.op(wg::GreaterEqualOp::getOperationName(), {from, scalarConstant(i64, 0)}),
            c.less(from, scalarConstant(i64, double(typeOf(update).getDimSize(axis))))});
  Value index =
      c.op(wg::ExpandOp::getOperationName(), {c.where(written, from, scalarConstant(i64, 0))}, {},
           RankedTensorType::get(type.getShape(), i64));
  Value taken = c.op(wg::GatherElementsOp::getOperationName(), {update, index},
                     {attr("axis", builder.getI64IntegerAttr(axis))});
  return c.where(written, taken, cache);
}

/// X [B, H, S, D] (or 3-D [B, S, H * D] with num_heads), cos_cache and
/// sin_cache [positions, R / 2] read at position_ids [B, S] (without them,
/// [B, S, R / 2] as they are): the first R dimensions of each head rotated,
/// their halves (or with `interleaved` their even and odd elements) the
/// real and imaginary parts.
LogicalResult Importer::convertRotaryEmbedding(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               SmallVectorImpl<Value> &results) {
  if (in.size() < 3 || !in[0] || !in[1] || !in[2])
    return nodeError("expects X, cos_cache and sin_cache"), failure();
  if (!staticInputs(in))
    return failure();
  Composer c = composer();
  auto type = typeOf(in[0]);
  int64_t heads = intAttr(node, "num_heads", 0);
  if (type.getRank() != 3 && type.getRank() != 4)
    return nodeError("X must be 3-D or 4-D, not " + shapeString(type)), failure();
  if (type.getRank() == 3 && (heads <= 0 || type.getDimSize(2) % heads))
    return nodeError("a 3-D X " + shapeString(type) +
                     " needs num_heads, a divisor of its hidden size"),
           failure();
  Value x = type.getRank() == 4 ? in[0] : splitHeads(c, in[0], heads);
  if (!x)
    return failure();
  ArrayRef<int64_t> xs = typeOf(x).getShape(); // [B, H, S, D]
  int64_t r = intAttr(node, "rotary_embedding_dim", 0);
  r = r ? r : xs[3];
  if (r <= 0 || r % 2 || r > xs[3])
    return nodeError("rotary_embedding_dim " + std::to_string(r) +
                     " must be even, positive and at most the head size " + std::to_string(xs[3])),
           failure();
  bool interleaved = intAttr(node, "interleaved", 0);
  FailureOr<Value> y = rotate(c, x, in[1], in[2], in.size() > 3 ? in[3] : Value(), r, interleaved);
  if (::failed(y))
    return failure();
  return c.finish(results, {type.getRank() == 4 ? *y : mergeHeads(c, *y)});
}

/// Rows `ids` of `table`: read at import when both are known (a cache held as
/// a weight file, at constant positions), so that the rotary's tables are
/// constants the attention kernel computes from the position.
Value Importer::gatherRows(Composer &c, Value table, Value ids) {
  DenseElementsAttr rows = wg::getConstantElements(ids);
  DenseElementsAttr values = rows ? wg::getConstantElements(table) : DenseElementsAttr();
  auto type = typeOf(table);
  if (!values || type.getRank() != 2 || !isa<FloatType>(type.getElementType()))
    return c.op(wg::GatherOp::getOperationName(), {table, ids},
                {attr("axis", builder.getI64IntegerAttr(0))});
  int64_t n = type.getDimSize(0), width = type.getDimSize(1);
  auto all = values.value_begin<APFloat>();
  SmallVector<APFloat> picked;
  for (const APInt &row : rows.getValues<APInt>()) {
    int64_t r = row.getSExtValue();
    r = r < 0 ? r + n : r;
    if (r < 0 || r >= n)
      return nodeError("position " + std::to_string(row.getSExtValue()) + " is outside the " +
                       std::to_string(n) + " rows of the rotary caches"),
             c.ok = false, Value();
    for (int64_t j = 0; j < width; ++j)
      picked.push_back(all[r * width + j]);
  }
  SmallVector<int64_t> shape(typeOf(ids).getShape());
  shape.push_back(width);
  return constant(DenseElementsAttr::get(RankedTensorType::get(shape, type.getElementType()),
                                         ArrayRef<APFloat>(picked)));
}

FailureOr<Value> Importer::rotate(Composer &c, Value x, Value cosCache, Value sinCache, Value ids,
                                  int64_t r, bool interleaved) {
  if (!c.ok || !x)
    return failure();
  auto type = typeOf(x);
  SmallVector<Value> tables;
  for (Value cache : {cosCache, sinCache}) {
    Value half = ids ? gatherRows(c, cache, ids) : cache;
    if (!half)
      return failure();
    auto hs = typeOf(half);
    if (hs.getRank() != 3 || hs.getDimSize(2) != r / 2 ||
        hs.getElementType() != type.getElementType())
      return nodeError("the caches give " + shapeString(hs) + " per position, not [B, S, " +
                       std::to_string(r / 2) + "] of X's element type"),
             failure();
    ArrayRef<int64_t> s = hs.getShape();
    Value full = interleaved
                     ? c.reshape(c.concat({c.unsqueeze(half, {3}), c.unsqueeze(half, {3})}, 3),
                                 {s[0], s[1], r})
                     : c.concat({half, half}, 2);
    tables.push_back(c.unsqueeze(full, {1}));
  }
  Value y = c.op(wg::RotaryOp::getOperationName(), {x, tables[0], tables[1]},
                 {attr("interleaved", builder.getBoolAttr(interleaved))}, x.getType());
  if (!y)
    return failure();
  return y;
}
