//===- GenericPlan.cpp - which ops the generic kind takes, in what chunks --===//
//
// The generic kind's plan: the ops it computes, how a result too large for
// one PE splits into chunks of rows, and which words of each operand a chunk
// reads; the index tables its bodies are made of.
//
//===----------------------------------------------------------------------===//
#include "GenericOps.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
using namespace wsc::lowering::generic;
namespace wg = wsc::wsgraph;


/// Elementwise ops by name: the runtime kind they become.
const llvm::StringMap<StringRef> &generic::unaryKinds() {
  static const llvm::StringMap<StringRef> kinds = {
      {"wsgraph.sqrt", "sqrt"},       {"wsgraph.erf", "erf"},     {"wsgraph.tanh", "tanh"},
      {"wsgraph.exp", "exp"},         {"wsgraph.neg", "neg"},     {"wsgraph.gelu", "gelu"},
      {"wsgraph.sigmoid", "sigmoid"}, {"wsgraph.relu", "relu"},   {"wsgraph.abs", "abs"},
      {"wsgraph.log", "log"},         {"wsgraph.sin", "sin"},     {"wsgraph.cos", "cos"},
      {"wsgraph.reciprocal", "reciprocal"}, {"wsgraph.floor", "floor"},
      {"wsgraph.ceil", "ceil"},       {"wsgraph.not", "not"},
      {"wsgraph.bitwise_not", "bit_not"}};
  return kinds;
}
StringRef generic::unaryKindOf(Operation *op) {
  if (auto gelu = dyn_cast<wg::GeluOp>(op); gelu && gelu.isTanh())
    return "gelu_tanh";
  return unaryKinds().lookup(op->getName().getStringRef());
}
const llvm::StringMap<StringRef> &generic::binaryKinds() {
  static const llvm::StringMap<StringRef> kinds = {
      {"wsgraph.add", "add"},  {"wsgraph.sub", "sub"},   {"wsgraph.mul", "mul"},
      {"wsgraph.div", "div"},  {"wsgraph.pow", "pow"},   {"wsgraph.max", "max"},
      {"wsgraph.min", "min"},  {"wsgraph.mod", "mod"},   {"wsgraph.equal", "eq"},
      {"wsgraph.less", "lt"},  {"wsgraph.less_equal", "le"}, {"wsgraph.greater", "gt"},
      {"wsgraph.greater_equal", "ge"}, {"wsgraph.and", "and"}, {"wsgraph.or", "or"},
      {"wsgraph.xor", "xor"}, {"wsgraph.bitwise_and", "bit_and"},
      {"wsgraph.bitwise_or", "bit_or"}, {"wsgraph.bitwise_xor", "bit_xor"}};
  return kinds;
}
const llvm::StringMap<StringRef> &generic::reduceKinds() {
  static const llvm::StringMap<StringRef> kinds = {{"wsgraph.reduce_sum", "sum"},
                                                   {"wsgraph.reduce_mean", "sum"},
                                                   {"wsgraph.reduce_max", "max"},
                                                   {"wsgraph.reduce_min", "min"}};
  return kinds;
}
/// Ops whose result is their operand's words in the same order.
bool generic::keepsOrder(Operation *op) {
  return isa<wg::ReshapeOp, wg::SqueezeOp, wg::UnsqueezeOp>(op) ||
         op->getName().getStringRef() == "wsgraph.identity";
}


SmallVector<int64_t> generic::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// A table over the multi-indices of `shape` whose flat (row-major) index
/// is in [lo, hi) (hi < 0: to the end).
SmallVector<int32_t> generic::tableOver(ArrayRef<int64_t> shape,
                               function_ref<int64_t(ArrayRef<int64_t>)> at, int64_t lo,
                               int64_t hi) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  hi = hi < 0 ? n : hi;
  SmallVector<int32_t> t(hi - lo);
  SmallVector<int64_t> idx(shape.size(), 0);
  for (int64_t d = int64_t(shape.size()) - 1, rest = lo; d >= 0; --d)
    idx[d] = rest % shape[d], rest /= shape[d];
  for (int64_t i = 0; i < hi - lo; ++i) {
    t[i] = int32_t(at(idx));
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return t;
}

/// Flat index in `in` (right-aligned, size-1 dimensions broadcast) of a
/// multi-index of the broadcast shape.
int64_t generic::broadcastIndex(ArrayRef<int64_t> in, ArrayRef<int64_t> idx) {
  SmallVector<int64_t> s = stridesOf(in);
  int64_t off = int64_t(idx.size()) - int64_t(in.size()), flat = 0;
  for (size_t d = 0; d < in.size(); ++d)
    flat += (in[d] == 1 ? 0 : idx[off + d]) * s[d];
  return flat;
}

