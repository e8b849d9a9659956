//===- OnnxRecurrent.cpp - RNN, GRU and LSTM from wsgraph ops -------------===//
//
// The recurrent ops unrolled over their sequence, which is static: each step
// is a matmul of the step's input [batch, input] with the input weights
// (transposed once, before the loop) and one of the hidden state with the
// recurrent weights, then the gates' slices, their activations and the cell
// update, all elementwise on [batch, hidden]. sequence_lens must be a
// compile-time constant: a batch entry past its length keeps its state and
// outputs 0, and in reverse it starts at its own last valid step.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isRecurrentOp(StringRef op) {
  return llvm::is_contained({"RNN", "GRU", "LSTM"}, op);
}

namespace wsc::onnx_import {
/// An activation of a recurrent op, with the alpha and beta it uses.
struct RecurrentActivation {
  std::string name;
  float alpha = 0, beta = 0;
};

/// One direction's weights, settings and state, all [batch or 1, ...] 2-D.
struct RecurrentDirection {
  StringRef op;
  int64_t hidden = 0;
  Value wT, rT;                         // [input, gates * hidden], [hidden, gates * hidden]
  Value rhT;                            // GRU: the new gate's recurrent weights [hidden, hidden]
  Value wBias, rBias;                   // [1, gates * hidden] (GRU's rBias: z and r only)
  Value rhBias;                         // GRU: the new gate's recurrent bias [1, hidden]
  Value peephole[3];                    // LSTM: i, o, f, each [1, hidden]
  SmallVector<RecurrentActivation> act; // f, g, h
  Value clipLo, clipHi;                 // clip's bounds, or null
  bool linearBeforeReset = false, inputForget = false;
  Value h, c; // the state [batch, hidden]
};
} // namespace wsc::onnx_import

namespace {
/// An activation the spec lists: which of alpha and beta it uses, and their
/// defaults (those of the ONNX operator of that name).
struct ActivationKind {
  const char *name;
  bool alpha, beta;
  float alphaDefault, betaDefault;
};
constexpr ActivationKind kActivations[] = {
    {"Relu", false, false, 0, 0},           {"Tanh", false, false, 0, 0},
    {"Sigmoid", false, false, 0, 0},        {"Affine", true, true, 1.0f, 0.0f},
    {"LeakyRelu", true, false, 0.01f, 0},   {"ThresholdedRelu", true, false, 1.0f, 0},
    {"ScaledTanh", true, true, 1.0f, 1.0f}, {"HardSigmoid", true, true, 0.2f, 0.5f},
    {"Elu", true, false, 1.0f, 0},          {"Softsign", false, false, 0, 0},
    {"Softplus", false, false, 0, 0}};

/// The gates of each op, and its default activations.
int64_t gateCount(StringRef op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
SmallVector<StringRef> defaultActivations(StringRef op) {
  if (op == "RNN")
    return {"Tanh"};
  if (op == "GRU")
    return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}
} // namespace

/// The activations of every direction in turn. alpha and beta are consumed
/// in order, only by the activations that use them (the others' defaults
/// stand when the lists run out). One direction's list serves both.
LogicalResult Importer::recurrentActivations(const onnx::NodeProto &node, int64_t dirs,
                                             SmallVectorImpl<RecurrentActivation> &out) {
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *a = findAttr(node, "activations"))
    names.assign(a->strings().begin(), a->strings().end());
  else
    for (StringRef n : defaultActivations(node.op_type()))
      names.push_back(n.str());
  size_t per = defaultActivations(node.op_type()).size();
  if (names.size() == per && dirs == 2)
    names.append(SmallVector<std::string>(names));
  if (names.size() != per * dirs)
    return nodeError("expects " + std::to_string(per * dirs) + " activations, got " +
                     std::to_string(names.size())),
           failure();
  auto floats = [&](const char *name) {
    const onnx::AttributeProto *a = findAttr(node, name);
    return a ? SmallVector<float>(a->floats().begin(), a->floats().end()) : SmallVector<float>();
  };
  SmallVector<float> alphas = floats("activation_alpha"), betas = floats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names) {
    const ActivationKind *kind = llvm::find_if(kActivations, [&](const ActivationKind &k) {
      return StringRef(name).equals_insensitive(k.name);
    });
    if (kind == std::end(kActivations))
      return nodeError("activation '" + name + "' is not supported"), failure();
    RecurrentActivation a{kind->name, kind->alphaDefault, kind->betaDefault};
    if (kind->alpha && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (kind->beta && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    out.push_back(a);
  }
  return success();
}

/// `a` of x: the wsgraph op of that name, Affine and ScaledTanh directly,
/// the others as their ONNX operators import (OnnxComposite.cpp).
Value Importer::recurrentActivation(Composer &c, const RecurrentActivation &a, Value x) {
  if (!c.ok || !x)
    return c.ok = false, Value();
  auto k = [&](double v) { return scalarConstant(typeOf(x).getElementType(), v); };
  if (a.name == "Sigmoid")
    return c.unary(wg::SigmoidOp::getOperationName(), x);
  if (a.name == "Tanh")
    return c.unary(wg::TanhOp::getOperationName(), x);
  if (a.name == "Relu")
    return c.unary(wg::ReluOp::getOperationName(), x);
  if (a.name == "Affine")
    return c.add(c.mul(k(a.alpha), x), k(a.beta));
  if (a.name == "ScaledTanh")
    return c.mul(k(a.alpha), c.unary(wg::TanhOp::getOperationName(), c.mul(k(a.beta), x)));
  onnx::NodeProto node;
  node.set_op_type(a.name);
  for (auto [name, value] : {std::pair("alpha", a.alpha), std::pair("beta", a.beta)}) {
    onnx::AttributeProto *attribute = node.add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::FLOAT);
    attribute->set_f(value);
  }
  SmallVector<Value> results;
  if (::failed(convertComposite(node, {x}, results)) || results.size() != 1)
    return c.ok = false, Value();
  return results.front();
}

