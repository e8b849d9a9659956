//===- OnnxSequences.cpp - sequences and Loop, resolved at compile time ----===//
//
// The wafer runs static dataflow, so a sequence is a list of tensors known
// while importing (each element an ordinary value), and a Loop is unrolled:
// its trip count and every iteration's condition must fold. torch exports
// repeat_interleave with dynamic axes this way (SplitToSequence, a Loop that
// inserts into a sequence, ConcatFromSequence); once the shapes are bound
// every count folds. Positions must be compile-time constants too.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

/// Iterations a Loop may unroll to: each copies its body into the program.
static constexpr int64_t kMaxIterations = 4096;

bool wsc::onnx_import::isSequenceOp(StringRef op) {
  return llvm::is_contained({"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt",
                             "SequenceErase", "SequenceLength", "SplitToSequence",
                             "ConcatFromSequence", "Loop", "Scan"},
                            op);
}

FailureOr<Value> Importer::tensorInput(const onnx::NodeProto &node, int index) {
  const std::string &name = node.input(index);
  if (sequences.count(name))
    return nodeError("input '" + name + "' is a sequence, not a tensor"), failure();
  return lookup(name);
}

FailureOr<SmallVector<Value>> Importer::sequenceInput(const onnx::NodeProto &node, int index) {
  auto it = sequences.find(node.input(index));
  if (it == sequences.end())
    return nodeError("input '" + node.input(index) + "' is not a sequence"), failure();
  return it->second;
}

/// An optional scalar position input, in [0, size) (or [0, size] when
/// inserting), negative ones counted from the end.
FailureOr<int64_t> Importer::sequencePosition(const onnx::NodeProto &node, int index, int64_t size,
                                              int64_t dflt, bool inserting) {
  if (node.input_size() <= index || node.input(index).empty())
    return dflt;
  auto v = tensorInput(node, index);
  if (::failed(v))
    return failure();
  auto ints = constInts(*v, "position");
  if (::failed(ints))
    return failure();
  if (ints->size() != 1)
    return nodeError("the position is not a scalar"), failure();
  int64_t p = (*ints)[0], end = inserting ? size + 1 : size;
  if (p < -size || p >= end)
    return nodeError("position " + std::to_string(p) + " is outside a sequence of " +
                     std::to_string(size)),
           failure();
  return p < 0 ? p + size : p;
}

/// SplitToSequence: pieces of 1 along the axis (squeezed unless keepdims)
/// without `split`, else pieces of the scalar size (the last shorter) or
/// of the listed sizes.
FailureOr<SmallVector<Value>> Importer::splitToSequence(const onnx::NodeProto &node) {
  auto x = tensorInput(node, 0);
  if (::failed(x))
    return failure();
  auto type = typeOf(*x);
  auto axis = wg::normalizeAxis(intAttr(node, "axis", 0), type.getRank());
  if (::failed(axis) || !type.hasStaticShape())
    return nodeError("needs a static input and an axis within its rank"), failure();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (node.input_size() > 1 && !node.input(1).empty()) {
    auto split = tensorInput(node, 1);
    auto given = ::succeeded(split) ? constInts(*split, "split")
                                    : FailureOr<SmallVector<int64_t>>(failure());
    if (::failed(given))
      return failure();
    if (typeOf(*split).getRank() == 0) {
      if ((*given)[0] <= 0)
        return nodeError("split must be positive"), failure();
      for (int64_t at = 0; at < dim; at += (*given)[0])
        sizes.push_back(std::min((*given)[0], dim - at));
    } else {
      sizes.assign(given->begin(), given->end());
    }
  } else {
    sizes.assign(dim, 1);
    squeeze = !intAttr(node, "keepdims", 1);
  }
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s < 0 ? dim + 1 : s;
  if (total != dim)
    return nodeError("the split sizes do not add up to the axis's " + std::to_string(dim)),
           failure();
  Composer c = composer();
  SmallVector<Value> pieces;
  int64_t at = 0;
  for (int64_t s : sizes) {
    Value piece = c.sliceAlong(*x, *axis, at, s);
    if (squeeze) {
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + *axis);
      piece = c.reshape(piece, shape);
    }
    pieces.push_back(piece);
    at += s;
  }
  if (!c.ok)
    return failure();
  return pieces;
}

