//===- StreamWeights.cpp - weight streaming: one set of layer kernels -----===//
//
// In weight streaming the wafer holds one transformer block's kernels, and
// they run every layer in turn: each layer's weights are loaded from external
// memory (wskernel.load_tile) at the start of its pass, and the block's output
// runs back to the block's first kernels ("feedback" streams) until the last
// layer, whose output goes on to the final layer norm and the head.
//
// foldLayerPlans() checks that the blocks are identical and keeps layer 0's
// plans, carrying every later layer's weights; foldLayerBody() rewrites a
// built kernel's body to loop over the layers.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;

LogicalResult wsc::lowering::foldLayerPlans(func::FuncOp func, std::vector<KernelPlan> &plans,
                                            int64_t &layers) {
  // The blocks: contiguous runs of plans with the same layer index.
  size_t begin = plans.size(), end = 0;
  for (auto [i, p] : llvm::enumerate(plans))
    if (p.layer >= 0)
      begin = std::min(begin, i), end = i + 1;
  if (begin >= end)
    return func.emitError("mode=weight-streaming needs transformer blocks to stream, and this "
                          "model has none");
  layers = plans[end - 1].layer + 1;
  size_t period = (end - begin) / size_t(layers);
  for (size_t i = begin; i < end; ++i)
    if (plans[i].layer != int64_t((i - begin) / period) || (end - begin) % size_t(layers))
      return plans[i].anchor->emitError()
             << "mode=weight-streaming needs every transformer block to lower to the same "
                "kernels, but kernel '"
             << plans[i].name << "' breaks the pattern of block 0";
  llvm::DenseMap<Value, size_t> producer;
  for (auto [i, p] : llvm::enumerate(plans))
    producer[p.anchor->getResult(0)] = i;
  auto producedBy = [&](Value v) -> int64_t {
    auto it = producer.find(v);
    return it == producer.end() ? -1 : int64_t(it->second);
  };
  // Layer l repeats layer 0: same kinds and weight types; streams from inside
  // the block shift by l blocks, and the block input is the previous block's
  // output.
  size_t lastOfBlock = begin + period - 1;
  for (size_t i = begin; i < begin + period; ++i) {
    KernelPlan &first = plans[i];
    first.layers = layers;
    first.work *= double(layers); // every token passes the block once per layer
    first.feedsBack = i == lastOfBlock && layers > 1;
    size_t statics = llvm::count_if(first.inputs, isStatic);
    for (auto [j, in] : llvm::enumerate(first.inputs)) {
      if (isStatic(in) != (j >= first.inputs.size() - statics))
        return first.anchor->emitError()
               << "mode=weight-streaming: kernel '" << first.name
               << "' takes a weight before a stream";
      int64_t from = isStatic(in) ? -1 : producedBy(in);
      if (!isStatic(in) && from < int64_t(begin) && layers > 1)
        first.fedBack.push_back(unsigned(j));
    }
    for (int64_t l = 1; l < layers; ++l) {
      KernelPlan &later = plans[i + size_t(l) * period];
      bool same = later.kind == first.kind && later.inputs.size() == first.inputs.size();
      for (size_t j = 0; same && j < first.inputs.size(); ++j) {
        Value a = first.inputs[j], b = later.inputs[j];
        if (isStatic(a) || isStatic(b)) {
          same = a.getType() == b.getType();
          if (same)
            first.laterWeights.push_back(b);
          continue;
        }
        int64_t pa = producedBy(a), pb = producedBy(b);
        same = pa >= int64_t(begin) ? pb == pa + l * int64_t(period)
                                    : pb == int64_t(begin + size_t(l) * period) - 1;
      }
      if (!same)
        return later.anchor->emitError()
               << "mode=weight-streaming needs every transformer block to lower to the same "
                  "kernels, but kernel '"
               << later.name << "' differs from '" << first.name << "'";
    }
  }
  // After the blocks, the last block's output is layer 0's output kernel,
  // which sends it on in the last layer only.
  Value lastOut = plans[end - 1].anchor->getResult(0);
  Value foldedOut = plans[lastOfBlock].anchor->getResult(0);
  for (size_t i = end; i < plans.size(); ++i)
    for (Value &in : plans[i].inputs) {
      int64_t from = isStatic(in) ? -1 : producedBy(in);
      if (from >= int64_t(begin) && from < int64_t(end) && size_t(from) != end - 1)
        return plans[i].anchor->emitError()
               << "mode=weight-streaming: kernel '" << plans[i].name
               << "' reads a stream from inside the transformer blocks";
      if (in == lastOut)
        in = foldedOut;
    }
  if (llvm::any_of(func.getBody().front().getTerminator()->getOperands(),
                   [&](Value v) { return v == lastOut; }))
    return func.emitError("mode=weight-streaming: the last block's output is returned directly");
  plans.erase(plans.begin() + std::ptrdiff_t(begin + period), plans.begin() + std::ptrdiff_t(end));
  return success();
}

