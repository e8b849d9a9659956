//===- OnnxImport.cpp - ONNX model to wsgraph -----------------------------===//
//
// Builds one func.func of wsgraph ops from an ONNX graph. Every op is folded
// as it is built, so once the dynamic input dimensions are bound the shape
// subgraphs of dynamic-axes exports disappear during import. Shape parameters
// (reshape targets, slice bounds, axes) must fold to constants.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/OnnxImport.h"

#include "OnnxFunctions.h"
#include "OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <functional>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

namespace {

/// The newest default-domain opset wsc knows. Older ones are imported op by
/// op: each supported op says from which opset on its form is the one wsc
/// reads (supportedOps).
constexpr int64_t kMaxOpset = 24;
/// The domain of the training optimizers (OnnxTraining.cpp).
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";
constexpr const char *kMicrosoftDomain = "com.microsoft";
/// Float initializers up to this many elements become literals; larger ones
/// stay in their file as wsgraph.weight.
constexpr int64_t kInlineFloatElements = 64;
/// Integer and bool initializers are shape data or masks: literal up to this.
constexpr int64_t kInlineIntElements = 1 << 20;
constexpr int64_t kMaxElements = int64_t(1) << 42;

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                                         : node.name();
  return "node '" + name + "' (" + node.op_type() + ")";
}

/// How wsc imports one ONNX operator.
struct OpSupport {
  /// The first opset whose form of the op the converter reads; older forms
  /// (attributes that later became inputs, legacy broadcast flags) are refused.
  int64_t sinceOpset;
  /// The attributes the converter reads, space-separated; any other one is
  /// refused rather than ignored.
  const char *attributes;
};