/// Where a data-movement op takes each result word from: operand and flat
/// index in it (-1: the word is zero); null for other ops.
MovementSource generic::movementSource(Operation *o, unsigned result) {
  ArrayRef<int64_t> is = tensorType(o->getOperand(0)).getShape();
  ArrayRef<int64_t> os = tensorType(o->getResult(result)).getShape();
  SmallVector<int64_t> s = stridesOf(is);
  auto flat = [s](ArrayRef<int64_t> idx, function_ref<int64_t(size_t)> at) {
    int64_t f = 0;
    for (size_t d = 0; d < s.size(); ++d)
      f += at(d) * s[d];
    return f;
  };
  using R = std::pair<unsigned, int64_t>;
  if (auto t = dyn_cast<wg::TransposeOp>(o)) {
    SmallVector<int64_t> perm(t.getPerm());
    return [=](ArrayRef<int64_t> idx) {
      int64_t f = 0;
      for (size_t d = 0; d < perm.size(); ++d)
        f += idx[d] * s[perm[d]];
      return R{0, f};
    };
  }
  if (isa<wg::ExpandOp>(o)) {
    SmallVector<int64_t> in(is);
    return [=](ArrayRef<int64_t> idx) { return R{0, broadcastIndex(in, idx)}; };
  }
  if (auto sl = dyn_cast<wg::SliceOp>(o)) {
    SmallVector<int64_t> off(sl.getOffsets()), st(sl.getStrides());
    return [=](ArrayRef<int64_t> idx) {
      return R{0, flat(idx, [&](size_t d) { return off[d] + idx[d] * st[d]; })};
    };
  }
  if (auto sp = dyn_cast<wg::SplitOp>(o)) {
    int64_t axis = *wg::normalizeAxis(sp.getAxis(), int64_t(is.size())), start = 0;
    for (unsigned r = 0; r < result; ++r)
      start += sp.getSizes()[r];
    return [=](ArrayRef<int64_t> idx) {
      return R{0, flat(idx, [&](size_t d) { return idx[d] + (int64_t(d) == axis ? start : 0); })};
    };
  }
  if (auto c = dyn_cast<wg::ConcatOp>(o)) {
    int64_t axis = *wg::normalizeAxis(c.getAxis(), int64_t(os.size()));
    SmallVector<int64_t> starts; // where each operand begins along the axis
    SmallVector<SmallVector<int64_t>> strides;
    int64_t along = 0;
    for (Value v : o->getOperands()) {
      starts.push_back(along), along += tensorType(v).getDimSize(axis);
      strides.push_back(stridesOf(tensorType(v).getShape()));
    }
    return [=](ArrayRef<int64_t> idx) {
      unsigned i = unsigned(llvm::upper_bound(starts, idx[axis]) - starts.begin() - 1);
      int64_t f = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        f += (idx[d] - (int64_t(d) == axis ? starts[i] : 0)) * strides[i][d];
      return R{i, f};
    };
  }
  if (auto tr = dyn_cast<wg::TriluOp>(o)) {
    bool upper = tr.getUpper();
    int64_t kk = tr.getK(), rank = int64_t(is.size());
    return [=](ArrayRef<int64_t> idx) {
      int64_t i = idx[rank - 2], j = idx[rank - 1];
      if (upper ? j - i < kk : j - i > kk)
        return R{0, -1};
      return R{0, flat(idx, [&](size_t d) { return idx[d]; })};
    };
  }
  if (o->getName().getStringRef() == "wsgraph.tile") {
    SmallVector<int64_t> in(is);
    return [=](ArrayRef<int64_t> idx) {
      return R{0, flat(idx, [&](size_t d) { return idx[d] % in[d]; })};
    };
  }
  return nullptr;
}

namespace {

bool normalizesLastAxis(Operation *op) {
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  int64_t rank = tensorType(op->getOperand(0)).getRank();
  return axis && op->getNumResults() == 1 && (axis.getInt() == -1 || axis.getInt() == rank - 1);
}

/// A batched matmul whose left operand has the result's batch dimensions:
/// rows of the result are rows of it. Its right operand is shared (2-D)
/// or batched like the result.
bool rowsOfLeft(wg::MatmulOp mm, bool &sharedRight) {
  ArrayRef<int64_t> a = mm.getLhs().getType().getShape(), b = mm.getRhs().getType().getShape(),
                    r = mm.getType().getShape();
  if (a.size() < 2 || b.size() < 2 || a.size() != r.size() || a.drop_back(2) != r.drop_back(2))
    return false;
  sharedRight = b.size() == 2;
  return sharedRight || (b.size() == r.size() && b.drop_back(2) == r.drop_back(2));
}

} // namespace