namespace {

/// Where the layer loop sits: `depth` loops enclose its body (counting
/// itself), and an op `d` loops deep finds the layer index at stride
/// index d - depth.
struct LayerLoop {
  wk::LoopOp loop;
  unsigned depth;
  /// The layer's stride index in the affines of an op `d` loops deep.
  unsigned index(unsigned d) const { return d - depth; }
};

/// Appends a guard to `op`, `d` loops deep: `layer * sign + base >= 0`.
void addLayerGuard(Operation *op, const LayerLoop &layer, unsigned d, int64_t sign,
                   int64_t base) {
  MLIRContext *ctx = op->getContext();
  SmallVector<int64_t> loop(layer.index(d) + 1, 0);
  loop.back() = sign;
  SmallVector<Attribute> guards;
  if (auto old = op->getAttrOfType<ArrayAttr>("guard"))
    guards.append(old.begin(), old.end());
  guards.push_back(wk::AffAttr::get(ctx, base, loop, 0, 0));
  op->setAttr("guard", ArrayAttr::get(ctx, guards));
}

/// `a` with stride `stride` on the loop at index `at` (0: the innermost),
/// a loop inserted there when `insert`.
wk::AffAttr withLoop(wk::AffAttr a, unsigned at, int64_t stride, bool insert) {
  SmallVector<int64_t> loop(a.getLoop());
  if (insert && loop.size() > at)
    loop.insert(loop.begin() + at, 0);
  if (stride) {
    if (loop.size() <= at)
      loop.resize(at + 1, 0);
    loop[at] = stride;
  }
  return wk::AffAttr::get(a.getContext(), a.getBase(), loop, a.getPx(), a.getPy());
}

/// The operands that are SRAM addresses (the others count elements).
bool isAddress(StringRef name) {
  return llvm::is_contained({"dst", "src", "lhs", "rhs", "matrix", "vector", "scalar", "table",
                             "index", "cond"},
                            name);
}

/// The state a layer keeps between tokens: ranges of the body's SRAM, each
/// moved to `to` + layer x its size.
/// One point at which an op runs: the indices of its loops (innermost
/// first) and a PE of the kernel.
struct RunPoint {
  SmallVector<int64_t> loops;
  int64_t x = 0, y = 0;
  int64_t at(wk::AffAttr a) const {
    int64_t v = a.getBase() + a.getPx() * x + a.getPy() * y;
    for (auto [k, s] : llvm::enumerate(a.getLoop()))
      if (k < loops.size())
        v += s * loops[k];
    return v;
  }
};

/// A point where `op` runs, its loops counting `counts` (innermost first):
/// a corner of its PE ranges at the loops' first or last indices where its
/// guards hold. (An address's buffer is the same at every point it runs;
/// its base alone may lie outside it.)
RunPoint runPoint(Operation &op, ArrayRef<int64_t> counts) {
  SmallVector<std::pair<int64_t, int64_t>> corners;
  if (auto when = op.getAttrOfType<ArrayAttr>("when"))
    for (Attribute a : when)
      if (auto r = dyn_cast<wk::PeRangeAttr>(a))
        corners.append({{r.getX0(), r.getY0()}, {r.getX1(), r.getY0()}, {r.getX0(), r.getY1()},
                        {r.getX1(), r.getY1()}});
  if (corners.empty())
    corners.push_back({0, 0});
  auto guards = op.getAttrOfType<ArrayAttr>("guard");
  RunPoint p;
  for (bool last : {false, true})
    for (auto [x, y] : corners) {
      p.loops.clear();
      for (int64_t c : counts)
        p.loops.push_back(last ? c - 1 : 0);
      p.x = x, p.y = y;
      if (!guards || llvm::all_of(guards, [&](Attribute g) {
            auto a = dyn_cast<wk::AffAttr>(g);
            return !a || p.at(a) >= 0;
          }))
        return p;
    }
  p.loops.assign(counts.size(), 0), p.x = corners[0].first, p.y = corners[0].second;
  return p;
}

/// The counts of the loops around `op` inside its kernel, innermost first.
SmallVector<int64_t> loopCounts(Operation *op) {
  SmallVector<int64_t> counts;
  for (auto loop = op->getParentOfType<wk::LoopOp>(); loop;
       loop = loop->getParentOfType<wk::LoopOp>())
    counts.push_back(int64_t(loop.getCount()));
  return counts;
}

struct LayerState {
  struct Range {
    int64_t first, size, to;
  };
  SmallVector<Range, 2> ranges;
  /// The range address `addr` lies in, if any.
  const Range *find(int64_t addr) const {
    for (const Range &r : ranges)
      if (addr >= r.first && addr < r.first + r.size)
        return &r;
    return nullptr;
  }
  /// The range an address operand of `op` reaches at `p`, if any.
  const Range *of(NamedAttribute attr, const RunPoint &p) const {
    auto a = dyn_cast<wk::AffAttr>(attr.getValue());
    return a && isAddress(attr.getName()) ? find(p.at(a)) : nullptr;
  }
  /// Whether `op` addresses the state.
  bool touchedBy(Operation &op) const {
    RunPoint p = runPoint(op, loopCounts(&op));
    return llvm::any_of(op.getAttrs(), [&](NamedAttribute attr) { return of(attr, p); });
  }
};

/// Rewrites the affines of `op`, `d` loops deep, for a layer loop inserted
/// at `layer`: each gets the loop's index (0), and an address into the
/// state moves to its layer's copy. `counts`: its loops before the layer
/// loop was inserted, innermost first.
void shiftForLayer(Operation &op, unsigned d, const LayerLoop &layer, const LayerState &state,
                   ArrayRef<int64_t> counts) {
  RunPoint p = runPoint(op, counts);
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : op.getAttrs()) {
    Attribute v = attr.getValue();
    if (auto a = dyn_cast<wk::AffAttr>(v)) {
      const LayerState::Range *r = state.of(attr, p);
      if (r)
        a = wk::AffAttr::get(a.getContext(), a.getBase() - r->first + r->to, a.getLoop(),
                             a.getPx(), a.getPy());
      v = withLoop(a, layer.index(d), r ? r->size : 0, true);
    } else if (auto list = dyn_cast<ArrayAttr>(v)) {
      SmallVector<Attribute> items(list.begin(), list.end());
      for (Attribute &item : items)
        if (auto a = dyn_cast<wk::AffAttr>(item))
          item = withLoop(a, layer.index(d), 0, true);
      v = ArrayAttr::get(op.getContext(), items);
    }
    attrs.push_back({attr.getName(), v});
  }
  op.setAttrs(attrs);
}