/// The ONNX operators wsc imports.
const llvm::StringMap<OpSupport> &supportedOps() {
  static const char *kReduce = "axes keepdims noop_with_empty_axes";
  static const llvm::StringMap<OpSupport> ops = {
      // Elementwise arithmetic, with numpy broadcasting from opset 7 on.
      {"Add", {7, ""}}, {"Sub", {7, ""}}, {"Mul", {7, ""}}, {"Div", {7, ""}},
      {"Pow", {7, ""}}, {"Mod", {10, "fmod"}},
      {"Max", {6, ""}}, {"Min", {6, ""}}, {"Sum", {6, ""}}, {"Mean", {6, ""}},
      {"Clip", {6, "min max"}},
      // Unary (opset 6 dropped the legacy consumed_inputs attribute).
      {"Sqrt", {6, ""}}, {"Erf", {9, ""}}, {"Tanh", {6, ""}}, {"Exp", {6, ""}},
      {"Log", {6, ""}}, {"Neg", {6, ""}}, {"Abs", {6, ""}}, {"Relu", {6, ""}},
      {"Sigmoid", {6, ""}}, {"Reciprocal", {6, ""}}, {"Floor", {6, ""}}, {"Ceil", {6, ""}},
      {"Sin", {7, ""}}, {"Cos", {7, ""}}, {"Gelu", {20, "approximate"}},
      // Comparisons and logic.
      {"Equal", {7, ""}}, {"Less", {7, ""}}, {"Greater", {7, ""}},
      {"LessOrEqual", {12, ""}}, {"GreaterOrEqual", {12, ""}},
      {"Not", {1, ""}}, {"And", {7, ""}}, {"Or", {7, ""}}, {"Xor", {7, ""}},
      {"BitwiseAnd", {18, ""}}, {"BitwiseOr", {18, ""}}, {"BitwiseXor", {18, ""}},
      {"BitwiseNot", {18, ""}},
      {"Where", {9, ""}},
      // Linear algebra, normalization.
      {"MatMul", {1, ""}}, {"Gemm", {7, "alpha beta transA transB"}},
      {"Einsum", {12, "equation"}},
      {"Softmax", {1, "axis"}}, {"LogSoftmax", {1, "axis"}},
      {"LayerNormalization", {17, "axis epsilon stash_type"}},
      {"RMSNormalization", {23, "axis epsilon stash_type"}},
      // ONNX Runtime registers its RMS norm in the default domain too.
      {"SimplifiedLayerNormalization", {1, "axis epsilon stash_type"}},
      // Opset 23's attention ops (OnnxAttention.cpp).
      {"Attention", {23, "is_causal kv_num_heads q_num_heads qk_matmul_output_mode scale softcap "
                         "softmax_precision"}},
      {"RotaryEmbedding", {23, "interleaved num_heads rotary_embedding_dim"}},
      {"TensorScatter", {24, "axis mode"}},
      {"ReduceMean", {1, kReduce}}, {"ReduceSum", {1, kReduce}},
      {"ReduceMax", {1, kReduce}}, {"ReduceMin", {1, kReduce}},
      // Data movement and shapes.
      {"Transpose", {1, "perm"}}, {"Reshape", {5, "allowzero"}}, {"Flatten", {1, "axis"}},
      {"Gather", {1, "axis"}}, {"GatherElements", {11, "axis"}}, {"Concat", {4, "axis"}},
      {"Slice", {10, ""}}, {"Split", {2, "axis split num_outputs"}}, {"Tile", {6, ""}},
      {"Cast", {6, "to saturate"}}, {"Unsqueeze", {1, "axes"}}, {"Squeeze", {1, "axes"}},
      {"Expand", {8, ""}}, {"Trilu", {14, "upper"}}, {"Range", {11, ""}},
      {"Constant", {1, "value value_float value_floats value_int value_ints"}},
      {"ConstantOfShape", {9, "value"}}, {"Shape", {1, "start end"}}, {"Size", {1, ""}},
      {"Identity", {1, ""}},
      // Control flow: only an If whose condition folds (its branch is inlined).
      {"If", {1, "then_branch else_branch"}},
      // Sequences as lists known at compile time, Loop unrolled (OnnxSequences.cpp).
      {"Loop", {1, "body"}}, {"SequenceEmpty", {11, "dtype"}}, {"SequenceConstruct", {11, ""}},
      {"SequenceInsert", {11, ""}}, {"SequenceAt", {11, ""}}, {"SequenceErase", {11, ""}},
      {"SequenceLength", {11, ""}}, {"SplitToSequence", {11, "axis keepdims"}},
      {"ConcatFromSequence", {11, "axis new_axis"}},
      // Spectral ops and Det as products with constant tables (OnnxSpectral.cpp).
      {"DFT", {17, "axis inverse onesided"}}, {"STFT", {17, "onesided"}},
      {"MelWeightMatrix", {17, "output_datatype"}}, {"Det", {11, ""}},
      {"Scan", {9, "body num_scan_inputs scan_input_axes scan_input_directions scan_output_axes "
                   "scan_output_directions"}},
      // Built from the ops above (OnnxComposite.cpp).
      {"Elu", {6, "alpha"}}, {"Celu", {12, "alpha"}}, {"Selu", {6, "alpha gamma"}},
      {"LeakyRelu", {6, "alpha"}}, {"PRelu", {7, ""}}, {"ThresholdedRelu", {10, "alpha"}},
      {"HardSigmoid", {6, "alpha beta"}}, {"HardSwish", {14, ""}}, {"Softplus", {1, ""}},
      {"Mish", {18, ""}}, {"Swish", {24, "alpha"}},
      {"Softsign", {1, ""}}, {"Sign", {9, ""}}, {"Shrink", {9, "bias lambd"}},
      {"Sinh", {9, ""}}, {"Cosh", {9, ""}}, {"Tan", {7, ""}}, {"Asinh", {9, ""}},
      {"Acosh", {9, ""}}, {"Atanh", {9, ""}}, {"IsNaN", {9, ""}},
      {"IsInf", {10, "detect_negative detect_positive"}}, {"Round", {11, ""}},
      {"Dropout", {7, "ratio seed"}}, {"CastLike", {15, "saturate"}},
      {"ReduceL1", {1, kReduce}}, {"ReduceL2", {1, kReduce}},
      {"ReduceSumSquare", {1, kReduce}}, {"ReduceLogSum", {1, kReduce}},
      {"ReduceLogSumExp", {1, kReduce}}, {"GlobalAveragePool", {1, ""}},
      {"GlobalMaxPool", {1, ""}}, {"GlobalLpPool", {2, "p"}}, {"LpNormalization", {1, "axis p"}}, {"ArgMax", {1, "axis keepdims select_last_index"}},
      {"ArgMin", {1, "axis keepdims select_last_index"}},
      {"NegativeLogLikelihoodLoss", {12, "reduction ignore_index"}},
      {"SoftmaxCrossEntropyLoss", {12, "reduction ignore_index"}},
      {"Hardmax", {1, "axis"}}, {"EyeLike", {9, "dtype k"}}, {"OneHot", {9, "axis"}},
      {"CumSum", {11, "exclusive reverse"}}, {"ReduceProd", {1, kReduce}},
      {"Atan", {7, ""}}, {"Asin", {7, ""}}, {"Acos", {7, ""}},
      {"QuantizeLinear", {10, "axis block_size output_dtype precision saturate"}},
      {"DequantizeLinear", {10, "axis block_size"}},
      // Selecting ops (OnnxSelect.cpp).
      {"TopK", {1, "axis k largest sorted"}}, {"Compress", {9, "axis"}},
      {"Pad", {2, "mode pads value"}}, {"CenterCropPad", {18, "axes"}},
      // Integer and quantized ops (OnnxQuantized.cpp).
      {"MatMulInteger", {10, ""}}, {"QLinearMatMul", {10, ""}},
      {"ConvInteger", {10, "auto_pad dilations group kernel_shape pads strides"}},
      {"QLinearConv", {10, "auto_pad dilations group kernel_shape pads strides"}},
      {"DynamicQuantizeLinear", {11, ""}}, {"BitShift", {11, "direction"}},
      // Recurrent ops, unrolled (OnnxRecurrent.cpp).
      {"RNN", {7, "activation_alpha activation_beta activations clip direction hidden_size "
                  "layout"}},
      {"GRU", {7, "activation_alpha activation_beta activations clip direction hidden_size layout "
                  "linear_before_reset"}},
      {"LSTM", {7, "activation_alpha activation_beta activations clip direction hidden_size "
                   "input_forget layout"}},
      // Ops that index by data (OnnxScatter.cpp).
      {"ScatterElements", {11, "axis reduction"}}, {"Scatter", {9, "axis"}},
      {"ScatterND", {11, "reduction"}}, {"GatherND", {11, "batch_dims"}},
      {"ReverseSequence", {10, "batch_axis time_axis"}},
      {"MaxUnpool", {9, "kernel_shape pads strides"}},
      {"GridSample", {16, "align_corners mode padding_mode"}}, // OnnxGridSample.cpp
      {"AffineGrid", {20, "align_corners"}},
      {"DeformConv", {19, "dilations group kernel_shape offset_group pads strides"}},
      {"RoiAlign", {10, "coordinate_transformation_mode mode output_height output_width "
                        "sampling_ratio spatial_scale"}},
      // [N, C, spatial...] ops (OnnxImages.cpp).
      {"DepthToSpace", {1, "blocksize mode"}}, {"SpaceToDepth", {1, "blocksize"}},
      {"BatchNormalization", {9, "epsilon momentum training_mode"}},
      {"InstanceNormalization", {6, "epsilon"}}, {"MeanVarianceNormalization", {9, "axes"}},
      {"GroupNormalization", {18, "epsilon num_groups stash_type"}},
      {"Col2Im", {18, "dilations pads strides"}},
      {"LpPool", {11, "auto_pad ceil_mode dilations kernel_shape p pads strides"}},
      {"MaxPool", {1, "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"}},
      {"AveragePool", {1, "auto_pad ceil_mode count_include_pad dilations kernel_shape pads strides"}},
      {"Conv", {1, "auto_pad dilations group kernel_shape pads strides"}},
      {"LRN", {1, "alpha beta bias size"}},
      {"HannWindow", {17, "output_datatype periodic"}},
      {"HammingWindow", {17, "output_datatype periodic"}},
      {"BlackmanWindow", {17, "output_datatype periodic"}},
      {"ConvTranspose",
       {1, "auto_pad dilations group kernel_shape output_padding output_shape pads strides"}},
      {"Upsample", {7, "mode scales"}},
      // The optimizers of ai.onnx.preview.training (OnnxTraining.cpp).
      {"Adagrad", {1, "decay_factor epsilon norm_coefficient"}},
      {"Momentum", {1, "alpha beta mode norm_coefficient"}},
      {"Adam", {1, "alpha beta epsilon norm_coefficient norm_coefficient_post"}},
      {"TfIdfVectorizer", {9, "max_gram_length max_skip_count min_gram_length mode ngram_counts "
                              "ngram_indexes pool_int64s weights"}},
      {"Resize", {11, "antialias axes keep_aspect_ratio_policy mode coordinate_transformation_mode "
                      "nearest_mode cubic_coeff_a exclude_outside extrapolation_value"}}};
  return ops;
}