/// One step on x [batch, input] from d.h (and d.c): the new hidden state;
/// `cell` gets LSTM's new cell state.
Value Importer::recurrentStep(Composer &c, const RecurrentDirection &d, Value x, Value &cell) {
  int64_t n = d.hidden;
  auto gate = [&](Value v, int64_t k) { return c.sliceAlong(v, 1, k * n, n); };
  auto clip = [&](Value v) { return d.clipLo ? c.min(c.max(v, d.clipLo), d.clipHi) : v; };
  auto act = [&](int i, Value v) { return recurrentActivation(c, d.act[i], clip(v)); };
  auto matmul = [&](Value a, Value b) { return c.op(wg::MatmulOp::getOperationName(), {a, b}); };
  auto biased = [&](Value v, Value bias) { return bias ? c.add(v, bias) : v; };
  Value xw = biased(matmul(x, d.wT), d.wBias);
  Value hr = biased(matmul(d.h, d.rT), d.rBias);
  if (d.op == "RNN")
    return act(0, c.add(xw, hr));
  if (d.op == "GRU") {
    Value z = act(0, c.add(gate(xw, 0), gate(hr, 0)));
    Value r = act(0, c.add(gate(xw, 1), gate(hr, 1)));
    Value reset = d.linearBeforeReset ? c.mul(r, biased(matmul(d.h, d.rhT), d.rhBias))
                                      : biased(matmul(c.mul(r, d.h), d.rhT), d.rhBias);
    Value candidate = act(1, c.add(gate(xw, 2), reset));
    // (1 - z) * candidate + z * h
    return c.add(candidate, c.mul(z, c.sub(d.h, candidate)));
  }
  Value all = c.add(xw, hr); // i, o, f, c
  auto peep = [&](Value v, int k, Value state) {
    return d.peephole[k] ? c.add(v, c.mul(d.peephole[k], state)) : v;
  };
  Value i = act(0, peep(gate(all, 0), 0, d.c));
  Value f = d.inputForget ? c.sub(scalarConstant(typeOf(i).getElementType(), 1), i)
                          : act(0, peep(gate(all, 2), 2, d.c));
  cell = c.add(c.mul(f, d.c), c.mul(i, act(1, gate(all, 3))));
  Value o = act(0, peep(gate(all, 1), 1, cell));
  return c.mul(o, recurrentActivation(c, d.act[2], cell));
}