/// shiftForLayer over every op under `block`, `d` loops deep, inside loops
/// of `counts` (innermost first, the layer loop left out).
void shiftBlockForLayer(Block &block, unsigned d, const LayerLoop &layer, const LayerState &state,
                        SmallVector<int64_t> counts) {
  for (Operation &op : block) {
    if (auto loop = dyn_cast<wk::LoopOp>(op)) {
      SmallVector<int64_t> inner = {int64_t(loop.getCount())};
      inner.append(counts);
      shiftBlockForLayer(loop.getBody().front(), d + 1, layer, state, inner);
    } else {
      shiftForLayer(op, d, layer, state, counts);
    }
  }
}

/// Whether every layer's operand of a tile is the same value or literal
/// (rotary tables): a folded block holds it once.
bool sameEveryLayer(wk::KernelOp kernel, int64_t source, int64_t stride, int64_t layers) {
  auto literal = [](Value v) -> Attribute {
    auto c = v.getDefiningOp<wsgraph::ConstantOp>();
    return c ? c.getValue() : Attribute();
  };
  Value first = kernel.getInputs()[source];
  for (int64_t l = 1; l < layers; ++l) {
    Value v = kernel.getInputs()[source + l * stride];
    if (v != first && (!literal(v) || literal(v) != literal(first)))
      return false;
  }
  return true;
}

/// A generating program's per-token block: the body of the loops that
/// together count batch x tokens, each the only loop of its parent.
FailureOr<std::pair<Block *, unsigned>> perTokenBlock(wk::KernelOp kernel, int64_t steps) {
  Block *block = &kernel.getBody().front();
  unsigned depth = 0;
  for (int64_t covered = 1; covered < steps; ++depth) {
    auto loops = block->getOps<wk::LoopOp>();
    if (std::distance(loops.begin(), loops.end()) != 1)
      return failure();
    wk::LoopOp loop = *loops.begin();
    covered *= int64_t(loop.getCount());
    block = &loop.getBody().front();
    if (covered > steps)
      return failure();
  }
  return std::make_pair(block, depth);
}

} // namespace