/// ONNX Runtime's com.microsoft ops wsc imports (OnnxMicrosoft.cpp), with
/// their attributes; the domain has no opset versions that change them.
const llvm::StringMap<OpSupport> &microsoftOps() {
  static const llvm::StringMap<OpSupport> ops = {
      {"FastGelu", {1, ""}},
      {"BiasGelu", {1, ""}},
      {"Gelu", {1, ""}},
      {"QuickGelu", {1, "alpha"}},
      {"SkipLayerNormalization", {1, "epsilon"}},
      {"SkipSimplifiedLayerNormalization", {1, "epsilon"}},
      {"SimplifiedLayerNormalization", {1, "axis epsilon stash_type"}},
      {"MatMulNBits", {1, "K N accuracy_level bits block_size"}},
      {"FusedMatMul", {1, "alpha transA transB transBatchA transBatchB"}},
      {"BiasAdd", {1, ""}},
      {"GemmFastGelu", {1, ""}},
      {"RotaryEmbedding",
       {1, "interleaved is_packed_batching num_heads rotary_embedding_dim scale"}},
      {"Attention",
       {1, "do_rotary mask_filter_value num_heads past_present_share_buffer "
           "qkv_hidden_sizes rotary_embedding_dim scale unidirectional"}},
      {"MultiHeadAttention", {1, "mask_filter_value num_heads scale unidirectional"}},
      {"GroupQueryAttention",
       {1, "do_rotary kv_num_heads local_window_size num_heads qk_output rotary_interleaved scale "
           "smooth_softmax softcap"}}};
  return ops;
}

/// The type the ONNX schema gives an attribute the converter reads (the
/// names mean the same on every op that has them); UNDEFINED for one whose
/// type the converter does not know.
onnx::AttributeProto::AttributeType attributeType(StringRef op, StringRef name) {
  using A = onnx::AttributeProto;
  if (op == "ConstantOfShape" && name == "value")
    return A::TENSOR;
  if (op == "Split" && name == "split")
    return A::INTS;
  return llvm::StringSwitch<A::AttributeType>(name)
      .Cases({"axis", "keepdims", "noop_with_empty_axes", "transA", "transB", "allowzero"},
             A::INT)
      .Cases({"upper", "fmod", "stash_type", "to", "start", "end", "num_outputs", "value_int",
              "saturate"},
             A::INT)
      .Cases({"detect_negative", "detect_positive", "select_last_index", "seed", "ignore_index"},
             A::INT)
      .Cases({"blocksize", "training_mode", "ceil_mode", "count_include_pad", "storage_order",
              "group", "dtype", "k", "exclusive", "reverse", "largest", "sorted",
              "exclude_outside", "size", "output_datatype", "periodic"},
             A::INT)
      .Cases({"kernel_shape", "pads", "strides", "dilations", "output_padding", "output_shape"},
             A::INTS)
      .Case("momentum", A::FLOAT)
      .Cases({"gamma", "lambd", "bias", "ratio"}, A::FLOAT)
      .Cases({"perm", "axes", "value_ints"}, A::INTS)
      .Cases({"alpha", "beta", "epsilon", "value_float", "min", "max"}, A::FLOAT)
      .Case("value_floats", A::FLOATS)
      .Cases({"equation", "reduction", "mode", "auto_pad", "coordinate_transformation_mode",
              "nearest_mode"},
             A::STRING)
      .Cases({"cubic_coeff_a", "extrapolation_value"}, A::FLOAT)
      .Cases({"direction", "approximate"}, A::STRING)
      .Case("scales", A::FLOATS)
      .Cases({"decay_factor", "norm_coefficient", "norm_coefficient_post"}, A::FLOAT)
      .Cases({"max_gram_length", "max_skip_count", "min_gram_length"}, A::INT)
      .Cases({"ngram_counts", "ngram_indexes", "pool_int64s"}, A::INTS)
      .Case("weights", A::FLOATS)
      .Cases({"hidden_size", "layout", "linear_before_reset", "input_forget"}, A::INT)
      .Cases({"batch_dims", "batch_axis", "time_axis"}, A::INT)
      .Case("align_corners", A::INT)
      .Cases({"num_groups", "p", "block_size", "output_dtype", "precision"}, A::INT)
      .Cases({"K", "N", "accuracy_level", "bits", "is_packed_batching"}, A::INT)
      .Cases({"do_rotary", "past_present_share_buffer", "unidirectional"}, A::INT)
      .Case("mask_filter_value", A::FLOAT)
      .Case("qkv_hidden_sizes", A::INTS)
      .Cases({"output_height", "output_width", "sampling_ratio", "offset_group"}, A::INT)
      .Case("spatial_scale", A::FLOAT)
      .Case("keep_aspect_ratio_policy", A::STRING)
      .Cases({"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode",
              "softmax_precision", "interleaved", "num_heads", "rotary_embedding_dim"},
             A::INT)
      .Cases({"scale", "softcap"}, A::FLOAT)
      .Case("padding_mode", A::STRING)
      .Cases({"activation_alpha", "activation_beta"}, A::FLOATS)
      .Case("activations", A::STRINGS)
      .Case("clip", A::FLOAT)
      .Case("value", op == "Pad" ? A::FLOAT : A::TENSOR) // Pad's before opset 11
      .Cases({"then_branch", "else_branch"}, A::GRAPH)
      .Default(A::UNDEFINED);
}

/// Why attribute `a` of an `op` node is not what the ONNX schema allows, or
/// "": its type, and the flags that are 0 or 1 (allowzero=100 is no flag).
std::string checkAttribute(StringRef op, const onnx::AttributeProto &a) {
  auto want = attributeType(op, a.name());
  if (want != onnx::AttributeProto::UNDEFINED && a.type() != want)
    return "must be " + onnx::AttributeProto::AttributeType_Name(want) + ", not " +
           (onnx::AttributeProto::AttributeType_IsValid(a.type())
                ? onnx::AttributeProto::AttributeType_Name(a.type())
                : std::to_string(int(a.type())));
  bool flag = llvm::is_contained({"keepdims", "noop_with_empty_axes", "transA", "transB",
                                  "allowzero", "upper", "fmod", "detect_negative",
                                  "detect_positive", "select_last_index", "training_mode",
                                  "ceil_mode", "count_include_pad", "exclusive", "reverse",
                                  "largest", "sorted", "exclude_outside", "periodic",
                                  "align_corners", "saturate", "is_causal", "interleaved",
                                  "antialias"},
                                 a.name());
  if (flag && a.i() != 0 && a.i() != 1)
    return "= " + std::to_string(a.i()) + " must be 0 or 1";
  // The norms compute in float (stash_type 1), as their outputs are.
  if (a.name() == "stash_type" && a.i() != 1)
    return "= " + std::to_string(a.i()) + " is not supported (only 1, float)";
  if (a.name() == "approximate" && a.s() != "none" && a.s() != "tanh")
    return "= '" + a.s() + "' must be none or tanh";
  return "";
}

