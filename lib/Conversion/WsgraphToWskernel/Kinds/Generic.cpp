//===- Generic.cpp - the generic kernel kind: any wsgraph op on one PE ----===//
//
// The generic kind computes one wsgraph op of any static shape and rank on a
// PE: it receives (or is given) every operand whole, computes with the
// PE's vector instructions, and sends its result as one stream of rows of
// the last dimension. Data movement (transpose, broadcast, slice, concat,
// tile, gather, ...) is one instruction, an indexed copy whose table the
// compiler writes as a constant operand; a gather by computed indices
// computes its table in SRAM. Fused kinds are the fast path; this one makes
// every op the importer accepts compile. See docs/rationale/generic.md.
//
//===----------------------------------------------------------------------===//
#include "GenericOps.h"
#include "wsc/Analysis/WeightData.h"
#include "Kind.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
using namespace wsc::lowering::generic;
namespace wg = wsc::wsgraph;

namespace {

/// Whether the host can write a strided window of static `v` as its words
/// alone: a constant, or an f32 weight with its values.
bool hostWindowed(Value v) {
  if (v.getDefiningOp<wg::ConstantOp>())
    return true;
  auto w = v.getDefiningOp<wg::WeightOp>();
  return w && !w.isElided() && tensorType(v).getElementType().isF32();
}

/// Writes one generic kernel's body.
class GenericWriter {
public:
  GenericWriter(Body &k, const KernelPlan &p, const CostModel &cost)
      : k(k), b(k.builder()), p(p), cost(cost), op(p.anchor) {
    Value r = op->getResult(p.result);
    rowLo = p.rowLo, rowHi = p.rowHi ? p.rowHi : wordsOf(r) / streamWords(r);
    // Each input's window: a strided one where a one-block stream brings
    // it (the routers' filters cut it) or the host writes it (an input or a
    // constant), else the rows of its last dimension that hold what the
    // chunk reads.
    SmallVector<std::optional<Window>> windows(p.inputs.size());
    for (auto [i, w] : llvm::enumerate(operandWindows(op, p.result, rowLo, rowHi))) {
      unsigned j = p.operandInput[i];
      Value v = op->getOperand(unsigned(i));
      int64_t n = streamWords(v), total = wordsOf(v);
      bool strided = w.period != total;
      bool byHost = !k.isStream(j) && (isa<BlockArgument>(v) || hostWindowed(v));
      if (strided && !byHost && !(k.isStream(j) && k.input(j).blocks.size() == 1))
        w = {w.first, (total / w.period - 1) * w.period + w.count, total}; // its span
      if (w.period == total) {
        int64_t first = w.first / n * n;
        w = {first, ceilDiv(w.first + w.count, n) * n - first, total};
      }
      windows[j] = !windows[j] || (windows[j]->first == w.first && windows[j]->count == w.count &&
                                   windows[j]->period == w.period)
                       ? w
                       : Window::whole(total); // read twice, differently
    }
    for (auto [j, w] : llvm::enumerate(windows))
      held.push_back(w.value_or(Window::whole(std::max<int64_t>(1, wordsOf(p.inputs[j])))));
  }

  /// Returns data bytes per PE and the estimated cycles of one run.
  FailureOr<std::pair<int64_t, double>> write();

private:
  wk::AffAttr at(int64_t addr, ArrayRef<int64_t> loop = {}) { return k.aff(addr, loop); }
  wk::AffAttr count(int64_t n) { return k.aff(n); }
  Location loc() { return b.getUnknownLoc(); }

  // Instructions, with their element type and cost.
  void unary(StringRef kind, int64_t dst, int64_t src, int64_t n, StringRef elem = "f32") {
    wk::UnaryOp::create(b, loc(), kind, at(dst), at(src), count(n), nullptr, nullptr, elem);
    bool slow = kind != "copy" && kind != "neg" && kind != "abs" && kind != "relu" &&
                kind != "not" && kind != "bit_not" && kind != "to_int" && kind != "to_float" &&
                kind != "floor" &&
                kind != "ceil";
    cycles += slow ? cost.transcendental(n) : cost.vector(n);
  }
  void vector(StringRef kind, int64_t dst, int64_t lhs, int64_t rhs, int64_t n, StringRef elem) {
    wk::VectorOp::create(b, loc(), kind, at(dst), at(lhs), at(rhs), count(n), nullptr, nullptr,
                         elem);
    cycles += kind == "div" || kind == "pow" || kind == "mod" ? cost.transcendental(n)
                                                              : cost.vector(n);
  }
  void fill(int64_t dst, float value, int64_t n, StringRef elem = "f32") {
    wk::ImmOp::create(b, loc(), b.getStringAttr("fill"), at(dst), at(dst),
                      b.getF32FloatAttr(value), count(n), nullptr, nullptr, b.getStringAttr(elem));
    cycles += cost.vector(n);
  }
  void imm(StringRef kind, int64_t dst, int64_t src, float value, int64_t n,
           StringRef elem = "f32") {
    wk::ImmOp::create(b, loc(), b.getStringAttr(kind), at(dst), at(src),
                      b.getF32FloatAttr(value), count(n), nullptr, nullptr, b.getStringAttr(elem));
    cycles += cost.vector(n);
  }
  void indexCopy(int64_t dst, int64_t src, int64_t table, int64_t n, int64_t m) {
    wk::IndexCopyOp::create(b, loc(), at(dst), at(src), at(table), count(n), count(m), nullptr,
                            nullptr);
    cycles += cost.words(n);
  }