/// One direction over x [steps, batch, input]: step s reads entry b at time
/// reverse ? lengths[b] - 1 - s : s. Leaves the final state in d.h, d.c;
/// returns the outputs by time [steps, batch, hidden] when `wantY`.
/// Entries of different lengths read different times in reverse: each step
/// picks its rows with a where per length (elementwise, so it splits into
/// rows; a gather keeps its whole operand on one PE).
Value Importer::unrollDirection(Composer &c, RecurrentDirection &d, Value x,
                                ArrayRef<int64_t> lengths, bool reverse, bool wantY) {
  auto shape = typeOf(x).getShape();
  int64_t steps = shape[0], batch = shape[1], input = shape[2];
  Type element = typeOf(x).getElementType();
  auto mask = [&](function_ref<bool(int64_t)> on) {
    SmallVector<bool> bits;
    for (int64_t b = 0; b < batch; ++b)
      bits.push_back(on(lengths[b]));
    return constant(DenseElementsAttr::get(RankedTensorType::get({batch, 1}, builder.getI1Type()),
                                           ArrayRef<bool>(bits)));
  };
  // The lengths, longest first, and (in reverse) which entries have each.
  SmallVector<int64_t> groups(lengths);
  llvm::sort(groups, std::greater<int64_t>());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  SmallVector<Value> masks;
  for (int64_t l : groups)
    masks.push_back(reverse && groups.size() > 1 ? mask([&](int64_t n) { return n == l; })
                                                 : Value());
  // value(index(l)) for the entries of each length l.
  auto byLength = [&](function_ref<int64_t(int64_t)> index, function_ref<Value(int64_t)> value) {
    int64_t first = index(groups[0]);
    Value v = value(first);
    for (size_t k = 1; k < groups.size(); ++k)
      if (int64_t i = index(groups[k]); i != first)
        v = c.where(masks[k], value(i), v);
    return v;
  };
  auto row = [&](int64_t t) { return c.reshape(c.sliceAlong(x, 0, t, 1), {batch, input}); };
  Value zero = scalarConstant(element, 0);
  SmallVector<Value> outs; // by step, each [batch, hidden]
  for (int64_t s = 0; s < steps; ++s) {
    if (s >= groups[0]) { // every entry is past its length
      if (wantY)
        outs.push_back(c.op(wg::ExpandOp::getOperationName(), {zero}, {},
                            RankedTensorType::get({batch, d.hidden}, element)));
      continue;
    }
    // Entries past their length read the longest entries' row, unused.
    Value xs =
        byLength([&](int64_t l) { return reverse ? (s < l ? l : groups[0]) - 1 - s : s; }, row);
    Value cell;
    Value h = recurrentStep(c, d, xs, cell);
    if (s < groups.back()) {
      d.h = h, d.c = cell;
      outs.push_back(h);
      continue;
    }
    Value valid = mask([&](int64_t n) { return s < n; });
    d.h = c.where(valid, h, d.h);
    d.c = cell ? c.where(valid, cell, d.c) : d.c;
    outs.push_back(wantY ? c.where(valid, h, zero) : Value());
  }
  if (!wantY)
    return Value();
  // Time t of the entries of length l is step l - 1 - t in reverse, and
  // past l their own step's output, 0.
  SmallVector<Value> ys;
  for (int64_t t = 0; t < steps; ++t)
    ys.push_back(c.unsqueeze(byLength([&](int64_t l) { return reverse && t < l ? l - 1 - t : t; },
                                      [&](int64_t s) { return outs[s]; }),
                             {0}));
  return concatTree(c, ys, 0);
}