/// ConcatFromSequence: the elements side by side along the axis, or
/// stacked along a new one.
FailureOr<Value> Importer::concatFromSequence(const onnx::NodeProto &node,
                                              ArrayRef<Value> elements) {
  if (elements.empty())
    return nodeError("concatenates an empty sequence"), failure();
  bool stack = intAttr(node, "new_axis", 0);
  int64_t rank = typeOf(elements.front()).getRank() + (stack ? 1 : 0);
  auto axis = wg::normalizeAxis(intAttr(node, "axis", 0), rank);
  if (::failed(axis))
    return nodeError("axis is out of range"), failure();
  Composer c = composer();
  SmallVector<Value> parts;
  for (Value e : elements)
    parts.push_back(stack ? c.unsqueeze(e, {*axis}) : e);
  Value joined = c.concat(parts, *axis);
  if (!c.ok)
    return failure();
  return joined;
}

LogicalResult Importer::convertSequenceNode(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  if (op == "Loop")
    return convertLoop(node);
  if (op == "Scan")
    return convertScan(node);
  auto setSequence = [&](SmallVector<Value> elements) {
    sequences[node.output(0)] = std::move(elements);
    return success();
  };
  auto setTensor = [&](FailureOr<Value> v) {
    if (::failed(v))
      return failure();
    values[node.output(0)] = *v;
    return success();
  };
  if (op == "SequenceEmpty")
    return setSequence({});
  if (op == "SequenceConstruct") {
    SmallVector<Value> elements;
    for (int i = 0; i < node.input_size(); ++i) {
      auto v = tensorInput(node, i);
      if (::failed(v))
        return failure();
      elements.push_back(*v);
    }
    return setSequence(std::move(elements));
  }
  if (op == "SplitToSequence") {
    auto pieces = splitToSequence(node);
    return ::failed(pieces) ? failure() : setSequence(std::move(*pieces));
  }
  auto seq = sequenceInput(node, 0);
  if (::failed(seq))
    return failure();
  int64_t size = int64_t(seq->size());
  if (op == "SequenceLength")
    return setTensor(constant(DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getI64Type()), APInt(64, uint64_t(size)))));
  if (op == "ConcatFromSequence")
    return setTensor(concatFromSequence(node, *seq));
  if (op == "SequenceAt") {
    auto at = sequencePosition(node, 1, size, 0, false);
    return ::failed(at) ? failure() : setTensor((*seq)[*at]);
  }
  if (op == "SequenceErase") {
    auto at = sequencePosition(node, 1, size, size - 1, false);
    if (::failed(at))
      return failure();
    seq->erase(seq->begin() + *at);
    return setSequence(std::move(*seq));
  }
  // SequenceInsert
  auto element = tensorInput(node, 1);
  auto at = sequencePosition(node, 2, size, size, true);
  if (::failed(element) || ::failed(at))
    return failure();
  seq->insert(seq->begin() + *at, *element);
  return setSequence(std::move(*seq));
}

/// A Loop's trip count (INT64_MAX without one) and its first condition.
FailureOr<std::pair<int64_t, bool>> Importer::loopBounds(const onnx::NodeProto &node) {
  int64_t trips = INT64_MAX;
  bool cond = true;
  for (int i : {0, 1}) {
    if (node.input_size() <= i || node.input(i).empty())
      continue;
    auto v = tensorInput(node, i);
    auto ints = ::succeeded(v) ? constInts(*v, i ? "condition" : "trip count")
                               : FailureOr<SmallVector<int64_t>>(failure());
    if (::failed(ints))
      return failure();
    if (ints->size() != 1)
      return nodeError("the trip count and condition must be scalars"), failure();
    if (i == 0)
      trips = (*ints)[0];
    else
      cond = (*ints)[0] != 0;
  }
  return std::make_pair(trips, cond);
}

/// The tensor or sequence of a name.
FailureOr<CarriedValue> Importer::carried(const std::string &name) {
  if (auto it = sequences.find(name); it != sequences.end())
    return CarriedValue{Value(), it->second};
  auto v = lookup(name);
  if (::failed(v))
    return failure();
  return CarriedValue{*v, std::nullopt};
}

