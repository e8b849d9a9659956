//===- VerifyRoutes.cpp - walk the router tables, trust nothing -----------===//
//
// The checker re-derives every flow from the kernel graph and the
// conventions (docs/placement-and-routing.md), using only `wafer.origin`,
// `wafer.colors`, the `wafer.routes` tables, the arch and the defect map.
// It shares no code with the router: each flow is walked hop by hop from
// its sending PE's ramp entry, and must deliver to exactly its destination
// PEs. Every (resource, color) is owned by the first origin that uses it; a
// second origin on it is a collision. The first problem found is reported
// as an error on the kernel (or the table) concerned.
//
//===----------------------------------------------------------------------===//
#include "wsc/Transforms/Passes.h"

#include "wafer/Defects.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace wsc {
#define GEN_PASS_DEF_WSCVERIFYROUTES
#include "wsc/Transforms/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
using wskernel::KernelOp;

namespace {

const char *kPortNames[] = {"RAMP", "NORTH", "EAST", "SOUTH", "WEST", "LINK"};

/// 64-bit keys packed from coordinates: DenseMap's default hash keeps only
/// the low 32 bits of key * 37, which would drop the row; mix them all.
struct KeyInfo {
  static uint64_t getEmptyKey() { return ~uint64_t(0); }
  static uint64_t getTombstoneKey() { return ~uint64_t(0) - 1; }
  static unsigned getHashValue(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return unsigned(k);
  }
  static bool isEqual(uint64_t a, uint64_t b) { return a == b; }
};

/// Who sends a flow; spelled out only for messages.
struct Origin {
  StringRef kernel, port;
  int64_t x, y; // channels: the sending PE
  bool channel;
  std::string str() const {
    if (!channel)
      return ("stream '" + port + "' of kernel '" + kernel + "'").str();
    return ("channel '" + port + "' of kernel '" + kernel + "' from PE (" + Twine(x) + ", " +
            Twine(y) + ")")
        .str();
  }
};

struct Placed {
  KernelOp op;
  int64_t wafer, x, y, h, w;
  DictionaryAttr colors;
};

struct WaferState {
  wafer::RoutesOp routes;
  wafer::DefectGrid defects;
  std::vector<int> owner;                           // kernel per PE, -1 for none
  llvm::DenseMap<uint64_t, int64_t, KeyInfo> entry; // key -> row
  std::vector<std::array<int32_t, 5>> rows;
  std::vector<char> used;
  std::vector<int> rowOwner; // per row: the origin that uses it, or -1
};

class Checker {
public:
  Checker(ModuleOp module, wafer::ArchAttr arch)
      : module(module), arch(arch), W(arch.getWidth()), H(arch.getHeight()), K(arch.getColors()) {}
  LogicalResult run();

private:
  static uint64_t key(int64_t x, int64_t y, int64_t color, int64_t in) {
    return (uint64_t(y) << 40) | (uint64_t(x) << 20) | (uint64_t(color) << 4) | uint64_t(in);
  }
  LogicalResult loadKernels();
  LogicalResult loadTables();
  std::optional<int64_t> colorOf(int k, StringRef port) {
    if (!kernels[k].colors)
      return std::nullopt;
    if (auto c = kernels[k].colors.getAs<IntegerAttr>(port))
      return c.getInt();
    return std::nullopt;
  }
  std::string kernelAt(WaferState &ws, int64_t x, int64_t y) {
    int o = ws.owner[y * W + x];
    return o < 0 ? std::string("no kernel") : ("kernel '" + kernels[o].op.getName() + "'").str();
  }
  /// Walks one origin: the entry (x, y, color, RAMP) and everything it
  /// forwards to. `isDest(x, y)` says whether a PE must receive the flow;
  /// `expected` is how many must.
  template <typename IsDest>
  LogicalResult walk(KernelOp op, const Origin &what, int64_t waferIndex, int64_t x, int64_t y,
                     int64_t color, IsDest isDest, int64_t expected,
                     llvm::function_ref<std::string()> missing);

