//===- OnnxMicrosoft.cpp - ONNX Runtime's com.microsoft ops ---------------===//
//
// The contrib ops that ONNX Runtime's transformer optimizer and its 4-bit
// quantizer write into exported GPT, Llama and NeoX models, as the wsgraph ops
// of their definitions: the GELU forms, the skip-and-norm ops (a residual add
// and a layer or RMS norm), FusedMatMul, BiasAdd, GemmFastGelu, the
// attentions, and MatMulNBits, whose packed weights are dequantized once at
// import into the f32 matrix the linear kernels hold.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isMicrosoftOp(StringRef domain, StringRef op) {
  // clang-format off
  static const llvm::StringSet<> ops = {
      "FastGelu", "BiasGelu", "Gelu", "QuickGelu", "SkipLayerNormalization",
      "SkipSimplifiedLayerNormalization", "SimplifiedLayerNormalization", "MatMulNBits",
      "RotaryEmbedding", "Attention", "MultiHeadAttention", "GroupQueryAttention", "FusedMatMul",
      "BiasAdd", "GemmFastGelu"};
  // clang-format on
  return domain == "com.microsoft" && ops.contains(op);
}

LogicalResult Importer::convertMicrosoftOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                           SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  if (!at(0))
    return nodeError("expects an input"), failure();
  if (!staticInputs(in))
    return failure();
  Composer c = composer();
  Value x = in[0];
  auto gelu = [&](Value v, StringRef approximate) {
    return c.op(wg::GeluOp::getOperationName(), {v},
                {attr("approximate", builder.getStringAttr(approximate))},
                v ? v.getType() : Type());
  };
  if (op == "FastGelu") // the tanh form, of x plus an optional bias
    return c.finish(results, {gelu(at(1) ? c.add(x, in[1]) : x, "tanh")});
  if (op == "BiasGelu")
    return at(1) ? c.finish(results, {gelu(c.add(x, in[1]), "none")})
                 : (nodeError("expects A and B"), failure());
  if (op == "Gelu")
    return c.finish(results, {gelu(x, "none")});
  if (op == "QuickGelu") {
    Value alpha = scalarConstant(typeOf(x).getElementType(), floatAttr(node, "alpha", 1.702f));
    return c.finish(results,
                    {c.mul(x, c.unary(wg::SigmoidOp::getOperationName(), c.mul(alpha, x)))});
  }
  if (op == "BiasAdd") // x + bias + skip
    return at(2) ? c.finish(results, {c.add(c.add(x, in[1]), in[2])})
                 : (nodeError("expects X, bias and skip"), failure());
  if (op == "GemmFastGelu") {
    if (!at(1))
      return nodeError("expects X and W"), failure();
    Value y = c.op(wg::MatmulOp::getOperationName(), {x, in[1]});
    return c.finish(results, {gelu(at(2) ? c.add(y, in[2]) : y, "tanh")});
  }
  if (op == "FusedMatMul")
    return convertFusedMatMul(node, in, results);
  if (op == "MatMulNBits")
    return convertMatMulNBits(node, in, results);
  if (op == "RotaryEmbedding")
    return convertMicrosoftRotary(node, in, results);
  if (op == "Attention")
    return convertMicrosoftAttention(node, in, results);
  if (op == "MultiHeadAttention")
    return convertMultiHeadAttention(node, in, results);
  if (op == "GroupQueryAttention")
    return convertGroupQueryAttention(node, in, results);
  return convertSkipNorm(node, in, results);
}