/// Names that the nodes of `graph` (and of graphs nested in them) read but
/// that `graph` does not define: a branch's references to enclosing scopes.
void outerNames(const onnx::GraphProto &graph, llvm::StringSet<> &out) {
  llvm::StringSet<> defined;
  for (const auto &v : graph.input())
    defined.insert(v.name());
  for (const auto &t : graph.initializer())
    defined.insert(t.name());
  for (const auto &n : graph.node())
    for (const auto &o : n.output())
      defined.insert(o);
  auto use = [&](StringRef name) {
    if (!name.empty() && !defined.contains(name))
      out.insert(name);
  };
  for (const auto &n : graph.node()) {
    for (const auto &in : n.input())
      use(in);
    for (const auto &a : n.attribute()) {
      llvm::StringSet<> inner;
      if (a.has_g())
        outerNames(a.g(), inner);
      for (const auto &g : a.graphs())
        outerNames(g, inner);
      for (const auto &name : inner)
        use(name.getKey());
    }
  }
  for (const auto &o : graph.output())
    use(o.name());
}

/// A node's inputs, and for a node with subgraphs (If) the outer values those
/// read: all of them must be computed before the node.
SmallVector<std::string> nodeInputs(const onnx::NodeProto &node) {
  SmallVector<std::string> names(node.input().begin(), node.input().end());
  llvm::StringSet<> outer;
  for (const auto &a : node.attribute()) {
    if (a.has_g())
      outerNames(a.g(), outer);
    for (const auto &g : a.graphs())
      outerNames(g, outer);
  }
  for (const auto &name : outer)
    if (!llvm::is_contained(names, name.getKey()))
      names.push_back(name.getKey().str());
  return names;
}

} // namespace

//===----------------------------------------------------------------------===//
// Types and tensors
//===----------------------------------------------------------------------===//

FailureOr<Type> Importer::elementType(int32_t onnxType, const std::string &what) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return builder.getF32Type();
  case onnx::TensorProto::DOUBLE: return builder.getF64Type();
  case onnx::TensorProto::FLOAT16: return builder.getF16Type();
  case onnx::TensorProto::BFLOAT16: return builder.getBF16Type();
  case onnx::TensorProto::INT64: return builder.getIntegerType(64);
  case onnx::TensorProto::INT32: return builder.getIntegerType(32);
  case onnx::TensorProto::INT16: return builder.getIntegerType(16);
  case onnx::TensorProto::INT8: return builder.getIntegerType(8);
  case onnx::TensorProto::UINT8: return builder.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16: return builder.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT32: return builder.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT64: return builder.getIntegerType(64, /*isSigned=*/false);
  case onnx::TensorProto::BOOL: return builder.getIntegerType(1);
  default: {
    std::string name = onnx::TensorProto::DataType_IsValid(onnxType)
                           ? onnx::TensorProto::DataType_Name(onnxType)
                           : std::to_string(onnxType);
    error(what + ": unsupported element type " + name +
          " (wsc imports float, double, float16, bfloat16, signed and unsigned integers of 8 "
          "to 64 bits, and bool tensors)");
    return failure();
  }
  }
}

FailureOr<RankedTensorType> Importer::tensorType(const onnx::TensorProto &tensor,
                                                 const std::string &what) {
  auto element = elementType(tensor.data_type(), what);
  if (::failed(element))
    return failure();
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > kMaxElements / d)) {
      error(what + ": invalid dimension " + std::to_string(d));
      return failure();
    }
    count *= d;
    shape.push_back(d);
  }
  return RankedTensorType::get(shape, *element);
}

/// Where the bytes of an externally stored tensor are, checked against the file.
static bool externalBytes(const onnx::TensorProto &tensor, const std::string &modelPath,
                          uint64_t expected, TensorBytes &bytes, std::string &err) {
  std::string location;
  uint64_t offset = 0, length = expected;
  bool haveLength = false;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t v = 0;
      if (StringRef(entry.value()).getAsInteger(10, v)) {
        err = "external data " + entry.key() + " '" + entry.value() + "' is not a number";
        return false;
      }
      entry.key() == "offset" ? offset = v : (length = v, haveLength = true);
    }
  }
  if (location.empty()) {
    err = "external data has no location";
    return false;
  }
  if (llvm::sys::path::is_absolute(location) || StringRef(location).contains("..")) {
    err = "external data location '" + location + "' must be relative, inside the model's folder";
    return false;
  }
  SmallString<256> path(llvm::sys::path::parent_path(modelPath));
  llvm::sys::path::append(path, location);
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size)) {
    err = "external data file '" + std::string(path) + "' cannot be read";
    return false;
  }
  // Through its symbolic links too, the file must lie inside the model's
  // folder, and be a regular file (not a device or a FIFO).
  SmallString<256> folder(llvm::sys::path::parent_path(modelPath)), realFolder, realPath;
  if (folder.empty())
    folder = ".";
  if (llvm::sys::fs::real_path(folder, realFolder) || llvm::sys::fs::real_path(path, realPath)) {
    err = "external data file '" + std::string(path) + "' cannot be read";
    return false;
  }
  StringRef inside = realPath.str();
  if (!inside.consume_front(realFolder.str()) || !llvm::sys::path::is_separator(inside.front())) {
    err = "external data location '" + location + "' resolves to '" + std::string(realPath) +
          "', outside the model's folder";
    return false;
  }
  if (!llvm::sys::fs::is_regular_file(realPath)) {
    err = "external data file '" + std::string(path) + "' is not a regular file";
    return false;
  }
  if (haveLength && length != expected) {
    err = "external data length " + std::to_string(length) + " does not match the " +
          std::to_string(expected) + " bytes of its shape";
    return false;
  }
  if (offset > size || expected > size - offset) {
    err = "external data [" + std::to_string(offset) + ", " + std::to_string(offset + expected) +
          ") is beyond the end of '" + std::string(path) + "' (" + std::to_string(size) +
          " bytes)";
    return false;
  }
  bytes = {std::string(path), offset, expected};
  return true;
}