  ModuleOp module;
  wafer::ArchAttr arch;
  int64_t W, H, K;
  std::vector<Placed> kernels;
  llvm::DenseMap<Operation *, int> index;
  std::map<int64_t, WaferState> wafers;
  std::vector<Origin> origins;
  std::vector<uint32_t> visited, deliveredAt; // per PE, stamped per walk
  uint32_t stamp = 0;
};

LogicalResult Checker::loadKernels() {
  bool ok = true;
  module.walk([&](KernelOp op) {
    if (!ok)
      return;
    auto origin = op->getAttrOfType<DenseI64ArrayAttr>(wafer::kOriginAttrName);
    if (!origin || origin.size() != 3) {
      op.emitOpError("kernel '") << op.getName() << "' has no 'wafer.origin'";
      ok = false;
      return;
    }
    index[op] = kernels.size();
    kernels.push_back({op, origin[0], origin[1], origin[2], op.getHeight(), op.getWidth(),
                       op->getAttrOfType<DictionaryAttr>(wafer::kColorsAttrName)});
  });
  if (!ok)
    return failure();
  wafer::DefectsAttr defects = wafer::getDefects(module);
  for (auto [ki, k] : llvm::enumerate(kernels)) {
    if (k.wafer >= arch.getMaxWafers())
      return k.op.emitOpError("kernel '") << k.op.getName() << "' is on wafer " << k.wafer
                                          << " but the arch has " << arch.getMaxWafers();
    if (k.x + k.w > W || k.y + k.h > H)
      return k.op.emitOpError("kernel '") << k.op.getName() << "' at (" << k.x << ", " << k.y
                                          << ") leaves the " << W << "x" << H << " grid";
    auto [it, inserted] = wafers.try_emplace(k.wafer);
    WaferState &ws = it->second;
    if (inserted) {
      ws.defects = wafer::DefectGrid::forWafer(defects, W, H, k.wafer);
      ws.owner.assign(W * H, -1);
    }
    for (int64_t y = k.y; y < k.y + k.h; ++y)
      for (int64_t x = k.x; x < k.x + k.w; ++x) {
        if (ws.defects.peDead(x, y))
          return k.op.emitOpError("kernel '")
                 << k.op.getName() << "' covers the dead PE (" << x << ", " << y << ")";
        int &o = ws.owner[y * W + x];
        if (o >= 0)
          return k.op.emitOpError("kernel '")
                 << k.op.getName() << "' overlaps kernel '" << kernels[o].op.getName()
                 << "' at PE (" << x << ", " << y << ")";
        o = ki;
      }
    if (k.colors)
      for (NamedAttribute c : k.colors) {
        int64_t v = cast<IntegerAttr>(c.getValue()).getInt();
        if (v >= K)
          return k.op.emitOpError("kernel '")
                 << k.op.getName() << "' port '" << c.getName().getValue() << "' has color " << v
                 << ", but arch '" << arch.getName() << "' has " << K << " colors";
      }
  }
  return success();
}

LogicalResult Checker::loadTables() {
  for (wafer::RoutesOp routes : module.getOps<wafer::RoutesOp>()) {
    int64_t wi = routes.getWaferAttr().getInt();
    auto [it, inserted] = wafers.try_emplace(wi);
    WaferState &ws = it->second;
    if (inserted) {
      ws.defects = wafer::DefectGrid::forWafer(wafer::getDefects(module), W, H, wi);
      ws.owner.assign(W * H, -1);
    }
    if (ws.routes)
      return routes.emitOpError("a second router table for wafer ") << wi;
    ws.routes = routes;
    SmallVector<int32_t> storage;
    ArrayRef<int32_t> values = routes.getFlatTable(storage);
    auto v = values.begin();
    int64_t n = routes.getNumEntries();
    ws.rows.resize(n);
    ws.used.assign(n, 0);
    ws.entry.reserve(n);
    ws.rowOwner.assign(n, -1);
    for (int64_t i = 0; i < n; ++i) {
      auto &row = ws.rows[i];
      for (int k = 0; k < 5; ++k, ++v)
        row[k] = *v;
      auto [x, y, color, in, mask] = row;
      if (x >= W || y >= H)
        return routes.emitOpError("router entry at PE (")
               << x << ", " << y << ") is off the " << W << "x" << H << " grid";
      if (color >= K)
        return routes.emitOpError("router entry at PE (")
               << x << ", " << y << ") uses color " << color << ", but arch '" << arch.getName()
               << "' has " << K << " colors";
      if (!ws.entry.try_emplace(key(x, y, color, in), i).second)
        return routes.emitOpError("two router entries for PE (")
               << x << ", " << y << ") color " << color << " input " << kPortNames[in];
    }
  }
  return success();
}

template <typename IsDest>
LogicalResult Checker::walk(KernelOp op, const Origin &what, int64_t wi, int64_t sx, int64_t sy,
                            int64_t color, IsDest isDest, int64_t expected,
                            llvm::function_ref<std::string()> missing) {
  WaferState &ws = wafers[wi];
  int origin = origins.size();
  origins.push_back(what);
  auto diag = [&]() { return op.emitOpError() << what.str() << " (color " << color << ")"; };
  // Resources are owned through the entries that use them: an entry by the
  // first origin that reaches it, and a link (or the ramp out) of PE (x, y)
  // on `color` by whichever entry of (x, y, color) forwards to it.
  auto siblingOwner = [&](int64_t row, int port) -> int {
    int64_t first = row, last = row;
    auto same = [&](int64_t r) {
      return ws.rows[r][0] == ws.rows[row][0] && ws.rows[r][1] == ws.rows[row][1] &&
             ws.rows[r][2] == ws.rows[row][2];
    };
    while (first > 0 && same(first - 1))
      --first;
    while (last + 1 < int64_t(ws.rows.size()) && same(last + 1))
      ++last;
    for (int64_t r = first; r <= last; ++r)
      if (r != row && (ws.rows[r][4] >> port & 1) && ws.rowOwner[r] >= 0 &&
          ws.rowOwner[r] != origin)
        return ws.rowOwner[r];
    return -1;
  };
  auto first = ws.entry.find(key(sx, sy, color, wafer::Ramp));
  if (first == ws.entry.end())
    return diag() << " has no router entry at its sending PE (" << sx << ", " << sy
                  << ") for input RAMP";
  if (int o = ws.rowOwner[first->second]; o >= 0)
    return diag() << " and " << origins[o].str() << " are both sent from PE (" << sx << ", " << sy
                  << ") on color " << color << ": collision";
  ws.rowOwner[first->second] = origin;
  if (visited.size() != size_t(W * H))
    visited.assign(W * H, 0), deliveredAt.assign(W * H, 0);
  ++stamp;
  visited[sy * W + sx] = stamp;
  ws.used[first->second] = 1;
  int64_t delivered = 0;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> stack = {{sx, sy, first->second}};
  while (!stack.empty()) {
    auto [x, y, row] = stack.back();
    stack.pop_back();
    int32_t mask = ws.rows[row][4];
    for (int p = 0; p <= wafer::Link; ++p) {
      if (!(mask >> p & 1))
        continue;
      if (p == wafer::Ramp) {
        if (!isDest(x, y))
          return diag() << " is delivered to PE (" << x << ", " << y << ") (" << kernelAt(ws, x, y)
                        << "), which is not one of its destinations";
        if (int o = siblingOwner(row, wafer::Ramp); o >= 0)
          return diag() << " and " << origins[o].str() << " are both delivered to PE (" << x << ", "
                        << y << ") on color " << color << ": collision";
        deliveredAt[y * W + x] = stamp;
        ++delivered;
        continue;
      }
      if (p == wafer::Link)
        return diag() << " leaves PE (" << x << ", " << y
                      << ") through LINK, but inter-wafer links are not routed yet";
      int64_t nx = x, ny = y;
      wafer::stepDir(nx, ny, p);
      if (!ws.defects.onGrid(nx, ny))
        return diag() << " is forwarded " << kPortNames[p] << " from PE (" << x << ", " << y
                      << ") off the grid";
      if (ws.defects.linkDead(x, y, p))
        return diag() << " is forwarded over the dead link " << kPortNames[p] << " of PE (" << x
                      << ", " << y << ")";
      if (ws.defects.peDead(nx, ny))
        return diag() << " is forwarded from PE (" << x << ", " << y << ") into the dead PE (" << nx
                      << ", " << ny << ")";
      if (int o = siblingOwner(row, p); o >= 0)
        return diag() << " and " << origins[o].str() << " both use the link " << kPortNames[p]
                      << " of PE (" << x << ", " << y << ") on color " << color << ": collision";
      if (visited[ny * W + nx] == stamp)
        return diag() << " reaches PE (" << nx << ", " << ny
                      << ") twice: a routing loop or merging branches";
      visited[ny * W + nx] = stamp;
      int in = wafer::oppositeDir(p);
      auto next = ws.entry.find(key(nx, ny, color, in));
      if (next == ws.entry.end())
        return diag() << " arrives at PE (" << nx << ", " << ny << ") from " << kPortNames[in]
                      << ", but that router has no entry for it: a missing hop";
      if (int o = ws.rowOwner[next->second]; o >= 0 && o != origin)
        return diag() << " and " << origins[o].str() << " both use the link " << kPortNames[p]
                      << " of PE (" << x << ", " << y << ") on color " << color << ": collision";
      ws.rowOwner[next->second] = origin;
      ws.used[next->second] = 1;
      stack.push_back({nx, ny, next->second});
    }
  }
  if (delivered != expected)
    return diag() << " never reaches " << missing();
  return success();
}

LogicalResult Checker::run() {
  if (failed(loadKernels()) || failed(loadTables()))
    return failure();
  for (auto [pi, p] : llvm::enumerate(kernels)) {
    // Ports with flows: checked against the body's sends and receives below.
    llvm::StringSet<> flowPorts;
    // Streams sent by this kernel.
    for (OpResult r : p.op->getResults()) {
      if (!isa<wskernel::StreamType>(r.getType()))
        continue;
      std::string port = "out" + std::to_string(r.getResultNumber());
      llvm::SmallDenseSet<int, 4> dests;
      for (OpOperand &use : r.getUses()) {
        auto it = index.find(use.getOwner());
        if (it != index.end() && kernels[it->second].wafer == p.wafer)
          dests.insert(it->second);
      }
      if (dests.empty())
        continue;
      flowPorts.insert(port);
      auto color = colorOf(pi, port);
      if (!color)
        return p.op.emitOpError("kernel '") << p.op.getName() << "' sends stream '" << port
                                            << "' but has no color for it in 'wafer.colors'";
      // Interned: origins outlive this loop.
      Origin what{p.op.getName(), StringAttr::get(p.op.getContext(), port).getValue(), -1, -1,
                  false};
      for (OpOperand &use : r.getUses()) {
        auto it = index.find(use.getOwner());
        if (it == index.end() || kernels[it->second].wafer != p.wafer)
          continue;
        std::string in = "in" + std::to_string(use.getOperandNumber());
        auto theirs = colorOf(it->second, in);
        if (!theirs || *theirs != *color) {
          auto d = kernels[it->second].op.emitOpError("kernel '")
                   << kernels[it->second].op.getName() << "' reads " << what.str() << " as '" << in
                   << "' on ";
          if (theirs)
            d << "color " << *theirs;
          else
            d << "no color";
          return d << ", but the stream is on color " << *color;
        }
      }
      int64_t expected = 0;
      for (int d : dests)
        expected += kernels[d].h * kernels[d].w;
      WaferState &ws = wafers[p.wafer];
      auto isDest = [&](int64_t x, int64_t y) {
        int o = ws.owner[y * W + x];
        return o >= 0 && dests.contains(o);
      };
      // The first destination PE it fails to reach, for the message.
      auto missing = [&]() -> std::string {
        for (int d : dests)
          for (int64_t y = kernels[d].y; y < kernels[d].y + kernels[d].h; ++y)
            for (int64_t x = kernels[d].x; x < kernels[d].x + kernels[d].w; ++x)
              if (deliveredAt[y * W + x] != stamp)
                return ("PE (" + Twine(x) + ", " + Twine(y) + ") of kernel '" +
                        kernels[d].op.getName() + "'")
                    .str();
        return "all of its destinations";
      };
      if (failed(walk(p.op, what, p.wafer, p.x + p.w - 1, p.y + p.h - 1, *color, isDest, expected,
                      missing)))
        return failure();
    }
    // Receiving ports of streams from this wafer.
    for (OpOperand &operand : p.op->getOpOperands()) {
      auto def = operand.get().getDefiningOp<KernelOp>();
      if (def && isa<wskernel::StreamType>(operand.get().getType()) && index.count(def) &&
          kernels[index[def]].wafer == p.wafer)
        flowPorts.insert("in" + std::to_string(operand.getOperandNumber()));
    }
    // Channels.
    for (NamedAttribute ch : p.op.getChannels()) {
      StringRef name = ch.getName().getValue();
      flowPorts.insert(name);
      bool col = cast<StringAttr>(ch.getValue()).getValue() == "col_chain";
      if ((col && p.h == 1) || (!col && p.w == 1))
        continue;
      auto color = colorOf(pi, name);
      if (!color)
        return p.op.emitOpError("kernel '") << p.op.getName() << "' has channel '" << name
                                            << "' but no color for it in 'wafer.colors'";
      int64_t hops = col ? p.w * (p.h - 1) : p.w - 1;
      for (int64_t i = 0; i < hops; ++i) {
        int64_t px = col ? i / (p.h - 1) : i, py = col ? i % (p.h - 1) : p.h - 1;
        int64_t sx = p.x + px, sy = p.y + py;
        int64_t dx = col ? sx : sx + 1, dy = col ? sy + 1 : sy;
        Origin what{p.op.getName(), name, sx, sy, true};
        auto isDest = [&](int64_t x, int64_t y) { return x == dx && y == dy; };
        auto missing = [&]() { return ("PE (" + Twine(dx) + ", " + Twine(dy) + ")").str(); };
        if (failed(walk(p.op, what, p.wafer, sx, sy, *color, isDest, 1, missing)))
          return failure();
      }
    }
    // Every port the body sends or receives on, that carries a flow, has a color.
    auto result = p.op.getBody().walk([&](Operation *op) {
      StringRef port;
      if (auto send = dyn_cast<wskernel::SendOp>(op))
        port = send.getPort();
      else if (auto recv = dyn_cast<wskernel::RecvOp>(op))
        port = recv.getPort();
      if (port.empty() || !flowPorts.contains(port) || colorOf(pi, port))
        return WalkResult::advance();
      p.op.emitOpError("kernel '") << p.op.getName() << "' uses port '" << port
                                   << "' but has no color for it in 'wafer.colors'";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
  }
  for (auto &[wi, ws] : wafers)
    for (size_t i = 0; i < ws.rows.size(); ++i) {
      auto [x, y, color, in, mask] = ws.rows[i];
      if (ws.defects.peDead(x, y))
        return ws.routes.emitOpError("router entry at PE (")
               << x << ", " << y << ") color " << color << " is on a dead PE";
    }
  for (auto &[wi, ws] : wafers)
    for (size_t i = 0; i < ws.rows.size(); ++i)
      if (!ws.used[i]) {
        auto [x, y, color, in, mask] = ws.rows[i];
        return ws.routes.emitOpError("router entry at PE (")
               << x << ", " << y << ") color " << color << " input " << kPortNames[in]
               << " (out_mask " << mask << ") is reached by no stream or channel";
      }
  return success();
}

struct VerifyRoutesPass : wsc::impl::WscVerifyRoutesBase<VerifyRoutesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto arch = wafer::getArch(module);
    if (failed(arch))
      return signalPassFailure();
    Checker checker(module, *arch);
    if (failed(checker.run()))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
