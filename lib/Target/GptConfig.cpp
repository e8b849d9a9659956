//===- GptConfig.cpp - presets and config files of synthetic GPTs ---------===//
//
// The presets and the two kinds of JSON file --gpt-config reads: nanoGPT's
// keys and a HuggingFace config.json (model_type "llama" or "gpt_neox").
// Config files are read strictly: every key is either checked or known not
// to change the forward pass, so a model the generator would build wrongly
// (a bias, an activation, a rotary scaling it does not emit) is refused.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/GptConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace wsc;
namespace json = llvm::json;

int64_t GptConfig::rotaryDims() const {
  // HF: int(head_size * rotary_pct), truncated.
  return family == GptFamily::Gpt ? 0 : int64_t(double(headDim()) * rotaryPct);
}

SmallVector<float> GptConfig::rotaryFrequencies() const {
  int64_t r = rotaryDims();
  SmallVector<float> freqs;
  const float pi = 3.14159265358979323846f, factor = float(ropeFactor);
  const float low = float(lowFreqFactor), high = float(highFreqFactor);
  const float old = float(ropeOriginalContext);
  for (int64_t i = 0; i < r; i += 2) {
    float f = 1.0f / std::pow(float(ropeTheta), float(i) / float(r));
    if (ropeScaling == "linear") {
      f /= factor;
    } else if (ropeScaling == "llama3") {
      // transformers' _compute_llama3_parameters, in fp32 as torch runs it.
      float wavelen = 2 * pi / f;
      if (wavelen > old / low) {
        f /= factor;
      } else if (!(wavelen < old / high)) {
        float smooth = (old / wavelen - low) / (high - low);
        f = (1 - smooth) * f / factor + smooth * f;
      }
    }
    freqs.push_back(f);
  }
  return freqs;
}