/// SkipLayerNormalization (input, skip, gamma, beta, bias) and
/// SkipSimplifiedLayerNormalization (input, skip, gamma, bias): the norm over
/// the last axis of input + skip + bias, whose sum is output 3;
/// SimplifiedLayerNormalization (X, scale) is an RMS norm (as ONNX's
/// RMSNormalization). The mean and inverse deviation outputs are not made.
LogicalResult Importer::convertSkipNorm(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  if (op == "SimplifiedLayerNormalization")
    return in.size() > 1 && in[1] ? convertRmsNorm(node, in, results)
                                  : (nodeError("expects X and scale"), failure());
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  if (!at(1) || !at(2))
    return nodeError("expects input, skip and gamma"), failure();
  Composer c = composer();
  bool simplified = op == "SkipSimplifiedLayerNormalization";
  Value sum = c.add(in[0], in[1]);
  if (Value bias = at(simplified ? 3 : 4))
    sum = c.add(sum, bias);
  if (!c.ok)
    return failure();
  auto hidden =
      RankedTensorType::get({typeOf(sum).getShape().back()}, typeOf(in[2]).getElementType());
  auto perHidden = [&](Value v) {
    return typeOf(v) == hidden ? v : c.op(wg::ReshapeOp::getOperationName(), {v}, {}, hidden);
  };
  SmallVector<Value> operands = {sum, perHidden(in[2])};
  if (!simplified && at(3))
    operands.push_back(perHidden(in[3]));
  NamedAttribute eps = attr("epsilon", builder.getF32FloatAttr(floatAttr(node, "epsilon", 1e-12f)));
  Value y =
      c.op(simplified ? wg::RmsNormOp::getOperationName() : wg::LayerNormOp::getOperationName(),
           operands, {attr("axis", builder.getI64IntegerAttr(-1)), eps}, sum.getType());
  if (!c.ok || !y)
    return failure();
  results.append({y, Value(), Value(), sum}); // the mean and deviation are not made
  return success();
}

/// RotaryEmbedding of com.microsoft: (input, position_ids, cos_cache,
/// sin_cache), the ONNX op's with its inputs in another order, and
/// position_ids [B, S] or one offset [1] (positions offset .. offset + S - 1).
LogicalResult Importer::convertMicrosoftRotary(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               SmallVectorImpl<Value> &results) {
  if (in.size() < 4 || !in[1] || !in[2] || !in[3])
    return nodeError("expects input, position_ids, cos_cache and sin_cache"), failure();
  if (floatAttr(node, "scale", 1.0f) != 1.0f || intAttr(node, "is_packed_batching", 0))
    return nodeError("scale and is_packed_batching are not supported"), failure();
  auto type = typeOf(in[0]);
  Value ids = in[1];
  if (typeOf(ids).getNumElements() == 1 && type.getRank() >= 3) {
    Composer c = composer();
    int64_t s = type.getDimSize(type.getRank() == 4 ? 2 : 1);
    Type i64 = builder.getIntegerType(64);
    ids = c.add(indexPositions({1, s}, 1, 1), c.reshape(castTo(c, ids, i64), {1, 1}));
    if (!c.ok)
      return failure();
  }
  return convertRotaryEmbedding(node, {in[0], in[2], in[3], ids}, results);
}

/// The score bias of Attention's mask_index for scores [B, N, S, T]: 0 where
/// a key is kept, mask_filter_value where it is not: key lengths [B], a raw
/// 0/1 mask [B, T] or one per query [B, S, T].
FailureOr<Value> Importer::maskIndexBias(Composer &c, Value mask, RankedTensorType scores,
                                         double filter) {
  ArrayRef<int64_t> ss = scores.getShape();
  auto mt = typeOf(mask);
  Type element = scores.getElementType(), i64 = builder.getIntegerType(64);
  Value kept;
  if (mt.getRank() == 1 && mt.getDimSize(0) == ss[0])
    kept = c.less(indexPositions({1, 1, 1, ss[3]}, 3, 1),
                  c.reshape(castTo(c, mask, i64), {ss[0], 1, 1, 1}));
  else if ((mt.getRank() == 2 && mt.getDimSize(0) == ss[0] && mt.getDimSize(1) == ss[3]) ||
           (mt.getRank() == 3 && mt.getDimSize(0) == ss[0] && mt.getDimSize(1) == ss[2] &&
            mt.getDimSize(2) == ss[3]))
    kept =
        c.greater(c.reshape(castTo(c, mask, i64), {ss[0], 1, mt.getRank() == 3 ? ss[2] : 1, ss[3]}),
                  scalarConstant(i64, 0));
  else
    return nodeError("mask_index must be key lengths [B], or a raw mask [B, total] or [B, S, "
                     "total]"),
           failure();
  return c.where(kept, scalarConstant(element, 0), scalarConstant(element, filter));
}