FailureOr<DenseElementsAttr> Importer::tensorValue(const onnx::TensorProto &tensor,
                                                   RankedTensorType type,
                                                   const TensorBytes *bytes,
                                                   const std::string &what) {
  int64_t n = type.getNumElements();
  Type element = type.getElementType();
  unsigned width = element.isInteger(1) ? 8 : element.getIntOrFloatBitWidth();
  uint64_t expected = uint64_t(n) * (width / 8);
  StringRef raw;
  std::unique_ptr<llvm::MemoryBuffer> slice;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    TensorBytes ext;
    std::string err;
    if (!externalBytes(tensor, file.path, expected, ext, err)) {
      error(what + ": " + err);
      return failure();
    }
    auto buf = llvm::MemoryBuffer::getFileSlice(ext.file, ext.length, ext.offset, false);
    if (!buf) {
      error(what + ": cannot read external data '" + ext.file + "'");
      return failure();
    }
    slice = std::move(*buf);
    raw = slice->getBuffer();
  } else if (bytes && !bytes->file.empty()) {
    raw = file.buffer->getBuffer().substr(bytes->offset, bytes->length);
  } else if (tensor.has_raw_data()) {
    raw = tensor.raw_data();
  }
  if (!raw.empty() || (bytes && !bytes->file.empty()) ||
      tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (raw.size() != expected) {
      error(what + ": holds " + std::to_string(raw.size()) + " bytes, but its shape needs " +
            std::to_string(expected));
      return failure();
    }
    if (element.isInteger(1)) {
      SmallVector<bool> flags;
      for (char c : raw)
        flags.push_back(c != 0);
      return DenseElementsAttr::get(type, flags);
    }
    return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(raw.data(), raw.size()));
  }
  // Typed fields.
  auto mismatch = [&](int64_t have) -> FailureOr<DenseElementsAttr> {
    error(what + ": holds " + std::to_string(have) + " values, but its shape needs " +
          std::to_string(n));
    return failure();
  };
  if (isa<FloatType>(element) && width == 32) {
    if (tensor.float_data_size() != n)
      return mismatch(tensor.float_data_size());
    return DenseElementsAttr::get(type, ArrayRef<float>(tensor.float_data().data(), n));
  }
  if (element.isF64()) {
    if (tensor.double_data_size() != n)
      return mismatch(tensor.double_data_size());
    return DenseElementsAttr::get(type, ArrayRef<double>(tensor.double_data().data(), n));
  }
  if (element.isInteger(64)) {
    if (tensor.int64_data_size() != n)
      return mismatch(tensor.int64_data_size());
    return DenseElementsAttr::get(type, ArrayRef<int64_t>(tensor.int64_data().data(), n));
  }
  if (isa<IntegerType>(element)) {
    if (tensor.int32_data_size() != n)
      return mismatch(tensor.int32_data_size());
    SmallVector<APInt> ints;
    for (int32_t v : tensor.int32_data())
      ints.push_back(APInt(width == 8 && element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth(),
                           v, /*isSigned=*/true, /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, ints);
  }
  error(what + ": tensor data of element type is not supported in typed fields");
  return failure();
}

FailureOr<Value> Importer::initializer(int index) {
  const onnx::TensorProto &tensor = file.model.graph().initializer(index);
  std::string what = "initializer '" + tensor.name() + "'";
  auto type = tensorType(tensor, what);
  if (::failed(type))
    return failure();
  OpBuilder::InsertionGuard guard(builder);
  if (lastInitializer)
    builder.setInsertionPointAfter(lastInitializer);
  else
    builder.setInsertionPointToStart(builder.getInsertionBlock());
  auto done = [&](Value v) -> FailureOr<Value> {
    Operation *def = v.getDefiningOp();
    std::string err;
    if (!masks.apply(tensor.name(), def, err)) {
      error(err);
      return failure();
    }
    lastInitializer = def;
    return def->getResult(0);
  };
  const TensorBytes &bytes = file.initializerBytes[index];
  bool isFloat = isa<FloatType>(type->getElementType());
  int64_t n = type->getNumElements();
  bool inline_ = isFloat ? n <= kInlineFloatElements : n <= kInlineIntElements;
  Location wloc = NameLoc::get(builder.getStringAttr(tensor.name()));
  if (!inline_) {
    auto weight = wg::WeightOp::create(builder, wloc, *type, builder.getStringAttr(tensor.name()),
                                               StringAttr(), builder.getI64IntegerAttr(0),
                                               DenseI64ArrayAttr());
    if (options.elideWeights)
      return done(weight.getResult());
    // Locate the bytes: in the model file, in an external file, or (rarely) in
    // typed proto fields, which cannot be referenced and are rejected.
    uint64_t expected = weight.getByteSize();
    TensorBytes where;
    std::string err;
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      if (!externalBytes(tensor, file.path, expected, where, err)) {
        error(what + ": " + err);
        return failure();
      }
    } else if (!bytes.file.empty()) {
      if (bytes.length != expected) {
        error(what + ": holds " + std::to_string(bytes.length) + " bytes, but its shape needs " +
              std::to_string(expected));
        return failure();
      }
      where = bytes;
    } else {
      // Typed fields: materialize as a literal after all.
      weight.erase();
      auto value = tensorValue(tensor, *type, &bytes, what);
      if (::failed(value))
        return failure();
      return done(wg::ConstantOp::create(builder, wloc, *type, *value).getResult());
    }
    weight.setFileAttr(builder.getStringAttr(where.file));
    weight.setOffsetAttr(builder.getI64IntegerAttr(where.offset));
    return done(weight.getResult());
  }
  auto value = tensorValue(tensor, *type, &bytes, what);
  if (::failed(value))
    return failure();
  return done(wg::ConstantOp::create(builder, wloc, *type, *value).getResult());
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

bool Importer::checkOpsetAndOps() {
  bool training = false;
  for (const auto &imp : file.model.opset_import()) {
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      opset = imp.version();
    training |= imp.domain() == kTrainingDomain;
  }
  if (opset <= 0 && !training) {
    error("the model imports no version of the default ONNX opset");
    return false;
  }
  if (opset > kMaxOpset) {
    error("opset " + std::to_string(opset) + " is not supported; wsc imports opsets up to " +
          std::to_string(kMaxOpset) +
          " (re-export with torch.onnx.export(..., opset_version=17))");
    return false;
  }
  return checkNodes(file.model.graph(), "");
}

bool Importer::checkNodes(const onnx::GraphProto &graph, const std::string &prefix) {
  std::vector<std::string> unsupported;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    std::string label = prefix + nodeLabel(node, i);
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    bool trainingOp = node.domain() == kTrainingDomain && isTrainingOp(node.op_type());
    bool microsoft = node.domain() == kMicrosoftDomain;
    const auto &table = microsoft ? microsoftOps() : supportedOps();
    auto it = table.find(node.op_type());
    bool inDomain = defaultDomain ? !isTrainingOp(node.op_type()) : trainingOp || microsoft;
    if (!inDomain || it == table.end()) {
      unsupported.push_back(label +
                            (node.domain().empty() ? "" : " in domain '" + node.domain() + "'"));
      continue;
    }
    const OpSupport &support = it->second;
    if (!trainingOp && !microsoft && opset < support.sinceOpset) {
      unsupported.push_back(label + ": its opset-" + std::to_string(opset) +
                            " form is not supported; wsc imports " + node.op_type() +
                            " from opset " + std::to_string(support.sinceOpset));
      continue;
    }
    SmallVector<StringRef> known;
    StringRef(support.attributes).split(known, ' ', -1, /*KeepEmpty=*/false);
    for (const auto &a : node.attribute()) {
      if (!llvm::is_contained(known, a.name()))
        unsupported.push_back(label + ": attribute '" + a.name() + "' is not supported");
      else if (std::string why = checkAttribute(node.op_type(), a); !why.empty())
        unsupported.push_back(label + ": attribute '" + a.name() + "' " + why);
    }
  }
  if (!unsupported.empty()) {
    std::string msg = std::to_string(unsupported.size()) + " unsupported op(s):";
    for (const auto &u : unsupported)
      msg += "\n  " + u;
    error(msg);
    return false;
  }
  return true;
}

