//===- OnnxImporter.h - the importer's state, shared by its files -*- C++ -*-===//
//
// Private to lib/Target: OnnxImport.cpp holds the graph walk, tensors and
// op building; OnnxNodes.cpp holds the per-operator converters.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TARGET_ONNXIMPORTER_H
#define WSC_LIB_TARGET_ONNXIMPORTER_H

#include "OnnxModelFile.h"
#include "SparsityMask.h"
#include "wsc/Target/OnnxImport.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>
#include <string>

namespace wsc::onnx_import {

using namespace mlir;
namespace wg = wsc::wsgraph;

/// The ranked tensor type of an imported value.
inline RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
/// The product of `dims` (each >= 0), or -1 once it passes `limit`: sizes
/// that attributes or constant inputs give must not overflow int64.
inline int64_t boundedProduct(ArrayRef<int64_t> dims, int64_t limit) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && product > limit / d))
      return -1;
    product *= d;
  }
  return product;
}
/// The most elements a table or sampled tensor built while importing holds.
constexpr int64_t kMaxImportTable = int64_t(1) << 24;
/// Whether every size in `v` lies in [lo, kMaxImportTable].
inline bool sizesInRange(ArrayRef<int64_t> v, int64_t lo) {
  return llvm::all_of(v, [&](int64_t x) { return x >= lo && x <= kMaxImportTable; });
}

/// Builds ops in turn; after the first failure every later op is null.
struct Composer {
  std::function<FailureOr<Value>(StringRef, ValueRange, ArrayRef<NamedAttribute>, Type)> build;
  bool ok = true;

