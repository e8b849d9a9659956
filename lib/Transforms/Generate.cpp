//===- Generate.cpp - a graph that picks its next tokens ------------------===//
//
// Greedy decoding as part of the graph: argmax of the logits becomes a
// second result, next_token, which the lowering feeds back to the
// embedding (docs/generation.md).
//
//===----------------------------------------------------------------------===//
#include "wsc/Transforms/Passes.h"

#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace wsc {
#define GEN_PASS_DEF_WSGRAPHGENERATE
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
namespace wg = wsc::wsgraph;

namespace {

/// The function's token ids: its first [B, T] integer input.
BlockArgument tokenInput(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType());
        t && t.getRank() == 2 && isa<IntegerType>(t.getElementType()))
      return arg;
  return {};
}

StringRef nameOf(func::FuncOp func, unsigned arg) {
  auto name = func.getArgAttrOfType<StringAttr>(arg, "wsgraph.name");
  return name ? name.getValue() : StringRef();
}

struct WsgraphGeneratePass : wsc::impl::WsgraphGenerateBase<WsgraphGeneratePass> {
  using WsgraphGenerateBase::WsgraphGenerateBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(generate(func)))
        return signalPassFailure();
  }

  LogicalResult generate(func::FuncOp func) {
    BlockArgument ids = tokenInput(func);
    if (!ids)
      return func.emitError("a generating program needs token ids, a [batch, tokens] integer "
                            "input");
    auto idsType = cast<RankedTensorType>(ids.getType());
    int64_t batch = idsType.getDimSize(0), tokens = idsType.getDimSize(1);
    if (!idsType.hasStaticShape())
      return func.emitError("token input '")
             << nameOf(func, ids.getArgNumber())
             << "' has no static shape; bind it with --input-shape NAME=BxT (T the context)";
    int64_t context = maxContext;
    if (context > 0 && context != tokens)
      return func.emitError("max-context ")
             << context << " is not the token input's " << tokens
             << " positions; bind it with --input-shape NAME=" << batch << "x" << context;
    if (failed(dropPast(func)))
      return failure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    Value logits;
    for (Value v : ret.getOperands())
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          t && t.getRank() == 3 && t.getDimSize(0) == batch && t.getDimSize(1) == tokens &&
          isa<FloatType>(t.getElementType()))
        logits = logits ? Value() : v;
    if (!logits)
      return func.emitError("a generating program needs one [")
             << batch << ", " << tokens << ", vocab] float result, the logits";
    OpBuilder b(ret);
    maskAsOnes(func, ids, b);
    auto nextType = RankedTensorType::get({batch, tokens}, b.getI64Type());
    Value next;
    if (topK && !sampling)
      return func.emitError("top-k needs sampling");
    if (sampling) {
      if (!cast<RankedTensorType>(logits.getType()).getElementType().isF32())
        return func.emitError("sampling needs f32 logits, not ") << logits.getType();
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (nameOf(func, i) == "sampling")
          return func.emitError("input 'sampling' would take the sampling parameters' name");
      unsigned at = func.getNumArguments();
      if (failed(func.insertArgument(
              at, RankedTensorType::get({topK ? 3 : 2}, b.getF32Type()),
              b.getDictionaryAttr(b.getNamedAttr("wsgraph.name", b.getStringAttr("sampling"))),
              func.getLoc())))
        return failure();
      next = wg::SampleOp::create(b, ret.getLoc(), nextType, logits, func.getArgument(at));
    } else {
      next = wg::ArgMaxOp::create(b, ret.getLoc(), nextType, logits, b.getI64IntegerAttr(-1),
                                  b.getBoolAttr(false), b.getBoolAttr(false));
    }
    ret->insertOperands(ret.getNumOperands(), ValueRange{next});
    SmallVector<Type> results(func.getResultTypes());
    results.push_back(next.getType());
    func.setType(b.getFunctionType(func.getArgumentTypes(), results));
    func.setResultAttr(results.size() - 1, "wsgraph.name", b.getStringAttr("next_token"));
    func->setAttr("wsgraph.generate", b.getUnitAttr());
    return success();
  }

  /// A decoder-with-past export's past keys and values (inputs past*) are
  /// the resident cache: empty here (the import binds them so), they become
  /// empty constants; its present keys and values (results present*) are
  /// the cache after the step, which stays on the wafer, not a result.
  LogicalResult dropPast(func::FuncOp func) {
    for (BlockArgument arg : llvm::to_vector(func.getArguments())) {
      StringRef name = nameOf(func, arg.getArgNumber());
      if (!wg::isPastName(name))
        continue;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() || type.getNumElements() != 0)
        return func.emitError("input '")
               << name << "' holds past keys or values, which a generating program keeps on "
               << "the wafer: it must be empty (a past length of 0), not " << arg.getType();
      OpBuilder b(func.getBody());
      Value empty = wg::ConstantOp::create(b, func.getLoc(),
                                           DenseElementsAttr::get(type, ArrayRef<Attribute>{}));
      arg.replaceAllUsesWith(empty);
      (void)func.eraseArgument(arg.getArgNumber());
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    llvm::BitVector present(ret.getNumOperands());
    for (unsigned i = 0; i < ret.getNumOperands(); ++i)
      if (auto name = func.getResultAttrOfType<StringAttr>(i, "wsgraph.name"))
        present[i] = name.getValue().starts_with("present");
    if (present.none())
      return success();
    ret->eraseOperands(present);
    return func.eraseResults(present);
  }

  /// An `attention_mask` input like the token ids becomes a constant of ones.
  void maskAsOnes(func::FuncOp func, BlockArgument ids, OpBuilder &b) {
    for (BlockArgument arg : llvm::to_vector(func.getArguments())) {
      if (arg == ids || nameOf(func, arg.getArgNumber()) != "attention_mask" ||
          arg.getType() != ids.getType())
        continue;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&func.getBody().front());
      auto type = cast<RankedTensorType>(arg.getType());
      Value ones = wg::ConstantOp::create(b, func.getLoc(),
                                          DenseElementsAttr::get(type, b.getIntegerAttr(type.getElementType(), 1)));
      arg.replaceAllUsesWith(ones);
      (void)func.eraseArgument(arg.getArgNumber());
    }
  }
};

} // namespace