/// Attention of com.microsoft (ONNX Runtime's fused GPT-2 attention): q, k
/// and v from one product of input [B, S, hidden] with weights (and bias),
/// keys and values after the cache `past` [2, B, N, P, H], then
/// attendHeads; outputs
/// [B, S, v_hidden] and present [2, B, N, P + S, H].
LogicalResult Importer::convertMicrosoftAttention(const onnx::NodeProto &node, ArrayRef<Value> in,
                                                  SmallVectorImpl<Value> &results) {
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  int64_t heads = intAttr(node, "num_heads", 0);
  if (!at(1) || heads <= 0 || typeOf(in[0]).getRank() != 3 || typeOf(in[1]).getRank() != 2)
    return nodeError("expects input [B, S, hidden], weights and num_heads"), failure();
  if (intAttr(node, "do_rotary", 0) || intAttr(node, "past_present_share_buffer", 0) || at(6))
    return nodeError("do_rotary and a shared past/present buffer are not supported"), failure();
  int64_t width = typeOf(in[1]).getDimSize(1);
  SmallVector<int64_t> sizes =
      intsAttr(node, "qkv_hidden_sizes").value_or(SmallVector<int64_t>(3, width / 3));
  if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != width ||
      llvm::any_of(sizes, [&](int64_t s) { return s <= 0 || s % heads; }))
    return nodeError("weights' " + std::to_string(width) +
                     " columns do not split into q, k and v of num_heads heads each"),
           failure();
  Composer c = composer();
  Value qkv = c.op(wg::MatmulOp::getOperationName(), {in[0], in[1]});
  if (Value bias = at(2))
    qkv = c.add(qkv, bias);
  Value q = splitHeads(c, c.sliceAlong(qkv, 2, 0, sizes[0]), heads);
  Value k = splitHeads(c, c.sliceAlong(qkv, 2, sizes[0], sizes[1]), heads);
  Value v = splitHeads(c, c.sliceAlong(qkv, 2, sizes[0] + sizes[1], sizes[2]), heads);
  int64_t past = 0;
  if (Value cache = at(4)) {
    auto pt = typeOf(cache);
    if (pt.getRank() != 5 || pt.getDimSize(0) != 2 || !k ||
        pt.getDimSize(4) != typeOf(k).getDimSize(3))
      return nodeError("past must be [2, B, N, P, H]"), failure();
    past = pt.getDimSize(3);
    SmallVector<int64_t> half(pt.getShape().drop_front());
    k = c.concat({c.reshape(c.sliceAlong(cache, 0, 0, 1), half), k}, 2);
    v = c.concat({c.reshape(c.sliceAlong(cache, 0, 1, 1), half), v}, 2);
  }
  auto y = attendHeads(c, node, q, k, v, at(3), at(5), past);
  if (::failed(y))
    return failure();
  Value present = c.concat({c.unsqueeze(k, {0}), c.unsqueeze(v, {0})}, 0);
  return c.finish(results, {mergeHeads(c, *y), present});
}

/// The heads' attention of com.microsoft's Attention and MultiHeadAttention:
/// scores of q [B, N, S, H] and k [B, N, P + S, H] scaled, masked by `mask`
/// (mask_index or key_padding_mask, with mask_filter_value) and `bias`, with
/// unidirectional the future keys left out (-inf, not mask_filter_value: the
/// same weights wherever a query sees a key, and the form the fusion pass
/// takes to the kernel); then the softmax's product with v, [B, N, S, Hv].
FailureOr<Value> Importer::attendHeads(Composer &c, const onnx::NodeProto &node, Value q, Value k,
                                       Value v, Value mask, Value bias, int64_t past) {
  if (!c.ok || !q || !k || !v)
    return failure();
  Type element = typeOf(q).getElementType();
  double filter = floatAttr(node, "mask_filter_value", -10000.0f);
  auto *scaleAttr = findAttr(node, "scale");
  double scale = scaleAttr ? scaleAttr->f() : 1.0 / std::sqrt(double(typeOf(q).getDimSize(3)));
  Value scores = c.mul(c.op(wg::MatmulOp::getOperationName(), {q, c.transpose(k, {0, 1, 3, 2})}),
                       scalarConstant(element, scale));
  if (!scores)
    return failure();
  if (mask) {
    auto maskBias = maskIndexBias(c, mask, typeOf(scores), filter);
    if (::failed(maskBias))
      return failure();
    scores = c.add(scores, *maskBias);
  }
  if (bias)
    scores = c.add(scores, bias);
  if (intAttr(node, "unidirectional", 0)) {
    int64_t t = typeOf(q).getDimSize(2), s = past + t;
    Value future = c.greater(indexPositions({1, 1, 1, s}, 3, 1),
                             c.add(indexPositions({1, 1, t, 1}, 2, 1),
                                   scalarConstant(builder.getIntegerType(64), double(past))));
    scores = c.where(future, scalarConstant(element, -INFINITY), scores);
  }
  if (!scores)
    return failure();
  Value probs = c.op(wg::SoftmaxOp::getOperationName(), {scores},
                     {attr("axis", builder.getI64IntegerAttr(-1))}, scores.getType());
  Value y = c.op(wg::MatmulOp::getOperationName(), {probs, v});
  if (!y)
    return failure();
  return y;
}