  /// A constant i32 table in SRAM: an operand of the kernel, tiled in.
  int64_t table(ArrayRef<int32_t> values);
  /// Operand i of the op: its type, and where the PE holds it.
  RankedTensorType typeOf(unsigned i) { return tensorType(op->getOperand(i)); }
  int64_t in(unsigned i) { return inputs[p.operandInput[i]]; }
  /// The value this kernel computes (rows of it, for a chunk).
  Value resultValue() { return op->getResult(p.result); }
  /// Where the PE holds word `flat` of operand i, from in(i); the words it holds.
  int64_t heldAt(unsigned i, int64_t flat) { return held[p.operandInput[i]].at(flat); }
  int64_t heldWords(unsigned i) { return heldWords(p.operandInput[i], p.inputs[p.operandInput[i]]); }
  int64_t heldWords(unsigned input, Value v) { return held[input].words(wordsOf(v)); }
  /// The result's words this kernel computes (its rows [rowLo, rowHi)).
  int64_t resultN() { return streamWords(resultValue()); }
  int64_t chunkWords() { return (rowHi - rowLo) * resultN(); }
  SmallVector<int32_t> resultTable(function_ref<int64_t(ArrayRef<int64_t>)> at) {
    return tableOver(tensorType(resultValue()).getShape(), at, rowLo * resultN(),
                     rowHi * resultN());
  }
  /// Operand i spread over the result's words this kernel computes.
  int64_t broadcastToResult(unsigned i);
  /// Operand i broadcast to `shape`: its own words when the shapes match.
  int64_t broadcast(unsigned i, ArrayRef<int64_t> shape);
  /// Words of the inputs' region picked by `t` into a new buffer.
  int64_t pick(ArrayRef<int32_t> t) {
    int64_t dst = sram.words(int64_t(t.size()));
    indexCopy(dst, inputs[0], table(t), int64_t(t.size()), inputWords);
    return dst;
  }
  /// Moves axis `axis` of a tensor of `shape` at `src` last (a new buffer),
  /// or back from last with `back`.
  int64_t moveAxisLast(int64_t src, ArrayRef<int64_t> shape, int64_t axis, bool back);

  LogicalResult receiveInputs();
  /// Receives rows [first, first + rows) of stream input i (of `total` rows).
  void receiveRows(unsigned i, int64_t first, int64_t rows, int64_t total, bool whole);
  /// Receives a strided window of a one-block stream input of `total` words.
  void receiveStrided(unsigned i, Window w, int64_t total);
  /// Adds words [lo, hi) of a constant or weight as a kernel operand.
  /// A constant or weight operand's words in window `w`, as a new operand.
  FailureOr<unsigned> sliceOperand(Value v, Window w);
  void sendResult(int64_t addr);
  LogicalResult compute();
  FailureOr<int64_t> elementwise();
  /// Integers narrower than the PE's words wrap as their type does.
  void wrapNarrow(int64_t addr, int64_t n, Value result);
  /// dst = a - trunc(a / d) * d (C's fmod): the remainder with the dividend's sign.
  int64_t truncatedRemainder(int64_t dst, int64_t a, int64_t d, int64_t n, StringRef elem);
  FailureOr<int64_t> convert();
  FailureOr<int64_t> reduce();
  FailureOr<int64_t> softmax(bool log);
  /// layer_norm and rms_norm over the axes from `axis` on.
  FailureOr<int64_t> normalize();
  FailureOr<int64_t> matmul(unsigned ai, unsigned bi, bool transA, bool transB);
  /// A matrix operand of `shape` at addr, repeated over the `batch` dimensions.
  int64_t spreadOverBatch(int64_t addr, ArrayRef<int64_t> shape, ArrayRef<int64_t> batch);
  FailureOr<int64_t> gemm();
  FailureOr<int64_t> linear();
  FailureOr<int64_t> attention();
  FailureOr<int64_t> movement();
  FailureOr<int64_t> gatherByData();
  /// Matrix products of batches of [m, kk] x [kk, n] at a and bm into dst.
  void products(int64_t dst, int64_t a, int64_t bm, int64_t batches, int64_t m, int64_t kk,
                int64_t n, bool sharedB);