/// Imports `body` (a Loop's or Scan's body, an If's branch) once with
/// `inputs` bound to its inputs and returns its outputs; the body's own
/// names go again after.
FailureOr<SmallVector<CarriedValue>> Importer::runBody(const onnx::GraphProto &body,
                                                       const std::string &prefix,
                                                       ArrayRef<CarriedValue> inputs) {
  SmallVector<std::string> local;
  llvm::scope_exit forget([&] {
    for (const auto &name : local)
      values.erase(name), sequences.erase(name);
  });
  for (auto [input, value] : llvm::zip_equal(body.input(), inputs)) {
    if (values.count(input.name()) || sequences.count(input.name()) ||
        initializerIndex.count(input.name()))
      return nodeError("its body's input '" + input.name() + "' shadows an outer value"), failure();
    if (value.sequence)
      sequences[input.name()] = *value.sequence;
    else
      values[input.name()] = value.tensor;
    local.push_back(input.name());
  }
  for (const auto &tensor : body.initializer()) {
    std::string what = prefix + "initializer '" + tensor.name() + "'";
    if (values.count(tensor.name()) || sequences.count(tensor.name()) ||
        initializerIndex.count(tensor.name()))
      return error(what + " shadows a value of the enclosing graph"), failure();
    auto type = tensorType(tensor, what);
    if (::failed(type))
      return failure();
    auto value = tensorValue(tensor, *type, nullptr, what);
    if (::failed(value))
      return failure();
    values[tensor.name()] = constant(*value);
    local.push_back(tensor.name());
  }
  for (const auto &n : body.node())
    for (const auto &out : n.output())
      if (!out.empty())
        local.push_back(out);
  std::string outerNode = currentNode;
  Location outerLoc = loc;
  bool ok = importNodes(body, prefix);
  currentNode = outerNode, loc = outerLoc;
  if (!ok)
    return failure();
  SmallVector<CarriedValue> outputs;
  for (const auto &out : body.output()) {
    auto v = carried(out.name());
    if (::failed(v))
      return failure();
    outputs.push_back(*v);
  }
  return outputs;
}

/// A scalar of the body input's declared shape (rank 0 or [1]).
Value Importer::bodyScalar(const onnx::ValueInfoProto &input, APInt value) {
  SmallVector<int64_t> shape;
  if (input.type().has_tensor_type())
    for (const auto &d : input.type().tensor_type().shape().dim())
      shape.push_back(d.has_dim_value() ? d.dim_value() : 1);
  auto type = RankedTensorType::get(shape, builder.getIntegerType(value.getBitWidth()));
  return constant(DenseElementsAttr::get(type, value));
}

/// `rows` stacked along a new `axis` (reversed first when `reverse`).
FailureOr<Value> Importer::stack(ArrayRef<Value> rows, int64_t axis, bool reverse) {
  if (rows.empty())
    return nodeError("has scan outputs but runs no iteration"), failure();
  Composer c = composer();
  SmallVector<Value> parts;
  for (Value v : rows)
    parts.push_back(c.unsqueeze(v, {axis}));
  if (reverse)
    std::reverse(parts.begin(), parts.end());
  Value stacked = c.concat(parts, axis);
  if (!c.ok)
    return failure();
  return stacked;
}

/// Sets the node's outputs from `first` on to `from`.
void Importer::setOutputs(const onnx::NodeProto &node, int first, ArrayRef<CarriedValue> from) {
  for (auto [k, v] : llvm::enumerate(from)) {
    const std::string &out = node.output(first + int(k));
    if (out.empty())
      continue;
    if (v.sequence)
      sequences[out] = *v.sequence;
    else
      values[out] = v.tensor;
  }
}

LogicalResult Importer::convertLoop(const onnx::NodeProto &node) {
  auto *a = findAttr(node, "body");
  if (!a || !a->has_g())
    return nodeError("has no body graph"), failure();
  const onnx::GraphProto &body = a->g();
  int kept = node.input_size() - 2;
  int scans = node.output_size() - kept;
  if (kept < 0 || scans < 0 || body.input_size() != kept + 2 ||
      body.output_size() != 1 + kept + scans)
    return nodeError("its body's inputs and outputs do not match its own"), failure();
  auto bounds = loopBounds(node);
  if (::failed(bounds))
    return failure();
  auto [trips, cond] = *bounds;
  if (!checkNodes(body, currentNode + " body: "))
    return failure();
  SmallVector<CarriedValue> state;
  for (int i = 0; i < kept; ++i) {
    auto v = carried(node.input(i + 2));
    if (::failed(v))
      return failure();
    state.push_back(*v);
  }
  SmallVector<SmallVector<Value>> scanned(scans);
  for (int64_t i = 0; i < trips && cond; ++i) {
    if (i == kMaxIterations)
      return nodeError("unrolls past " + std::to_string(kMaxIterations) +
                       " iterations (its trip count or condition does not fold)"),
             failure();
    SmallVector<CarriedValue> inputs = {
        {bodyScalar(body.input(0), APInt(64, uint64_t(i))), std::nullopt},
        {bodyScalar(body.input(1), APInt(1, 1)), std::nullopt}};
    inputs.append(state);
    auto outputs = runBody(body, currentNode + " iteration " + std::to_string(i) + ": ", inputs);
    if (::failed(outputs))
      return failure();
    auto flag = (*outputs)[0].tensor ? constInts((*outputs)[0].tensor, "body's condition")
                                     : FailureOr<SmallVector<int64_t>>(failure());
    if (::failed(flag) || flag->size() != 1)
      return nodeError("its body's condition is not a constant scalar"), failure();
    cond = (*flag)[0] != 0;
    state.assign(outputs->begin() + 1, outputs->begin() + 1 + kept);
    for (int k = 0; k < scans; ++k) {
      if (!(*outputs)[1 + kept + k].tensor)
        return nodeError("a scan output is a sequence"), failure();
      scanned[k].push_back((*outputs)[1 + kept + k].tensor);
    }
  }
  setOutputs(node, 0, state);
  for (int k = 0; k < scans; ++k) {
    if (node.output(kept + k).empty())
      continue;
    auto stacked = stack(scanned[k], 0, false);
    if (::failed(stacked))
      return failure();
    values[node.output(kept + k)] = *stacked;
  }
  return success();
}