  Value op(StringRef name, ValueRange operands, ArrayRef<NamedAttribute> attrs = {},
           Type result = {}) {
    if (!ok || llvm::any_of(operands, [](Value v) { return !v; }))
      return ok = false, Value();
    FailureOr<Value> v = build(name, operands, attrs, result);
    if (mlir::failed(v))
      return ok = false, Value();
    return *v;
  }
  Value add(Value a, Value b) { return op(wg::AddOp::getOperationName(), {a, b}); }
  Value sub(Value a, Value b) { return op(wg::SubOp::getOperationName(), {a, b}); }
  Value mul(Value a, Value b) { return op(wg::MulOp::getOperationName(), {a, b}); }
  Value div(Value a, Value b) { return op(wg::DivOp::getOperationName(), {a, b}); }
  Value max(Value a, Value b) { return op(wg::MaxOp::getOperationName(), {a, b}); }
  Value min(Value a, Value b) { return op(wg::MinOp::getOperationName(), {a, b}); }
  Value less(Value a, Value b) { return op(wg::LessOp::getOperationName(), {a, b}); }
  Value greater(Value a, Value b) { return op(wg::GreaterOp::getOperationName(), {a, b}); }
  Value equal(Value a, Value b) { return op(wg::EqualOp::getOperationName(), {a, b}); }
  Value where(Value c, Value a, Value b) { return op(wg::WhereOp::getOperationName(), {c, a, b}); }
  Value unary(StringRef name, Value a) { return op(name, {a}, {}, a ? a.getType() : Type()); }
  Value exp(Value a) { return unary(wg::ExpOp::getOperationName(), a); }
  Value log(Value a) { return unary(wg::LogOp::getOperationName(), a); }
  Value abs(Value a) { return unary(wg::AbsOp::getOperationName(), a); }
  Value neg(Value a) { return unary(wg::NegOp::getOperationName(), a); }
  Value sqrt(Value a) { return unary(wg::SqrtOp::getOperationName(), a); }
  Value tanh(Value a) { return unary(wg::TanhOp::getOperationName(), a); }
  Value reshape(Value v, RankedTensorType type) {
    return op(wg::ReshapeOp::getOperationName(), {v}, {}, type);
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return v ? op(wg::ReshapeOp::getOperationName(), {v}, {},
                  RankedTensorType::get(shape, cast<ShapedType>(v.getType()).getElementType()))
             : (ok = false, Value());
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    if (!v)
      return ok = false, Value();
    return op(wg::TransposeOp::getOperationName(), {v},
              {named(v, "perm", [&](Builder &b) { return b.getDenseI64ArrayAttr(perm); })});
  }
  Value unsqueeze(Value v, ArrayRef<int64_t> axes) {
    if (!v)
      return ok = false, Value();
    return op(wg::UnsqueezeOp::getOperationName(), {v},
              {named(v, "axes", [&](Builder &b) { return b.getDenseI64ArrayAttr(axes); })});
  }
  /// The parts side by side along `axis` (one part: itself).
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    if (parts.empty() || !parts.front())
      return ok = false, Value();
    if (parts.size() == 1)
      return parts.front();
    return op(wg::ConcatOp::getOperationName(), parts,
              {named(parts.front(), "axis", [&](Builder &b) { return b.getI64IntegerAttr(axis); })});
  }
  Value slice(Value v, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides) {
    if (!v)
      return ok = false, Value();
    auto ints = [](ArrayRef<int64_t> a) {
      return [a](Builder &b) -> Attribute { return b.getDenseI64ArrayAttr(a); };
    };
    return op(wg::SliceOp::getOperationName(), {v},
              {named(v, "offsets", ints(offsets)), named(v, "sizes", ints(sizes)),
               named(v, "strides", ints(strides))});
  }
  /// [lo, lo + size) of `v` along `axis`.
  Value sliceAlong(Value v, int64_t axis, int64_t lo, int64_t size) {
    if (!v)
      return ok = false, Value();
    auto shape = cast<ShapedType>(v.getType()).getShape();
    SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape), strides(shape.size(), 1);
    offsets[axis] = lo, sizes[axis] = size;
    return slice(v, offsets, sizes, strides);
  }
  /// `parts` combined pairwise in a balanced tree (elementwise ops split into
  /// rows however large; a reduction over the parts stacked would not).
  Value pairwise(ArrayRef<Value> parts, function_ref<Value(Value, Value)> combine) {
    SmallVector<Value> level(parts.begin(), parts.end());
    while (level.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(combine(level[i], level[i + 1]));
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    return level.empty() ? (ok = false, Value()) : level.front();
  }
  /// Appends `values` to `results` when every op was built.
  LogicalResult finish(SmallVectorImpl<Value> &results, ArrayRef<Value> values) {
    if (!ok || llvm::any_of(values, [](Value v) { return !v; }))
      return failure();
    results.append(values.begin(), values.end());
    return success();
  }

private:
  /// An attribute named `name`, made in (non-null) `v`'s context.
  static NamedAttribute named(Value v, StringRef name, function_ref<Attribute(Builder &)> make) {
    Builder b(v.getContext());
    return b.getNamedAttr(name, make(b));
  }
};