  Body &k;
  OpBuilder &b;
  const KernelPlan &p;
  const CostModel &cost;
  Operation *op;
  Sram sram;
  SmallVector<int64_t> inputs; // SRAM address of each operand, in one region
  int64_t inputWords = 0;
  double cycles = 0;
  int64_t result = -1;
  int64_t rowLo, rowHi; // the result rows this kernel computes (a chunk, or all)
  SmallVector<Window> held; // each input's window
};

int64_t GenericWriter::table(ArrayRef<int32_t> values) {
  wk::KernelOp kernel = k.kernel();
  OpBuilder outside(kernel);
  auto type = RankedTensorType::get({int64_t(values.size())}, b.getI32Type());
  Value c = wg::ConstantOp::create(outside, kernel.getLoc(),
                                   DenseIntElementsAttr::get(type, values));
  unsigned operand = kernel.getInputs().size();
  kernel.getInputsMutable().append(c);
  int64_t addr = sram.words(int64_t(values.size()));
  k.initTile(operand, addr, 1, int64_t(values.size()), {0, 0}, {0, 0});
  return addr;
}

int64_t GenericWriter::broadcast(unsigned i, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> own = typeOf(i).getShape();
  if (own == shape)
    return in(i);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  SmallVector<int32_t> t =
      tableOver(shape, [&](ArrayRef<int64_t> idx) { return broadcastIndex(own, idx); });
  int64_t dst = sram.words(n);
  indexCopy(dst, in(i), table(t), n, typeOf(i).getNumElements());
  return dst;
}

int64_t GenericWriter::broadcastToResult(unsigned i) {
  ArrayRef<int64_t> own = typeOf(i).getShape();
  if (own == tensorType(resultValue()).getShape())
    return in(i); // its window holds the chunk's rows
  SmallVector<int32_t> t =
      resultTable([&](ArrayRef<int64_t> idx) { return heldAt(i, broadcastIndex(own, idx)); });
  int64_t n = int64_t(t.size()), dst = sram.words(n);
  indexCopy(dst, in(i), table(t), n, heldWords(i));
  return dst;
}

int64_t GenericWriter::moveAxisLast(int64_t src, ArrayRef<int64_t> shape, int64_t axis,
                                    bool back) {
  int64_t rank = int64_t(shape.size());
  if (axis == rank - 1)
    return src;
  SmallVector<int64_t> perm; // the moved layout's dimensions, in the original's terms
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> moved;
  for (int64_t d : perm)
    moved.push_back(shape[d]);
  SmallVector<int64_t> s = stridesOf(shape), ms = stridesOf(moved);
  SmallVector<int32_t> t;
  if (!back) // moved[i] = original[perm(i)]
    t = tableOver(moved, [&](ArrayRef<int64_t> idx) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d)
        flat += idx[d] * s[perm[d]];
      return flat;
    });
  else // original[i] = moved[perm^-1(i)]
    t = tableOver(shape, [&](ArrayRef<int64_t> idx) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d)
        flat += idx[perm[d]] * ms[d];
      return flat;
    });
  int64_t n = int64_t(t.size());
  int64_t dst = sram.words(n);
  indexCopy(dst, src, table(t), n, n);
  return dst;
}

LogicalResult GenericWriter::receiveInputs() {
  // Every operand's window gets room in one region, in order, so that one
  // table can pick from all of them (a concat). A chunk's chain (the rows
  // before it) only passes through.
  size_t count = p.inputs.size() - (p.chained ? 1 : 0);
  for (size_t i = 0; i < count; ++i) {
    inputs.push_back(sram.words(std::max<int64_t>(1, heldWords(unsigned(i), p.inputs[i]))));
    inputWords += std::max<int64_t>(1, heldWords(unsigned(i), p.inputs[i]));
  }
  for (size_t i = 0; i < count; ++i) {
    Value v = p.inputs[i];
    Window w = held[i];
    int64_t n = streamWords(v), total = wordsOf(v);
    bool whole = w.first == 0 && w.count == total;
    if (k.isStream(unsigned(i))) {
      if (w.period == total)
        receiveRows(unsigned(i), w.first / n, w.count / n, total / n, whole);
      else
        receiveStrided(unsigned(i), w, total);
    } else if (isa<BlockArgument>(v)) {
      DenseI64ArrayAttr window;
      if (w.period != total)
        window = b.getDenseI64ArrayAttr({w.first, w.count, w.period});
      else if (!whole)
        window = b.getDenseI64ArrayAttr({w.first, w.count});
      wk::HostInputOp::create(b, loc(), k.operand(unsigned(i)), inputs[i], nullptr, window);
    } else if (isStatic(v)) {
      // A tile sees its operand as [elements / last dimension, last
      // dimension], a strided window's as one row per period.
      bool strided = w.period != total;
      FailureOr<unsigned> source = whole ? FailureOr<unsigned>(k.operand(unsigned(i)))
                                         : sliceOperand(v, strided ? w : Window{w.first, w.count, total});
      if (failed(source))
        return failure();
      k.initTile(*source, inputs[i], strided ? total / w.period : w.count / n,
                 strided ? w.count : n, {0, 0}, {0, 0});
    } else {
      return op->emitError("operand ") << i << " is neither a stream, a constant nor an input";
    }
  }
  return success();
}

void GenericWriter::receiveRows(unsigned i, int64_t first, int64_t rows, int64_t total,
                                bool whole) {
  // Each block of the stream's rows [first, first + rows): the routers'
  // filters keep just those (a period of the whole tensor) unless all are held.
  int64_t n = k.words(i);
  const LogicalInput &in = k.input(i);
  if (!whole)
    for (const InBlock &block : in.blocks)
      wk::FilterOp::create(b, loc(), block.port, k.aff(first * block.size),
                           k.aff(rows * block.size), nullptr,
                           b.getI64IntegerAttr(total * block.size));
  k.loop(rows, [&] {
    for (const InBlock &block : in.blocks)
      k.recv(block.port, at(inputs[i] + 4 * block.offset, {4 * n}), count(block.size));
  });
  cycles += cost.words(rows * n);
}

