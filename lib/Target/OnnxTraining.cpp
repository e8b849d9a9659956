//===- OnnxTraining.cpp - the optimizers of ai.onnx.preview.training -------===//
//
// Adagrad, Momentum and Adam update each tensor elementwise from its
// gradient and accumulators, with a learning rate R and a step count T that
// are data: the steps that depend on T (its first step, the bias
// corrections) are selected elementwise.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

using namespace wsc::onnx_import;

bool wsc::onnx_import::isTrainingOp(StringRef op) {
  return llvm::is_contained({"Adagrad", "Momentum", "Adam"}, op);
}

LogicalResult Importer::convertTrainingOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  Composer c = composer();
  // R, T, then each of X, G and the accumulators (V, H) for every tensor.
  int64_t perTensor = op == "Adam" ? 4 : 3;
  int64_t tensors = (int64_t(in.size()) - 2) / perTensor;
  if (tensors < 1 || int64_t(in.size()) != 2 + perTensor * tensors ||
      node.output_size() != (perTensor - 1) * tensors ||
      llvm::any_of(in, [](Value v) { return !v; }))
    return nodeError("expects R, T and, for each tensor, X, G and " +
                     std::string(op == "Adam" ? "V, H" : "its accumulator") +
                     "; and their updates as outputs"),
           failure();
  Type f32 = builder.getF32Type();
  if (llvm::any_of(in.drop_front(2), [&](Value v) { return typeOf(v).getElementType() != f32; }) ||
      typeOf(in[0]).getElementType() != f32)
    return nodeError("updates f32 tensors only"), failure();
  auto k = [&](double v) { return scalarConstant(f32, v); };
  auto f = [&](StringRef name, float dflt) { return double(floatAttr(node, name, dflt)); };
  Value r = c.reshape(in[0], ArrayRef<int64_t>{});
  Value t = c.op(wg::CastOp::getOperationName(), {c.reshape(in[1], ArrayRef<int64_t>{})}, {},
                 RankedTensorType::get({}, f32));
  Value later = c.greater(t, k(0)); // past the first step
  SmallVector<Value> updated(node.output_size());
  for (int64_t i = 0; i < tensors; ++i) {
    Value x = in[2 + i], g = in[2 + tensors + i], v = in[2 + 2 * tensors + i];
    Value grad = c.add(c.mul(k(f("norm_coefficient", 0)), x), g);
    if (op == "Adagrad") {
      Value rate = c.div(r, c.add(k(1), c.mul(t, k(f("decay_factor", 0)))));
      Value h = c.add(v, c.mul(grad, grad));
      Value step = c.div(c.mul(rate, grad), c.add(c.sqrt(h), k(f("epsilon", 1e-6f))));
      updated[i] = c.sub(x, step), updated[tensors + i] = h;
    } else if (op == "Momentum") {
      const onnx::AttributeProto *mode = findAttr(node, "mode");
      bool nesterov = mode && mode->s() == "nesterov";
      if (!mode || (!nesterov && mode->s() != "standard"))
        return nodeError("mode must be standard or nesterov"), failure();
      if (!findAttr(node, "alpha") || !findAttr(node, "beta") ||
          !findAttr(node, "norm_coefficient"))
        return nodeError("needs alpha, beta and norm_coefficient"), failure();
      double alpha = f("alpha", 0);
      Value beta = c.where(later, k(f("beta", 0)), k(1));
      Value vNew = c.add(c.mul(k(alpha), v), c.mul(beta, grad));
      Value step = nesterov ? c.add(grad, c.mul(k(alpha), vNew)) : vNew;
      updated[i] = c.sub(x, c.mul(r, step)), updated[tensors + i] = vNew;
    } else {
      Value h = in[2 + 3 * tensors + i];
      double alpha = f("alpha", 0.9f), beta = f("beta", 0.999f);
      Value vNew = c.add(c.mul(k(alpha), v), c.mul(k(1 - alpha), grad));
      Value hNew = c.add(c.mul(k(beta), h), c.mul(k(1 - beta), c.mul(grad, grad)));
      auto power = [&](double base) { return c.op(wg::PowOp::getOperationName(), {k(base), t}); };
      // Bias-corrected from the second step on (1 - alpha^0 is 0).
      Value corrected =
          c.div(c.mul(r, c.sqrt(c.sub(k(1), power(beta)))), c.sub(k(1), power(alpha)));
      Value rate = c.where(later, corrected, r);
      Value xNew = c.sub(x, c.mul(rate, c.div(vNew, c.add(c.sqrt(hNew), k(f("epsilon", 1e-6f))))));
      updated[i] = c.mul(k(1 - f("norm_coefficient_post", 0)), xNew);
      updated[tensors + i] = vNew, updated[2 * tensors + i] = hNew;
    }
  }
  return c.finish(results, updated);
}