bool Importer::addInputs(func::FuncOp func) {
  const auto &graph = file.model.graph();
  llvm::StringSet<> bound;
  SmallVector<Type> argTypes;
  SmallVector<std::string> names;
  // A dimension named by the exporter (dim_param) takes the value
  // --input-shape gives it on any input: "batch" bound once binds it on all.
  llvm::StringMap<int64_t> named;
  for (const auto &input : graph.input())
    for (const auto &[name, dims] : options.inputShapes)
      if (name == input.name() && input.type().has_tensor_type() &&
          input.type().tensor_type().shape().dim_size() == int(dims.size()))
        for (auto [i, dim] : llvm::enumerate(input.type().tensor_type().shape().dim()))
          if (dim.has_dim_param())
            named.try_emplace(dim.dim_param(), dims[i]);
  for (const auto &input : graph.input()) {
    if (initializerIndex.count(input.name()))
      continue; // older exporters list initializers as inputs too
    std::string what = "input '" + input.name() + "'";
    if (!input.type().has_tensor_type()) {
      error(what + ": only tensor inputs are supported");
      return false;
    }
    const auto &tt = input.type().tensor_type();
    auto element = elementType(tt.elem_type(), what);
    if (::failed(element))
      return false;
    if (auto b = llvm::find_if(options.binds, [&](const auto &p) { return p.first == input.name(); });
        b != options.binds.end()) {
      bound.insert(input.name());
      if (!bindInput(input, *element, b->second))
        return false;
      continue;
    }
    SmallVector<int64_t> shape;
    SmallVector<std::string> dynamicNames;
    for (const auto &dim : tt.shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(dim.dim_value());
      } else {
        shape.push_back(ShapedType::kDynamic);
        dynamicNames.push_back(dim.has_dim_param() ? dim.dim_param() : "?");
      }
    }
    for (const auto &[name, dims] : options.inputShapes) {
      if (name != input.name())
        continue;
      bound.insert(name);
      if (dims.size() != shape.size()) {
        error(what + ": --input-shape gives " + std::to_string(dims.size()) +
              " dimensions, but the input has rank " + std::to_string(shape.size()));
        return false;
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (!ShapedType::isDynamic(shape[i]) && shape[i] != dims[i]) {
          error(what + ": --input-shape sets dimension " + std::to_string(i) + " to " +
                std::to_string(dims[i]) + ", but the model fixes it at " +
                std::to_string(shape[i]));
          return false;
        }
        shape[i] = dims[i];
      }
    }
    for (auto [i, dim] : llvm::enumerate(tt.shape().dim())) {
      if (!ShapedType::isDynamic(shape[i]))
        continue;
      if (auto at = named.find(dim.has_dim_param() ? dim.dim_param() : ""); at != named.end())
        shape[i] = at->second;
      else if (options.emptyPast && wg::isPastName(input.name()))
        shape[i] = 0;
    }
    if (llvm::any_of(shape, ShapedType::isDynamic)) {
      std::string dimsText;
      for (size_t i = 0; i < shape.size(); ++i)
        dimsText += (i ? "x" : "") + (ShapedType::isDynamic(shape[i])
                                          ? std::string("?")
                                          : std::to_string(shape[i]));
      unboundInputs += (unboundInputs.empty() ? "" : ", ") + input.name() + " (" + dimsText + ")";
    }
    argTypes.push_back(RankedTensorType::get(shape, *element));
    names.push_back(input.name());
  }
  for (const auto &[name, path] : options.binds)
    if (!bound.contains(name)) {
      error("--bind names '" + name + "', which is not a graph input");
      return false;
    }
  for (const auto &[name, dims] : options.inputShapes)
    if (!bound.contains(name)) {
      std::string known;
      for (const auto &n : names)
        known += (known.empty() ? "" : ", ") + n;
      error("--input-shape names '" + name + "', which is not a graph input (inputs: " + known +
            ")");
      return false;
    }
  func.setType(builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(names)) {
    values[name] = entry->getArgument(i);
    func.setArgAttr(i, "wsgraph.name", builder.getStringAttr(name));
  }
  builder.setInsertionPointToStart(entry);
  for (auto &[name, value] : boundInputs)
    values[name] = wg::ConstantOp::create(builder, NameLoc::get(builder.getStringAttr(name)),
                                          value.getType(), value)
                       .getResult();
  return true;
}

bool Importer::bindInput(const onnx::ValueInfoProto &input, Type element, StringRef path) {
  std::string what = "--bind " + input.name() + "=" + path.str();
  onnx::TensorProto tensor;
  std::string err;
  if (!readTensorFile(path, tensor, err)) {
    error(what + ": " + err);
    return false;
  }
  auto type = tensorType(tensor, what);
  if (::failed(type))
    return false;
  const auto &dims = input.type().tensor_type().shape().dim();
  bool fits = type->getElementType() == element && type->getRank() == dims.size();
  for (int i = 0; fits && i < dims.size(); ++i)
    fits = !dims[i].has_dim_value() || dims[i].dim_value() == type->getDimSize(i);
  if (!fits) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "the file holds " << *type << ", which the input's declared type does not admit";
    error(what + ": " + s);
    return false;
  }
  auto value = tensorValue(tensor, *type, nullptr, what);
  if (::failed(value))
    return false;
  boundInputs.push_back({input.name(), *value});
  return true;
}

FailureOr<Value> Importer::lookup(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  if (sequences.count(name)) {
    nodeError("input '" + name + "' is a sequence; the op takes tensors");
    return failure();
  }
  auto init = initializerIndex.find(name);
  if (init == initializerIndex.end()) {
    error("value '" + name + "' is not defined");
    return failure();
  }
  auto v = initializer(init->second);
  if (::failed(v))
    return failure();
  values[name] = *v;
  return *v;
}