void GenericWriter::receiveStrided(unsigned i, Window w, int64_t total) {
  // One block: the filter keeps words [first, first + count) of every period.
  StringRef port = k.input(i).blocks.front().port;
  wk::FilterOp::create(b, loc(), port, k.aff(w.first), k.aff(w.count), nullptr,
                       b.getI64IntegerAttr(w.period));
  k.loop(total / w.period, [&] { k.recv(port, at(inputs[i], {4 * w.count}), count(w.count)); });
  cycles += cost.words(w.words(total));
}

FailureOr<unsigned> GenericWriter::sliceOperand(Value v, Window w) {
  wk::KernelOp kernel = k.kernel();
  OpBuilder outside(kernel);
  // Rows of the operand's last dimension (or the window's periods), as the
  // tile sees them.
  int64_t total = wordsOf(v), lo = w.first;
  int64_t n = w.period != total ? w.count : streamWords(v);
  auto type = RankedTensorType::get({w.words(total) / n, n}, tensorType(v).getElementType());
  Value slice;
  if (auto c = v.getDefiningOp<wg::ConstantOp>()) {
    auto dense = cast<DenseElementsAttr>(c.getValue());
    SmallVector<Attribute> values(dense.getValues<Attribute>()), held;
    for (int64_t start = 0; start < total; start += w.period)
      llvm::append_range(held, ArrayRef<Attribute>(values).slice(start + w.first, w.count));
    slice = wg::ConstantOp::create(outside, kernel.getLoc(), DenseElementsAttr::get(type, held));
  } else if (w.period != total || v.getDefiningOp<wg::WeightOp>().getStrides()) {
    // An f32 weight's values (hostWindowed), or a view's, which lie apart.
    FailureOr<std::vector<uint32_t>> bits = readF32Weight(v, kernel);
    if (failed(bits))
      return failure();
    SmallVector<APFloat> held;
    for (int64_t start = 0; start < total; start += w.period)
      for (int64_t j = 0; j < w.count; ++j)
        held.push_back(APFloat(APFloat::IEEEsingle(), APInt(32, (*bits)[start + w.first + j])));
    slice = wg::ConstantOp::create(outside, kernel.getLoc(), DenseElementsAttr::get(type, held));
  } else {
    auto w = v.getDefiningOp<wg::WeightOp>();
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    slice = wg::WeightOp::create(outside, kernel.getLoc(), type, w.getNameAttr(), w.getFileAttr(),
                                 outside.getI64IntegerAttr(int64_t(w.getOffset()) + lo * bytes),
                                 DenseI64ArrayAttr());
  }
  unsigned operand = kernel.getInputs().size();
  kernel.getInputsMutable().append(slice);
  return operand;
}

void GenericWriter::sendResult(int64_t addr) {
  int64_t n = resultN();
  // The chunks before this one pass through first: the stream is the rows
  // in order.
  if (p.chained) {
    StringRef chain = k.input(unsigned(p.inputs.size() - 1)).blocks.front().port;
    k.loop(rowLo, [&] { k.relay(chain, "out0", at(0), count(n), "discard"); });
    cycles += cost.words(rowLo * n);
  }
  k.loop(rowHi - rowLo, [&] { k.send("out0", at(addr, {4 * n}), count(n)); });
  k.outBlocks.push_back(n);
  cycles += cost.words(chunkWords());
}

FailureOr<std::pair<int64_t, double>> GenericWriter::write() {
  if (failed(receiveInputs()) || failed(compute()))
    return failure();
  sendResult(result);
  return std::make_pair(sram.next, cycles);
}

LogicalResult GenericWriter::compute() {
  StringRef name = op->getName().getStringRef();
  FailureOr<int64_t> r = failure();
  if (unaryKinds().count(name) || binaryKinds().count(name) || isa<wg::WhereOp>(op))
    r = elementwise();
  else if (isa<wg::CastOp>(op))
    r = convert();
  else if (reduceKinds().count(name))
    r = reduce();
  else if (isa<wg::SoftmaxOp>(op) || name == "wsgraph.log_softmax")
    r = softmax(name == "wsgraph.log_softmax");
  else if (isa<wg::LayerNormOp, wg::RmsNormOp>(op))
    r = normalize();
  else if (isa<wg::MatmulOp>(op))
    r = matmul(0, 1, false, false);
  else if (isa<wg::GemmOp>(op))
    r = gemm();
  else if (isa<wg::LinearOp>(op))
    r = linear();
  else if (isa<wg::AttentionOp>(op))
    r = attention();
  else if (keepsOrder(op)) // its words, from the chunk's first (the window starts on a row)
    r = in(0) + 4 * heldAt(0, rowLo * resultN());
  else
    r = movement();
  if (failed(r))
    return failure();
  result = *r;
  return success();
}