/// Whether ONNX op `op` imports as other wsgraph ops (OnnxComposite.cpp).
bool isCompositeOp(StringRef op);
/// Whether ONNX op `op` is one of OnnxImages.cpp's [N, C, spatial...] ops.
bool isImageOp(StringRef op);
/// Whether ONNX op `op` is one of OnnxSelect.cpp's: TopK, Compress, Pad,
/// CenterCropPad.
bool isSelectOp(StringRef op);
/// Whether ONNX op `op` is an integer or quantized op (OnnxQuantized.cpp).
bool isQuantizedOp(StringRef op);
/// Whether `op` is an optimizer of ai.onnx.preview.training (OnnxTraining.cpp).
bool isTrainingOp(StringRef op);
/// Whether ONNX op `op` is TfIdfVectorizer (OnnxNgrams.cpp).
bool isNgramOp(StringRef op);
struct NgramGroup;
/// Whether ONNX op `op` is RNN, GRU or LSTM (OnnxRecurrent.cpp).
bool isRecurrentOp(StringRef op);
/// Whether ONNX op `op` indexes by data: the scatters, GatherND,
/// ReverseSequence, MaxUnpool (OnnxScatter.cpp).
bool isScatterOp(StringRef op);
/// Whether ONNX op `op` is GridSample, AffineGrid, RoiAlign or DeformConv
/// (OnnxGridSample.cpp).
bool isGridSampleOp(StringRef op);
struct RecurrentActivation;
struct RecurrentDirection;
/// [B, T, H * D] as [B, H, T, D], and back (OnnxAttention.cpp).
Value splitHeads(Composer &c, Value x, int64_t heads);
Value mergeHeads(Composer &c, Value x);
/// Each of x's `kv` heads [B, kv, S, D] `reps` times in a row, [h0, h0, h1,
/// h1, ...], as repeat_kv writes it (unsqueeze, expand, reshape).
Value repeatHeads(Composer &c, Value x, int64_t reps);
/// Whether ONNX op `op` is Attention, RotaryEmbedding or TensorScatter
/// (OnnxAttention.cpp).
bool isAttentionOp(StringRef op);
/// Whether `op` of `domain` is one of ONNX Runtime's com.microsoft ops that
/// OnnxMicrosoft.cpp imports.
bool isMicrosoftOp(StringRef domain, StringRef op);
/// Whether ONNX op `op` is DFT, STFT, MelWeightMatrix or Det (OnnxSpectral.cpp).
bool isSpectralOp(StringRef op);
/// Whether ONNX op `op` makes, reads or loops over sequences, which import
/// as lists known at compile time (OnnxSequences.cpp).
bool isSequenceOp(StringRef op);
/// A value a Loop's or Scan's body takes or gives: a tensor, or a sequence.
struct CarriedValue {
  Value tensor;
  std::optional<SmallVector<Value>> sequence;
};

/// Where each output of a window op reads, along every spatial axis.
struct WindowGeometry {
  SmallVector<int64_t> kernel, strides, dilations, begin, end, out;
  /// The padded input's length along spatial axis i, with room for the last
  /// window (ceil_mode may reach past the end padding).
  int64_t padded(size_t i, int64_t length) const {
    return std::max(length + begin[i] + end[i], (out[i] - 1) * strides[i] + span(i));
  }
  int64_t span(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};


class Importer {
public:
  Importer(OnnxModelFile &file, MLIRContext *ctx, const OnnxImportOptions &options)
      : file(file), ctx(ctx), options(options), builder(ctx), loc(UnknownLoc::get(ctx)) {}

  OwningOpRef<ModuleOp> run();

private:
  // Reporting.
  void error(const std::string &message) { llvm::errs() << "error: " << file.path << ": " << message << "\n"; failed = true; }
  void nodeError(const std::string &message) { error(currentNode + ": " + message); }

  // Types and tensors.
  FailureOr<Type> elementType(int32_t onnxType, const std::string &what);
  FailureOr<RankedTensorType> tensorType(const onnx::TensorProto &tensor, const std::string &what);
  FailureOr<DenseElementsAttr> tensorValue(const onnx::TensorProto &tensor, RankedTensorType type,
                                           const TensorBytes *bytes, const std::string &what);
  FailureOr<Value> initializer(int index);
  /// --sparsity-mask's masks, by the names of the weights they mask.
  SparsityMasks masks;

  // Graph structure.
  bool checkOpsetAndOps();
  /// Reports, in one error, every node of `graph` whose op, opset form or
  /// attributes wsc does not import. `prefix` names the enclosing If branch.
  bool checkNodes(const onnx::GraphProto &graph, const std::string &prefix);
  bool addInputs(func::FuncOp func);
  /// Reads the value bound to `input` (--bind) for a constant in its place.
  bool bindInput(const onnx::ValueInfoProto &input, Type element, StringRef path);
  void boundIndexInputs(func::FuncOp func);
  SmallVector<std::pair<std::string, DenseElementsAttr>> boundInputs;
  bool sortNodes(const onnx::GraphProto &graph, const std::string &prefix,
                 std::vector<int> &order);
  /// Converts the nodes of `graph` in dependency order into the current
  /// block; their outputs are added to `values`.
  bool importNodes(const onnx::GraphProto &graph, const std::string &prefix);
  /// The value of a name: a graph input, node output or initializer.
  FailureOr<Value> lookup(const std::string &name);
  LogicalResult convert(const onnx::NodeProto &node, SmallVectorImpl<Value> &inputs,
                        SmallVectorImpl<Value> &results);