namespace {

/// The state a folded or generating kernel keeps once per layer, each range
/// moved past the body's data (from `dataBytes` on): the kind's state
/// between tokens when generating, and in a folded block every tile but
/// those the same in every layer.
LayerState layerStateOf(wk::KernelOp kernel, const KernelPlan &p, ArrayRef<Operation *> tiles,
                        ArrayRef<std::pair<int64_t, int64_t>> kindState, int64_t dataBytes,
                        int64_t stride) {
  LayerState state;
  int64_t to = dataBytes;
  auto keep = [&](int64_t first, int64_t size) {
    state.ranges.push_back({first, size, to});
    to += size * p.layers;
  };
  if (p.tokenAtATime)
    for (auto [first, size] : kindState)
      keep(first, size);
  if (p.residentLayers)
    for (Operation *op : tiles) {
      auto init = cast<wk::InitTileOp>(op);
      if (!sameEveryLayer(kernel, int64_t(init.getSource()), stride, p.layers))
        keep(
            int64_t(init.getOffset()),
            4 * wk::tileWords(init.getStorage(), int64_t(init.getRows()), int64_t(init.getCols())));
    }
  return state;
}

/// Outside the token loop `outer` (once a sequence, say), an op on the
/// state runs for every layer's copy: it moves into a layer loop of its own.
void repeatOuterStateOps(wk::KernelOp kernel, Block *outer, unsigned outerDepth, int64_t layers,
                         const LayerState &state) {
  OpBuilder b(kernel.getContext());
  unsigned d = outerDepth;
  for (Operation *loop = outer->getParentOp(); loop != kernel; loop = loop->getParentOp()) {
    --d;
    for (Operation &op : llvm::make_early_inc_range(*loop->getBlock())) {
      if (isa<wk::LoopOp>(op) || !state.touchedBy(op))
        continue;
      SmallVector<int64_t> counts = loopCounts(&op);
      b.setInsertionPoint(&op);
      auto each = wk::LoopOp::create(b, op.getLoc(), layers);
      Block *inEach = &each.getBody().emplaceBlock();
      op.moveBefore(inEach, inEach->end());
      shiftForLayer(op, d + 1, LayerLoop{each, d + 1}, state, counts);
    }
  }
}

/// Each init_tile of layer 0's weights becomes every layer's: in a folded
/// block, a copy per layer where the state keeps it (a tile the same in
/// every layer stays as it is); in weight streaming, a load at the start of
/// the layer loop's body `inLoop`.
void placeLayerTiles(const KernelPlan &p, ArrayRef<Operation *> tiles, Block *inLoop,
                     const LayerState &state, int64_t stride) {
  OpBuilder b(inLoop->getParentOp()->getContext());
  OpBuilder loads = OpBuilder::atBlockBegin(inLoop); // in the tiles' order
  for (Operation *op : tiles) {
    auto init = cast<wk::InitTileOp>(op);
    if (p.residentLayers) {
      const LayerState::Range *r = state.find(int64_t(init.getOffset()));
      if (!r)
        continue; // the same for every layer: held once
      b.setInsertionPoint(init);
      for (int64_t l = 0; l < p.layers; ++l) {
        auto copy = cast<wk::InitTileOp>(b.clone(*init));
        copy.setSource(uint64_t(int64_t(init.getSource()) + l * stride));
        copy.setOffset(uint64_t(r->to + l * r->size));
      }
    } else {
      wk::LoadTileOp::create(loads, init.getLoc(), init.getSource(), stride, init.getOffset(),
                             init.getRows(), init.getCols(), init.getRowOrigin(),
                             init.getColOrigin(), init.getStorage());
    }
    init.erase();
  }
}

/// Fed-back inputs come from the block's output after layer 0 (their ports'
/// "fb" twins, with the same windows); the block's output goes back on
/// "fb" (in blocks: "fbout<i>") until the last layer, which sends it on.
void switchFeedbackPorts(wk::KernelOp kernel, const KernelPlan &p, Block *inLoop,
                         const LayerLoop &layer) {
  OpBuilder b(kernel.getContext());
  // (Ports are named by operand: each block's of a fed logical input.)
  llvm::StringSet<> fed;
  SmallVector<LogicalInput> ins = logicalInputs(kernel);
  for (unsigned j : p.fedBack)
    for (const std::string &port : ins[j].ports())
      fed.insert(port);
  for (auto filter : llvm::make_early_inc_range(kernel.getBody().front().getOps<wk::FilterOp>()))
    if (fed.contains(filter.getPort())) {
      b.setInsertionPointAfter(filter);
      cast<wk::FilterOp>(b.clone(*filter)).setPort(("fb" + filter.getPort().drop_front(2)).str());
    }
  SmallVector<std::pair<Operation *, unsigned>> work;
  std::function<void(Block &, unsigned)> collect = [&](Block &block, unsigned depth) {
    for (Operation &op : block) {
      if (auto loop = dyn_cast<wk::LoopOp>(op))
        collect(loop.getBody().front(), depth + 1);
      else if (isa<wk::RecvOp, wk::SendOp>(op))
        work.push_back({&op, depth});
    }
  };
  collect(*inLoop, layer.depth);
  // The block output goes back on "fb", or block i on "fbout<i>"
  // (wskernel::feedbackPort).
  // (A send's port or a relay's forward; -1 but for "out<i>".)
  auto outAttr = [](Operation *op) { return StringRef(isa<wk::SendOp>(op) ? "port" : "forward"); };
  auto resultOf = [&](Operation *op) {
    auto out = op->getAttrOfType<StringAttr>(outAttr(op));
    StringRef port = out ? out.getValue() : "";
    unsigned i = 0;
    return port.consume_front("out") && !port.getAsInteger(10, i) ? int(i) : -1;
  };
  int blocks = 0;
  for (auto [op, depth] : work)
    blocks = std::max(blocks, resultOf(op) + 1);
  for (auto [op, depth] : work) {
    if (auto recv = dyn_cast<wk::RecvOp>(op); recv && fed.contains(recv.getPort())) {
      b.setInsertionPointAfter(recv);
      auto again = cast<wk::RecvOp>(b.clone(*recv));
      again.setPort(("fb" + recv.getPort().drop_front(2)).str());
      addLayerGuard(recv, layer, depth, -1, 0);  // layer 0
      addLayerGuard(again, layer, depth, 1, -1); // layers 1 and on
    }
    // The block output (sent, or forwarded by a relay).
    if (int result = resultOf(op); p.feedsBack && result >= 0) {
      b.setInsertionPointAfter(op);
      Operation *again = b.clone(*op);
      again->setAttr(outAttr(op), b.getStringAttr(blocks > 1 ? "fbout" + std::to_string(result)
                                                          : std::string("fb")));
      addLayerGuard(op, layer, depth, 1, -(p.layers - 1));  // the last layer
      addLayerGuard(again, layer, depth, -1, p.layers - 2); // every other
    }
  }
}

} // namespace