FailureOr<int64_t> GenericWriter::elementwise() {
  StringRef name = op->getName().getStringRef();
  int64_t n = chunkWords();
  int64_t dst = sram.words(n);
  StringRef elem = elemOf(op->getOperand(0));
  if (StringRef kind = unaryKindOf(op); !kind.empty()) {
    bool typed = kind == "neg" || kind == "abs" || kind == "relu";
    unary(kind, dst, in(0), n, typed ? elem : "f32");
    wrapNarrow(dst, n, op->getResult(0));
    return dst;
  }
  if (auto it = binaryKinds().find(name); it != binaryKinds().end()) {
    int64_t lhs = broadcastToResult(0), rhs = broadcastToResult(1);
    StringRef kind = it->second;
    // Pow's exponent may be of another type than its base: it takes the base's.
    if (elemOf(op->getOperand(1)) != elem) {
      int64_t t = sram.words(n);
      unary(elem == "f32" ? "to_float" : "to_int", t, rhs, n);
      rhs = t;
    }
    if (auto fmod = op->getAttrOfType<BoolAttr>("fmod"); fmod && fmod.getValue())
      return truncatedRemainder(dst, lhs, rhs, n, elem);
    bool logic = kind == "and" || kind == "or" || kind == "xor" || kind.starts_with("bit_");
    vector(kind, dst, lhs, rhs, n, logic ? "f32" : elem);
    wrapNarrow(dst, n, op->getResult(0));
    return dst;
  }
  // where
  int64_t c = broadcastToResult(0), x = broadcastToResult(1), y = broadcastToResult(2);
  wk::SelectOp::create(b, loc(), at(dst), at(c), at(x), at(y), count(n), nullptr, nullptr);
  cycles += cost.vector(n);
  return dst;
}

void GenericWriter::wrapNarrow(int64_t addr, int64_t n, Value result) {
  auto it = dyn_cast<IntegerType>(tensorType(result).getElementType());
  if (!it || it.getWidth() == 1 || it.getWidth() >= 32)
    return;
  // Modulo 2^w, then (signed) shifted back into [-2^(w-1), 2^(w-1)).
  float span = float(int64_t(1) << it.getWidth()), half = span / 2;
  int64_t m = sram.words(n);
  fill(m, span, n, "i32");
  if (!it.isUnsigned())
    imm("add", addr, addr, half, n, "i32");
  vector("mod", addr, addr, m, n, "i32");
  if (!it.isUnsigned())
    imm("add", addr, addr, -half, n, "i32");
}

int64_t GenericWriter::truncatedRemainder(int64_t dst, int64_t a, int64_t d, int64_t n,
                                          StringRef elem) {
  // a - trunc(a / d) * d: integer division truncates already; a float
  // quotient is truncated as floor or ceil by its sign.
  int64_t q = sram.words(n);
  vector("div", q, a, d, n, elem);
  if (elem == "f32") {
    int64_t up = sram.words(n), down = sram.words(n), zero = sram.words(n), pos = sram.words(n);
    unary("floor", down, q, n);
    unary("ceil", up, q, n);
    fill(zero, 0, n);
    vector("ge", pos, q, zero, n, elem);
    wk::SelectOp::create(b, loc(), at(q), at(pos), at(down), at(up), count(n), nullptr, nullptr);
    cycles += cost.vector(n);
  }
  vector("mul", q, q, d, n, elem);
  vector("sub", dst, a, q, n, elem);
  return dst;
}

FailureOr<int64_t> GenericWriter::convert() {
  Value x = op->getOperand(0), out = op->getResult(0);
  int64_t n = chunkWords(), dst = sram.words(n);
  Type from = tensorType(x).getElementType(), to = tensorType(out).getElementType();
  if (to.isInteger(1) && !from.isInteger(1)) {
    // Nonzero is true: not (x == 0).
    int64_t zero = sram.words(n);
    fill(zero, 0, n, elemOf(x));
    vector("eq", dst, in(0), zero, n, elemOf(x));
    unary("not", dst, dst, n);
  } else if (isa<FloatType>(from) && !isa<FloatType>(to)) {
    unary("to_int", dst, in(0), n);
  } else if (!isa<FloatType>(from) && isa<FloatType>(to)) {
    unary("to_float", dst, in(0), n);
  } else {
    return in(0); // f32 to f32, or integers held alike
  }
  return dst;
}

FailureOr<int64_t> GenericWriter::reduce() {
  Value x = op->getOperand(0);
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  int64_t rank = int64_t(shape.size());
  auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  SmallVector<bool> reduced(rank, !axesAttr || axesAttr.empty());
  if (axesAttr)
    for (int64_t a : axesAttr.asArrayRef())
      reduced[a < 0 ? a + rank : a] = true;
  // Kept dimensions first, reduced ones last: each result word is a run.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d])
      perm.push_back(d);
  int64_t keptRank = int64_t(perm.size());
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      perm.push_back(d);
  int64_t runs = 1, run = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < keptRank ? runs : run) *= shape[perm[i]];
  if (run == 0)
    return op->emitError("the generic kernel cannot reduce over an empty dimension");
  int64_t src = in(0);
  if (!llvm::is_sorted(perm)) {
    SmallVector<int64_t> moved;
    for (int64_t d : perm)
      moved.push_back(shape[d]);
    SmallVector<int64_t> s = stridesOf(shape);
    SmallVector<int32_t> t = tableOver(moved, [&](ArrayRef<int64_t> idx) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d)
        flat += idx[d] * s[perm[d]];
      return flat;
    });
    src = sram.words(runs * run);
    indexCopy(src, in(0), table(t), runs * run, runs * run);
  }
  StringRef name = op->getName().getStringRef();
  StringRef elem = elemOf(x);
  int64_t dst = sram.words(runs);
  k.loop(runs, [&] {
    wk::ReduceOp::create(b, loc(), reduceKinds().lookup(name), at(dst, {4}), at(src, {4 * run}),
                         count(run), nullptr, nullptr, elem);
  });
  cycles += double(runs) * cost.vector(run);
  if (name == "wsgraph.reduce_mean")
    imm("mul", dst, dst, float(1.0 / double(run)), runs);
  return dst;
}