/// MultiHeadAttention of com.microsoft: query [B, S, D], key [B, L, D] and
/// value [B, L, Dv], an optional bias [D + D + Dv] added to them,
/// key_padding_mask (as Attention's mask_index), attention_bias, and a
/// cache past_key/past_value [B, N, P, H]; outputs [B, S, Dv],
/// present_key and present_value. q, k and v may come packed in query [B,
/// S, N, 3, H], k and v in key [B, L, N, 2, H], or key and value as heads
/// already, [B, N, L, H] (cross attention: no bias, no cache).
LogicalResult Importer::convertMultiHeadAttention(const onnx::NodeProto &node, ArrayRef<Value> in,
                                                  SmallVectorImpl<Value> &results) {
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  int64_t heads = intAttr(node, "num_heads", 0);
  if (heads <= 0 || !at(0))
    return nodeError("expects query and num_heads"), failure();
  if (at(8) || at(9) || (node.output_size() > 3 && !node.output(3).empty()))
    return nodeError("past_sequence_length, cache_indirection and the qk output are not "
                     "supported"),
           failure();
  Composer c = composer();
  // The packed forms' part i of [B, T, N, parts, H], as [B, T, N * H].
  auto part = [&](Value x, int64_t i) {
    ArrayRef<int64_t> s = typeOf(x).getShape();
    return c.reshape(c.sliceAlong(x, 3, i, 1), {s[0], s[1], s[2] * s[4]});
  };
  auto packed = [&](Value x, int64_t parts) {
    auto t = typeOf(x);
    return t.getRank() == 5 && t.getDimSize(2) == heads && t.getDimSize(3) == parts;
  };
  Value q = at(0), k = at(1), v = at(2);
  if (!k && !v && packed(q, 3))
    k = part(q, 1), v = part(q, 2), q = part(q, 0);
  else if (k && !v && packed(k, 2))
    v = part(k, 1), k = part(k, 0);
  bool bnsh = k && v && typeOf(k).getRank() == 4 && typeOf(v).getRank() == 4;
  if (!k || !v || typeOf(q).getRank() != 3 ||
      (!bnsh && (typeOf(k).getRank() != 3 || typeOf(v).getRank() != 3)))
    return nodeError("expects query [B, S, D] with key and value [B, L, D] or [B, N, L, H], "
                     "or q, k and v packed in query [B, S, N, 3, H] or k and v in key [B, L, N, "
                     "2, H]"),
           failure();
  if (bnsh && (at(3) || at(6) || at(7)))
    return nodeError("key and value given as heads take no bias and no cache"), failure();
  if (!c.ok)
    return failure();
  int64_t d = typeOf(q).getDimSize(2);
  int64_t dv = bnsh ? typeOf(v).getDimSize(1) * typeOf(v).getDimSize(3) : typeOf(v).getDimSize(2);
  int64_t dk = bnsh ? typeOf(k).getDimSize(1) * typeOf(k).getDimSize(3) : typeOf(k).getDimSize(2);
  if (d % heads || dv % heads || dk != d ||
      (bnsh && (typeOf(k).getDimSize(1) != heads || typeOf(v).getDimSize(1) != heads)) ||
      (at(3) && typeOf(in[3]).getNumElements() != 2 * d + dv) || bool(at(6)) != bool(at(7)))
    return nodeError("query, key, value, bias and the cache do not fit num_heads"), failure();
  auto biased = [&](Value x, int64_t from, int64_t size) {
    return at(3) ? c.add(x, c.sliceAlong(in[3], 0, from, size)) : x;
  };
  q = splitHeads(c, biased(q, 0, d), heads);
  if (!bnsh) {
    k = splitHeads(c, biased(k, d, d), heads);
    v = splitHeads(c, biased(v, 2 * d, dv), heads);
  }
  int64_t past = at(6) ? typeOf(in[6]).getDimSize(2) : 0;
  if (at(6)) {
    k = c.concat({in[6], k}, 2);
    v = c.concat({in[7], v}, 2);
  }
  auto y = attendHeads(c, node, q, k, v, at(4), at(5), past);
  if (::failed(y))
    return failure();
  return c.finish(results, {mergeHeads(c, *y), k, v});
}

