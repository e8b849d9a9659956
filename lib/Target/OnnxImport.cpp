//===- OnnxImport.cpp - ONNX model to wsgraph -----------------------------===//
//
// Builds one func.func of wsgraph ops from an ONNX graph. Every op is folded
// as it is built, so once the dynamic input dimensions are bound the shape
// subgraphs of dynamic-axes exports disappear during import. Shape parameters
// (reshape targets, slice bounds, axes) must fold to constants.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/OnnxImport.h"

#include "OnnxModelFile.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <functional>

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

namespace {

constexpr int64_t kMinOpset = 13, kMaxOpset = 17;
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

/// The ONNX operators wsc imports.
const llvm::StringSet<> &supportedOps() {
  static const llvm::StringSet<> ops = {
      "Add",        "Sub",       "Mul",       "Div",        "Pow",       "Sqrt",
      "Erf",        "Tanh",      "Exp",       "Neg",        "MatMul",    "Gemm",
      "Softmax",    "LayerNormalization",     "ReduceMean", "ReduceSum", "ReduceMax",
      "Transpose",  "Reshape",   "Gather",    "Concat",     "Slice",     "Split",
      "Where",      "Equal",     "Cast",      "Unsqueeze",  "Squeeze",   "Expand",
      "Trilu",      "Range",     "Constant",  "ConstantOfShape",         "Shape",
      "Identity"};
  return ops;
}

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

  // Graph structure.
  bool checkOpsetAndOps();
  bool addInputs(func::FuncOp func);
  bool sortNodes(std::vector<int> &order);
  LogicalResult convert(const onnx::NodeProto &node, SmallVectorImpl<Value> &inputs,
                        SmallVectorImpl<Value> &results);