FailureOr<int64_t> GenericWriter::softmax(bool log) {
  ArrayRef<int64_t> shape = typeOf(0).getShape();
  int64_t rank = int64_t(shape.size());
  int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  axis = axis < 0 ? axis + rank : axis;
  int64_t n = chunkWords(), run = shape[axis], runs = n / run;
  int64_t rows = moveAxisLast(in(0), shape, axis, false);
  int64_t dst = rows == in(0) ? sram.words(n) : rows;
  int64_t s = sram.words(1), e = log ? sram.words(run) : 0;
  k.loop(runs, [&] {
    wk::AffAttr row = at(rows, {4 * run}), out = at(dst, {4 * run});
    wk::ReduceOp::create(b, loc(), "max", at(s), row, count(run), nullptr, nullptr);
    wk::ScalarOp::create(b, loc(), "sub", out, row, at(s), count(run), nullptr, nullptr);
    wk::UnaryOp::create(b, loc(), "exp", log ? at(e) : out, out, count(run), nullptr, nullptr);
    wk::ReduceOp::create(b, loc(), "sum", at(s), log ? at(e) : out, count(run), nullptr, nullptr);
    if (log) {
      wk::UnaryOp::create(b, loc(), "log", at(s), at(s), count(1), nullptr, nullptr);
      wk::ScalarOp::create(b, loc(), "sub", out, out, at(s), count(run), nullptr, nullptr);
    } else {
      wk::ScalarOp::create(b, loc(), "div", out, out, at(s), count(run), nullptr, nullptr);
    }
  });
  cycles += double(runs) * (3 * cost.vector(run) + 2 * cost.transcendental(run));
  return moveAxisLast(dst, shape, axis, true);
}

FailureOr<int64_t> GenericWriter::normalize() {
  // layer_norm: (x - mean) * rsqrt(var + eps) * scale (+ bias); rms_norm:
  // x * rsqrt(mean(x^2) + eps) * scale; over the axes from `axis` on.
  bool center = isa<wg::LayerNormOp>(op);
  ArrayRef<int64_t> shape = typeOf(0).getShape();
  int64_t rank = int64_t(shape.size()), axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  axis = axis < 0 ? axis + rank : axis;
  int64_t n = chunkWords(), run = 1;
  for (int64_t d = axis; d < rank; ++d)
    run *= shape[d];
  int64_t runs = n / run;
  SmallVector<int64_t> tail(shape.drop_front(axis));
  int64_t scale = broadcast(1, tail), bias = op->getNumOperands() > 2 ? broadcast(2, tail) : -1;
  int64_t dst = sram.words(n), sq = sram.words(run), s = sram.words(1);
  FloatAttr inv = b.getF32FloatAttr(float(1.0 / double(run)));
  auto scalarImm = [&](StringRef kind, FloatAttr value) {
    wk::ImmOp::create(b, loc(), b.getStringAttr(kind), at(s), at(s), value, count(1), nullptr,
                      nullptr, b.getStringAttr("f32"));
  };
  k.loop(runs, [&] {
    wk::AffAttr x = at(in(0), {4 * run}), out = at(dst, {4 * run});
    if (center) {
      wk::ReduceOp::create(b, loc(), "sum", at(s), x, count(run), nullptr, nullptr);
      scalarImm("mul", inv);
      wk::ScalarOp::create(b, loc(), "sub", out, x, at(s), count(run), nullptr, nullptr);
    } else {
      wk::UnaryOp::create(b, loc(), "copy", out, x, count(run), nullptr, nullptr);
    }
    wk::VectorOp::create(b, loc(), "mul", at(sq), out, out, count(run), nullptr, nullptr);
    wk::ReduceOp::create(b, loc(), "sum", at(s), at(sq), count(run), nullptr, nullptr);
    scalarImm("mul", inv);
    scalarImm("add", op->getAttrOfType<FloatAttr>("epsilon"));
    wk::UnaryOp::create(b, loc(), "rsqrt", at(s), at(s), count(1), nullptr, nullptr);
    wk::ScalarOp::create(b, loc(), "mul", out, out, at(s), count(run), nullptr, nullptr);
    wk::VectorOp::create(b, loc(), "mul", out, out, at(scale), count(run), nullptr, nullptr);
    if (bias >= 0)
      wk::VectorOp::create(b, loc(), "add", out, out, at(bias), count(run), nullptr, nullptr);
  });
  cycles += double(runs) * (7 * cost.vector(run) + cost.transcendental(1));
  return dst;
}

void GenericWriter::products(int64_t dst, int64_t a, int64_t bm, int64_t batches, int64_t m,
                             int64_t kk, int64_t n, bool sharedB) {
  // Row i of batch j: dst[j, i, :] = a[j, i, :] x b[j].
  k.loop(batches, [&] {
    k.loop(m, [&] {
      wk::MatvecOp::create(b, loc(), at(dst, {4 * n, 4 * m * n}),
                           at(bm, {0, sharedB ? 0 : 4 * kk * n}), at(a, {4 * kk, 4 * m * kk}),
                           count(kk), count(n), /*transposed=*/true, false, "f32", nullptr,
                           nullptr);
    });
  });
  cycles += double(batches * m) * cost.matvec(kk, n);
}