int64_t wsc::lowering::chunkGranularity(Operation *op, unsigned result) {
  StringRef name = op->getName().getStringRef();
  if (unaryKinds().count(name) || binaryKinds().count(name) || isa<wg::WhereOp, wg::CastOp>(op) ||
      keepsOrder(op) || movementSource(op, result))
    return 1;
  if ((isa<wg::SoftmaxOp, wg::LayerNormOp, wg::RmsNormOp>(op) || name == "wsgraph.log_softmax") &&
      normalizesLastAxis(op))
    return 1;
  bool shared = false;
  if (auto mm = dyn_cast<wg::MatmulOp>(op); mm && rowsOfLeft(mm, shared))
    return shared ? 1 : mm.getType().getShape().drop_back().back();
  if (isa<wg::LinearOp>(op)) // rows of x times the one weight
    return 1;
  return 0;
}

SmallVector<Window> wsc::lowering::operandWindows(Operation *op, unsigned result, int64_t r0,
                                                  int64_t r1) {
  Value res = op->getResult(result);
  ArrayRef<int64_t> rs = tensorType(res).getShape();
  int64_t n = streamWords(res), lo = r0 * n, hi = r1 * n;
  SmallVector<Window> w;
  for (Value v : op->getOperands())
    w.push_back(Window::whole(wordsOf(v)));
  if (r0 == 0 && r1 * n == wordsOf(res))
    return w;
  auto range = [&](unsigned i, int64_t first, int64_t end) {
    w[i] = {first, end - first, wordsOf(op->getOperand(i))};
  };
  // The smallest window of each operand that holds the words the result's
  // words [lo, hi) read: a range, or a range of every period of one of the
  // operand's trailing dimensions (a strided read).
  auto windowsOf = [&](function_ref<std::pair<unsigned, int64_t>(ArrayRef<int64_t>)> src) {
    SmallVector<SmallVector<int64_t>> periods;
    SmallVector<SmallVector<std::pair<int64_t, int64_t>>> spans;
    for (Value v : op->getOperands()) {
      SmallVector<int64_t> ps;
      ArrayRef<int64_t> shape = tensorType(v).getShape();
      for (int64_t d = int64_t(shape.size()) - 1, p = 1; d >= 0; --d)
        ps.push_back(p *= shape[d]);
      if (ps.empty())
        ps.push_back(1);
      spans.emplace_back(ps.size(), std::make_pair(INT64_MAX, INT64_MIN));
      periods.push_back(std::move(ps));
    }
    tableOver(rs, [&](ArrayRef<int64_t> idx) {
      auto [i, f] = src(idx);
      if (f >= 0)
        for (auto [p, s] : llvm::zip(periods[i], spans[i]))
          s = {std::min(s.first, f % p), std::max(s.second, f % p + 1)};
      return 0;
    }, lo, hi);
    SmallVector<Window> out;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      int64_t total = wordsOf(v);
      std::optional<Window> best;
      for (auto [p, s] : llvm::zip(periods[i], spans[i]))
        if (s.first < s.second) {
          Window c = {s.first, s.second - s.first, p};
          if (!best || c.words(total) < best->words(total))
            best = c;
        }
      out.push_back(best.value_or(Window{0, 1, total})); // untouched: one word takes its stream
    }
    return out;
  };
  StringRef name = op->getName().getStringRef();
  if (auto mm = dyn_cast<wg::MatmulOp>(op)) {
    bool shared = false;
    rowsOfLeft(mm, shared);
    ArrayRef<int64_t> b = mm.getRhs().getType().getShape();
    int64_t kk = b[b.size() - 2], perBatch = rs[rs.size() - 2];
    range(0, r0 * kk, r1 * kk);
    if (!shared)
      range(1, r0 / perBatch * kk * n, ceilDiv(r1, perBatch) * kk * n);
    return w;
  }
  if (auto linear = dyn_cast<wg::LinearOp>(op)) {
    int64_t kk = linear.getInput().getType().getShape().back();
    range(0, r0 * kk, r1 * kk);
    return w;
  }
  if (auto src = movementSource(op, result))
    return windowsOf(src);
  if (isa<wg::SoftmaxOp, wg::LayerNormOp, wg::RmsNormOp>(op) || name == "wsgraph.log_softmax" ||
      keepsOrder(op)) {
    range(0, lo, hi);
    return w;
  }
  // Elementwise: each operand broadcast to the result.
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    SmallVector<int64_t> own(tensorType(v).getShape());
    if (own == rs) {
      range(unsigned(i), lo, hi);
      continue;
    }
    Window one = windowsOf([&](ArrayRef<int64_t> idx) {
      return std::pair<unsigned, int64_t>{unsigned(i), broadcastIndex(own, idx)};
    })[i];
    w[i] = one;
  }
  return w;
}