/// Checks the operands' shapes and reads sequence_lens: [steps, batch,
/// input] (after layout), W, R, B and P per direction.
LogicalResult Importer::checkRecurrentShapes(const onnx::NodeProto &node, ArrayRef<Value> in,
                                             int64_t dirs, int64_t hidden, bool batchFirst,
                                             SmallVectorImpl<int64_t> &lengths) {
  int64_t gates = gateCount(node.op_type());
  auto x = typeOf(in[0]);
  int64_t steps = x.getDimSize(batchFirst), batch = x.getDimSize(!batchFirst),
          input = x.getDimSize(2);
  auto is = [&](size_t i, ArrayRef<int64_t> want) {
    return i >= in.size() || !in[i] || typeOf(in[i]).getShape() == want;
  };
  SmallVector<int64_t> state = batchFirst ? SmallVector<int64_t>{batch, dirs, hidden}
                                          : SmallVector<int64_t>{dirs, batch, hidden};
  if (!is(1, {dirs, gates * hidden, input}) || !is(2, {dirs, gates * hidden, hidden}) ||
      !is(3, {dirs, 2 * gates * hidden}) || !is(4, {batch}) || !is(5, state) || !is(6, state) ||
      !is(7, {dirs, 3 * hidden}))
    return nodeError("the operands' shapes do not match X [" + std::to_string(steps) + ", " +
                     std::to_string(batch) + ", " + std::to_string(input) + "], " +
                     std::to_string(dirs) + " direction(s) and hidden_size " +
                     std::to_string(hidden)),
           failure();
  lengths.assign(batch, steps);
  if (in.size() > 4 && in[4]) {
    if (!wg::getConstantElements(in[4]))
      return nodeError("sequence_lens is not a compile-time constant (bind it with --bind)"),
             failure();
    auto given = constInts(in[4], "sequence_lens");
    if (::failed(given))
      return failure();
    for (int64_t v : *given)
      if (v < 0 || v > steps)
        return nodeError("sequence_lens holds " + std::to_string(v) + ", not in [0, " +
                         std::to_string(steps) + "]"),
               failure();
    lengths.assign(given->begin(), given->end());
  }
  return success();
}

/// Direction `dir`'s weights: slices of W, R, B, P and the initial state,
/// the weights transposed for [batch, k] x [k, gates * hidden] products.
void Importer::prepareDirection(Composer &c, ArrayRef<Value> in, int64_t dir, bool batchFirst,
                                RecurrentDirection &d) {
  auto operand = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  int64_t n = d.hidden, gates = gateCount(d.op);
  // v's part for `dir`, without that axis.
  auto take = [&](Value v, int64_t axis) {
    auto shape = typeOf(v).getShape();
    SmallVector<int64_t> rest(shape);
    rest.erase(rest.begin() + axis);
    return c.reshape(c.sliceAlong(v, axis, dir, 1), rest);
  };
  auto row = [&](Value v, int64_t k, int64_t size) {
    return c.reshape(c.sliceAlong(v, 0, k * n, size), {1, size});
  };
  d.wT = c.transpose(take(in[1], 0), {1, 0});
  d.rT = c.transpose(take(in[2], 0), {1, 0});
  if (d.op == "GRU") {
    d.rhT = c.sliceAlong(d.rT, 1, 2 * n, n);
    d.rT = c.sliceAlong(d.rT, 1, 0, 2 * n);
  }
  if (Value b = operand(3)) {
    Value bias = take(b, 0); // [2 * gates * hidden]
    d.wBias = row(bias, 0, gates * n);
    d.rBias = row(bias, gates, d.op == "GRU" ? 2 * n : gates * n);
    if (d.op == "GRU")
      d.rhBias = row(bias, 2 * gates - 1, n);
    else // one bias for both products
      d.wBias = c.add(d.wBias, d.rBias), d.rBias = Value();
  }
  if (Value p = operand(7)) {
    Value peep = take(p, 0);
    for (int k = 0; k < 3; ++k)
      d.peephole[k] = row(peep, k, n);
  }
  Type element = typeOf(in[0]).getElementType();
  int64_t batch = typeOf(in[0]).getDimSize(!batchFirst);
  auto initial = [&](size_t i) {
    if (Value v = operand(i))
      return take(v, batchFirst ? 1 : 0);
    return constant(DenseElementsAttr::get(RankedTensorType::get({batch, n}, element),
                                           builder.getFloatAttr(element, 0.0)));
  };
  d.h = initial(5);
  if (d.op == "LSTM")
    d.c = initial(6);
}