FailureOr<int64_t> GenericWriter::matmul(unsigned ai, unsigned bi, bool transA, bool transB) {
  SmallVector<int64_t> as(typeOf(ai).getShape()), bs(typeOf(bi).getShape());
  int64_t aAddr = in(ai), bAddr = in(bi);
  if (transA)
    aAddr = moveAxisLast(aAddr, as, 0, false), std::swap(as[0], as[1]);
  if (transB)
    bAddr = moveAxisLast(bAddr, bs, 0, false), std::swap(bs[0], bs[1]);
  // 1-D operands: a row vector on the left, a column on the right.
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], kk = as.back(), n = bs.back();
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2),
                    bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  SmallVector<int64_t> batch;
  size_t rank = std::max(aBatch.size(), bBatch.size());
  for (size_t d = 0; d < rank; ++d) {
    int64_t x = d + aBatch.size() >= rank ? aBatch[d + aBatch.size() - rank] : 1;
    int64_t y = d + bBatch.size() >= rank ? bBatch[d + bBatch.size() - rank] : 1;
    batch.push_back(std::max(x, y));
  }
  int64_t batches = 1;
  for (int64_t d : batch)
    batches *= d;
  bool sharedB = llvm::all_of(bBatch, [](int64_t d) { return d == 1; });
  if (rowHi - rowLo != batches * m) { // a chunk: rows of the left operand
    int64_t rows = rowHi - rowLo, dst = sram.words(rows * n);
    // Within one batch, the right operand's window is that batch's matrix.
    if (sharedB || rowLo / m == (rowHi - 1) / m)
      products(dst, aAddr, bAddr, 1, rows, kk, n, true);
    else
      products(dst, aAddr, bAddr, rows / m, m, kk, n, false);
    return dst;
  }
  aAddr = spreadOverBatch(aAddr, as, batch);
  if (!sharedB)
    bAddr = spreadOverBatch(bAddr, bs, batch);
  int64_t dst = sram.words(batches * m * n);
  products(dst, aAddr, bAddr, batches, m, kk, n, sharedB);
  return dst;
}

int64_t GenericWriter::spreadOverBatch(int64_t addr, ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> batch) {
  SmallVector<int64_t> full(batch);
  full.append(shape.end() - 2, shape.end());
  if (ArrayRef<int64_t>(full) == shape)
    return addr;
  int64_t own = 1;
  for (int64_t d : shape)
    own *= d;
  SmallVector<int32_t> t =
      tableOver(full, [&](ArrayRef<int64_t> idx) { return broadcastIndex(shape, idx); });
  int64_t dst = sram.words(int64_t(t.size()));
  indexCopy(dst, addr, table(t), int64_t(t.size()), own);
  return dst;
}

FailureOr<int64_t> GenericWriter::gemm() {
  auto g = cast<wg::GemmOp>(op);
  FailureOr<int64_t> ab = matmul(0, 1, g.getTransA(), g.getTransB());
  if (failed(ab))
    return failure();
  ArrayRef<int64_t> shape = g.getType().getShape();
  int64_t n = g.getType().getNumElements();
  float alpha = g.getAlpha().convertToFloat(), beta = g.getBeta().convertToFloat();
  if (alpha != 1.0f)
    imm("mul", *ab, *ab, alpha, n);
  if (g.getC() && beta != 0.0f) {
    int64_t c = broadcast(2, shape), t = sram.words(n);
    imm("mul", t, c, beta, n);
    vector("add", *ab, *ab, t, n, "f32");
  }
  return *ab;
}

FailureOr<int64_t> GenericWriter::linear() {
  auto l = cast<wg::LinearOp>(op);
  FailureOr<int64_t> y = matmul(0, 1, false, false);
  if (failed(y) || !l.getBias())
    return y;
  vector("add", *y, *y, broadcastToResult(2), (rowHi - rowLo) * resultN(), "f32");
  return *y;
}

