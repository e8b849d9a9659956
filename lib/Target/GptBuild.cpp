//===- GptBuild.cpp - fused wsgraph of synthetic GPTs ---------------------===//
//
// Emits, op for op, the fused wsgraph that --import-onnx + --wsgraph-fuse
// give for the family's export from frontends/pytorch (nanoGPT, HF Llama,
// HF GPT-NeoX), with every weight elided, so that compile-only runs of 405B-
// and 1T-parameter models never touch parameter bytes and the lowering's
// fused kinds take every op. Linear weights are [in, out], as the import
// holds them; their names are the checkpoint's.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/GptConfig.h"

#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

namespace {

/// Builds one decoder into the body of `main`.
class DecoderBuilder {
public:
  DecoderBuilder(const GptConfig &cfg, int64_t batch, int64_t seq, ImplicitLocOpBuilder &b)
      : cfg(cfg), batch(batch), seq(seq), b(b), f32(b.getF32Type()) {}

  /// The logits [batch, seq, vocab] of the token ids `tokens` [batch, seq].
  Value logits(Value tokens);

private:
  const GptConfig &cfg;
  int64_t batch, seq;
  ImplicitLocOpBuilder &b;
  Type f32;
  Value cosTable, sinTable;

  RankedTensorType tensor(ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, f32); }
  /// [batch, seq, n]: the residual stream and every linear's result.
  RankedTensorType rows(int64_t n) { return tensor({batch, seq, n}); }
  /// [batch, heads, seq, d]: one head per [seq, d] slab, as attention takes them.
  RankedTensorType headMajor(int64_t heads, int64_t d) { return tensor({batch, heads, seq, d}); }

  Value weight(const std::string &name, ArrayRef<int64_t> shape) {
    return wg::WeightOp::create(b, tensor(shape), b.getStringAttr(name), StringAttr(),
                                b.getI64IntegerAttr(0), DenseI64ArrayAttr());
  }
  Value linear(Value x, const std::string &name, int64_t n, bool withBias);
  Value layerNorm(Value x, const std::string &name, bool withBias);
  Value rmsNorm(Value x, const std::string &name);
  Value add(Value lhs, Value rhs) { return wg::AddOp::create(b, lhs.getType(), lhs, rhs); }