/// Scan (opset 9 on): the body runs once per index along each scan input's
/// axis (from the end when its direction is 1), on that slice; the states
/// carry over and the scan outputs stack along their axes.
LogicalResult Importer::convertScan(const onnx::NodeProto &node) {
  auto *a = findAttr(node, "body");
  int64_t inputs = intAttr(node, "num_scan_inputs", 0);
  if (!a || !a->has_g() || inputs <= 0 || inputs > node.input_size())
    return nodeError("needs a body and num_scan_inputs"), failure();
  const onnx::GraphProto &body = a->g();
  int64_t kept = node.input_size() - inputs, outs = node.output_size() - kept;
  if (outs < 0 || body.input_size() != node.input_size() ||
      body.output_size() != node.output_size())
    return nodeError("its body's inputs and outputs do not match its own"), failure();
  if (!checkNodes(body, currentNode + " body: "))
    return failure();
  auto listAttr = [&](StringRef name, int64_t n) {
    SmallVector<int64_t> v = intsAttr(node, name).value_or(SmallVector<int64_t>());
    v.resize(n, 0);
    return v;
  };
  SmallVector<int64_t> inAxes = listAttr("scan_input_axes", inputs),
                       inBack = listAttr("scan_input_directions", inputs),
                       outAxes = listAttr("scan_output_axes", outs),
                       outBack = listAttr("scan_output_directions", outs);
  SmallVector<CarriedValue> state;
  SmallVector<Value> scans;
  int64_t steps = -1;
  for (int64_t i = 0; i < node.input_size(); ++i) {
    auto v = tensorInput(node, int(i));
    if (::failed(v))
      return failure();
    if (i < kept) {
      state.push_back({*v, std::nullopt});
      continue;
    }
    auto type = typeOf(*v);
    auto axis = wg::normalizeAxis(inAxes[i - kept], type.getRank());
    if (::failed(axis) || !type.hasStaticShape() || (steps >= 0 && steps != type.getDimSize(*axis)))
      return nodeError("its scan inputs need static shapes and one length along their axes"),
             failure();
    inAxes[i - kept] = *axis;
    steps = type.getDimSize(*axis);
    scans.push_back(*v);
  }
  if (steps > kMaxIterations)
    return nodeError("unrolls past " + std::to_string(kMaxIterations) + " iterations"), failure();
  SmallVector<SmallVector<Value>> scanned(outs);
  for (int64_t t = 0; t < steps; ++t) {
    SmallVector<CarriedValue> in(state);
    Composer c = composer();
    for (auto [j, x] : llvm::enumerate(scans)) {
      int64_t at = inBack[j] ? steps - 1 - t : t, axis = inAxes[j];
      SmallVector<int64_t> shape(typeOf(x).getShape());
      shape.erase(shape.begin() + axis);
      in.push_back({c.reshape(c.sliceAlong(x, axis, at, 1), shape), std::nullopt});
    }
    if (!c.ok)
      return failure();
    auto outputs = runBody(body, currentNode + " step " + std::to_string(t) + ": ", in);
    if (::failed(outputs))
      return failure();
    state.assign(outputs->begin(), outputs->begin() + kept);
    for (int64_t k = 0; k < outs; ++k)
      scanned[k].push_back((*outputs)[kept + k].tensor);
  }
  setOutputs(node, 0, state);
  for (int64_t k = 0; k < outs; ++k) {
    if (node.output(int(kept + k)).empty())
      continue;
    int64_t rank = scanned[k].empty() ? 1 : typeOf(scanned[k].front()).getRank() + 1;
    auto axis = wg::normalizeAxis(outAxes[k], rank);
    auto stacked =
        ::succeeded(axis) ? stack(scanned[k], *axis, outBack[k] != 0) : FailureOr<Value>(failure());
    if (::failed(stacked))
      return failure();
    values[node.output(int(kept + k))] = *stacked;
  }
  return success();
}