  // Building.
  FailureOr<Value> build(StringRef name, ValueRange operands, ArrayRef<NamedAttribute> attrs,
                         Type resultType = {});
  FailureOr<SmallVector<Value>> buildMulti(StringRef name, ValueRange operands,
                                           ArrayRef<NamedAttribute> attrs, unsigned numResults);
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
  std::optional<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &node, StringRef name);

  // Node converters.
  LogicalResult convertReshape(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertSlice(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertSplit(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertConstant(const onnx::NodeProto &, SmallVectorImpl<Value> &);
  LogicalResult convertReduce(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &,
                              StringRef opName);

  OnnxModelFile &file;
  MLIRContext *ctx;
  const OnnxImportOptions &options;
  OpBuilder builder;
  Location loc;
  std::string currentNode;
  int64_t opset = 0;
  bool failed = false;
  llvm::StringMap<Value> values;
  llvm::StringMap<int> initializerIndex;
  /// "idx [batch, sequence]" for each input left with dynamic dimensions.
  std::string unboundInputs;
  /// Initializers are materialized at the top of the function, in order.
  Operation *lastInitializer = nullptr;
};

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
  case onnx::TensorProto::BOOL: return builder.getIntegerType(1);
  default:
    error(what + ": unsupported element type " + std::to_string(onnxType));
    return failure();
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
  auto done = [&](Value v) {
    lastInitializer = v.getDefiningOp();
    return v;
  };
  const TensorBytes &bytes = file.initializerBytes[index];
  bool isFloat = isa<FloatType>(type->getElementType());
  int64_t n = type->getNumElements();
  bool inline_ = isFloat ? n <= kInlineFloatElements : n <= kInlineIntElements;
  Location wloc = NameLoc::get(builder.getStringAttr(tensor.name()));
  if (!inline_) {
    auto weight = wg::WeightOp::create(builder, wloc, *type, builder.getStringAttr(tensor.name()),
                                               StringAttr(), builder.getI64IntegerAttr(0));
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
  for (const auto &imp : file.model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      opset = imp.version();
  if (opset == 0) {
    error("the model imports no version of the default ONNX opset");
    return false;
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    error("opset " + std::to_string(opset) + " is not supported; wsc imports opsets " +
          std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
          " (re-export with torch.onnx.export(..., opset_version=17))");
    return false;
  }
  std::vector<std::string> unsupported;
  const auto &graph = file.model.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    bool known = (node.domain().empty() || node.domain() == "ai.onnx") &&
                 supportedOps().contains(node.op_type());
    if (!known)
      unsupported.push_back(nodeLabel(node, i) +
                            (node.domain().empty() ? "" : " in domain '" + node.domain() + "'"));
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
  return true;
}

/// Orders nodes so that producers come first, reporting missing inputs and cycles.
bool Importer::sortNodes(std::vector<int> &order) {
  const auto &graph = file.model.graph();
  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      if (!out.empty()) {
        if (producer.count(out) || values.count(out) || initializerIndex.count(out)) {
          error(nodeLabel(graph.node(i), i) + ": output '" + out + "' is defined twice");
          return false;
        }
        producer[out] = i;
      }
  std::vector<int> pending(graph.node_size(), 0);
  std::vector<std::vector<int>> users(graph.node_size());
  bool ok = true;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &in : graph.node(i).input()) {
      if (in.empty() || values.count(in) || initializerIndex.count(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        error(nodeLabel(graph.node(i), i) + ": input '" + in +
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
      cycle += "\n  " + nodeLabel(graph.node(i), i);
      ++shown;
    }
  error("the graph has a cycle; these nodes are on it or wait for it:" + cycle);
  return false;
}

OwningOpRef<ModuleOp> Importer::run() {
  const auto &graph = file.model.graph();
  if (!checkOpsetAndOps())
    return nullptr;
  for (int i = 0; i < graph.initializer_size(); ++i)
    initializerIndex[graph.initializer(i).name()] = i;

  OwningOpRef<ModuleOp> module = ModuleOp::create(FileLineColLoc::get(ctx, file.path, 0, 0));
  (*module)->setAttr("wsgraph.source", builder.getStringAttr(file.path));
  (*module)->setAttr("wsgraph.opset", builder.getI64IntegerAttr(opset));
  builder.setInsertionPointToEnd(module->getBody());
  std::string funcName = "main";
  auto func = func::FuncOp::create(builder, module->getLoc(), funcName,
                                           builder.getFunctionType({}, {}));
  if (!addInputs(func))
    return nullptr;
  std::vector<int> order;
  if (!sortNodes(order))
    return nullptr;

  // Turn MLIR diagnostics (from type inference and verifiers) into our format.
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      nodeError(diag.str());
    return success();
  });

  for (int index : order) {
    const auto &node = graph.node(index);
    currentNode = nodeLabel(node, index);
    loc = NameLoc::get(builder.getStringAttr(node.name().empty() ? node.op_type() + "_" +
                                                                       std::to_string(index)
                                                                 : node.name()));
    SmallVector<Value> inputs;
    for (const auto &in : node.input()) {
      if (in.empty()) {
        inputs.push_back(Value());
        continue;
      }
      auto it = values.find(in);
      if (it == values.end()) {
        auto init = initializer(initializerIndex.lookup(in));
        if (::failed(init))
          return nullptr;
        it = values.insert({in, *init}).first;
      }
      inputs.push_back(it->second);
    }
    SmallVector<Value> results;
    if (::failed(convert(node, inputs, results))) {
      if (!failed)
        nodeError("cannot be imported");
      return nullptr;
    }
    for (auto [i, out] : llvm::enumerate(node.output())) {
      if (out.empty())
        continue;
      if (i >= results.size() || !results[i]) {
        nodeError("output " + std::to_string(i) + " ('" + out + "') is not supported");
        return nullptr;
      }
      values[out] = results[i];
    }
  }

  SmallVector<Value> outs;
  SmallVector<Type> outTypes;
  for (const auto &output : graph.output()) {
    auto it = values.find(output.name());
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
  currentNode = "after import";
  if (::failed(verify(*module)) || failed)
    return nullptr;
  return module;
}

//===----------------------------------------------------------------------===//
// Building helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Value>> Importer::buildMulti(StringRef name, ValueRange operands,
                                                   ArrayRef<NamedAttribute> attrs,
                                                   unsigned numResults) {
  for (Value v : operands)
    if (!v) {
      nodeError("a required input is missing");
      return failure();
    }
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  // Result types come from the op's own inference; the placeholder never escapes.
  state.addTypes(SmallVector<Type>(numResults, builder.getNoneType()));
  Operation *op = builder.create(state);
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
  if (::failed(verify(op))) {
    op->erase();
    return failure();
  }
  SmallVector<Value> results;
  if (::succeeded(builder.tryFold(op, results)) && !results.empty()) {
    op->erase();
    return results;
  }
  return SmallVector<Value>(op->getResults());
}

FailureOr<Value> Importer::build(StringRef name, ValueRange operands,
                                 ArrayRef<NamedAttribute> attrs, Type resultType) {
  if (!resultType) {
    auto results = buildMulti(name, operands, attrs, 1);
    if (::failed(results))
      return failure();
    return results->front();
  }
  for (Value v : operands)
    if (!v) {
      nodeError("a required input is missing");
      return failure();
    }
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(resultType);
  Operation *op = builder.create(state);
  if (::failed(verify(op))) {
    op->erase();
    return failure();
  }
  SmallVector<Value> results;
  if (::succeeded(builder.tryFold(op, results)) && !results.empty()) {
    op->erase();
    return results.front();
  }
  return op->getResult(0);
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
std::optional<SmallVector<int64_t>> Importer::intsAttr(const onnx::NodeProto &node,
                                                       StringRef name) {
  auto *a = findAttr(node, name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

//===----------------------------------------------------------------------===//
// Node converters
//===----------------------------------------------------------------------===//

static RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

LogicalResult Importer::convertConstant(const onnx::NodeProto &node,
                                        SmallVectorImpl<Value> &results) {
  if (auto *a = findAttr(node, "value")) {
    auto type = tensorType(a->t(), currentNode);
    if (::failed(type))
      return failure();
    auto value = tensorValue(a->t(), *type, nullptr, currentNode);
    if (::failed(value))
      return failure();
    results.push_back(constant(*value));
    return success();
  }
  if (auto *a = findAttr(node, "value_float")) {
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getF32Type()), a->f())));
    return success();
  }
  if (auto *a = findAttr(node, "value_int")) {
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getIntegerType(64)), int64_t(a->i()))));
    return success();
  }
  if (auto *a = findAttr(node, "value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, builder.getIntegerType(64)),
        ArrayRef<int64_t>(v))));
    return success();
  }
  if (auto *a = findAttr(node, "value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    results.push_back(constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, builder.getF32Type()), ArrayRef<float>(v))));
    return success();
  }
  nodeError("has no value attribute that wsc supports (value, value_float, value_int, "
            "value_ints, value_floats)");
  return failure();
}