/// Orders nodes so that producers come first, reporting missing inputs and cycles.
bool Importer::sortNodes(const onnx::GraphProto &graph, const std::string &prefix,
                         std::vector<int> &order) {
  auto defined = [&](StringRef name) {
    return values.count(name) || sequences.count(name) || initializerIndex.count(name);
  };
  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      if (!out.empty()) {
        if (producer.count(out) || defined(out)) {
          error(prefix + nodeLabel(graph.node(i), i) + ": output '" + out + "' is defined twice");
          return false;
        }
        producer[out] = i;
      }
  std::vector<int> pending(graph.node_size(), 0);
  std::vector<std::vector<int>> users(graph.node_size());
  bool ok = true;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &in : nodeInputs(graph.node(i))) {
      if (in.empty() || defined(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        error(prefix + nodeLabel(graph.node(i), i) + ": input '" + in +
              "' is not a graph input, an initializer or a node output");
        ok = false;
        continue;
      }
      ++pending[i];
      users[it->second].push_back(i);
    }
  if (!ok)
    return false;
  std::deque<int> ready;
  for (int i = 0; i < graph.node_size(); ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0)
        ready.push_back(u);
  }
  if (static_cast<int>(order.size()) == graph.node_size())
    return true;
  std::string cycle;
  int shown = 0;
  for (int i = 0; i < graph.node_size() && shown < 8; ++i)
    if (pending[i] > 0) {
      cycle += "\n  " + prefix + nodeLabel(graph.node(i), i);
      ++shown;
    }
  error(prefix + "the graph has a cycle; these nodes are on it or wait for it:" + cycle);
  return false;
}

bool Importer::importNodes(const onnx::GraphProto &graph, const std::string &prefix) {
  std::vector<int> order;
  if (!sortNodes(graph, prefix, order))
    return false;
  for (int index : order) {
    const auto &node = graph.node(index);
    currentNode = prefix + nodeLabel(node, index);
    loc = NameLoc::get(builder.getStringAttr(node.name().empty() ? node.op_type() + "_" +
                                                                       std::to_string(index)
                                                                 : node.name()));
    if (isSequenceOp(node.op_type())) {
      if (::failed(convertSequenceNode(node))) {
        if (!failed)
          nodeError("cannot be imported");
        return false;
      }
      continue;
    }
    SmallVector<Value> inputs;
    for (const auto &in : node.input()) {
      if (in.empty()) {
        inputs.push_back(Value());
        continue;
      }
      auto v = lookup(in);
      if (::failed(v))
        return false;
      inputs.push_back(*v);
    }
    SmallVector<Value> results;
    if (::failed(convert(node, inputs, results))) {
      if (!failed)
        nodeError("cannot be imported");
      return false;
    }
    for (auto [i, out] : llvm::enumerate(node.output())) {
      if (out.empty())
        continue;
      if (i >= results.size() || !results[i]) {
        nodeError("output " + std::to_string(i) + " ('" + out + "') is not supported");
        return false;
      }
      values[out] = results[i];
    }
  }
  return true;
}

OwningOpRef<ModuleOp> Importer::run() {
  const auto &graph = file.model.graph();
  if (!checkOpsetAndOps())
    return nullptr;
  for (int i = 0; i < graph.initializer_size(); ++i)
    initializerIndex[graph.initializer(i).name()] = i;
  if (std::string err; !options.sparsityMask.empty() && !masks.load(options.sparsityMask, err)) {
    error("--sparsity-mask " + options.sparsityMask + ": " + err);
    return nullptr;
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(FileLineColLoc::get(ctx, file.path, 0, 0));
  (*module)->setAttr("wsgraph.source", builder.getStringAttr(file.path));
  (*module)->setAttr("wsgraph.opset", builder.getI64IntegerAttr(opset));
  builder.setInsertionPointToEnd(module->getBody());
  std::string funcName = "main";
  auto func = func::FuncOp::create(builder, module->getLoc(), funcName,
                                           builder.getFunctionType({}, {}));
  if (!addInputs(func))
    return nullptr;
  // Turn MLIR diagnostics (from type inference and verifiers) into our format.
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      nodeError(diag.str());
    return success();
  });
  if (!importNodes(graph, ""))
    return nullptr;
  if (std::vector<std::string> unused = masks.unused(); !unused.empty()) {
    error("--sparsity-mask " + options.sparsityMask + ": mask '" + unused.front() +
          "' names no weight the model's nodes use" +
          (unused.size() > 1 ? " (and " + std::to_string(unused.size() - 1) + " more)" : ""));
    return nullptr;
  }

  SmallVector<Value> outs;
  SmallVector<Type> outTypes;
  for (const auto &output : graph.output()) {
    auto it = values.find(output.name());
    if (sequences.count(output.name())) {
      error("graph output '" + output.name() + "' is a sequence; wsc's outputs are tensors");
      return nullptr;
    }
    if (it == values.end()) {
      if (initializerIndex.count(output.name())) {
        auto init = initializer(initializerIndex.lookup(output.name()));
        if (::failed(init))
          return nullptr;
        it = values.insert({output.name(), *init}).first;
      } else {
        error("graph output '" + output.name() + "' is not produced by any node");
        return nullptr;
      }
    }
    // What the graph declares the output to be must be what it computes:
    // a declared double (or 2^40 elements) is no float (or no [1, 8, 64]).
    if (output.type().has_tensor_type()) {
      const auto &tt = output.type().tensor_type();
      auto computed = dyn_cast<RankedTensorType>(it->second.getType());
      std::string declared = "graph output '" + output.name() + "' is declared ";
      if (tt.elem_type() != onnx::TensorProto::UNDEFINED && computed) {
        auto elem = elementType(tt.elem_type(), "graph output '" + output.name() + "'");
        if (::failed(elem))
          return nullptr;
        if (*elem != computed.getElementType()) {
          std::string have, want;
          llvm::raw_string_ostream(have) << computed.getElementType();
          llvm::raw_string_ostream(want) << *elem;
          error(declared + want + " but the graph computes " + have);
          return nullptr;
        }
      }
      if (tt.has_shape() && computed) {
        bool same = tt.shape().dim_size() == computed.getRank();
        for (int d = 0; same && d < tt.shape().dim_size(); ++d)
          if (tt.shape().dim(d).has_dim_value() && !computed.isDynamicDim(d))
            same = tt.shape().dim(d).dim_value() == computed.getDimSize(d);
        if (!same) {
          std::string dims, have;
          for (const auto &d : tt.shape().dim())
            dims += (dims.empty() ? "" : "x") +
                    (d.has_dim_value() ? std::to_string(d.dim_value()) : std::string("?"));
          llvm::raw_string_ostream(have) << computed;
          error(declared + "of shape [" + dims + "] but the graph computes " + have);
          return nullptr;
        }
      }
    }
    outs.push_back(it->second);
    outTypes.push_back(it->second.getType());
  }
  func::ReturnOp::create(builder, module->getLoc(), outs);
  func.setType(builder.getFunctionType(func.getArgumentTypes(), outTypes));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "wsgraph.name", builder.getStringAttr(output.name()));
  // Shape computations folded into constants that nothing uses any more.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
    if (op.use_empty() && isPure(&op) && !op.hasTrait<OpTrait::IsTerminator>())
      op.erase();
  boundIndexInputs(func);
  currentNode = "after import";
  if (::failed(verify(*module)) || failed)
    return nullptr;
  return module;
}