int64_t GptConfig::parameters() const {
  int64_t c = width, f = mlpWidth(), kv = keyValueHeads() * headDim();
  int64_t embeddings = vocab * c * (tiedEmbeddings ? 1 : 2);
  switch (family) {
  case GptFamily::Gpt: {
    // c_attn, c_proj, c_fc, mlp.c_proj; their biases; two layer norms
    int64_t perLayer = 4 * c * c + 2 * c * f + (bias ? 5 * c + f + 4 * c : 2 * c);
    return layers * perLayer + embeddings + context * c + (bias ? 2 * c : c);
  }
  case GptFamily::Llama: // q, k, v, o; gate, up, down; two RMS norms
    return layers * (2 * c * c + 2 * c * kv + 3 * c * f + 2 * c) + embeddings + c;
  case GptFamily::Neox: // qkv, dense, two MLP linears, all with biases; two layer norms
    return layers * (4 * c * c + 4 * c + 2 * c * f + f + c + 4 * c) + embeddings + 2 * c;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

namespace {

GptConfig gpt3(const char *name, int64_t layers, int64_t width, int64_t heads) {
  GptConfig c;
  c.name = name, c.layers = layers, c.width = width, c.heads = heads;
  return c;
}

/// Llama 3: RoPE base 500000, 8192 positions, RMS eps 1e-5, untied head.
GptConfig llama3(const char *name, int64_t layers, int64_t width, int64_t heads,
                 int64_t intermediate) {
  GptConfig c;
  c.name = name, c.family = GptFamily::Llama;
  c.layers = layers, c.width = width, c.heads = heads, c.kvHeads = 8;
  c.intermediate = intermediate, c.vocab = 128256, c.context = 8192;
  c.bias = false, c.tiedEmbeddings = false, c.normEpsilon = 1e-5, c.ropeTheta = 500000.0;
  return c;
}

/// Pythia (GPT-NeoX): a quarter of each head rotated, base 10000, parallel
/// residual, 2048 positions, untied embed_out.
GptConfig pythia(const char *name, int64_t layers, int64_t width, int64_t heads, int64_t vocab) {
  GptConfig c;
  c.name = name, c.family = GptFamily::Neox;
  c.layers = layers, c.width = width, c.heads = heads, c.intermediate = 4 * width;
  c.vocab = vocab, c.context = 2048, c.tiedEmbeddings = false, c.parallelResidual = true;
  c.rotaryPct = 0.25, c.ropeTheta = 10000.0;
  return c;
}

/// Llama 3.1: Llama 3 with 131072 positions and llama3 rope_scaling.
GptConfig llama31(GptConfig c, const char *name) {
  c.name = name, c.context = 131072;
  c.ropeScaling = "llama3", c.ropeFactor = 8.0, c.lowFreqFactor = 1.0, c.highFreqFactor = 4.0;
  c.ropeOriginalContext = 8192;
  return c;
}

/// Sources in docs/models.md.
const std::vector<GptConfig> &presets() {
  static const std::vector<GptConfig> all = {
      gpt3("gpt3-125m", 12, 768, 12),         gpt3("gpt3-1.3b", 24, 2048, 16),
      gpt3("gpt3-6.7b", 32, 4096, 32),        gpt3("gpt3-13b", 40, 5120, 40),
      gpt3("gpt3-175b", 96, 12288, 96),       gpt3("gpt-1t", 128, 25600, 160),
      llama3("llama3-8b", 32, 4096, 32, 14336), llama3("llama3-70b", 80, 8192, 64, 28672),
      llama3("llama3-405b", 126, 16384, 128, 53248),
      llama31(llama3("", 32, 4096, 32, 14336), "llama3.1-8b"),
      llama31(llama3("", 80, 8192, 64, 28672), "llama3.1-70b"),
      llama31(llama3("", 126, 16384, 128, 53248), "llama3.1-405b"),
      pythia("pythia-1.4b", 24, 2048, 16, 50304), pythia("pythia-6.9b", 32, 4096, 32, 50432)};
  return all;
}

std::string presetNames() {
  std::string names;
  for (const GptConfig &p : presets())
    names += (names.empty() ? "" : " ") + p.name;
  return names;
}

//===----------------------------------------------------------------------===//
// Config files
//===----------------------------------------------------------------------===//

std::string number(double d) {
  std::string text;
  llvm::raw_string_ostream(text) << d;
  return text;
}

// Sizes above these are refused: they keep every shape product and the
// parameter count within int64.
constexpr int64_t kMaxSize = int64_t(1) << 24, kMaxLayers = int64_t(1) << 14;

/// A config file's keys, each read checked; remembers which were read, so
/// that a key neither read nor known to be harmless is refused.
class ConfigKeys {
public:
  ConfigKeys(const json::Object &object, StringRef file, std::string &error)
      : object(object), file(file.str()), error(error) {}

  bool fail(StringRef key, const std::string &what) {
    error = "--gpt-config '" + file + "': '" + prefix + key.str() + "' " + what;
    return false;
  }
  bool has(StringRef key) const { return object.get(key) != nullptr; }

  /// An integer in [1, max]; when absent, `fallback` or an error.
  bool positive(StringRef key, int64_t &out, std::optional<int64_t> fallback = std::nullopt,
                int64_t max = kMaxSize) {
    read.insert(key);
    const json::Value *v = object.get(key);
    if (!v)
      return fallback ? (out = *fallback, true) : fail(key, "is missing (a positive integer)");
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i <= 0 || *i > max)
      return fail(key, "must be an integer from 1 to " + std::to_string(max));
    out = *i;
    return true;
  }

  /// A finite number > 0 (and <= max); when absent, `fallback` or an error.
  bool positiveNumber(StringRef key, double &out, std::optional<double> fallback = std::nullopt,
                      double max = 1e30) {
    read.insert(key);
    const json::Value *v = object.get(key);
    if (!v)
      return fallback ? (out = *fallback, true) : fail(key, "is missing (a positive number)");
    std::optional<double> d = v->getAsNumber();
    // The generator keeps these as fp32 attributes and tables: they must stay nonzero there.
    if (!d || !std::isfinite(*d) || !(float(*d) > 0) || *d > max)
      return fail(key, max < 1e30 ? "must be a positive number up to " + number(max)
                                  : "must be a positive number");
    out = *d;
    return true;
  }

  /// One of two spellings of a number (transformers renamed some keys);
  /// where a file has both they must agree.
  bool aliasedNumber(StringRef key, StringRef alias, double &out, double max = 1e30) {
    read.insert(alias);
    if (!has(alias))
      return positiveNumber(key, out, std::nullopt, max);
    double other;
    if (!positiveNumber(alias, other, std::nullopt, max) ||
        !positiveNumber(key, out, other, max))
      return false;
    return out == other || fail(alias, "differs from '" + key.str() + "'");
  }

  bool boolean(StringRef key, bool &out, std::optional<bool> fallback = std::nullopt) {
    read.insert(key);
    const json::Value *v = object.get(key);
    if (!v)
      return fallback ? (out = *fallback, true) : fail(key, "is missing (true or false)");
    std::optional<bool> b = v->getAsBoolean();
    if (!b)
      return fail(key, "must be true or false");
    out = *b;
    return true;
  }

  /// A string among `allowed`; when absent, `fallback` or an error.
  bool oneOf(StringRef key, ArrayRef<StringRef> allowed, std::string &out,
             std::optional<StringRef> fallback = std::nullopt) {
    read.insert(key);
    const json::Value *v = object.get(key);
    if (!v && fallback)
      return out = fallback->str(), true;
    std::optional<StringRef> s = v ? v->getAsString() : std::nullopt;
    if (!s || !llvm::is_contained(allowed, *s))
      return fail(key, "must be one of: " + llvm::join(allowed, ", "));
    out = s->str();
    return true;
  }

  /// An optional object, read by `body` with keys of its own (named
  /// "outer.inner" in errors); null or absent reads nothing.
  bool nested(StringRef key, function_ref<bool(ConfigKeys &)> body) {
    read.insert(key);
    const json::Value *v = object.get(key);
    if (!v || *v == nullptr)
      return true;
    const json::Object *inner = v->getAsObject();
    if (!inner)
      return fail(key, "must be an object or null");
    std::string innerError;
    ConfigKeys keys(*inner, file, innerError);
    keys.prefix = prefix + key.str() + ".";
    if (body(keys))
      return true;
    error = innerError;
    return false;
  }

  /// An optional number in [0, 1) the forward pass does not use (dropout:
  /// inference drops nothing), checked all the same.
  bool unusedFraction(StringRef key) {
    read.insert(key);
    const json::Value *v = object.get(key);
    std::optional<double> d = v ? v->getAsNumber() : 0.0;
    return (d && *d >= 0 && *d < 1) || fail(key, "must be a number in [0, 1)");
  }

  /// An optional key whose only accepted value is `expected`: the one form
  /// the generator emits.
  bool onlyIfEqual(StringRef key, const json::Value &expected, StringRef why) {
    read.insert(key);
    const json::Value *v = object.get(key);
    if (!v || *v == expected)
      return true;
    std::string want;
    llvm::raw_string_ostream(want) << expected;
    return fail(key, "must be " + want + " if given: " + why.str());
  }

  /// Refuses any key neither read nor listed as harmless.
  bool noOthers(ArrayRef<StringRef> harmless, StringRef reader) {
    for (const auto &entry : object) {
      StringRef key = entry.first;
      if (!read.contains(key) && !llvm::is_contained(harmless, key))
        return fail(key, "is not a key the " + reader.str() +
                           " reader knows; it is refused rather than ignored, as it may change "
                           "the model");
    }
    return true;
  }

private:
  const json::Object &object;
  std::string file;
  std::string &error;
  std::string prefix; // "outer." inside a nested object
  llvm::StringSet<> read;
};

/// HF's rope_scaling: null, {"rope_type": "linear", "factor"} or Llama
/// 3.1's {"rope_type": "llama3", "factor", "low_freq_factor",
/// "high_freq_factor", "original_max_position_embeddings"} (older files
/// spell rope_type "type").
bool readRopeScaling(ConfigKeys &keys, GptConfig &c) {
  return keys.nested("rope_scaling", [&](ConfigKeys &rs) {
    std::string type, alias;
    if (!rs.oneOf("type", {"linear", "llama3"}, alias, StringRef()) ||
        !rs.oneOf("rope_type", {"linear", "llama3"}, type, alias.empty() ? std::nullopt
                                                                       : std::optional<StringRef>(alias)))
      return false;
    if (!alias.empty() && alias != type)
      return rs.fail("type", "differs from 'rope_type'");
    c.ropeScaling = type;
    if (!rs.positiveNumber("factor", c.ropeFactor))
      return false;
    if (type == "llama3" &&
        (!rs.positiveNumber("low_freq_factor", c.lowFreqFactor) ||
         !rs.positiveNumber("high_freq_factor", c.highFreqFactor) ||
         !rs.positive("original_max_position_embeddings", c.ropeOriginalContext)))
      return false;
    if (type == "llama3" && !(c.highFreqFactor > c.lowFreqFactor))
      return rs.fail("high_freq_factor", "must be larger than 'low_freq_factor'");
    return rs.noOthers({}, "rope_scaling");
  });
}

/// Keys of HF configs that do not change the forward pass without a cache
/// (tokens, dtypes of the checkpoint, training-only settings, bookkeeping).
const StringRef kHfHarmless[] = {"_name_or_path",       "architectures",  "model_type",
                                 "bos_token_id",        "eos_token_id",   "pad_token_id",
                                 "torch_dtype",         "transformers_version",
                                 "use_cache",           "initializer_range",
                                 "attention_dropout",   "hidden_dropout", "classifier_dropout",
                                 "pretraining_tp"};

bool readHeads(ConfigKeys &keys, GptConfig &c, StringRef width, StringRef heads) {
  if (!keys.positive(width, c.width) || !keys.positive(heads, c.heads))
    return false;
  if (c.width % c.heads)
    return keys.fail(width, std::to_string(c.width) + " is not a multiple of '" + heads.str() +
                                "' " + std::to_string(c.heads));
  return true;
}

/// HF LlamaConfig: num_key_value_heads and tie_word_embeddings default as HF
/// defaults them (all heads, untied); the rest is required.
bool readLlama(ConfigKeys &keys, GptConfig &c) {
  c.family = GptFamily::Llama;
  c.bias = false;
  if (!keys.positive("num_hidden_layers", c.layers, std::nullopt, kMaxLayers) ||
      !readHeads(keys, c, "hidden_size", "num_attention_heads") ||
      !keys.positive("num_key_value_heads", c.kvHeads, c.heads) ||
      !keys.positive("intermediate_size", c.intermediate) ||
      !keys.positive("vocab_size", c.vocab) ||
      !keys.positive("max_position_embeddings", c.context) ||
      !keys.positiveNumber("rms_norm_eps", c.normEpsilon, std::nullopt, 1.0) ||
      !keys.positiveNumber("rope_theta", c.ropeTheta) ||
      !keys.boolean("tie_word_embeddings", c.tiedEmbeddings, false))
    return false;
  if (c.heads % c.kvHeads)
    return keys.fail("num_key_value_heads", std::to_string(c.kvHeads) +
                                                " does not divide 'num_attention_heads' " +
                                                std::to_string(c.heads));
  if (c.headDim() % 2)
    return keys.fail("hidden_size", "/ 'num_attention_heads' is " + std::to_string(c.headDim()) +
                                        ", odd: rotary embeddings turn pairs");
  return keys.onlyIfEqual("hidden_act", "silu", "the MLP is SwiGLU") &&
         keys.onlyIfEqual("attention_bias", false, "q, k, v and o have no bias") &&
         keys.onlyIfEqual("mlp_bias", false, "the MLP's linears have no bias") &&
         readRopeScaling(keys, c) &&
         keys.onlyIfEqual("head_dim", c.headDim(), "hidden_size / num_attention_heads") &&
         keys.noOthers(kHfHarmless, "llama");
}

/// HF GPTNeoXConfig (Pythia). Newer transformers also write rotary_pct as
/// partial_rotary_factor and rotary_emb_base as rope_theta.
bool readNeox(ConfigKeys &keys, GptConfig &c) {
  c.family = GptFamily::Neox;
  if (!keys.positive("num_hidden_layers", c.layers, std::nullopt, kMaxLayers) ||
      !readHeads(keys, c, "hidden_size", "num_attention_heads") ||
      !keys.positive("intermediate_size", c.intermediate) ||
      !keys.positive("vocab_size", c.vocab) ||
      !keys.positive("max_position_embeddings", c.context) ||
      !keys.aliasedNumber("rotary_pct", "partial_rotary_factor", c.rotaryPct, 1.0) ||
      !keys.aliasedNumber("rotary_emb_base", "rope_theta", c.ropeTheta) ||
      !keys.boolean("use_parallel_residual", c.parallelResidual) ||
      !keys.positiveNumber("layer_norm_eps", c.normEpsilon, std::nullopt, 1.0) ||
      !keys.boolean("tie_word_embeddings", c.tiedEmbeddings, false))
    return false;
  int64_t r = c.rotaryDims();
  if (r < 2 || r % 2)
    return keys.fail("rotary_pct", "gives " + std::to_string(r) +
                                       " rotary dimensions of a head of " +
                                       std::to_string(c.headDim()) +
                                       "; they must be even and at least 2");
  return keys.onlyIfEqual("hidden_act", "gelu", "the MLP's GELU is exact (erf)") &&
         keys.onlyIfEqual("attention_bias", true, "query_key_value and dense have biases") &&
         keys.onlyIfEqual("rope_scaling", nullptr, "rotary frequencies are unscaled") &&
         keys.noOthers(kHfHarmless, "gpt_neox");
}

/// nanoGPT's GPTConfig: n_layer, n_head, n_embd; vocab_size, block_size and
/// bias default as there (GPT-2's 50257 and 1024 are not used: 2048, the
/// GPT-3 context, is the generator's default).
bool readNanoGpt(ConfigKeys &keys, GptConfig &c) {
  return keys.positive("n_layer", c.layers, std::nullopt, kMaxLayers) &&
         readHeads(keys, c, "n_embd", "n_head") &&
         keys.positive("vocab_size", c.vocab, c.vocab) &&
         keys.positive("block_size", c.context, c.context) && keys.boolean("bias", c.bias, true) &&
         keys.unusedFraction("dropout") && keys.noOthers({}, "nanoGPT");
}

} // namespace

bool wsc::resolveGptConfig(StringRef spec, GptConfig &config, std::string &error) {
  for (const GptConfig &p : presets())
    if (spec == p.name) {
      config = p;
      return true;
    }
  auto buffer = llvm::MemoryBuffer::getFile(spec);
  if (!buffer) {
    error = "--gpt-config '" + spec.str() + "' is neither a preset (" + presetNames() +
            ") nor a readable JSON file";
    return false;
  }
  auto parsed = json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = "--gpt-config '" + spec.str() + "' is not JSON: " + llvm::toString(parsed.takeError());
    return false;
  }
  const json::Object *obj = parsed->getAsObject();
  if (!obj) {
    error = "--gpt-config '" + spec.str() + "' is not a JSON object";
    return false;
  }
  config = GptConfig();
  config.name = spec.str();
  ConfigKeys keys(*obj, spec, error);
  if (!keys.has("model_type"))
    return readNanoGpt(keys, config);
  std::optional<StringRef> type = obj->getString("model_type");
  if (type == "llama")
    return readLlama(keys, config);
  if (type == "gpt_neox")
    return readNeox(keys, config);
  return keys.fail("model_type", "must be \"llama\" or \"gpt_neox\" (or absent: nanoGPT keys)");
}