LogicalResult Importer::convertRecurrentOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                           SmallVectorImpl<Value> &results) {
  Composer c = composer();
  StringRef op = node.op_type();
  if (in.size() < 3 || !in[1] || !in[2])
    return nodeError("expects X, W and R"), failure();
  for (Value v : in)
    if (v && !typeOf(v).hasStaticShape())
      return nodeError("the operands' shapes are not static"), failure();
  auto x = typeOf(in[0]);
  if (x.getRank() != 3 || !isa<FloatType>(x.getElementType()) || typeOf(in[2]).getRank() != 3)
    return nodeError("X must be a 3-D float tensor, R 3-D"), failure();
  const onnx::AttributeProto *dirAttr = findAttr(node, "direction");
  std::string direction = dirAttr ? dirAttr->s() : "forward";
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return nodeError("direction '" + direction + "' is not forward, reverse or bidirectional"),
           failure();
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t layout = intAttr(node, "layout", 0);
  int64_t hidden = intAttr(node, "hidden_size", typeOf(in[2]).getDimSize(2));
  if ((layout != 0 && layout != 1) || hidden != typeOf(in[2]).getDimSize(2))
    return nodeError("layout must be 0 or 1, and hidden_size R's last dimension"), failure();
  if (x.getNumElements() == 0 || hidden == 0)
    return nodeError("zero-size operands: a generic kernel needs a non-empty operand"), failure();
  bool batchFirst = layout == 1;
  SmallVector<int64_t> lengths;
  SmallVector<RecurrentActivation> acts;
  if (::failed(checkRecurrentShapes(node, in, dirs, hidden, batchFirst, lengths)) ||
      ::failed(recurrentActivations(node, dirs, acts)))
    return failure();
  Value xs = batchFirst ? c.transpose(in[0], {1, 0, 2}) : in[0]; // [steps, batch, input]
  auto wanted = [&](int i) { return node.output_size() > i && !node.output(i).empty(); };
  size_t per = acts.size() / dirs;
  SmallVector<Value> ys, hs, cs;
  for (int64_t dir = 0; dir < dirs; ++dir) {
    RecurrentDirection d;
    d.op = op, d.hidden = hidden;
    d.act.assign(acts.begin() + dir * per, acts.begin() + (dir + 1) * per);
    if (findAttr(node, "clip")) {
      double clip = floatAttr(node, "clip", 0.0f);
      d.clipLo = scalarConstant(x.getElementType(), -clip);
      d.clipHi = scalarConstant(x.getElementType(), clip);
    }
    d.linearBeforeReset = intAttr(node, "linear_before_reset", 0) != 0;
    d.inputForget = intAttr(node, "input_forget", 0) != 0;
    prepareDirection(c, in, dir, batchFirst, d);
    bool reverse = direction == "reverse" || dir == 1;
    Value y = unrollDirection(c, d, xs, lengths, reverse, wanted(0));
    ys.push_back(wanted(0) ? c.unsqueeze(y, {1}) : Value()); // [steps, 1, batch, hidden]
    hs.push_back(wanted(1) ? c.unsqueeze(d.h, {0}) : Value());
    cs.push_back(d.c && wanted(2) ? c.unsqueeze(d.c, {0}) : Value());
  }
  // [dirs, batch, hidden], or batch first [batch, dirs, hidden].
  auto state = [&](ArrayRef<Value> parts) {
    Value v = c.concat(parts, 0);
    return batchFirst ? c.transpose(v, {1, 0, 2}) : v;
  };
  Value y, yh, yc;
  if (wanted(0)) {
    y = c.concat(ys, 1);
    y = batchFirst ? c.transpose(y, {2, 0, 1, 3}) : y;
  }
  if (wanted(1))
    yh = state(hs);
  if (op == "LSTM" && wanted(2))
    yc = state(cs);
  if (!c.ok)
    return failure();
  results.append({y, yh, yc});
  return success();
}