FailureOr<int64_t> GenericWriter::attention() {
  auto attn = cast<wg::AttentionOp>(op);
  ArrayRef<int64_t> qs = attn.getQuery().getType().getShape(),
                    ks = attn.getKey().getType().getShape();
  if (qs.size() != 4 || ks != attn.getValue().getType().getShape() || qs[0] != ks[0] ||
      qs[1] != ks[1] || qs[3] != ks[3])
    return op->emitError("the generic attention takes q, k and v of [batch, heads, tokens, d]");
  int64_t bh = qs[0] * qs[1], tq = qs[2], tk = ks[2], d = qs[3];
  // Scores: q x k^T, one row per query (k's rows are the matrix).
  int64_t scores = sram.words(bh * tq * tk);
  k.loop(bh, [&] {
    k.loop(tq, [&] {
      wk::MatvecOp::create(b, loc(), at(scores, {4 * tk, 4 * tq * tk}),
                           at(in(1), {0, 4 * tk * d}), at(in(0), {4 * d, 4 * tq * d}),
                           count(tk), count(d), false, false, "f32", nullptr, nullptr);
    });
  });
  cycles += double(bh * tq) * cost.matvec(tk, d);
  imm("mul", scores, scores, attn.getScale().convertToFloat(), bh * tq * tk);
  // Future keys score -inf, or future_fill and then the mask.
  if (attn.getCausal()) { // the last tq keys are the queries' own positions
    int64_t off = tk - tq, all = bh * tq * tk;
    SmallVector<int32_t> keep = tableOver({bh, tq, tk}, [&](ArrayRef<int64_t> idx) {
      return idx[2] > idx[1] + off ? 0 : 1;
    });
    int64_t minus = sram.words(all);
    std::optional<APFloat> futureFill = attn.getFutureFill();
    fill(minus, futureFill ? futureFill->convertToFloat() : -std::numeric_limits<float>::infinity(),
         all);
    wk::SelectOp::create(b, loc(), at(scores), at(table(keep)), at(scores), at(minus),
                         count(all), nullptr, nullptr);
    cycles += cost.vector(all);
  }
  if (attn.getMask()) { // [B, S], the same for every head and query of a sequence
    int64_t heads = qs[1];
    SmallVector<int32_t> t = tableOver({bh, tq, tk}, [&](ArrayRef<int64_t> idx) {
      return idx[0] / heads * tk + idx[2];
    });
    int64_t spread = sram.words(bh * tq * tk);
    indexCopy(spread, in(3), table(t), bh * tq * tk, typeOf(3).getNumElements());
    vector("add", scores, scores, spread, bh * tq * tk, "f32");
  }
  int64_t s = sram.words(1);
  k.loop(bh * tq, [&] {
    wk::AffAttr row = at(scores, {4 * tk});
    wk::ReduceOp::create(b, loc(), "max", at(s), row, count(tk), nullptr, nullptr);
    wk::ScalarOp::create(b, loc(), "sub", row, row, at(s), count(tk), nullptr, nullptr);
    wk::UnaryOp::create(b, loc(), "exp", row, row, count(tk), nullptr, nullptr);
    wk::ReduceOp::create(b, loc(), "sum", at(s), row, count(tk), nullptr, nullptr);
    wk::ScalarOp::create(b, loc(), "div", row, row, at(s), count(tk), nullptr, nullptr);
  });
  cycles += double(bh * tq) * (3 * cost.vector(tk) + 2 * cost.transcendental(tk));
  int64_t dst = sram.words(bh * tq * d);
  products(dst, scores, in(2), bh, tq, tk, d, false);
  return dst;
}

FailureOr<int64_t> GenericWriter::movement() {
  if (isa<wg::GatherOp>(op) || op->getName().getStringRef() == "wsgraph.gather_elements")
    return gatherByData();
  MovementSource src = movementSource(op, p.result);
  if (!src)
    return op->emitError("'") << op->getName() << "' has no generic kernel";
  // Each result word names an operand's word (held from its window's start).
  return pick(resultTable([&](ArrayRef<int64_t> idx) -> int64_t {
    auto [i, flat] = src(idx);
    return flat < 0 ? -1 : (in(i) - inputs[0]) / 4 + heldAt(i, flat);
  }));
}

/// Gather and gather-elements: the table is computed in SRAM from the
/// indices (they may be data), then one indexed copy picks the words.
FailureOr<int64_t> GenericWriter::gatherByData() {
  bool elements = !isa<wg::GatherOp>(op);
  ArrayRef<int64_t> is = typeOf(0).getShape();
  ArrayRef<int64_t> js = typeOf(1).getShape();
  ArrayRef<int64_t> os = tensorType(op->getResult(0)).getShape();
  int64_t rank = int64_t(is.size());
  int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  axis = axis < 0 ? axis + rank : axis;
  SmallVector<int64_t> s = stridesOf(is);
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  int64_t dim = is[axis];
  // Each result word's index word, and the rest of its source offset.
  SmallVector<int32_t> which = tableOver(os, [&](ArrayRef<int64_t> idx) {
    if (elements)
      return broadcastIndex(js, idx);
    int64_t f = 0, jr = int64_t(js.size());
    SmallVector<int64_t> js_s = stridesOf(js);
    for (int64_t d = 0; d < jr; ++d)
      f += idx[axis + d] * js_s[d];
    return f;
  });
  SmallVector<int32_t> rest = tableOver(os, [&](ArrayRef<int64_t> idx) {
    int64_t f = 0, jr = elements ? 1 : int64_t(js.size());
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      int64_t at = d < axis ? d : d - 1 + jr;
      f += idx[at] * s[d];
    }
    return f;
  });
  int64_t ind = sram.words(n), neg = sram.words(n), zero = sram.words(n);
  indexCopy(ind, in(1), table(which), n, typeOf(1).getNumElements());
  // Negative indices count from the end: idx + (idx < 0) * dim.
  fill(zero, 0, n, "i32");
  vector("lt", neg, ind, zero, n, "i32");
  imm("mul", neg, neg, float(dim), n, "i32");
  vector("add", ind, ind, neg, n, "i32");
  imm("mul", ind, ind, float(s[axis]), n, "i32");
  vector("add", ind, ind, table(rest), n, "i32");
  int64_t dst = sram.words(n);
  indexCopy(dst, in(0), ind, n, typeOf(0).getNumElements());
  return dst;
}

} // namespace

namespace {

class GenericKind : public KernelKind {
public:
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override {
    GenericWriter writer(k, p, cost);
    FailureOr<std::pair<int64_t, double>> r = writer.write();
    if (failed(r))
      return {-1, 0};
    return {r->first, r->second / double(std::max<int64_t>(1, batch * tokens))};
  }
};

} // namespace

const KernelKind &wsc::lowering::genericKind() {
  static const GenericKind kind;
  return kind;
}

