//===- GptConfig.cpp - synthetic GPTs of any size -------------------------===//
//
// Emits the same fused wsgraph that import + --wsgraph-fuse give for an
// exported nanoGPT, with every weight elided, so that compile-only runs of
// 175B- and 1T-parameter models never touch parameter bytes.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/GptConfig.h"

#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

int64_t GptConfig::parameters() const {
  int64_t c = width;
  int64_t perLayer = 4 * c * c + 8 * c * c + (bias ? 9 * c + 4 * c : 4 * c);
  return layers * perLayer + vocab * c + context * c + 2 * c;
}

bool wsc::resolveGptConfig(StringRef spec, GptConfig &config, std::string &error) {
  // GPT-3 paper, Table 2.1 (n_layers, d_model, n_heads); gpt-1t is ours, see docs/models.md.
  struct Preset {
    const char *name;
    int64_t layers, width, heads;
  };
  static const Preset presets[] = {{"gpt3-125m", 12, 768, 12},   {"gpt3-1.3b", 24, 2048, 16},
                                   {"gpt3-6.7b", 32, 4096, 32},  {"gpt3-13b", 40, 5120, 40},
                                   {"gpt3-175b", 96, 12288, 96}, {"gpt-1t", 128, 25600, 160}};
  for (const Preset &p : presets)
    if (spec == p.name) {
      config.name = p.name;
      config.layers = p.layers, config.width = p.width, config.heads = p.heads;
      return true;
    }
  auto buffer = llvm::MemoryBuffer::getFile(spec);
  if (!buffer) {
    error = "--gpt-config '" + spec.str() +
            "' is neither a preset (gpt3-125m gpt3-1.3b gpt3-6.7b gpt3-13b gpt3-175b gpt-1t) nor "
            "a readable JSON file";
    return false;
  }
  auto json = llvm::json::parse((*buffer)->getBuffer());
  auto *obj = json ? json->getAsObject() : nullptr;
  if (!obj) {
    if (!json)
      llvm::consumeError(json.takeError());
    error = "--gpt-config '" + spec.str() + "' is not a JSON object";
    return false;
  }
  config.name = spec.str();
  auto get = [&](const char *key, int64_t &field, bool required) {
    if (auto v = obj->getInteger(key)) {
      field = *v;
      return true;
    }
    if (required)
      error = "--gpt-config '" + spec.str() + "' needs an integer '" + key + "'";
    return !required;
  };
  if (!get("n_layer", config.layers, true) || !get("n_head", config.heads, true) ||
      !get("n_embd", config.width, true) || !get("vocab_size", config.vocab, false) ||
      !get("block_size", config.context, false))
    return false;
  if (auto b = obj->getBoolean("bias"))
    config.bias = *b;
  if (config.layers <= 0 || config.heads <= 0 || config.width <= 0 || config.vocab <= 0 ||
      config.width % config.heads) {
    error = "--gpt-config '" + spec.str() +
            "': sizes must be positive and n_embd a multiple of n_head";
    return false;
  }
  return true;
}

OwningOpRef<ModuleOp> wsc::buildGpt(const GptConfig &cfg, int64_t batch, int64_t seq,
                                    MLIRContext *ctx) {
  ctx->loadDialect<func::FuncDialect, wg::WsgraphDialect>();
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr(cfg.name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr("wsgraph.source", b.getStringAttr("gpt-config:" + cfg.name));
  b.setInsertionPointToEnd(module->getBody());
  Type f32 = b.getF32Type();
  int64_t c = cfg.width, h = cfg.heads, d = c / h;
  auto t3 = [&](int64_t n) { return RankedTensorType::get({batch, seq, n}, f32); };
  auto heads = RankedTensorType::get({batch, seq, h, d}, f32);
  auto headsT = RankedTensorType::get({batch, h, seq, d}, f32);
  auto idxType = RankedTensorType::get({batch, seq}, b.getIntegerType(64));
  auto func = func::FuncOp::create(b, loc, "main", b.getFunctionType({idxType}, {t3(cfg.vocab)}));
  func.setArgAttr(0, "wsgraph.name", b.getStringAttr("idx"));
  func.setResultAttr(0, "wsgraph.name", b.getStringAttr("logits"));
  b.setInsertionPointToStart(func.addEntryBlock());

  auto weight = [&](const std::string &name, ArrayRef<int64_t> shape) -> Value {
    return wg::WeightOp::create(b, loc, RankedTensorType::get(shape, f32), b.getStringAttr(name),
                                StringAttr(), b.getI64IntegerAttr(0));
  };
  auto linear = [&](Value x, const std::string &name, int64_t k, int64_t n, bool withBias) {
    Value bias = withBias ? weight(name + ".bias", {n}) : Value();
    return wg::LinearOp::create(b, loc, t3(n), x, weight(name + ".weight", {k, n}), bias)
        .getResult();
  };
  auto layerNorm = [&](Value x, const std::string &name) {
    Value bias = cfg.bias ? weight(name + ".bias", {c}) : Value();
    return wg::LayerNormOp::create(b, loc, t3(c), x, weight(name + ".weight", {c}), bias,
                                   b.getI64IntegerAttr(-1), b.getF32FloatAttr(1e-5f))
        .getResult();
  };
  auto perm = b.getDenseI64ArrayAttr({0, 2, 1, 3});

  Value x = wg::GatherOp::create(b, loc, t3(c), weight("wte", {cfg.vocab, c}), func.getArgument(0),
                                 b.getI64IntegerAttr(0));
  x = wg::AddOp::create(b, loc, t3(c), x, weight("wpe[0:" + std::to_string(seq) + "]", {seq, c}));
  for (int64_t l = 0; l < cfg.layers; ++l) {
    std::string p = "h." + std::to_string(l) + ".";
    Value qkv = linear(layerNorm(x, p + "ln_1"), p + "attn.c_attn", c, 3 * c, cfg.bias);
    auto split = wg::SplitOp::create(b, loc, TypeRange{t3(c), t3(c), t3(c)}, qkv,
                                     b.getI64IntegerAttr(2), b.getDenseI64ArrayAttr({c, c, c}));
    SmallVector<Value> qkvHeads;
    for (Value part : split.getResults())
      qkvHeads.push_back(wg::TransposeOp::create(
          b, loc, headsT, wg::ReshapeOp::create(b, loc, heads, part), perm));
    Value att = wg::AttentionOp::create(b, loc, headsT, qkvHeads[0], qkvHeads[1], qkvHeads[2],
                                        /*mask=*/Value(), b.getBoolAttr(true),
                                        b.getF32FloatAttr(1.0f / std::sqrt(float(d))));
    Value merged = wg::ReshapeOp::create(b, loc, t3(c), wg::TransposeOp::create(b, loc, heads, att, perm));
    x = wg::AddOp::create(b, loc, t3(c), x, linear(merged, p + "attn.c_proj", c, c, cfg.bias));
    Value fc = linear(layerNorm(x, p + "ln_2"), p + "mlp.c_fc", c, 4 * c, cfg.bias);
    Value act = wg::GeluOp::create(b, loc, fc);
    x = wg::AddOp::create(b, loc, t3(c), x, linear(act, p + "mlp.c_proj", 4 * c, c, cfg.bias));
  }
  Value logits = linear(layerNorm(x, "ln_f"), "lm_head", c, cfg.vocab, false);
  func::ReturnOp::create(b, loc, logits);
  return module;
}
