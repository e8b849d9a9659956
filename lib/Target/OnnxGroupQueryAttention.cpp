//===- OnnxGroupQueryAttention.cpp - com.microsoft GroupQueryAttention ----===//
//
// ONNX Runtime's grouped-query attention with its KV cache, as its model
// builder writes Llama, Mistral, Phi and Qwen. How many keys each batch
// has comes at run time, from seqlens_k (its total less one): the new
// keys and values go into the cache after that batch's earlier ones
// (none in a first prompt), and query i sees the keys up to its own
// position, within the last local_window_size. As Attention, it imports as the ops
// of its definition; the cache write is a gather, as TensorScatter's.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

namespace {
/// GroupQueryAttention's inputs, by index.
enum GqaInput {
  Query,
  Key,
  Val,
  PastKey,
  PastValue,
  SeqlensK,
  TotalLength,
  CosCache,
  SinCache,
  PositionIds,
  AttentionBias,
  HeadSink
};
} // namespace

/// Inputs: query [B, S, N * H] (or q, k and v packed, [B, S, (N + 2 kv) H],
/// without key and value), key and value [B, S, kv * H], past_key and
/// past_value [B, kv, P, H], seqlens_k [B], total_sequence_length (a
/// constant: the present cache holds max(it, P) positions), cos_cache and
/// sin_cache (do_rotary), position_ids [B, S], attention_bias [B|1, N|1,
/// S, total] and head_sink [N]. Outputs: [B, S, N * H], present_key and
/// present_value.
LogicalResult Importer::convertGroupQueryAttention(const onnx::NodeProto &node, ArrayRef<Value> in,
                                                   SmallVectorImpl<Value> &results) {
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  int64_t heads = intAttr(node, "num_heads", 0), kvHeads = intAttr(node, "kv_num_heads", 0);
  if (!at(Query) || !at(SeqlensK) || !at(TotalLength) || heads <= 0 || kvHeads <= 0 ||
      heads % kvHeads || typeOf(in[Query]).getRank() != 3)
    return nodeError("expects query [B, S, hidden], seqlens_k, total_sequence_length, and "
                     "num_heads a multiple of kv_num_heads"),
           failure();
  if (intAttr(node, "qk_output", 0) || (node.output_size() > 3 && !node.output(3).empty()))
    return nodeError("the qk output is not supported"), failure();
  bool packed = !at(Key);
  if (packed == bool(at(Val)) || bool(at(PastKey)) != bool(at(PastValue)) ||
      bool(at(CosCache)) != bool(at(SinCache)))
    return nodeError("key and value, past_key and past_value, and cos_cache and sin_cache "
                     "come in pairs"),
           failure();
  auto rank = [&](size_t i) { return typeOf(in[i]).getRank(); };
  if ((at(PastKey) && (rank(PastKey) != 4 || rank(PastValue) != 4)) ||
      (at(CosCache) && (rank(CosCache) != 2 || rank(SinCache) != 2)))
    return nodeError("past_key and past_value must be [B, kv_num_heads, P, H], and cos_cache and "
                     "sin_cache [positions, rotary_dim / 2]"),
           failure();
  FailureOr<SmallVector<int64_t>> total = constInts(in[TotalLength], "total_sequence_length");
  if (::failed(total))
    return failure();
  if (total->size() != 1)
    return nodeError("total_sequence_length must hold one value"), failure();
  ArrayRef<int64_t> qs = typeOf(in[Query]).getShape();
  int64_t perToken = packed ? heads + 2 * kvHeads : heads; // heads in query's last axis
  int64_t b = qs[0], s = qs[1], h = qs[2] / perToken;
  int64_t past = at(PastKey) ? typeOf(in[PastKey]).getDimSize(2) : 0;
  int64_t length = std::max((*total)[0], past);
  if (h <= 0 || qs[2] != h * perToken || length < s || length > kMaxImportTable ||
      (!packed && (typeOf(in[Key]).getShape() != ArrayRef<int64_t>{b, s, kvHeads * h} ||
                   typeOf(in[Val]).getShape() != ArrayRef<int64_t>{b, s, kvHeads * h})) ||
      (past && (typeOf(in[PastKey]).getShape() != ArrayRef<int64_t>{b, kvHeads, past, h} ||
                typeOf(in[PastValue]).getShape() != ArrayRef<int64_t>{b, kvHeads, past, h})))
    return nodeError("query, key, value, the cache and total_sequence_length " +
                     std::to_string((*total)[0]) + " do not fit num_heads " +
                     std::to_string(heads) + " and kv_num_heads " + std::to_string(kvHeads)),
           failure();
  // A prompt after earlier tokens, a first prompt (all S tokens new), or one
  // token.
  bool later = s > 1 && s != (*total)[0], first = !later && s == (*total)[0];
  if ((later && b != 1) || (!later && !first && s != 1))
    return nodeError("a prompt after earlier tokens must be of batch 1, and a step after the "
                     "first prompt of one token"),
           failure();
  Composer c = composer();
  Type element = typeOf(in[Query]).getElementType(), i64 = builder.getIntegerType(64);
  Value q = packed ? c.sliceAlong(in[Query], 2, 0, heads * h) : in[Query];
  Value k = packed ? c.sliceAlong(in[Query], 2, heads * h, kvHeads * h) : in[Key];
  Value v = packed ? c.sliceAlong(in[Query], 2, (heads + kvHeads) * h, kvHeads * h) : in[Val];
  q = splitHeads(c, q, heads), k = splitHeads(c, k, kvHeads), v = splitHeads(c, v, kvHeads);
  // Each batch's earlier keys [B, 1, 1, 1]: none in a first prompt, else
  // its keys in all (seqlens_k + 1) less the S new ones.
  Value earlier = first ? constant(DenseElementsAttr::get(RankedTensorType::get({b, 1, 1, 1}, i64),
                                                          builder.getI64IntegerAttr(0)))
                        : c.sub(castTo(c, c.reshape(in[SeqlensK], {b, 1, 1, 1}), i64),
                                scalarConstant(i64, double(s - 1)));
  if (intAttr(node, "do_rotary", 0)) {
    if (!at(CosCache))
      return nodeError("do_rotary needs cos_cache and sin_cache"), failure();
    // A first prompt's positions are 0.. in every batch: one table for all.
    Value ids = at(PositionIds);
    if (!ids && first)
      ids = indexPositions({1, s}, 1, 1);
    else if (!ids)
      ids = c.reshape(c.add(indexPositions({1, 1, s, 1}, 2, 1), earlier), {b, s});
    int64_t r = 2 * typeOf(in[CosCache]).getDimSize(1);
    bool interleaved = intAttr(node, "rotary_interleaved", 0);
    FailureOr<Value> rq = rotate(c, q, in[CosCache], in[SinCache], ids, r, interleaved), rk;
    if (::failed(rq) ||
        ::failed(rk = rotate(c, k, in[CosCache], in[SinCache], ids, r, interleaved)))
      return failure();
    q = *rq, k = *rk;
  }
  // The caches: the past, zeros past its end, with the new keys written.
  auto cacheOf = [&](Value pastCache) {
    SmallVector<Value, 2> parts;
    if (pastCache)
      parts.push_back(pastCache);
    if (length > past)
      parts.push_back(c.op(wg::ExpandOp::getOperationName(), {scalarConstant(element, 0)}, {},
                           RankedTensorType::get({b, kvHeads, length - past, h}, element)));
    return c.concat(parts, 2);
  };
  Value presentK = writeWindow(c, cacheOf(at(PastKey)), k, earlier, 2, false);
  Value presentV = writeWindow(c, cacheOf(at(PastValue)), v, earlier, 2, false);
  auto scores = groupQueryScores(c, node, q, presentK, earlier, at(AttentionBias), at(HeadSink));
  if (::failed(scores))
    return failure();
  Value y =
      c.op(wg::MatmulOp::getOperationName(), {*scores, repeatHeads(c, presentV, heads / kvHeads)});
  return c.finish(results, {mergeHeads(c, y), presentK, presentV});
}