  // Building.
  FailureOr<Value> build(StringRef name, ValueRange operands, ArrayRef<NamedAttribute> attrs,
                         Type resultType = {});
  /// Builds, verifies and folds an op; result types are inferred unless given.
  FailureOr<SmallVector<Value>> buildMulti(StringRef name, ValueRange operands,
                                           ArrayRef<NamedAttribute> attrs, unsigned numResults,
                                           Type resultType = {});
  FailureOr<SmallVector<int64_t>> constInts(Value v, const char *what);
  /// Integers that opsets 13+ pass as a constant input and older ones as an
  /// attribute: the input when present, else the attribute, else none.
  FailureOr<std::optional<SmallVector<int64_t>>>
  intsFromInputOrAttr(const onnx::NodeProto &node, ArrayRef<Value> in, size_t index,
                      const char *name);
  Value constant(DenseElementsAttr value) {
    return wg::ConstantOp::create(builder, loc, value.getType(), value);
  }
  NamedAttribute attr(StringRef name, Attribute value) {
    return builder.getNamedAttr(name, value);
  }

  // Node attributes.
  const onnx::AttributeProto *findAttr(const onnx::NodeProto &node, StringRef name);
  int64_t intAttr(const onnx::NodeProto &node, StringRef name, int64_t dflt);
  float floatAttr(const onnx::NodeProto &node, StringRef name, float dflt);
  std::string stringAttr(const onnx::NodeProto &node, StringRef name, StringRef dflt);
  std::optional<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &node, StringRef name);