int64_t wsc::lowering::streamWords(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getRank() == 0 ? 1 : std::max<int64_t>(1, t.getShape().back());
}

bool wsc::lowering::hasGenericKernel(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (unaryKinds().count(name) || binaryKinds().count(name) || reduceKinds().count(name) ||
      keepsOrder(op))
    return true;
  return isa<wg::WhereOp, wg::CastOp, wg::SoftmaxOp, wg::LayerNormOp, wg::RmsNormOp, wg::MatmulOp,
             wg::GemmOp,
             wg::LinearOp, wg::AttentionOp, wg::TransposeOp, wg::ExpandOp, wg::SliceOp,
             wg::SplitOp, wg::ConcatOp, wg::TriluOp, wg::GatherOp>(op) ||
         llvm::is_contained({"wsgraph.log_softmax", "wsgraph.tile",
                             "wsgraph.gather_elements"},
                            name);
}

SmallVector<std::pair<int64_t, int64_t>> wsc::lowering::chunkRows(Operation *op, unsigned result,
                                                                 int64_t sramWords) {
  Value r = op->getResult(result);
  int64_t n = streamWords(r), rows = wordsOf(r) / n, g = chunkGranularity(op, result);
  // Words one chunk holds: its operands' windows, its result, and about as
  // much again per operand for tables and spread copies; a little for code.
  auto words = [&](int64_t r0, int64_t r1) {
    int64_t held = 0;
    for (auto [v, w] : llvm::zip(op->getOperands(), operandWindows(op, result, r0, r1)))
      held += w.words(wordsOf(v));
    return held + (2 + int64_t(op->getNumOperands())) * (r1 - r0) * n + 512;
  };
  // Chunks of `per` rows: whole groups of g rows, else pieces of one group.
  auto chunksOf = [&](int64_t per, int64_t group = 0) {
    SmallVector<std::pair<int64_t, int64_t>> chunks;
    if (group == 0)
      group = per < g ? g : rows;
    for (int64_t start = 0; start < rows; start += group)
      for (int64_t r0 = start; r0 < std::min(rows, start + group); r0 += per)
        chunks.push_back({r0, std::min({rows, start + group, r0 + per})});
    return chunks;
  };
  // Every chunk must fit (a window may be wider where a chunk crosses a
  // head or a batch).
  int64_t budget = sramWords * 4 / 5;
  auto fits = [&](int64_t per) {
    return llvm::all_of(chunksOf(per), [&](auto c) { return words(c.first, c.second) <= budget; });
  };
  int64_t per = rows;
  if (g > 0) {
    while (per > g && !fits(per))
      per = std::max(g, ceilDiv(per / 2, g) * g);
    while (per > 1 && per <= g && !fits(per))
      per = ceilDiv(per, 2);
  }
  SmallVector<std::pair<int64_t, int64_t>> chunks = chunksOf(per);
  if (g != 1 || chunks.size() == 1)
    return chunks;
  // A chunk across two indices of a leading dimension can read a whole
  // period of a strided operand (a transpose moving an axis last): chunks
  // that start again at each index of the innermost leading dimension whose
  // rows hold them read a narrow window of every period. The fewer chunks win.
  ArrayRef<int64_t> shape = tensorType(r).getShape();
  for (int64_t each = rows; each >= 1; each = each > 1 ? ceilDiv(each, 2) : 0) {
    int64_t group = rows;
    for (int64_t d = int64_t(shape.size()) - 2, p = 1; d >= 0 && p < each; --d)
      group = p *= shape[d];
    SmallVector<std::pair<int64_t, int64_t>> aligned = chunksOf(each, std::max(group, each));
    if (llvm::all_of(aligned, [&](auto c) { return words(c.first, c.second) <= budget; }))
      return aligned.size() < chunks.size() ? aligned : chunks;
  }
  return chunks;
}

KernelPlan wsc::lowering::planGeneric(Operation *op, unsigned result, StringRef name) {
  KernelPlan plan;
  plan.anchor = op;
  plan.result = result;
  plan.kind = "generic";
  plan.name = name.str();
  plan.blocked = false;
  for (Value v : op->getOperands()) {
    auto it = llvm::find(plan.inputs, v);
    plan.operandInput.push_back(unsigned(it - plan.inputs.begin()));
    if (it == plan.inputs.end())
      plan.inputs.push_back(v);
  }
  plan.work = double(std::max<int64_t>(1, wordsOf(op->getResult(result))));
  plan.size = [](KernelPlan &p) { p.h = 1, p.w = 1; };
  return plan;
}
