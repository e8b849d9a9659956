//===- WskernelDialect.cpp - per-core kernels -----------------------------===//
#include "wskernel/WskernelDialect.h"
#include "wsc/format/SparseTile.h"

#include "wafer/WaferDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace wsc::wskernel;

#include "wskernel/WskernelDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "wskernel/WskernelTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "wskernel/WskernelAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "wskernel/WskernelOps.cpp.inc"

void WskernelDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "wskernel/WskernelTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "wskernel/WskernelAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "wskernel/WskernelOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Affine values: <base = B[, loop = [s0, s1]][, px = X][, py = Y]>
//===----------------------------------------------------------------------===//

Attribute AffAttr::parse(AsmParser &parser, Type) {
  int64_t base = 0, px = 0, py = 0;
  SmallVector<int64_t> loop;
  if (parser.parseLess() || parser.parseKeyword("base") || parser.parseEqual() ||
      parser.parseInteger(base))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "loop") {
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
            return parser.parseInteger(loop.emplace_back());
          }))
        return {};
    } else if (key == "px" || key == "py") {
      if (parser.parseInteger(key == "px" ? px : py))
        return {};
    } else {
      parser.emitError(parser.getCurrentLocation(), "unknown key '") << key << "' in aff";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return AffAttr::get(parser.getContext(), base, loop, px, py);
}

void AffAttr::print(AsmPrinter &printer) const {
  printer << "<base = " << getBase();
  if (!getLoop().empty()) {
    printer << ", loop = [";
    llvm::interleaveComma(getLoop(), printer);
    printer << "]";
  }
  if (getPx())
    printer << ", px = " << getPx();
  if (getPy())
    printer << ", py = " << getPy();
  printer << ">";
}