int64_t wsc::lowering::foldLayerBody(wk::KernelOp kernel, const KernelPlan &p, int64_t batch,
                                     int64_t tokens,
                                     ArrayRef<std::pair<int64_t, int64_t>> layerState,
                                     int64_t dataBytes) {
  Block &top = kernel.getBody().front();
  // A pipelined run passes every token through a layer before the next
  // layer; a generating one passes a token through every layer.
  Block *outer = &top;
  unsigned outerDepth = 0;
  if (p.tokenAtATime) {
    auto block = perTokenBlock(kernel, batch * tokens);
    if (failed(block)) {
      kernel.emitError("kernel '") << kernel.getName()
                                   << "' has no loop over single tokens to run its layers in";
      return -1;
    }
    std::tie(outer, outerDepth) = *block;
  }
  SmallVector<Operation *> body, tiles;
  for (Operation &op : top)
    if (isa<wk::InitTileOp>(op))
      tiles.push_back(&op);
  for (Operation &op : *outer)
    if (!isa<wk::InitTileOp, wk::HostInputOp, wk::HostOutputOp, wk::FilterOp>(op))
      body.push_back(&op);
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToEnd(outer);
  auto layerLoop = wk::LoopOp::create(b, kernel.getLoc(), p.layers);
  Block *inLoop = &layerLoop.getBody().emplaceBlock();
  LayerLoop layer{layerLoop, outerDepth + 1};
  for (Operation *op : body)
    op->moveBefore(inLoop, inLoop->end());
  // The affines inside gain the layer loop's index; the state a layer
  // keeps moves past the data, one copy per layer.
  int64_t stride = int64_t(llvm::count_if(p.inputs, isStatic));
  LayerState state = layerStateOf(kernel, p, tiles, layerState, dataBytes, stride);
  shiftBlockForLayer(*inLoop, layer.depth, layer, state, loopCounts(layerLoop));
  repeatOuterStateOps(kernel, outer, outerDepth, p.layers, state);
  placeLayerTiles(p, tiles, inLoop, state, stride);
  kernel->setAttr(wk::kStreamedLayersAttr, b.getI64IntegerAttr(p.layers));
  if (p.layers > 1)
    switchFeedbackPorts(kernel, p, inLoop, layer);
  int64_t added = 0;
  for (const LayerState::Range &r : state.ranges)
    added += r.size * p.layers;
  return added;
}