/// FusedMatMul (A, B): alpha times the product of A and B, each with its last
/// two axes swapped when transA or transB says.
LogicalResult Importer::convertFusedMatMul(const onnx::NodeProto &node, ArrayRef<Value> in,
                                           SmallVectorImpl<Value> &results) {
  if (in.size() < 2 || !in[1])
    return nodeError("expects A and B"), failure();
  if (intAttr(node, "transBatchA", 0) || intAttr(node, "transBatchB", 0))
    return nodeError("transBatchA and transBatchB are not supported"), failure();
  Composer c = composer();
  SmallVector<Value, 2> operands;
  for (auto [x, name] : {std::pair{in[0], "transA"}, {in[1], "transB"}}) {
    int64_t rank = typeOf(x).getRank();
    if (!intAttr(node, name, 0)) {
      operands.push_back(x);
      continue;
    }
    if (rank < 2)
      return nodeError(std::string(name) + " needs an operand of rank 2 or more"), failure();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 2], perm[rank - 1]);
    operands.push_back(c.transpose(x, perm));
  }
  Value y = c.op(wg::MatmulOp::getOperationName(), operands);
  if (float alpha = floatAttr(node, "alpha", 1.0f); alpha != 1.0f && y)
    y = c.mul(y, scalarConstant(typeOf(y).getElementType(), alpha));
  return c.finish(results, {y});
}