  // Node converters.
  LogicalResult convertReshape(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertSlice(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertSplit(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertConstant(const onnx::NodeProto &, SmallVectorImpl<Value> &);
  LogicalResult convertReduce(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &,
                              StringRef opName);
  LogicalResult convertSoftmax(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertLayerNorm(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertRmsNorm(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertClip(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertFlatten(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertIf(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  /// Einsum as transposes, diagonals, products (matmul or broadcast mul) and
  /// sums.
  LogicalResult convertEinsum(const onnx::NodeProto &, ArrayRef<Value>,
                              SmallVectorImpl<Value> &);
  /// Whether every given value (null ones aside) has a static shape; else an
  /// error naming the node.
  bool staticInputs(ArrayRef<Value> values) {
    if (llvm::all_of(values, [](Value v) { return !v || typeOf(v).hasStaticShape(); }))
      return true;
    nodeError("an input's shape is not static; bind it with --input-shape");
    return false;
  }
  /// A Composer building through build().
  Composer composer() {
    return Composer{[this](StringRef name, ValueRange operands, ArrayRef<NamedAttribute> attrs,
                           Type type) { return build(name, operands, attrs, type); }};
  }
  /// Ops built from other wsgraph ops (OnnxComposite.cpp; isCompositeOp).
  LogicalResult convertComposite(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertDropout(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertArgExtreme(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  Value roundHalfEven(Composer &c, Value x);
  Value lpNorm(Composer &c, Value x, ArrayRef<int64_t> axes, int64_t p);
  Value arcTangent(Composer &c, Value x);
  LogicalResult convertQuantize(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  LogicalResult convertWindowFunction(const onnx::NodeProto &, ArrayRef<Value>,
                                      SmallVectorImpl<Value> &);
  LogicalResult convertEyeLike(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertOneHot(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertCumSum(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertLoss(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertCompositeReduce(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  /// The [N, C, spatial...] ops (OnnxImages.cpp; isImageOp).
  LogicalResult convertImageOp(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertDepthSpace(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  LogicalResult convertImageNorm(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertGroupNorm(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertCol2Im(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  FailureOr<WindowGeometry> windowGeometry(const onnx::NodeProto &, RankedTensorType,
                                           ArrayRef<int64_t> weightKernel);
  LogicalResult convertWindowOp(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  SmallVector<Value> tapSlices(Composer &c, Value padded, const WindowGeometry &g);
  Value concatTree(Composer &c, ArrayRef<Value> parts, int64_t axis);
  LogicalResult convertConvTranspose(const onnx::NodeProto &, ArrayRef<Value>,
                                     SmallVectorImpl<Value> &);
  LogicalResult convertLrn(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertResize(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertUpsample(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  Value pool(const onnx::NodeProto &, Value x, ArrayRef<Value> taps, const WindowGeometry &);
  LogicalResult maxPoolIndices(Composer &c, RankedTensorType type, ArrayRef<Value> taps,
                               const WindowGeometry &g, bool columnMajor,
                               SmallVectorImpl<Value> &results);
  Value convolve(const onnx::NodeProto &, ArrayRef<Value> in, ArrayRef<Value> taps,
                 const WindowGeometry &);
  /// TopK, Compress and Pad (OnnxSelect.cpp; isSelectOp).
  LogicalResult convertSelectOp(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  LogicalResult convertTopK(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertCompress(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  LogicalResult convertPad(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertCenterCropPad(const onnx::NodeProto &, ArrayRef<Value>,
                                     SmallVectorImpl<Value> &);
  /// Adagrad, Momentum and Adam (OnnxTraining.cpp; isTrainingOp).
  LogicalResult convertTrainingOp(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  /// TfIdfVectorizer (OnnxNgrams.cpp; isNgramOp).
  LogicalResult convertNgramOp(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  Value countNgrams(Composer &c, Value x, const NgramGroup &g, int64_t maxSkip);
  /// The integer and quantized ops (OnnxQuantized.cpp; isQuantizedOp).
  LogicalResult convertQuantizedOp(const onnx::NodeProto &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &);
  LogicalResult convertDynamicQuantize(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  LogicalResult convertBitShift(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  Value castTo(Composer &c, Value v, Type element);
  Value alongAxis(Composer &c, Value v, int64_t rank, int64_t axis);
  Value exactIntegerProduct(Composer &c, Value a, Value b, int64_t terms,
                            function_ref<Value(Value, Value)> product);
  Value shifted(Composer &c, Value q, Value zero, int64_t axis);
  Value requantize(Composer &c, Value acc, Value scale, Value zero);
  Value integerMatmul(Composer &c, Value a, Value aZero, Value b, Value bZero);
  Value integerConv(Composer &c, const onnx::NodeProto &node, Value x, Value xZero, Value w,
                    Value wZero);
  /// Attention and RotaryEmbedding (OnnxAttention.cpp; isAttentionOp).
  LogicalResult convertAttentionOp(const onnx::NodeProto &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &);
  LogicalResult convertAttention(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertRotaryEmbedding(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  LogicalResult convertTensorScatter(const onnx::NodeProto &, ArrayRef<Value>,
                                     SmallVectorImpl<Value> &);
  FailureOr<Value> attentionHeads(Composer &c, Value x, const char *what, int64_t heads);
  /// `update` written into `cache` along `axis` from each batch's `start`
  /// (int64, [B, 1, ...]; circular: modulo the cache's length): position p
  /// takes update[p - start] where that lies in it, else keeps its word.
  Value writeWindow(Composer &c, Value cache, Value update, Value start, int64_t axis,
                    bool circular);
  /// x [B, H, S, D] with its first r dimensions rotated by cos_cache and
  /// sin_cache [positions, r / 2] read at `ids` [B, S] (none: [B, S, r / 2]
  /// as they are), their halves (interleaved: even and odd) the parts.
  FailureOr<Value> rotate(Composer &c, Value x, Value cosCache, Value sinCache, Value ids,
                          int64_t r, bool interleaved);
  Value gatherRows(Composer &c, Value table, Value ids);
  FailureOr<Value> attentionBias(Composer &c, Value mask, Type element, int64_t keys);
  FailureOr<Value> maskScores(Composer &c, const onnx::NodeProto &node, Value scores, Value mask,
                              Value nonpad, int64_t past, bool cached);
  /// ONNX Runtime's com.microsoft ops (OnnxMicrosoft.cpp; isMicrosoftOp).
  LogicalResult convertMicrosoftOp(const onnx::NodeProto &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &);
  LogicalResult convertSkipNorm(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertMicrosoftRotary(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  LogicalResult convertMicrosoftAttention(const onnx::NodeProto &, ArrayRef<Value>,
                                          SmallVectorImpl<Value> &);
  FailureOr<Value> maskIndexBias(Composer &c, Value mask, RankedTensorType scores, double filter);
  FailureOr<Value> attendHeads(Composer &c, const onnx::NodeProto &node, Value q, Value k, Value v,
                               Value mask, Value bias, int64_t past);
  LogicalResult convertMultiHeadAttention(const onnx::NodeProto &, ArrayRef<Value>,
                                          SmallVectorImpl<Value> &);
  /// GroupQueryAttention (OnnxGroupQueryAttention.cpp).
  LogicalResult convertGroupQueryAttention(const onnx::NodeProto &, ArrayRef<Value>,
                                           SmallVectorImpl<Value> &);
  FailureOr<Value> groupQueryScores(Composer &c, const onnx::NodeProto &node, Value q, Value keys,
                                    Value earlier, Value bias, Value perHead);
  LogicalResult convertMatMulNBits(const onnx::NodeProto &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &);
  LogicalResult convertFusedMatMul(const onnx::NodeProto &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &);
  /// DFT, STFT, MelWeightMatrix and Det (OnnxSpectral.cpp; isSpectralOp).
  LogicalResult convertSpectralOp(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  LogicalResult convertDft(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertStft(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertMelWeightMatrix(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  LogicalResult convertDet(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  std::pair<Value, Value> dftLastAxis(Composer &c, Value re, Value im, int64_t length,
                                      int64_t bins, bool inverse);
  FailureOr<double> constScalar(Value v, const char *what);
  /// Sequences and Loop (OnnxSequences.cpp): a node whose inputs and
  /// outputs may be sequences, so it reads and writes them by name.
  LogicalResult convertSequenceNode(const onnx::NodeProto &);
  FailureOr<Value> tensorInput(const onnx::NodeProto &, int index);
  FailureOr<SmallVector<Value>> sequenceInput(const onnx::NodeProto &, int index);
  FailureOr<int64_t> sequencePosition(const onnx::NodeProto &, int index, int64_t size,
                                      int64_t dflt, bool inserting);
  FailureOr<SmallVector<Value>> splitToSequence(const onnx::NodeProto &);
  FailureOr<Value> concatFromSequence(const onnx::NodeProto &, ArrayRef<Value> elements);
  LogicalResult convertLoop(const onnx::NodeProto &);
  LogicalResult convertScan(const onnx::NodeProto &);
  FailureOr<std::pair<int64_t, bool>> loopBounds(const onnx::NodeProto &);
  FailureOr<CarriedValue> carried(const std::string &name);
  FailureOr<SmallVector<CarriedValue>> runBody(const onnx::GraphProto &body,
                                               const std::string &prefix,
                                               ArrayRef<CarriedValue> inputs);
  Value bodyScalar(const onnx::ValueInfoProto &input, APInt value);
  FailureOr<Value> stack(ArrayRef<Value> rows, int64_t axis, bool reverse);
  void setOutputs(const onnx::NodeProto &node, int first, ArrayRef<CarriedValue> from);
  /// RNN, GRU and LSTM unrolled over the sequence (OnnxRecurrent.cpp; isRecurrentOp).
  LogicalResult convertRecurrentOp(const onnx::NodeProto &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &);
  LogicalResult checkRecurrentShapes(const onnx::NodeProto &, ArrayRef<Value>, int64_t dirs,
                                     int64_t hidden, bool batchFirst,
                                     SmallVectorImpl<int64_t> &lengths);
  LogicalResult recurrentActivations(const onnx::NodeProto &, int64_t dirs,
                                     SmallVectorImpl<RecurrentActivation> &out);
  Value recurrentActivation(Composer &c, const RecurrentActivation &a, Value x);
  void prepareDirection(Composer &c, ArrayRef<Value> in, int64_t dir, bool batchFirst,
                        RecurrentDirection &d);
  Value recurrentStep(Composer &c, const RecurrentDirection &d, Value x, Value &cell);
  Value unrollDirection(Composer &c, RecurrentDirection &d, Value x, ArrayRef<int64_t> lengths,
                        bool reverse, bool wantY);
  /// The ops that index by data (OnnxScatter.cpp; isScatterOp).
  LogicalResult convertScatterOp(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertScatterElements(const onnx::NodeProto &, ArrayRef<Value>,
                                       StringRef reduction, SmallVectorImpl<Value> &);
  LogicalResult convertScatterND(const onnx::NodeProto &, ArrayRef<Value>, StringRef reduction,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertGatherND(const onnx::NodeProto &, ArrayRef<Value>,
                                SmallVectorImpl<Value> &);
  LogicalResult convertReverseSequence(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  LogicalResult convertMaxUnpool(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  /// GridSample: taps computed from the grid, read by gather (OnnxGridSample.cpp).
  LogicalResult convertGridSample(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  LogicalResult convertAffineGrid(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  LogicalResult convertRoiAlign(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertDeformConv(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  /// `data` [rows, R] (or a scalar) with `updates` [M, R] put on the rows
  /// `target` [M] (int64) names, combined by `reduction`.
  Value scatterRows(Composer &c, Value data, Value target, Value updates, int64_t rows,
                    StringRef reduction);
  /// The flat row of each index tuple (the last axis of `indices`) in `dims`.
  Value flatTuples(Composer &c, Value indices, ArrayRef<int64_t> dims);
  /// int64 0, scale, 2 * scale, ... along `axis` of `shape` (1 on the others).
  Value indexPositions(ArrayRef<int64_t> shape, int64_t axis, int64_t scale);
  /// Max, Min, Sum and Mean: a left-to-right chain of binary ops.
  FailureOr<Value> buildChain(ArrayRef<Value> in, StringRef binaryOp);
  /// The f32 positions 0..n-1 along `axis` of a rank-`rank` shape (1 on the
  /// other axes): an index to compare or reduce with, exact below 2^24.
  Value positionsAlong(int64_t rank, int64_t axis, int64_t n);
  /// A rank-0 constant of the given element type.
  Value scalarConstant(Type element, double value);

  OnnxModelFile &file;
  MLIRContext *ctx;
  const OnnxImportOptions &options;
  OpBuilder builder;
  Location loc;
  std::string currentNode;
  int64_t opset = 0;
  bool failed = false;
  llvm::StringMap<Value> values;
  /// The sequences made so far, by name: their elements in order.
  llvm::StringMap<SmallVector<Value>> sequences;
  llvm::StringMap<int> initializerIndex;
  /// "idx [batch, sequence]" for each input left with dynamic dimensions.
  std::string unboundInputs;
  /// Initializers are materialized at the top of the function, in order.
  Operation *lastInitializer = nullptr;
};

} // namespace wsc::onnx_import

#endif // WSC_LIB_TARGET_ONNXIMPORTER_H