/// The softmax of q [B, N, S, H] against the cache `keys` [B, kv, L, H]:
/// scaled, soft-capped, attention_bias added, each query's keys after its
/// position (earlier [B, 1, 1, 1] + i) and before its window left out, with
/// smooth_softmax's zero logit or head_sink's per-head one beside them.
FailureOr<Value> Importer::groupQueryScores(Composer &c, const onnx::NodeProto &node, Value q,
                                            Value keys, Value earlier, Value bias, Value perHead) {
  if (!c.ok || !q || !keys)
    return failure();
  ArrayRef<int64_t> qs = typeOf(q).getShape();
  int64_t b = qs[0], heads = qs[1], s = qs[2], length = typeOf(keys).getDimSize(2);
  Type element = typeOf(q).getElementType(), i64 = builder.getIntegerType(64);
  double scale = floatAttr(node, "scale", 0.0f);
  scale = scale != 0.0 ? scale : 1.0 / std::sqrt(double(qs[3]));
  Value kT = c.transpose(repeatHeads(c, keys, heads / typeOf(keys).getDimSize(1)), {0, 1, 3, 2});
  Value scores =
      c.mul(c.op(wg::MatmulOp::getOperationName(), {q, kT}), scalarConstant(element, scale));
  if (double cap = floatAttr(node, "softcap", 0.0f); cap > 0) {
    Value capValue = scalarConstant(element, cap);
    scores = c.mul(c.tanh(c.div(scores, capValue)), capValue);
  }
  if (bias) {
    auto bt = typeOf(bias);
    if (bt.getRank() != 4 || bt.getDimSize(2) != s || bt.getDimSize(3) > length)
      return nodeError("attention_bias must be [B or 1, num_heads or 1, S, total]"), failure();
    // Keys past the total are left out below: their bias is never read.
    SmallVector<int64_t> rest(bt.getShape());
    rest[3] = length - bt.getDimSize(3);
    scores = c.add(scores, rest[3] ? c.concat({bias, c.op(wg::ExpandOp::getOperationName(),
                                                          {scalarConstant(element, 0)}, {},
                                                          RankedTensorType::get(rest, element))},
                                              3)
                                   : bias);
  }
  Value keyAt = indexPositions({1, 1, 1, length}, 3, 1);
  Value position = c.add(indexPositions({1, 1, s, 1}, 2, 1), earlier);
  Value hidden = c.greater(keyAt, position);
  // The window: the last local_window_size keys, the query's own among them.
  if (int64_t window = intAttr(node, "local_window_size", -1); window > 0)
    hidden =
        c.op(wg::OrOp::getOperationName(),
             {hidden, c.less(keyAt, c.sub(position, scalarConstant(i64, double(window - 1))))});
  scores = c.where(hidden, scalarConstant(element, -INFINITY), scores);
  // A sink: one more logit in the softmax's sum, whose weight is dropped.
  Value sink;
  if (perHead) {
    if (typeOf(perHead).getShape() != ArrayRef<int64_t>{heads})
      return nodeError("head_sink must be [num_heads]"), failure();
    sink = c.reshape(perHead, {1, heads, 1, 1});
  } else if (intAttr(node, "smooth_softmax", 0)) {
    sink = scalarConstant(element, 0);
  }
  if (sink)
    scores = c.concat({scores, c.op(wg::ExpandOp::getOperationName(), {sink}, {},
                                    RankedTensorType::get({b, heads, s, 1}, element))},
                      3);
  Value probs =
      c.op(wg::SoftmaxOp::getOperationName(), {scores},
           {attr("axis", builder.getI64IntegerAttr(-1))}, scores ? scores.getType() : Type());
  if (sink)
    probs = c.sliceAlong(probs, 3, 0, length);
  if (!c.ok)
    return failure();
  return probs;
}