LogicalResult Importer::convertReshape(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  auto shape = constInts(in.size() > 1 ? in[1] : Value(), "shape");
  if (::failed(shape))
    return failure();
  auto type = typeOf(in[0]);
  bool allowZero = intAttr(node, "allowzero", 0) != 0;
  SmallVector<int64_t> dims(*shape);
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowZero) {
      if (i >= static_cast<size_t>(type.getRank())) {
        nodeError("shape copies dimension " + std::to_string(i) + " that the input lacks");
        return failure();
      }
      dims[i] = type.getDimSize(i);
    }
    if (dims[i] == -1) {
      if (inferAt >= 0) {
        nodeError("shape has more than one -1");
        return failure();
      }
      inferAt = i;
      continue;
    }
    if (ShapedType::isDynamic(dims[i]) || dims[i] < 0) {
      if (dims[i] < 0) {
        nodeError("shape has invalid dimension " + std::to_string(dims[i]));
        return failure();
      }
      known = -1;
    } else if (known >= 0) {
      known *= dims[i];
    }
  }
  if (inferAt >= 0) {
    if (!type.hasStaticShape() || known <= 0) {
      dims[inferAt] = ShapedType::kDynamic;
    } else if (type.getNumElements() % known != 0) {
      nodeError("cannot reshape " + std::to_string(type.getNumElements()) +
                " elements into a shape with " + std::to_string(known) + " elements per -1");
      return failure();
    } else {
      dims[inferAt] = type.getNumElements() / known;
    }
  }
  auto v = build(wg::ReshapeOp::getOperationName(), {in[0]}, {},
                 RankedTensorType::get(dims, type.getElementType()));
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