/// The unsigned `bits`-bit field `i` of `bytes`, fields packed from each
/// byte's low bits up.
static uint32_t field(ArrayRef<uint8_t> bytes, int64_t i, int64_t bits) {
  int64_t bit = i * bits;
  return (bytes[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
}

/// MatMulNBits (A, B, scales, zero_points, g_idx, bias): A [.., K] times
/// B^T plus bias, B [N, K] stored as `bits`-bit codes in
/// blocks of block_size along K, each block with its scale and zero point
/// (packed codes, or floats; default 2^(bits-1)): B = (code - zero) * scale.
/// B, the scales and the zero points must be the model's own constants.
LogicalResult Importer::convertMatMulNBits(const onnx::NodeProto &node, ArrayRef<Value> in,
                                           SmallVectorImpl<Value> &results) {
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  int64_t k = intAttr(node, "K", 0), n = intAttr(node, "N", 0), bits = intAttr(node, "bits", 4),
          block = intAttr(node, "block_size", 0);
  if (k <= 0 || n <= 0 || block < 16 || (block & (block - 1)) ||
      (bits != 2 && bits != 4 && bits != 8))
    return nodeError(
               "needs K and N, bits of 2, 4 or 8 and a power-of-two block_size of 16 or more"),
           failure();
  if (at(4))
    return nodeError("g_idx (act order) is not supported"), failure();
  Composer c = composer();
  Type element = typeOf(in[0]).getElementType();
  auto product = [&](Value weight) {
    Value y = c.op(wg::MatmulOp::getOperationName(), {in[0], castTo(c, weight, element)});
    if (Value bias = at(5))
      y = c.add(y, bias);
    return c.finish(results, {y});
  };
  // Codes elided (--elide-weights): so is the matrix they make, enough to compile.
  if (auto codes = at(1) ? in[1].getDefiningOp<wg::WeightOp>() : wg::WeightOp();
      codes && codes.isElided()) {
    if (boundedProduct({k, n}, kMaxImportTable * kMaxImportTable) < 0 ||
        typeOf(in[1]).getNumElements() != n * ((k + block - 1) / block) * (block * bits / 8))
      return nodeError("B does not have the shape K = " + std::to_string(k) +
                       ", N = " + std::to_string(n) + " give"),
             failure();
    return product(wg::WeightOp::create(
        builder, loc, RankedTensorType::get({k, n}, builder.getF32Type()), codes.getNameAttr(),
        StringAttr(), builder.getI64IntegerAttr(0), DenseI64ArrayAttr()));
  }
  // Dequantized at import: W [K, N] is a constant of the model's size.
  if (boundedProduct({k, n}, int64_t(1) << 28) < 0 || block > (int64_t(1) << 20))
    return nodeError("K x N = " + std::to_string(k) + " x " + std::to_string(n) +
                     " is more than the importer dequantizes, or block_size past 2^20"),
           failure();
  int64_t blocks = (k + block - 1) / block, blob = block * bits / 8;
  constexpr int64_t kMaxRead = int64_t(1) << 30;
  DenseElementsAttr b = at(1) ? wg::getConstantElements(in[1], kMaxRead) : DenseElementsAttr();
  DenseElementsAttr scales = at(2) ? wg::getConstantElements(in[2], kMaxRead) : DenseElementsAttr();
  DenseElementsAttr zeros = at(3) ? wg::getConstantElements(in[3], kMaxRead) : DenseElementsAttr();
  if (!b || !scales || (at(3) && !zeros))
    return nodeError("B, scales and zero_points must be the model's constants (or B elided)"),
           failure();
  bool floatZeros = zeros && isa<FloatType>(zeros.getElementType());
  int64_t zeroBytes = (blocks * bits + 7) / 8;
  if (b.getNumElements() != n * blocks * blob || scales.getNumElements() != n * blocks ||
      (zeros && zeros.getNumElements() != (floatZeros ? n * blocks : n * zeroBytes)) ||
      typeOf(in[0]).getDimSize(typeOf(in[0]).getRank() - 1) != k)
    return nodeError("A, B, scales and zero_points do not have the shapes K = " +
                     std::to_string(k) + ", N = " + std::to_string(n) + " give"),
           failure();
  std::vector<uint8_t> codes, zeroCodes;
  for (const APInt &v : b.getValues<APInt>())
    codes.push_back(uint8_t(v.getZExtValue()));
  std::vector<double> scale, zero;
  for (const APFloat &v : scales.getValues<APFloat>())
    scale.push_back(v.convertToDouble());
  if (floatZeros)
    for (const APFloat &v : zeros.getValues<APFloat>())
      zero.push_back(v.convertToDouble());
  else if (zeros)
    for (const APInt &v : zeros.getValues<APInt>())
      zeroCodes.push_back(uint8_t(v.getZExtValue()));
  // W [K, N] (B transposed), each element (code - zero) * scale in float.
  std::vector<float> w(size_t(k * n));
  for (int64_t row = 0; row < n; ++row) {
    ArrayRef<uint8_t> rowCodes(codes.data() + row * blocks * blob, size_t(blocks * blob));
    for (int64_t blk = 0; blk < blocks; ++blk) {
      int64_t s = row * blocks + blk;
      double z =
          floatZeros ? zero[s]
          : zeros ? field(ArrayRef<uint8_t>(zeroCodes.data() + row * zeroBytes, size_t(zeroBytes)),
                          blk, bits)
                  : double(1 << (bits - 1));
      for (int64_t i = blk * block; i < std::min(k, (blk + 1) * block); ++i)
        w[size_t(i * n + row)] = float((double(field(rowCodes, i, bits)) - z) * scale[s]);
    }
  }
  return product(constant(DenseElementsAttr::get(
      RankedTensorType::get({k, n}, builder.getF32Type()), ArrayRef<float>(w))));
}
