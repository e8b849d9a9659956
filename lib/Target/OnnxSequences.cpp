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
                             "ConcatFromSequence", "Loop"},
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
  if (trips == INT64_MAX && cond)
    trips = kMaxIterations + 1; // the condition must end it
  return std::make_pair(trips, cond);
}

namespace wsc::onnx_import {
/// A Loop's carried value, as the last iteration left it.
struct CarriedValue {
  Value tensor;
  std::optional<SmallVector<Value>> sequence;
};
} // namespace wsc::onnx_import

LogicalResult Importer::convertLoop(const onnx::NodeProto &node) {
  auto *a = findAttr(node, "body");
  if (!a || !a->has_g())
    return nodeError("has no body graph"), failure();
  const onnx::GraphProto &body = a->g();
  int carried = node.input_size() - 2;
  int scans = node.output_size() - carried;
  if (carried < 0 || scans < 0 || body.input_size() != carried + 2 ||
      body.output_size() != 1 + carried + scans)
    return nodeError("its body's inputs and outputs do not match its own"), failure();
  auto bounds = loopBounds(node);
  if (::failed(bounds))
    return failure();
  auto [trips, cond] = *bounds;
  std::string outerNode = currentNode;
  Location outerLoc = loc;
  if (!checkNodes(body, outerNode + " body: "))
    return failure();
  SmallVector<CarriedValue> state;
  for (int i = 0; i < carried; ++i) {
    const std::string &name = node.input(i + 2);
    if (auto it = sequences.find(name); it != sequences.end())
      state.push_back({Value(), it->second});
    else if (auto v = lookup(name); ::succeeded(v))
      state.push_back({*v, std::nullopt});
    else
      return failure();
  }
  SmallVector<SmallVector<Value>> scanned(scans);
  int64_t i = 0;
  for (; i < trips && cond; ++i) {
    if (i == kMaxIterations)
      return nodeError("unrolls past " + std::to_string(kMaxIterations) +
                       " iterations (its trip count or condition does not fold)"),
             failure();
    std::string prefix = outerNode + " iteration " + std::to_string(i) + ": ";
    auto result = loopIteration(body, prefix, i, state, scanned);
    currentNode = outerNode, loc = outerLoc;
    if (::failed(result))
      return failure();
    cond = *result;
  }
  for (int k = 0; k < carried; ++k) {
    const std::string &out = node.output(k);
    if (out.empty())
      continue;
    if (state[k].sequence)
      sequences[out] = *state[k].sequence;
    else
      values[out] = state[k].tensor;
  }
  for (int k = 0; k < scans; ++k) {
    if (node.output(carried + k).empty())
      continue;
    if (scanned[k].empty())
      return nodeError("has scan outputs but runs no iteration"), failure();
    Composer c = composer();
    SmallVector<Value> rows;
    for (Value v : scanned[k])
      rows.push_back(c.unsqueeze(v, {0}));
    Value stacked = c.concat(rows, 0);
    if (!c.ok)
      return failure();
    values[node.output(carried + k)] = stacked;
  }
  return success();
}

/// Imports the body once with `state` as its carried inputs, then takes
/// its outputs into `state` and `scanned`; the body's own names go again.
/// Returns the condition it computed, which must fold.
FailureOr<bool> Importer::loopIteration(const onnx::GraphProto &body, const std::string &prefix,
                                        int64_t iteration, SmallVectorImpl<CarriedValue> &state,
                                        SmallVectorImpl<SmallVector<Value>> &scanned) {
  SmallVector<std::string> local;
  llvm::scope_exit forget([&] {
    for (const auto &name : local)
      values.erase(name), sequences.erase(name);
  });
  for (const auto &input : body.input())
    if (values.count(input.name()) || sequences.count(input.name()) ||
        initializerIndex.count(input.name()))
      return nodeError("its body's input '" + input.name() + "' shadows an outer value"), failure();
  auto bindScalar = [&](const onnx::ValueInfoProto &input, APInt value, unsigned width) {
    SmallVector<int64_t> shape;
    if (input.type().has_tensor_type())
      for (const auto &d : input.type().tensor_type().shape().dim())
        shape.push_back(d.has_dim_value() ? d.dim_value() : 1);
    auto type = RankedTensorType::get(shape, builder.getIntegerType(width));
    values[input.name()] = constant(DenseElementsAttr::get(type, value));
    local.push_back(input.name());
  };
  bindScalar(body.input(0), APInt(64, uint64_t(iteration)), 64);
  bindScalar(body.input(1), APInt(1, 1), 1);
  for (auto [k, s] : llvm::enumerate(state)) {
    const std::string &name = body.input(int(k) + 2).name();
    if (s.sequence)
      sequences[name] = *s.sequence;
    else
      values[name] = s.tensor;
    local.push_back(name);
  }
  for (const auto &tensor : body.initializer()) {
    std::string what = prefix + "initializer '" + tensor.name() + "'";
    auto type = tensorType(tensor, what);
    auto value = ::succeeded(type) ? tensorValue(tensor, *type, nullptr, what)
                                   : FailureOr<DenseElementsAttr>(failure());
    if (::failed(value))
      return failure();
    values[tensor.name()] = constant(*value);
    local.push_back(tensor.name());
  }
  for (const auto &n : body.node())
    for (const auto &out : n.output())
      if (!out.empty())
        local.push_back(out);
  if (!importNodes(body, prefix))
    return failure();
  auto condition = lookup(body.output(0).name());
  auto ints = ::succeeded(condition) ? constInts(*condition, "body's condition")
                                     : FailureOr<SmallVector<int64_t>>(failure());
  if (::failed(ints))
    return failure();
  for (size_t k = 0; k < state.size(); ++k) {
    const std::string &name = body.output(int(k) + 1).name();
    if (auto it = sequences.find(name); it != sequences.end()) {
      state[k] = {Value(), it->second};
    } else {
      auto v = lookup(name);
      if (::failed(v))
        return failure();
      state[k] = {*v, std::nullopt};
    }
  }
  for (size_t k = 0; k < scanned.size(); ++k) {
    auto v = lookup(body.output(int(1 + state.size() + k)).name());
    if (::failed(v))
      return failure();
    scanned[k].push_back(*v);
  }
  return !ints->empty() && (*ints)[0] != 0;
}