LogicalResult Importer::convertSlice(const onnx::NodeProto &, ArrayRef<Value> in,
                                     SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  auto starts = constInts(in.size() > 1 ? in[1] : Value(), "starts");
  auto ends = constInts(in.size() > 2 ? in[2] : Value(), "ends");
  if (::failed(starts) || ::failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (in.size() > 3 && in[3]) {
    auto a = constInts(in[3], "axes");
    if (::failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (in.size() > 4 && in[4]) {
    auto s = constInts(in[4], "steps");
    if (::failed(s))
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size()) {
    nodeError("starts, ends, axes and steps differ in length");
    return failure();
  }
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()), strides(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = wg::normalizeAxis(axes[i], rank);
    if (::failed(axis)) {
      nodeError("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                std::to_string(rank));
      return failure();
    }
    int64_t dim = type.getDimSize(*axis), step = steps[i];
    if (ShapedType::isDynamic(dim)) {
      nodeError("slices dimension " + std::to_string(*axis) +
                ", which is dynamic; bind it with --input-shape");
      return failure();
    }
    if (step == 0) {
      nodeError("step is zero");
      return failure();
    }
    // ONNX clamping rules: indices count from the end when negative.
    auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v = v < -dim ? -1 : v + dim; // keep "before the start" distinct
      return std::clamp(v, lo, hi);
    };
    int64_t start, end;
    if (step > 0) {
      start = clampIndex((*starts)[i], 0, dim);
      end = clampIndex((*ends)[i], 0, dim);
    } else {
      start = clampIndex((*starts)[i], -1, dim - 1);
      end = clampIndex((*ends)[i], -1, dim - 1);
    }
    int64_t size = step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                            : std::max<int64_t>(0, (start - end + (-step) - 1) / (-step));
    offsets[*axis] = size == 0 ? 0 : start;
    sizes[*axis] = size;
    strides[*axis] = step;
  }
  auto v = build(wg::SliceOp::getOperationName(), {in[0]},
                 {attr("offsets", builder.getDenseI64ArrayAttr(offsets)),
                  attr("sizes", builder.getDenseI64ArrayAttr(sizes)),
                  attr("strides", builder.getDenseI64ArrayAttr(strides))});
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

LogicalResult Importer::convertSplit(const onnx::NodeProto &node, ArrayRef<Value> in,
                                     SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  int64_t axisAttr = intAttr(node, "axis", 0);
  auto axis = wg::normalizeAxis(axisAttr, type.getRank());
  if (::failed(axis)) {
    nodeError("axis " + std::to_string(axisAttr) + " is out of range");
    return failure();
  }
  SmallVector<int64_t> sizes;
  auto given = intsFromInputOrAttr(node, in, 1, "split");
  if (::failed(given))
    return failure();
  if (*given) {
    sizes = **given;
  } else {
    int64_t n = node.output_size(), dim = type.getDimSize(*axis);
    if (ShapedType::isDynamic(dim) || n == 0) {
      nodeError("cannot split a dynamic dimension evenly; bind it with --input-shape");
      return failure();
    }
    int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int>(sizes.size()) != node.output_size()) {
    nodeError("has " + std::to_string(node.output_size()) + " outputs but " +
              std::to_string(sizes.size()) + " split sizes");
    return failure();
  }
  auto vs = buildMulti(wg::SplitOp::getOperationName(), {in[0]},
                       {attr("axis", builder.getI64IntegerAttr(*axis)),
                        attr("sizes", builder.getDenseI64ArrayAttr(sizes))},
                       sizes.size());
  if (::failed(vs))
    return failure();
  results.append(vs->begin(), vs->end());
  return success();
}

LogicalResult Importer::convertReduce(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results, StringRef opName) {
  bool fromInput = node.op_type() == "ReduceSum"; // axes became an input at opset 13
  auto given = intsFromInputOrAttr(node, fromInput ? in : ArrayRef<Value>(), 1, "axes");
  if (::failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  if (axes.empty() && fromInput && intAttr(node, "noop_with_empty_axes", 0)) {
    results.push_back(in[0]);
    return success();
  }
  auto v = build(opName, {in[0]},
                 {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                  attr("keepdims", builder.getBoolAttr(intAttr(node, "keepdims", 1) != 0))});
  if (::failed(v))
    return failure();
  results.push_back(*v);
  return success();
}

LogicalResult Importer::convert(const onnx::NodeProto &node, SmallVectorImpl<Value> &in,
                                SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  auto need = [&](size_t n) {
    if (in.size() >= n && llvm::all_of(ArrayRef<Value>(in).take_front(n), [](Value v) { return bool(v); }))
      return true;
    nodeError("expects at least " + std::to_string(n) + " inputs, got " +
              std::to_string(in.size()));
    return false;
  };
  auto push = [&](FailureOr<Value> v) -> LogicalResult {
    if (::failed(v))
      return failure();
    results.push_back(*v);
    return success();
  };

  static const llvm::StringMap<StringRef> binary = {
      {"Add", wg::AddOp::getOperationName()}, {"Sub", wg::SubOp::getOperationName()},
      {"Mul", wg::MulOp::getOperationName()}, {"Div", wg::DivOp::getOperationName()},
      {"Pow", wg::PowOp::getOperationName()}, {"Equal", wg::EqualOp::getOperationName()},
      {"MatMul", wg::MatmulOp::getOperationName()}};
  static const llvm::StringMap<StringRef> unary = {
      {"Sqrt", wg::SqrtOp::getOperationName()}, {"Erf", wg::ErfOp::getOperationName()},
      {"Tanh", wg::TanhOp::getOperationName()}, {"Exp", wg::ExpOp::getOperationName()},
      {"Neg", wg::NegOp::getOperationName()}};

  if (auto it = binary.find(op); it != binary.end())
    return need(2) ? push(build(it->second, {in[0], in[1]}, {})) : failure();
  if (auto it = unary.find(op); it != unary.end())
    return need(1) ? push(build(it->second, {in[0]}, {}, in[0].getType())) : failure();
  if (op == "Identity")
    return need(1) ? push(in[0]) : failure();
  if (op == "Constant")
    return convertConstant(node, results);
  if (op == "ConstantOfShape") {
    if (!need(1))
      return failure();
    auto shape = constInts(in[0], "shape");
    if (::failed(shape))
      return failure();
    DenseElementsAttr fill = DenseElementsAttr::get(
        RankedTensorType::get({1}, builder.getF32Type()), 0.0f);
    if (auto *a = findAttr(node, "value")) {
      auto type = tensorType(a->t(), currentNode);
      if (::failed(type))
        return failure();
      auto value = tensorValue(a->t(), *type, nullptr, currentNode);
      if (::failed(value) || value->getNumElements() != 1)
        return failure();
      fill = *value;
    }
    auto type = RankedTensorType::get(*shape, fill.getElementType());
    return push(constant(DenseElementsAttr::get(type, fill.getValues<Attribute>()[0])));
  }
  if (op == "Softmax") {
    if (!need(1))
      return failure();
    return push(build(wg::SoftmaxOp::getOperationName(), {in[0]},
                      {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", -1)))},
                      in[0].getType()));
  }
  if (op == "LayerNormalization") {
    if (!need(2))
      return failure();
    if (node.output_size() > 1 && llvm::any_of(llvm::drop_begin(node.output()),
                                               [](const std::string &o) { return !o.empty(); })) {
      nodeError("the Mean and InvStdDev outputs are not supported");
      return failure();
    }
    SmallVector<Value> operands = {in[0], in[1]};
    if (in.size() > 2 && in[2])
      operands.push_back(in[2]);
    return push(build(wg::LayerNormOp::getOperationName(), operands,
                      {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", -1))),
                       attr("epsilon", builder.getF32FloatAttr(floatAttr(node, "epsilon", 1e-5f)))},
                      in[0].getType()));
  }
  if (op == "ReduceMean")
    return need(1) ? convertReduce(node, in, results, wg::ReduceMeanOp::getOperationName())
                   : failure();
  if (op == "ReduceSum")
    return need(1) ? convertReduce(node, in, results, wg::ReduceSumOp::getOperationName())
                   : failure();
  if (op == "ReduceMax")
    return need(1) ? convertReduce(node, in, results, wg::ReduceMaxOp::getOperationName())
                   : failure();
  if (op == "Gemm") {
    if (!need(2))
      return failure();
    SmallVector<Value> operands = {in[0], in[1]};
    if (in.size() > 2 && in[2])
      operands.push_back(in[2]);
    return push(build(wg::GemmOp::getOperationName(), operands,
                      {attr("alpha", builder.getF32FloatAttr(floatAttr(node, "alpha", 1.0f))),
                       attr("beta", builder.getF32FloatAttr(floatAttr(node, "beta", 1.0f))),
                       attr("trans_a", builder.getBoolAttr(intAttr(node, "transA", 0))),
                       attr("trans_b", builder.getBoolAttr(intAttr(node, "transB", 0)))}));
  }
  if (op == "Transpose") {
    if (!need(1))
      return failure();
    SmallVector<int64_t> perm;
    if (auto p = intsAttr(node, "perm"))
      perm = *p;
    else
      for (int64_t i = typeOf(in[0]).getRank() - 1; i >= 0; --i)
        perm.push_back(i);
    return push(build(wg::TransposeOp::getOperationName(), {in[0]},
                      {attr("perm", builder.getDenseI64ArrayAttr(perm))}));
  }
  if (op == "Reshape")
    return need(2) ? convertReshape(node, in, results) : failure();
  if (op == "Gather")
    return need(2) ? push(build(wg::GatherOp::getOperationName(), {in[0], in[1]},
                                {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", 0)))}))
                   : failure();
  if (op == "Concat") {
    if (in.empty() || llvm::any_of(in, [](Value v) { return !v; }))
      return need(in.size() + 1), failure();
    return push(build(wg::ConcatOp::getOperationName(), in,
                      {attr("axis", builder.getI64IntegerAttr(intAttr(node, "axis", 0)))}));
  }
  if (op == "Slice")
    return need(3) ? convertSlice(node, in, results) : failure();
  if (op == "Split")
    return need(1) ? convertSplit(node, in, results) : failure();
  if (op == "Where")
    return need(3) ? push(build(wg::WhereOp::getOperationName(), {in[0], in[1], in[2]}, {}))
                   : failure();
  if (op == "Cast") {
    if (!need(1))
      return failure();
    auto element = elementType(intAttr(node, "to", 0), currentNode + ": Cast target");
    if (::failed(element))
      return failure();
    return push(build(wg::CastOp::getOperationName(), {in[0]}, {},
                      RankedTensorType::get(typeOf(in[0]).getShape(), *element)));
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    if (!need(1))
      return failure();
    SmallVector<int64_t> axes;
    auto given = intsFromInputOrAttr(node, in, 1, "axes");
    if (::failed(given))
      return failure();
    if (*given) {
      axes = **given;
    } else if (op == "Squeeze") {
      for (int64_t i = 0; i < typeOf(in[0]).getRank(); ++i)
        if (typeOf(in[0]).getDimSize(i) == 1)
          axes.push_back(i);
    } else {
      nodeError("has no axes");
      return failure();
    }
    StringRef name = op == "Unsqueeze" ? wg::UnsqueezeOp::getOperationName()
                                       : wg::SqueezeOp::getOperationName();
    return push(build(name, {in[0]}, {attr("axes", builder.getDenseI64ArrayAttr(axes))}));
  }
  if (op == "Expand") {
    if (!need(2))
      return failure();
    auto shape = constInts(in[1], "shape");
    if (::failed(shape))
      return failure();
    auto type = typeOf(in[0]);
    auto dims = wg::broadcastShapes(type.getShape(), *shape);
    if (::failed(dims)) {
      nodeError("cannot broadcast the input to the requested shape");
      return failure();
    }
    return push(build(wg::ExpandOp::getOperationName(), {in[0]}, {},
                      RankedTensorType::get(*dims, type.getElementType())));
  }
  if (op == "Trilu") {
    if (!need(1))
      return failure();
    int64_t k = 0;
    if (in.size() > 1 && in[1]) {
      auto kv = constInts(in[1], "k");
      if (::failed(kv) || kv->size() != 1)
        return failure();
      k = kv->front();
    }
    return push(build(wg::TriluOp::getOperationName(), {in[0]},
                      {attr("upper", builder.getBoolAttr(intAttr(node, "upper", 1) != 0)),
                       attr("k", builder.getI64IntegerAttr(k))},
                      in[0].getType()));
  }
  if (op == "Range") {
    if (!need(3))
      return failure();
    // The length is static only when the bounds are constants.
    int64_t n = ShapedType::kDynamic;
    auto s = wg::getConstantElements(in[0]), l = wg::getConstantElements(in[1]),
         d = wg::getConstantElements(in[2]);
    auto scalar = [](DenseElementsAttr a) {
      return isa<FloatType>(a.getElementType())
                 ? (*a.getValues<APFloat>().begin()).convertToDouble()
                 : double((*a.getValues<APInt>().begin()).getSExtValue());
    };
    if (s && l && d && s.getNumElements() == 1 && l.getNumElements() == 1 &&
        d.getNumElements() == 1 && scalar(d) != 0)
      n = std::max<int64_t>(0, int64_t(std::ceil((scalar(l) - scalar(s)) / scalar(d))));
    return push(build(wg::RangeOp::getOperationName(), {in[0], in[1], in[2]}, {},
                      RankedTensorType::get({n}, typeOf(in[0]).getElementType())));
  }
  if (op == "Shape") {
    if (!need(1))
      return failure();
    int64_t rank = typeOf(in[0]).getRank();
    int64_t start = intAttr(node, "start", 0);
    std::optional<int64_t> end;
    if (findAttr(node, "end"))
      end = intAttr(node, "end", rank);
    int64_t s = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    int64_t e = end ? std::clamp<int64_t>(*end < 0 ? *end + rank : *end, 0, rank) : rank;
    SmallVector<NamedAttribute> attrs = {attr("start", builder.getI64IntegerAttr(start))};
    if (end)
      attrs.push_back(attr("end", builder.getI64IntegerAttr(*end)));
    return push(build(wg::ShapeOp::getOperationName(), {in[0]}, attrs,
                      RankedTensorType::get({std::max<int64_t>(0, e - s)},
                                            builder.getIntegerType(64))));
  }
  nodeError("is not supported");
  return failure();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> wsc::importOnnx(StringRef path, MLIRContext *context,
                                      const OnnxImportOptions &options) {
  context->loadDialect<func::FuncDialect, wg::WsgraphDialect>();
  OnnxModelFile file;
  std::string err;
  if (!loadOnnxModelFile(path.str(), file, err)) {
    llvm::errs() << "error: " << path << ": " << err << "\n";
    return nullptr;
  }
  return Importer(file, context, options).run();
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