/// A graph input that a Gather or GatherElements takes directly as its
/// indices gets the range that ONNX allows there, [-n, n) for an axis of n
/// (the intersection over such uses), as the argument attribute
/// `wsgraph.valid`: the exporter writes it as the input's valid range, so
/// wsc-run refuses an index out of it where onnxruntime and torch raise.
/// (On the wafer such an index could land on another row's element.)
void Importer::boundIndexInputs(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    for (Operation *user : arg.getUsers()) {
      Value data;
      int64_t axis;
      if (auto g = dyn_cast<wg::GatherOp>(user); g && g.getIndices() == arg)
        data = g.getData(), axis = g.getAxis();
      else if (auto ge = dyn_cast<wg::GatherElementsOp>(user); ge && ge.getIndices() == arg)
        data = ge.getData(), axis = ge.getAxis();
      else
        continue;
      auto type = cast<RankedTensorType>(data.getType());
      if (axis < 0)
        axis += type.getRank();
      if (axis < 0 || axis >= type.getRank() || type.isDynamicDim(axis))
        continue;
      lo = std::max(lo, -type.getDimSize(axis));
      hi = std::min(hi, type.getDimSize(axis));
    }
    if (lo != INT64_MIN && lo < hi)
      func.setArgAttr(arg.getArgNumber(), "wsgraph.valid",
                      DenseI64ArrayAttr::get(func.getContext(), {lo, hi}));
  }
}

//===----------------------------------------------------------------------===//
// Building helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Value>> Importer::buildMulti(StringRef name, ValueRange operands,
                                                   ArrayRef<NamedAttribute> attrs,
                                                   unsigned numResults, Type resultType) {
  for (Value v : operands)
    if (!v) {
      nodeError("a required input is missing");
      return failure();
    }
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  // Without a given type, results take the op's own inference; the
  // placeholder never escapes.
  state.addTypes(SmallVector<Type>(numResults, resultType ? resultType : builder.getNoneType()));
  Operation *op = builder.create(state);
  if (!resultType) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    SmallVector<Type> types;
    if (!infer || ::failed(infer.inferReturnTypes(ctx, loc, op->getOperands(),
                                                  op->getRawDictionaryAttrs(),
                                                  op->getPropertiesStorage(), op->getRegions(),
                                                  types))) {
      op->erase();
      if (!failed)
        nodeError("result types cannot be inferred");
      return failure();
    }
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
  }
  if (::failed(verify(op))) {
    op->erase();
    return failure();
  }
  // A result without elements has nothing to compute: an empty constant.
  SmallVector<Value> results(op->getResults());
  auto empty = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() && t.getNumElements() == 0;
  };
  if (llvm::any_of(results, empty)) {
    for (Value &r : results)
      if (empty(r))
        r = constant(DenseElementsAttr::get(cast<ShapedType>(r.getType()), ArrayRef<Attribute>{}));
    if (llvm::all_of(op->getResults(), [](Value r) { return r.use_empty(); }) &&
        llvm::all_of(op->getResults(), empty))
      op->erase();
    return results;
  }
  results.clear();
  if (::succeeded(builder.tryFold(op, results)) && !results.empty()) {
    op->erase();
    return results;
  }
  return SmallVector<Value>(op->getResults());
}

FailureOr<Value> Importer::build(StringRef name, ValueRange operands,
                                 ArrayRef<NamedAttribute> attrs, Type resultType) {
  auto results = buildMulti(name, operands, attrs, 1, resultType);
  if (::failed(results))
    return failure();
  return results->front();
}

FailureOr<SmallVector<int64_t>> Importer::constInts(Value v, const char *what) {
  if (!v) {
    nodeError(std::string("the ") + what + " input is missing");
    return failure();
  }
  auto dense = wg::getConstantElements(v);
  if (!dense || !isa<IntegerType>(dense.getElementType())) {
    nodeError(std::string("the ") + what + " input is not a compile-time constant" +
              (unboundInputs.empty()
                   ? std::string()
                   : "; bind the dynamic dimensions of " + unboundInputs +
                         " with --input-shape NAME=DIMS (for example --input-shape idx=1x16)"));
    return failure();
  }
  SmallVector<int64_t> out;
  for (APInt x : dense.getValues<APInt>())
    out.push_back(x.getSExtValue());
  return out;
}

FailureOr<std::optional<SmallVector<int64_t>>>
Importer::intsFromInputOrAttr(const onnx::NodeProto &node, ArrayRef<Value> in, size_t index,
                              const char *name) {
  if (in.size() > index && in[index]) {
    auto v = constInts(in[index], name);
    if (::failed(v))
      return failure();
    return std::optional<SmallVector<int64_t>>(*v);
  }
  return intsAttr(node, name);
}

const onnx::AttributeProto *Importer::findAttr(const onnx::NodeProto &node, StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
int64_t Importer::intAttr(const onnx::NodeProto &node, StringRef name, int64_t dflt) {
  auto *a = findAttr(node, name);
  return a ? a->i() : dflt;
}
float Importer::floatAttr(const onnx::NodeProto &node, StringRef name, float dflt) {
  auto *a = findAttr(node, name);
  return a ? a->f() : dflt;
}
std::string Importer::stringAttr(const onnx::NodeProto &node, StringRef name, StringRef dflt) {
  auto *a = findAttr(node, name);
  return a ? a->s() : dflt.str();
}
std::optional<SmallVector<int64_t>> Importer::intsAttr(const onnx::NodeProto &node,
                                                       StringRef name) {
  auto *a = findAttr(node, name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> wsc::importOnnx(StringRef path, MLIRContext *context,
                                      const OnnxImportOptions &options) {
  context->loadDialect<func::FuncDialect, wg::WsgraphDialect>();
  OnnxModelFile file;
  std::string err;
  if (!loadOnnxModelFile(path.str(), file, err) || !inlineLocalFunctions(file.model, err)) {
    llvm::errs() << "error: " << path << ": " << err << "\n";
    return nullptr;
  }
  return Importer(file, context, options).run();
}

bool wsc::parseBind(StringRef spec, OnnxImportOptions &options, std::string &error) {
  auto [name, path] = spec.split('=');
  if (name.empty() || path.empty()) {
    error = "--bind expects NAME=FILE.npy or NAME=FILE.pb, got '" + spec.str() + "'";
    return false;
  }
  options.binds.push_back({name.str(), path.str()});
  return true;
}

bool wsc::parseInputShape(StringRef spec, OnnxImportOptions &options, std::string &error) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || dims.empty() || !spec.contains('=')) {
    error = "--input-shape expects NAME=DIMS such as idx=1x16, got '" + spec.str() + "'";
    return false;
  }
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  SmallVector<int64_t> shape;
  for (StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0) {
      error = "--input-shape '" + spec.str() + "': '" + p.str() + "' is not a dimension";
      return false;
    }
    shape.push_back(d);
  }
  options.inputShapes.push_back({name.str(), shape});
  return true;
}