  Value toHeadMajor(Value x) {
    auto type = cast<RankedTensorType>(x.getType()).getShape();
    return wg::TransposeOp::create(b, headMajor(type[2], type[3]), x,
                                   b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  }
  Value attention(Value q, Value k, Value v);
  Value mergeHeads(Value heads);
  Value repeatKeyValues(Value x);
  Value rotary(Value x) {
    return wg::RotaryOp::create(b, x.getType(), x, cosTable, sinTable, false);
  }
  void createRotaryTables();

  Value gptBlock(Value x, const std::string &prefix);
  Value llamaBlock(Value x, const std::string &prefix);
  Value neoxBlock(Value x, const std::string &prefix);
  Value neoxAttention(Value normed, const std::string &prefix);
  Value neoxMlp(Value normed, const std::string &prefix);
};

Value DecoderBuilder::linear(Value x, const std::string &name, int64_t n, bool withBias) {
  int64_t k = cast<RankedTensorType>(x.getType()).getShape().back();
  Value bias = withBias ? weight(name + ".bias", {n}) : Value();
  return wg::LinearOp::create(b, rows(n), x, weight(name + ".weight", {k, n}), bias);
}

Value DecoderBuilder::layerNorm(Value x, const std::string &name, bool withBias) {
  Value bias = withBias ? weight(name + ".bias", {cfg.width}) : Value();
  return wg::LayerNormOp::create(b, x.getType(), x, weight(name + ".weight", {cfg.width}), bias,
                                 b.getI64IntegerAttr(-1),
                                 b.getF32FloatAttr(float(cfg.normEpsilon)));
}

Value DecoderBuilder::rmsNorm(Value x, const std::string &name) {
  return wg::RmsNormOp::create(b, x.getType(), x, weight(name + ".weight", {cfg.width}),
                               b.getI64IntegerAttr(-1), b.getF32FloatAttr(float(cfg.normEpsilon)));
}

/// Causal, unmasked, scaled by 1/sqrt(d) (the scale rounded to fp32 from
/// the double Python computes).
Value DecoderBuilder::attention(Value q, Value k, Value v) {
  float scale = float(1.0 / std::sqrt(double(cfg.headDim())));
  return wg::AttentionOp::create(b, q.getType(), q, k, v, /*mask=*/Value(), b.getBoolAttr(true),
                                 b.getF32FloatAttr(scale), /*future_fill=*/nullptr);
}

/// [batch, heads, seq, d] -> [batch, seq, heads * d].
Value DecoderBuilder::mergeHeads(Value heads) {
  auto shape = cast<RankedTensorType>(heads.getType()).getShape();
  Value seqMajor = wg::TransposeOp::create(b, tensor({batch, seq, shape[1], shape[3]}), heads,
                                           b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  return wg::ReshapeOp::create(b, rows(shape[1] * shape[3]), seqMajor);
}

/// HF's repeat_kv: each of the kv heads of `x` [batch, kv, seq, d] repeated
/// heads / kv times, as x[:, :, None].expand(...).reshape(...) exports it.
Value DecoderBuilder::repeatKeyValues(Value x) {
  int64_t kv = cfg.keyValueHeads(), group = cfg.heads / kv, d = cfg.headDim();
  if (group == 1)
    return x;
  Value one = wg::UnsqueezeOp::create(b, tensor({batch, kv, 1, seq, d}), x,
                                      b.getDenseI64ArrayAttr({2}));
  Value repeated = wg::ExpandOp::create(b, tensor({batch, kv, group, seq, d}), one);
  return wg::ReshapeOp::create(b, headMajor(cfg.heads, d), repeated);
}

/// cos and sin of t * inv_freq, [1, 1, seq, R], as torch computes HF's
/// tables in fp32: inv_freq = 1 / theta^(arange(0, R, 2) / R), angles
/// t * inv_freq rounded to fp32, cat(freqs, freqs). The attention kind
/// recovers each dimension's frequency from these tables.
void DecoderBuilder::createRotaryTables() {
  int64_t r = cfg.rotaryDims();
  SmallVector<float> invFreq = cfg.rotaryFrequencies();
  SmallVector<float> cosines, sines;
  cosines.reserve(seq * r), sines.reserve(seq * r);
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < r; ++i) {
      double angle = float(t) * invFreq[i % (r / 2)];
      cosines.push_back(float(std::cos(angle)));
      sines.push_back(float(std::sin(angle)));
    }
  auto type = tensor({1, 1, seq, r});
  cosTable = wg::ConstantOp::create(b, DenseElementsAttr::get(type, ArrayRef<float>(cosines)));
  sinTable = wg::ConstantOp::create(b, DenseElementsAttr::get(type, ArrayRef<float>(sines)));
}

/// nanoGPT: pre-LayerNorm, one c_attn split in three, GELU MLP.
Value DecoderBuilder::gptBlock(Value x, const std::string &p) {
  int64_t c = cfg.width, h = cfg.heads;
  Value qkv = linear(layerNorm(x, p + "ln_1", cfg.bias), p + "attn.c_attn", 3 * c, cfg.bias);
  auto split = wg::SplitOp::create(b, TypeRange{rows(c), rows(c), rows(c)}, qkv,
                                   b.getI64IntegerAttr(2), b.getDenseI64ArrayAttr({c, c, c}));
  SmallVector<Value> heads;
  for (Value part : split.getResults())
    heads.push_back(toHeadMajor(
        wg::ReshapeOp::create(b, tensor({batch, seq, h, cfg.headDim()}), part)));
  Value att = mergeHeads(attention(heads[0], heads[1], heads[2]));
  x = add(x, linear(att, p + "attn.c_proj", c, cfg.bias));
  Value fc = linear(layerNorm(x, p + "ln_2", cfg.bias), p + "mlp.c_fc", cfg.mlpWidth(), cfg.bias);
  Value act = wg::GeluOp::create(b, fc.getType(), fc, "none");
  return add(x, linear(act, p + "mlp.c_proj", c, cfg.bias));
}

/// HF Llama: RMS norms, separate q/k/v projections, rotary on q and k,
/// grouped-query attention, SwiGLU (silu as x * sigmoid(x)); no biases.
Value DecoderBuilder::llamaBlock(Value x, const std::string &p) {
  int64_t c = cfg.width, h = cfg.heads, kv = cfg.keyValueHeads(), d = cfg.headDim();
  Value normed = rmsNorm(x, p + "input_layernorm");
  Value q = linear(normed, p + "self_attn.q_proj", h * d, false);
  Value k = linear(normed, p + "self_attn.k_proj", kv * d, false);
  Value v = linear(normed, p + "self_attn.v_proj", kv * d, false);
  q = wg::ReshapeOp::create(b, tensor({batch, seq, h, d}), q);
  k = wg::ReshapeOp::create(b, tensor({batch, seq, kv, d}), k);
  v = wg::ReshapeOp::create(b, tensor({batch, seq, kv, d}), v);
  q = toHeadMajor(q), k = toHeadMajor(k), v = repeatKeyValues(toHeadMajor(v));
  q = rotary(q), k = repeatKeyValues(rotary(k));
  Value att = mergeHeads(attention(q, k, v));
  x = add(x, linear(att, p + "self_attn.o_proj", c, false));
  normed = rmsNorm(x, p + "post_attention_layernorm");
  Value gate = linear(normed, p + "mlp.gate_proj", cfg.mlpWidth(), false);
  Value up = linear(normed, p + "mlp.up_proj", cfg.mlpWidth(), false);
  Value silu = wg::MulOp::create(b, gate.getType(), gate,
                                 wg::SigmoidOp::create(b, gate.getType(), gate));
  Value gated = wg::MulOp::create(b, gate.getType(), silu, up);
  return add(x, linear(gated, p + "mlp.down_proj", c, false));
}

/// GPT-NeoX attention: one query_key_value viewed [B, T, H, 3d] (q, k, v
/// interleaved per head) and sliced, partial rotary on q and k.
Value DecoderBuilder::neoxAttention(Value normed, const std::string &p) {
  int64_t c = cfg.width, h = cfg.heads, d = cfg.headDim();
  Value qkv = linear(normed, p + "attention.query_key_value", 3 * c, true);
  qkv = wg::ReshapeOp::create(b, tensor({batch, seq, h, 3 * d}), qkv);
  SmallVector<Value> parts;
  for (int64_t i = 0; i < 3; ++i)
    parts.push_back(wg::SliceOp::create(b, tensor({batch, seq, h, d}), qkv,
                                        ArrayRef<int64_t>{0, 0, 0, i * d},
                                        ArrayRef<int64_t>{batch, seq, h, d},
                                        ArrayRef<int64_t>{1, 1, 1, 1}));
  for (Value &part : parts)
    part = toHeadMajor(part);
  Value q = rotary(parts[0]);
  Value k = rotary(parts[1]);
  Value att = mergeHeads(attention(q, k, parts[2]));
  return linear(att, p + "attention.dense", c, true);
}

/// dense_4h_to_h(gelu(dense_h_to_4h(x))), exact GELU, with biases.
Value DecoderBuilder::neoxMlp(Value normed, const std::string &p) {
  Value fc = linear(normed, p + "mlp.dense_h_to_4h", cfg.mlpWidth(), true);
  Value act = wg::GeluOp::create(b, fc.getType(), fc, "none");
  return linear(act, p + "mlp.dense_4h_to_h", cfg.width, true);
}

/// GPT-NeoX: parallel, (mlp + attn) + x, or serial, mlp(ln2(y)) + y with
/// y = attn + x; the adds' operands in the order HF's code writes them.
Value DecoderBuilder::neoxBlock(Value x, const std::string &p) {
  if (cfg.parallelResidual) {
    Value ln1 = layerNorm(x, p + "input_layernorm", true);
    Value ln2 = layerNorm(x, p + "post_attention_layernorm", true);
    Value attn = neoxAttention(ln1, p);
    return add(add(neoxMlp(ln2, p), attn), x);
  }
  Value y = add(neoxAttention(layerNorm(x, p + "input_layernorm", true), p), x);
  return add(neoxMlp(layerNorm(y, p + "post_attention_layernorm", true), p), y);
}

Value DecoderBuilder::logits(Value tokens) {
  int64_t c = cfg.width;
  switch (cfg.family) {
  case GptFamily::Gpt: {
    Value x = wg::GatherOp::create(b, rows(c), weight("wte", {cfg.vocab, c}), tokens,
                                   b.getI64IntegerAttr(0));
    x = add(x, weight("wpe[0:" + std::to_string(seq) + "]", {seq, c}));
    for (int64_t l = 0; l < cfg.layers; ++l)
      x = gptBlock(x, "h." + std::to_string(l) + ".");
    return linear(layerNorm(x, "ln_f", cfg.bias), "lm_head", cfg.vocab, false);
  }
  case GptFamily::Llama: {
    createRotaryTables();
    Value x = wg::GatherOp::create(b, rows(c), weight("model.embed_tokens.weight", {cfg.vocab, c}),
                                   tokens, b.getI64IntegerAttr(0));
    for (int64_t l = 0; l < cfg.layers; ++l)
      x = llamaBlock(x, "model.layers." + std::to_string(l) + ".");
    return linear(rmsNorm(x, "model.norm"), "lm_head", cfg.vocab, false);
  }
  case GptFamily::Neox: {
    createRotaryTables();
    Value x = wg::GatherOp::create(b, rows(c), weight("gpt_neox.embed_in.weight", {cfg.vocab, c}),
                                   tokens, b.getI64IntegerAttr(0));
    for (int64_t l = 0; l < cfg.layers; ++l)
      x = neoxBlock(x, "gpt_neox.layers." + std::to_string(l) + ".");
    return linear(layerNorm(x, "gpt_neox.final_layer_norm", true), "embed_out", cfg.vocab,
                  false);
  }
  }
  return Value();
}

} // namespace

