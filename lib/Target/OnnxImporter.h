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

#include <optional>
#include <string>

namespace wsc::onnx_import {

using namespace mlir;
namespace wg = wsc::wsgraph;

/// Whether ONNX op `op` imports as other wsgraph ops (OnnxComposite.cpp).
bool isCompositeOp(StringRef op);

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
  LogicalResult convertClip(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertFlatten(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertIf(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  /// Einsum as transposes, diagonals, products (matmul or broadcast mul) and
  /// sums.
  LogicalResult convertEinsum(const onnx::NodeProto &, ArrayRef<Value>,
                              SmallVectorImpl<Value> &);
  /// Ops built from other wsgraph ops (OnnxComposite.cpp; isCompositeOp).
  LogicalResult convertComposite(const onnx::NodeProto &, ArrayRef<Value>,
                                 SmallVectorImpl<Value> &);
  LogicalResult convertDropout(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertArgExtreme(const onnx::NodeProto &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &);
  LogicalResult convertLoss(const onnx::NodeProto &, ArrayRef<Value>, SmallVectorImpl<Value> &);
  LogicalResult convertCompositeReduce(const onnx::NodeProto &, ArrayRef<Value>,
                                       SmallVectorImpl<Value> &);
  /// Max, Min, Sum and Mean: a left-to-right chain of binary ops.
  FailureOr<Value> buildChain(ArrayRef<Value> in, StringRef binaryOp);
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
  llvm::StringMap<int> initializerIndex;
  /// "idx [batch, sequence]" for each input left with dynamic dimensions.
  std::string unboundInputs;
  /// Initializers are materialized at the top of the function, in order.
  Operation *lastInitializer = nullptr;
};

} // namespace wsc::onnx_import

#endif // WSC_LIB_TARGET_ONNXIMPORTER_H