LogicalResult StreamType::verify(function_ref<InFlightDiagnostic()> emitError, int64_t size,
                                 Type) {
  if (size <= 0)
    return emitError() << "a stream carries a positive number of words per token, not " << size;
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

RegionKind KernelOp::getRegionKind(unsigned) { return RegionKind::Graph; }

LogicalResult KernelOp::verify() {
  if (getGrid().size() != 2 || getGrid()[0] <= 0 || getGrid()[1] <= 0)
    return emitOpError("grid must be [h, w] with positive sizes");
  for (NamedAttribute channel : getChannels()) {
    auto shape = dyn_cast<StringAttr>(channel.getValue());
    if (!shape || !llvm::is_contained(ArrayRef<StringRef>{"col_chain", "col_chain_north",
                                                          "row_chain", "row_chain_west"},
                                      shape.getValue()))
      return emitOpError("channel '")
             << channel.getName().getValue()
             << "' must be \"col_chain\", \"col_chain_north\", \"row_chain\" or \"row_chain_west\"";
  }
  if (auto into = (*this)->getAttrOfType<IntegerAttr>(kWritesIntoAttr)) {
    int64_t i = into.getInt();
    if (i < 0 || i >= int64_t(getInputs().size()) || getNumResults() != 1 ||
        getInputs()[i].getType() != getResult(0).getType())
      return emitOpError("kernel '") << getName() << "' writes into operand " << i
                                     << ", which must be a tensor of its result's type";
  }
  if (auto module = (*this)->getParentOfType<ModuleOp>())
    if (auto arch = module->getAttrOfType<wsc::wafer::ArchAttr>(wsc::wafer::kArchAttrName))
      if (static_cast<int64_t>(getSramBytesPerPe()) > arch.getSramBytes())
        return emitOpError("kernel '") << getName() << "' needs " << getSramBytesPerPe()
                                       << " bytes of SRAM per PE, but a PE of arch '"
                                       << arch.getName() << "' has " << arch.getSramBytes();
  return success();
}

namespace {
/// Upper bounds of affine values over the loop nest and the rectangle.
struct Bounds {
  // Index ranges of the loops, innermost first: [0, count-1], or one point.
  SmallVector<std::pair<int64_t, int64_t>> loops;
  int64_t h, w;
  // The PE coordinates the current op runs on (its `when`, as a bounding box).
  int64_t x0 = 0, x1 = 0, y0 = 0, y1 = 0;

  void selectAll() { x0 = 0, x1 = w - 1, y0 = 0, y1 = h - 1; }
  void select(ArrayAttr when) {
    selectAll();
    if (!when || when.empty())
      return;
    x0 = y0 = std::numeric_limits<int64_t>::max(), x1 = y1 = std::numeric_limits<int64_t>::min();
    for (Attribute a : when)
      if (auto r = dyn_cast<PeRangeAttr>(a)) {
        x0 = std::min(x0, std::max<int64_t>(0, r.getX0()));
        x1 = std::max(x1, std::min(w - 1, r.getX1()));
        y0 = std::min(y0, std::max<int64_t>(0, r.getY0()));
        y1 = std::max(y1, std::min(h - 1, r.getY1()));
      }
  }
  static int64_t extreme(int64_t coef, int64_t lo, int64_t hi, bool upper) {
    return upper ? std::max(coef * lo, coef * hi) : std::min(coef * lo, coef * hi);
  }
  int64_t bound(AffAttr a, bool upper) const {
    int64_t v = a.getBase();
    for (auto [k, s] : llvm::enumerate(a.getLoop()))
      if (k < loops.size())
        v += extreme(s, loops[k].first, loops[k].second, upper);
    return v + extreme(a.getPx(), x0, x1, upper) + extreme(a.getPy(), y0, y1, upper);
  }
  int64_t max(AffAttr a) const { return bound(a, true); }
  int64_t min(AffAttr a) const { return bound(a, false); }
};
} // namespace

/// Byte ranges [addr, addr + 4 * words) that an op touches.
static SmallVector<std::pair<AffAttr, int64_t>> touchedRanges(Operation *op, const Bounds &b) {
  SmallVector<std::pair<AffAttr, int64_t>> r;
  auto words = [&](AffAttr n) { return b.max(n); };
  if (auto send = dyn_cast<SendOp>(op))
    r.push_back({send.getSrc(), words(send.getN())});
  else if (auto recv = dyn_cast<RecvOp>(op); recv && recv.isProduct()) {
    r.push_back({recv.getDst(), words(*recv.getCols())});
    int64_t cols = words(*recv.getCols());
    r.push_back({*recv.getMatrix(), sparseEntries(recv.getStorage())
                                        ? tileWords(recv.getStorage(), *recv.getTileRows(), cols)
                                        : words(recv.getN()) * cols});
  } else if (recv && recv.getCombine() != "discard")
    r.push_back({recv.getDst(), words(recv.getN())});
  else if (auto mv = dyn_cast<MatvecOp>(op)) {
    int64_t rows = words(mv.getRows()), cols = words(mv.getCols());
    r.push_back({mv.getMatrix(), tileWords(mv.getStorage(), rows, cols)});
    r.push_back({mv.getDst(), mv.getTransposed() ? cols : rows});
    r.push_back({mv.getVector(), mv.getTransposed() ? rows : cols});
  } else if (auto v = dyn_cast<VectorOp>(op)) {
    for (AffAttr a : {v.getDst(), v.getLhs(), v.getRhs()})
      r.push_back({a, words(v.getN())});
  } else if (auto s = dyn_cast<ScalarOp>(op)) {
    r.push_back({s.getDst(), words(s.getN())});
    r.push_back({s.getLhs(), words(s.getN())});
    r.push_back({s.getScalar(), 1});
  } else if (auto i = dyn_cast<ImmOp>(op)) {
    r.push_back({i.getDst(), words(i.getN())});
    if (i.getKind() != "fill")
      r.push_back({i.getSrc(), words(i.getN())});
  } else if (auto u = dyn_cast<UnaryOp>(op)) {
    r.push_back({u.getDst(), words(u.getN())});
    r.push_back({u.getSrc(), words(u.getN())});
  } else if (auto red = dyn_cast<ReduceOp>(op)) {
    r.push_back({red.getDst(), 1});
    r.push_back({red.getSrc(), words(red.getN())});
  } else if (auto load = dyn_cast<LoadTileOp>(op)) {
    r.push_back({AffAttr::get(op->getContext(), load.getOffset()),
                 tileWords(load.getStorage(), int64_t(load.getRows()), int64_t(load.getCols()))});
  } else if (auto g = dyn_cast<GatherOp>(op)) {
    r.push_back({g.getDst(), words(g.getCols())});
    r.push_back({g.getTable(), storageWords(g.getStorage(), words(g.getRows()) * words(g.getCols()))});
    r.push_back({g.getIndex(), 1});
  } else if (auto sel = dyn_cast<SelectOp>(op)) {
    for (AffAttr a : {sel.getDst(), sel.getCond(), sel.getLhs(), sel.getRhs()})
      r.push_back({a, words(sel.getN())});
  } else if (auto ic = dyn_cast<IndexCopyOp>(op)) {
    r.push_back({ic.getDst(), words(ic.getN())});
    r.push_back({ic.getTable(), words(ic.getN())});
    r.push_back({ic.getSrc(), words(ic.getM())});
  }
  return r;
}

/// Checks an op's counts and addresses over the ranges of `b`.
static LogicalResult checkPoint(Operation &op, const Bounds &b, int64_t &extent) {
  if (auto n = op.getAttrOfType<AffAttr>("n"); n && b.min(n) < 0)
    return op.emitOpError("element count can be negative");
  for (auto [addr, words] : touchedRanges(&op, b)) {
    if (b.min(addr) < 0)
      return op.emitOpError("address ") << addr << " can be negative";
    if (words < 0)
      return op.emitOpError("element count can be negative");
    extent = std::max(extent, b.max(addr) + 4 * words);
  }
  return success();
}

/// Guarded ops are checked point by point up to this many points.
static constexpr int64_t kMaxGuardPoints = 1 << 12;

static LogicalResult walkExtent(Block &block, Bounds &b, int64_t &extent) {
  for (Operation &op : block) {
    if (auto loop = dyn_cast<LoopOp>(op)) {
      b.loops.insert(b.loops.begin(), {0, int64_t(loop.getCount()) - 1});
      if (failed(walkExtent(loop.getBody().front(), b, extent)))
        return failure();
      b.loops.erase(b.loops.begin());
      continue;
    }
    b.select(op.getAttrOfType<ArrayAttr>("when"));
    if (b.x0 > b.x1 || b.y0 > b.y1)
      continue; // runs on no PE
    auto guards = op.getAttrOfType<ArrayAttr>("guard");
    if (!guards || guards.empty()) {
      if (failed(checkPoint(op, b, extent)))
        return failure();
      continue;
    }
    // Guards are affine conditions: check every point they let through
    // (loop indices and coordinates), when there are not too many. A
    // dimension that neither the guards nor the op's addresses and counts
    // depend on stays a range: its points would all check the same.
    bool byX = false, byY = false;
    SmallVector<bool> byLoop(b.loops.size(), false);
    auto note = [&](AffAttr a) {
      byX |= a.getPx() != 0, byY |= a.getPy() != 0;
      for (auto [k, coef] : llvm::enumerate(a.getLoop()))
        if (k < byLoop.size() && coef)
          byLoop[k] = true;
    };
    for (Attribute g : guards)
      if (auto a = dyn_cast<AffAttr>(g))
        note(a);
    for (NamedAttribute attr : op.getAttrDictionary())
      if (auto a = dyn_cast<AffAttr>(attr.getValue()))
        note(a);
    int64_t spanX = byX ? b.x1 - b.x0 + 1 : 1, spanY = byY ? b.y1 - b.y0 + 1 : 1;
    int64_t points = spanX * spanY;
    for (auto [k, range] : llvm::enumerate(b.loops))
      if (byLoop[k])
        points = points > kMaxGuardPoints ? points : points * (range.second - range.first + 1);
    if (points > kMaxGuardPoints)
      continue; // the runtime still faults on a bad address
    Bounds at = b;
    for (int64_t p = 0; p < points; ++p) {
      int64_t rest = p;
      if (byX)
        at.x0 = at.x1 = b.x0 + rest % spanX, rest /= spanX;
      if (byY)
        at.y0 = at.y1 = b.y0 + rest % spanY, rest /= spanY;
      for (size_t k = 0; k < b.loops.size(); ++k) {
        if (!byLoop[k])
          continue;
        int64_t span = b.loops[k].second - b.loops[k].first + 1;
        int64_t i = b.loops[k].first + rest % span;
        rest /= span;
        at.loops[k] = {i, i};
      }
      bool runs = llvm::all_of(guards, [&](Attribute g) {
        auto a = dyn_cast<AffAttr>(g);
        return a && at.min(a) >= 0;
      });
      if (runs && failed(checkPoint(op, at, extent)))
        return failure();
    }
  }
  return success();
}

FailureOr<int64_t> KernelOp::bodyExtent(KernelOp kernel) {
  Bounds b{{}, kernel.getHeight(), kernel.getWidth()};
  b.selectAll();
  int64_t extent = 0;
  for (Operation &op : kernel.getBody().front()) {
    if (auto init = dyn_cast<InitTileOp>(op))
      extent = std::max<int64_t>(
          extent, init.getOffset() + 4 * tileWords(init.getStorage(), int64_t(init.getRows()),
                                                   int64_t(init.getCols())));
    if (auto in = dyn_cast<HostInputOp>(op)) {
      auto type = dyn_cast<ShapedType>(kernel.getInputs()[in.getSource()].getType());
      int64_t elements = in.getWindow() ? (*in.getWindow())[1] : type ? type.getNumElements() : 0;
      extent = std::max<int64_t>(extent, in.getOffset() + 4 * elements);
    }
    if (auto out = dyn_cast<HostOutputOp>(op))
      extent = std::max<int64_t>(extent, out.getOffset() + 4 * out.getRows() * out.getCols());
  }
  if (failed(walkExtent(kernel.getBody().front(), b, extent)))
    return failure();
  return extent;
}

/// Kernels of the same block as `kernel` whose feedback names it.
SmallVector<KernelOp> wsc::wskernel::feedbackReaders(KernelOp kernel) {
  SmallVector<KernelOp> readers;
  if (Block *block = kernel->getBlock())
    for (auto other : block->getOps<KernelOp>())
      if (DictionaryAttr fb = other.getFeedbackAttr())
        for (NamedAttribute entry : fb)
          if (auto from = dyn_cast<StringAttr>(entry.getValue());
              from && from.getValue() == kernel.getName() && !llvm::is_contained(readers, other))
            readers.push_back(other);
  return readers;
}

std::string wsc::wskernel::feedbackPort(KernelOp feeder, unsigned result) {
  auto streams = llvm::count_if(feeder->getResultTypes(), [](Type t) { return isa<StreamType>(t); });
  return streams > 1 ? "fbout" + std::to_string(result) : std::string("fb");
}

SmallVector<FeedbackStream, 1> wsc::wskernel::feedbackStreams(KernelOp feeder) {
  SmallVector<FeedbackStream, 1> streams;
  for (KernelOp reader : feedbackReaders(feeder))
    for (NamedAttribute entry : reader.getFeedbackAttr()) {
      auto from = dyn_cast<StringAttr>(entry.getValue());
      unsigned operand = 0;
      if (!from || from.getValue() != feeder.getName() ||
          entry.getName().getValue().drop_front(2).getAsInteger(10, operand) ||
          operand >= reader.getInputs().size())
        continue;
      Value in = reader.getInputs()[operand];
      auto result = dyn_cast<OpResult>(in);
      std::string port = feedbackPort(feeder, result ? result.getResultNumber() : 0);
      auto it = llvm::find_if(streams, [&](const FeedbackStream &s) { return s.port == port; });
      if (it == streams.end())
        it = streams.insert(streams.end(), FeedbackStream{port, 0, {}});
      // A generating program's next token id stands in for the host's.
      auto stream = dyn_cast<StreamType>(in.getType());
      it->size = std::max<int64_t>(it->size, stream ? stream.getSize() : 1);
      it->reads.push_back({reader, entry.getName().str()});
    }
  return streams;
}

PeBox wsc::wskernel::boundingBox(ArrayRef<PeBox> boxes) {
  PeBox box = boxes.front();
  for (const PeBox &b : boxes.drop_front())
    box = {std::min(box.x0, b.x0), std::max(box.x1, b.x1), std::min(box.y0, b.y0),
           std::max(box.y1, b.y1)};
  return box;
}

SmallVector<PeBox, 1> wsc::wskernel::portPes(KernelOp kernel, StringRef port, bool sends) {
  SmallVector<PeBox, 1> boxes;
  int64_t h = kernel.getHeight(), w = kernel.getWidth();
  auto add = [&](int64_t x0, int64_t x1, int64_t y0, int64_t y1) {
    if (x0 > x1 || y0 > y1)
      return;
    PeBox box{x0, x1, y0, y1};
    if (!llvm::any_of(boxes, [&](const PeBox &b) { return b.contains(x0, y0) && b.contains(x1, y1); }))
      boxes.push_back(box);
  };
  kernel.getBody().walk([&](Operation *op) {
    ArrayAttr when;
    if (auto send = dyn_cast<SendOp>(op); send && sends && send.getPort() == port)
      when = send.getWhenAttr();
    else if (auto relay = dyn_cast<RecvOp>(op); relay && sends && relay.getForward() == port)
      when = relay.getWhenAttr();
    else if (auto recv = dyn_cast<RecvOp>(op); recv && !sends && recv.getPort() == port)
      when = recv.getWhenAttr();
    else
      return;
    if (!when || when.empty())
      return add(0, w - 1, 0, h - 1);
    for (Attribute a : when)
      if (auto r = dyn_cast<PeRangeAttr>(a))
        add(std::max<int64_t>(0, r.getX0()), std::min<int64_t>(w - 1, r.getX1()),
            std::max<int64_t>(0, r.getY0()), std::min<int64_t>(h - 1, r.getY1()));
  });
  return boxes;
}

SmallVector<ChannelHop> wsc::wskernel::channelHops(KernelOp kernel, StringRef name) {
  auto shape = kernel.getChannels().getAs<StringAttr>(name);
  if (!shape)
    return {};
  int64_t dx = 0, dy = 0;
  if (shape.getValue() == "col_chain")
    dy = 1;
  else if (shape.getValue() == "col_chain_north")
    dy = -1;
  else if (shape.getValue() == "row_chain_west")
    dx = -1;
  else
    dx = 1;
  int64_t h = kernel.getHeight(), w = kernel.getWidth();
  std::vector<bool> from(h * w, false);
  for (const PeBox &b : portPes(kernel, name, /*sends=*/true))
    for (int64_t y = std::max<int64_t>(b.y0, -dy); y <= std::min(b.y1, h - 1 - dy); ++y)
      for (int64_t x = std::max<int64_t>(b.x0, -dx); x <= std::min(b.x1, w - 1 - dx); ++x)
        from[y * w + x] = true;
  SmallVector<ChannelHop> hops;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      if (from[y * w + x])
        hops.push_back({x, y, dx, dy});
  return hops;
}

/// The kernel named `name` in the block of `kernel`, if any.
KernelOp wsc::wskernel::feedbackSource(KernelOp kernel, StringRef name) {
  if (Block *block = kernel->getBlock())
    for (auto other : block->getOps<KernelOp>())
      if (other.getName() == name)
        return other;
  return {};
}

LogicalResult KernelOp::verifyRegions() {
  int64_t numIn = getInputs().size(), numOut = getNumResults();
  auto validPort = [&](StringRef port) {
    int64_t i;
    if (port == "fb")
      return !feedbackReaders(*this).empty();
    if (StringRef rest = port; rest.consume_front("fbout") && !rest.getAsInteger(10, i))
      return i >= 0 && i < numOut && !feedbackReaders(*this).empty();
    if (getFeedbackAttr() && getFeedbackAttr().get(port))
      return true;
    if (getChannels().get(port))
      return true;
    // in<i> and out<i>, on a copy: "inner" must not lose its "in".
    StringRef rest = port;
    if (rest.consume_front("in") && !rest.getAsInteger(10, i))
      return i >= 0 && i < numIn;
    rest = port;
    if (rest.consume_front("out") && !rest.getAsInteger(10, i))
      return i >= 0 && i < numOut;
    return false;
  };
  if (getFeedbackAttr())
    for (NamedAttribute fb : getFeedbackAttr()) {
      auto from = dyn_cast<StringAttr>(fb.getValue());
      if (!fb.getName().getValue().starts_with("fb") || fb.getName().getValue() == "fb" || !from)
        return emitOpError("feedback entries must map a port 'fb<i>' to a kernel name, not '")
               << fb.getName().getValue() << "'";
      if (!feedbackSource(*this, from.getValue()))
        return emitOpError("feedback port '")
               << fb.getName().getValue() << "' names kernel '" << from.getValue()
               << "', which is not a kernel of the same function";
    }
  auto result = getBody().walk([&](Operation *op) -> WalkResult {
    // (what, port) pairs the op names.
    SmallVector<std::pair<StringRef, StringRef>, 2> ports;
    if (auto send = dyn_cast<SendOp>(op))
      ports.push_back({"port", send.getPort()});
    else if (auto recv = dyn_cast<RecvOp>(op)) {
      ports.push_back({"port", recv.getPort()});
      if (recv.getForward())
        ports.push_back({"forward port", *recv.getForward()});
    } else if (auto filter = dyn_cast<FilterOp>(op))
      ports.push_back({"port", filter.getPort()});
    for (auto [what, port] : ports)
      if (!validPort(port))
        return op->emitOpError(what) << " '" << port << "' is not an input, output or channel of '"
                                     << getName() << "'",
               WalkResult::interrupt();
    if (auto init = dyn_cast<InitTileOp>(op);
        init && (static_cast<int64_t>(init.getSource()) < 0 ||
                 static_cast<int64_t>(init.getSource()) >= numIn))
      return op->emitOpError("source ") << init.getSource() << " is not an operand",
             WalkResult::interrupt();
    if (auto load = dyn_cast<LoadTileOp>(op)) {
      int64_t layers = int64_t(cast<LoopOp>(op->getParentOp()).getCount());
      int64_t last = int64_t(load.getSource()) + int64_t(load.getStride()) * (layers - 1);
      if (last >= numIn)
        return op->emitOpError("the tile of the last layer comes from operand ")
                   << last << ", but the kernel has " << numIn << " operands",
               WalkResult::interrupt();
    }
    if (auto in = dyn_cast<HostInputOp>(op);
        in && (static_cast<int64_t>(in.getSource()) < 0 ||
               static_cast<int64_t>(in.getSource()) >= numIn))
      return op->emitOpError("source ") << in.getSource() << " is not an operand",
             WalkResult::interrupt();
    if (auto out = dyn_cast<HostOutputOp>(op);
        out && (static_cast<int64_t>(out.getResult()) < 0 ||
                static_cast<int64_t>(out.getResult()) >= numOut))
      return op->emitOpError("result ") << out.getResult() << " is not a result",
             WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  auto extent = bodyExtent(*this);
  if (failed(extent))
    return failure();
  if (*extent > static_cast<int64_t>(getSramBytesPerPe()))
    return emitOpError("kernel '") << getName() << "' touches SRAM up to byte " << *extent
                                   << " but declares " << getSramBytesPerPe() << " bytes per PE";
  return success();
}

LogicalResult LoopOp::verify() {
  if (static_cast<int64_t>(getCount()) <= 0)
    return emitOpError("count must be positive");
  return success();
}

/// "sparse:N" or "sparse:N:V": N and the values' storage V (f32 when absent).
namespace {
struct SparseStorage {
  int64_t entries;
  StringRef values;
  wsc::format::SparseGaps gaps;
};
} // namespace

static std::optional<SparseStorage> parseSparse(StringRef storage) {
  wsc::format::SparseGaps gaps = wsc::format::SparseGaps::Bytes;
  if (storage.consume_front("sparse4:"))
    gaps = wsc::format::SparseGaps::Nibbles;
  else if (!storage.consume_front("sparse:"))
    return std::nullopt;
  auto [count, values] = storage.split(':');
  int64_t n;
  if (count.getAsInteger(10, n) || n < 0)
    return std::nullopt;
  if (values.empty() && !storage.ends_with(":"))
    values = "f32";
  if (values != "f32" && values != "f16" && values != "bf16")
    return std::nullopt;
  return SparseStorage{n, values, gaps};
}

std::optional<int64_t> wsc::wskernel::sparseEntries(StringRef storage) {
  if (auto sparse = parseSparse(storage))
    return sparse->entries;
  return std::nullopt;
}

bool wsc::wskernel::nibbleGaps(StringRef storage) {
  auto sparse = parseSparse(storage);
  return sparse && sparse->gaps == wsc::format::SparseGaps::Nibbles;
}

StringRef wsc::wskernel::elementStorage(StringRef storage) {
  if (auto sparse = parseSparse(storage))
    return sparse->values;
  return storage;
}

std::string wsc::wskernel::sparseStorage(int64_t entries, StringRef values, bool nibbles) {
  std::string s = (nibbles ? "sparse4:" : "sparse:") + std::to_string(entries);
  return values == "f32" ? s : s + ":" + values.str();
}

int64_t wsc::wskernel::tileWords(StringRef storage, int64_t rows, int64_t cols) {
  if (auto sparse = parseSparse(storage))
    return int64_t(format::storedTileWords(
        uint64_t(rows), uint64_t(cols), uint64_t(sparse->entries),
        sparse->values == "f32" ? format::SparseValues::Words : format::SparseValues::Halves,
        sparse->gaps));
  return storageWords(storage, rows * cols);
}

/// `sparse`: whether the op may hold its matrix in the sparse layout.
static LogicalResult checkStorage(Operation *op, StringRef storage, bool sparse = false) {
  if (storage == "f32" || storage == "f16" || storage == "bf16" ||
      (sparse && sparseEntries(storage)))
    return success();
  return op->emitOpError("storage '") << storage << "' is not one of f32, f16, bf16"
                                      << (sparse ? ", sparse[4]:N[:f16|:bf16]" : "");
}
LogicalResult MatvecOp::verify() { return checkStorage(*this, getStorage(), true); }
LogicalResult GatherOp::verify() { return checkStorage(*this, getStorage()); }

/// What init_tile and load_tile both require of a tile.
template <typename TileOp> static LogicalResult checkTile(TileOp op) {
  if (failed(checkStorage(op, op.getStorage(), true)))
    return failure();
  if (static_cast<int64_t>(op.getRows()) <= 0 || static_cast<int64_t>(op.getCols()) <= 0 ||
      op.getRowOrigin().size() != 2 || op.getColOrigin().size() != 2)
    return op.emitOpError("needs positive rows and cols, and [py, px] origins");
  if (static_cast<int64_t>(op.getOffset()) < 0 || op.getOffset() % 4)
    return op.emitOpError("offset must be a multiple of 4");
  return success();
}

static LogicalResult checkColWindow(Operation *op, ArrayRef<int64_t> window) {
  if (window.empty() || (window.size() == 2 && window[0] >= 0 && window[0] < window[1]))
    return success();
  return op->emitOpError("col_window must be [lo, hi] with 0 <= lo < hi");
}

/// `perm` is empty or a permutation of 0..P-1.
static LogicalResult checkPermutation(Operation *op, StringRef name, ArrayRef<int64_t> perm) {
  llvm::SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[size_t(p)])
      return op->emitOpError(name) << " must be a permutation of 0.." << perm.size() - 1;
    seen[size_t(p)] = true;
  }
  return success();
}

LogicalResult InitTileOp::verify() {
  if (failed(checkTile(*this)))
    return failure();
  ArrayRef<int64_t> inter = getColInterleave();
  if (!inter.empty() && (inter.size() != 2 || inter[0] < 1 || inter[1] < 1))
    return emitOpError("col_interleave must be [groups, unit], both positive");
  if (!inter.empty() && !getColWindow().empty())
    return emitOpError("col_interleave and col_window do not combine");
  if (failed(checkPermutation(*this, "col_perm", getColPerm())) ||
      failed(checkPermutation(*this, "row_perm", getRowPerm())))
    return failure();
  if (!getColPerm().empty() && (!inter.empty() || !getColWindow().empty()))
    return emitOpError("col_perm combines with neither col_interleave nor col_window");
  return checkColWindow(*this, getColWindow());
}
LogicalResult HostOutputOp::verify() {
  if (static_cast<int64_t>(getRows()) <= 0 || static_cast<int64_t>(getCols()) <= 0 ||
      getRowOrigin().size() != 2 || getColOrigin().size() != 2)
    return emitOpError("needs positive rows and cols, and [py, px] origins");
  if (static_cast<int64_t>(getOffset()) < 0 || getOffset() % 4)
    return emitOpError("offset must be a multiple of 4");
  return checkColWindow(*this, getColWindow());
}

LogicalResult FilterOp::verify() {
  if (!getPort().starts_with("in") && !getPort().starts_with("fb"))
    return emitOpError("filters an input port (in<i> or fb<i>), not '") << getPort() << "'";
  if (!getFirst().getLoop().empty() || !getCount().getLoop().empty())
    return emitOpError("window must not depend on loop indices");
  // Over the selected PEs (the corners bound an affine window).
  auto kernel = (*this)->getParentOfType<KernelOp>();
  int64_t x0 = 0, x1 = kernel.getWidth() - 1, y0 = 0, y1 = kernel.getHeight() - 1;
  if (ArrayAttr when = getWhenAttr(); when && !when.empty()) {
    auto r = dyn_cast<PeRangeAttr>(when[0]);
    if (when.size() != 1 || !r)
      return emitOpError("when must be one PE range");
    x0 = std::max<int64_t>(x0, r.getX0()), x1 = std::min<int64_t>(x1, r.getX1());
    y0 = std::max<int64_t>(y0, r.getY0()), y1 = std::min<int64_t>(y1, r.getY1());
  }
  int64_t limit = std::numeric_limits<int64_t>::max();
  unsigned operand;
  if (getPort().starts_with("in") && !getPort().drop_front(2).getAsInteger(10, operand) &&
      operand < kernel.getInputs().size())
    if (auto s = dyn_cast<StreamType>(kernel.getInputs()[operand].getType()))
      limit = s.getSize();
  if (std::optional<int64_t> period = getPeriod()) {
    if (*period <= 0)
      return emitOpError("period must be positive");
    limit = *period;
  }
  for (int64_t x : {x0, x1})
    for (int64_t y : {y0, y1}) {
      int64_t first = getFirst().getBase() + getFirst().getPx() * x + getFirst().getPy() * y;
      int64_t count = getCount().getBase() + getCount().getPx() * x + getCount().getPy() * y;
      if (first < 0 || count <= 0 || first + count > limit)
        return emitOpError("window [") << first << ", " << first + count << ") of PE (" << x
                                       << ", " << y << ") must be non-empty and inside the "
                                       << (limit == std::numeric_limits<int64_t>::max()
                                               ? std::string("message")
                                               : std::to_string(limit) +
                                                     (getPeriod() ? "-word period"
                                                                  : "-word message"));
    }
  return success();
}

LogicalResult HostInputOp::verify() {
  std::optional<ArrayRef<int64_t>> window = getWindow();
  if (!window)
    return success();
  auto kernel = (*this)->getParentOfType<KernelOp>();
  int64_t source = static_cast<int64_t>(getSource());
  auto type = source < int64_t(kernel.getInputs().size())
                  ? dyn_cast<ShapedType>(kernel.getInputs()[source].getType())
                  : ShapedType();
  int64_t total = type && type.hasStaticShape() ? type.getNumElements() : -1;
  int64_t period = window->size() == 3 ? (*window)[2] : total;
  if (window->size() < 2 || window->size() > 3 || (*window)[0] < 0 || (*window)[1] <= 0 ||
      (window->size() == 3 && (period <= 0 || (total >= 0 && total % period))) ||
      (period >= 0 && (*window)[0] + (*window)[1] > period))
    return emitOpError("window must be [first, count] inside the input, or [first, count, "
                       "period] inside a period that divides it");
  return success();
}

LogicalResult LoadTileOp::verify() {
  if (failed(checkTile(*this)))
    return failure();
  if (static_cast<int64_t>(getStride()) <= 0)
    return emitOpError("stride must be positive: each layer has its own operands");
  return success();
}

static LogicalResult checkKind(Operation *op, StringRef kind, ArrayRef<StringRef> allowed) {
  if (llvm::is_contained(allowed, kind))
    return success();
  std::string list;
  for (StringRef a : allowed)
    list += (list.empty() ? "" : ", ") + a.str();
  return op->emitOpError("kind '") << kind << "' is not one of " << list;
}

LogicalResult RecvOp::verify() {
  if (failed(checkKind(*this, getCombine(),
                       {"copy", "add", "max", "discard", "vecmat", "vecmat_add"})))
    return failure();
  bool passes = getCombine() == "copy" || getCombine() == "add" || getCombine() == "discard";
  if (getForward() && !passes)
    return emitOpError("only a copy, an add or a discard forwards, not '") << getCombine() << "'";
  if (isProduct() != (getMatrix() && getCols()))
    return emitOpError(isProduct() ? "a product needs a matrix and cols"
                                   : "only a product (vecmat) takes a matrix and cols");
  if (getAsync() && !passes)
    return emitOpError("only a copy, an add or a discard runs async, not '") << getCombine() << "'";
  return verifyProductTile();
}

LogicalResult RecvOp::verifyProductTile() {
  bool sparse = sparseEntries(getStorage()).has_value();
  if (getStorage() != "f32" && !(sparse && isProduct()))
    return emitOpError("storage '")
           << getStorage() << "' is not f32 or, on a product, sparse[4]:N[:f16|:bf16]";
  if (sparse != getTileRows().has_value() || (!sparse && getFirstRow()))
    return emitOpError("tile_rows and first_row go with a sparse storage, which needs tile_rows");
  if (!sparse)
    return success();
  int64_t rows = *getTileRows(), first = getFirstRow().value_or(0);
  AffAttr n = getN();
  bool constant = n.getLoop().empty() && !n.getPx() && !n.getPy();
  if (rows <= 0 || first < 0 || first >= rows || (constant && n.getBase() > rows - first))
    return emitOpError("rows [") << first << ", " << first << " + n) are not inside its " << rows
                                 << " tile rows";
  return success();
}
/// `elem` is f32 or i32, and i32 only where `ints` allows it.
static LogicalResult checkElem(Operation *op, StringRef kind, StringRef type,
                               ArrayRef<StringRef> ints) {
  if (type != "f32" && type != "i32")
    return op->emitOpError("elem '") << type << "' is not f32 or i32";
  if (type == "i32" && !llvm::is_contained(ints, kind))
    return op->emitOpError("kind '") << kind << "' has no i32 form";
  return success();
}
LogicalResult VectorOp::verify() {
  static constexpr StringRef kinds[] = {"add", "sub", "mul", "div", "max",     "min",    "pow",
                                        "mod", "eq",  "lt",  "le",  "gt",      "ge",     "and",
                                        "or",  "xor", "bit_and", "bit_or", "bit_xor"};
  if (failed(checkKind(*this, getKind(), kinds)))
    return failure();
  // Logic and bit ops read their words as i32 whatever the element type: they take none.
  return checkElem(*this, getKind(), getElem(), ArrayRef<StringRef>(kinds).drop_back(6));
}
LogicalResult ScalarOp::verify() {
  static constexpr StringRef kinds[] = {"add", "sub", "mul", "div", "random"};
  if (failed(checkKind(*this, getKind(), kinds)))
    return failure();
  return checkElem(*this, getKind(), getElem(), ArrayRef<StringRef>(kinds).drop_back());
}
LogicalResult ImmOp::verify() {
  static constexpr StringRef kinds[] = {"add", "mul", "fill"};
  if (failed(checkKind(*this, getKind(), kinds)))
    return failure();
  return checkElem(*this, getKind(), getElem(), kinds);
}
LogicalResult UnaryOp::verify() {
  if (failed(checkKind(*this, getKind(),
                       {"exp", "erf", "tanh", "sqrt", "rsqrt", "neg", "gelu", "gelu_tanh", "copy",
                        "log", "abs", "sin", "cos", "sigmoid", "reciprocal", "relu", "floor", "ceil",
                        "not", "bit_not", "to_int", "to_float"})))
    return failure();
  return checkElem(*this, getKind(), getElem(), {"neg", "abs", "relu"});
}
LogicalResult ReduceOp::verify() {
  static constexpr StringRef kinds[] = {"sum", "max", "min"};
  if (failed(checkKind(*this, getKind(), kinds)))
    return failure();
  return checkElem(*this, getKind(), getElem(), kinds);
}