OwningOpRef<ModuleOp> wsc::buildGpt(const GptConfig &cfg, int64_t batch, int64_t seq,
                                    MLIRContext *ctx) {
  ctx->loadDialect<func::FuncDialect, wg::WsgraphDialect>();
  Location loc = NameLoc::get(StringAttr::get(ctx, cfg.name));
  ImplicitLocOpBuilder b(loc, ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr("wsgraph.source", b.getStringAttr("gpt-config:" + cfg.name));
  b.setInsertionPointToEnd(module->getBody());
  auto tokensType = RankedTensorType::get({batch, seq}, b.getIntegerType(64));
  auto logitsType = RankedTensorType::get({batch, seq, cfg.vocab}, b.getF32Type());
  auto func = func::FuncOp::create(b, "main", b.getFunctionType({tokensType}, {logitsType}));
  // The exports' input names; the range ONNX Gather allows, as the importer records it.
  func.setArgAttr(0, "wsgraph.name",
                  b.getStringAttr(cfg.family == GptFamily::Gpt ? "idx" : "input_ids"));
  func.setArgAttr(0, "wsgraph.valid", b.getDenseI64ArrayAttr({-cfg.vocab, cfg.vocab}));
  func.setResultAttr(0, "wsgraph.name", b.getStringAttr("logits"));
  b.setInsertionPointToStart(func.addEntryBlock());
  DecoderBuilder decoder(cfg, batch, seq, b);
  func::ReturnOp::create(b, decoder.logits(func.getArgument(0)));
  return module;
}
