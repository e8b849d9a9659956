//===- VerifyRoutes.cpp - walk the router tables, trust nothing -----------===//
//
// The checker re-derives every flow from the kernel graph and the
// conventions (docs/placement-and-routing.md), using only `wafer.origin`,
// `wafer.colors`, the `wafer.routes` tables, the arch and the defect map.
// It shares no code with the router: each flow is walked hop by hop from
// its sending PE's ramp entry, through `wafer.links` onto other wafers
// where an entry forwards to LINK, and must deliver to exactly its
// destination PEs on every wafer. Every (resource, color) is owned by the
// first origin that uses it; a second origin on it is a collision. The
// first problem found is reported as an error on the kernel (or the table,
// or the links) concerned.
//
//===----------------------------------------------------------------------===//
#include "wsc/Arch/Arch.h"
#include "wsc/Transforms/Passes.h"

#include "wsc/Arch/Defects.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <limits>
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
  int64_t index = 0;
  wafer::RoutesOp routes;
  wafer::DefectGrid defects;
  std::vector<int> owner;                           // kernel per PE, -1 for none
  // Rows are sorted by (y, x, color, in): those of PE (x, y) are
  // [rowStart[y * W + x], rowStart[y * W + x + 1]), a handful at most.
  std::vector<int32_t> rowStart;
  // A view of the table's rows (its own data; `storage` only for a splat).
  SmallVector<int32_t> storage;
  ArrayRef<std::array<int32_t, 5>> rows;
  /// The row of key (x, y, color, in), or -1.
  int64_t find(int64_t W, int64_t x, int64_t y, int64_t color, int64_t in) const {
    if (rowStart.empty())
      return -1;
    for (int32_t r = rowStart[y * W + x], e = rowStart[y * W + x + 1]; r < e; ++r)
      if (rows[r][2] == color && rows[r][3] == in)
        return r;
    return -1;
  }
  std::vector<char> used;
  std::vector<int> rowOwner;                   // per row: the origin that uses it, or -1
  std::vector<uint32_t> visited, deliveredAt; // per PE, stamped per walk
};

/// A step of a walk: the entry `row` of PE (x, y) of a wafer.
struct Hop {
  WaferState *ws;
  int64_t x, y, color, row;
};

/// One row of `wafer.links`.
struct LinkRow {
  std::array<int32_t, 8> row;
  bool used = false;
};

class Checker {
public:
  Checker(ModuleOp module, wafer::ArchAttr arch)
      : module(module), arch(arch), W(arch.getWidth()), H(arch.getHeight()), K(arch.getColors()) {}
  LogicalResult run();

private:
  LogicalResult loadKernels();
  LogicalResult loadTables();
  LogicalResult loadLinks();
  WaferState &state(int64_t wi) {
    auto [it, inserted] = wafers.try_emplace(wi);
    if (inserted) {
      it->second.index = wi;
      it->second.defects = wafer::DefectGrid::forWafer(wafer::getDefects(module), W, H, wi);
      it->second.owner.assign(W * H, -1);
    }
    return it->second;
  }
  bool onEdge(int64_t x, int64_t y) const { return x == 0 || y == 0 || x == W - 1 || y == H - 1; }
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
  /// Walks one origin: the entry (x, y, color, RAMP) of wafer `waferIndex`
  /// and everything it forwards to, across links too. `deliver(wafer, x, y,
  /// color)` judges a delivery to a core: kDelivered, kNotDest (reported
  /// here) or kReported (it emitted the error itself); `expected` is how
  /// many PEs must receive the flow.
  template <typename Deliver>
  LogicalResult walk(KernelOp op, const Origin &what, int origin, int64_t waferIndex, int64_t x,
                     int64_t y, int64_t color, Deliver deliver, int64_t expected,
                     llvm::function_ref<std::string()> missing);
  /// Numbers `count` origins of one kind (a stream, or a channel's hops in
  /// order) from the returned one on.
  FailureOr<int> addOrigins(KernelOp op, int kernel, const Origin &what, int64_t count);
  /// Origin `o`, spelled out (a channel hop's PE found again).
  std::string originStr(int o) const;
  enum { kDelivered, kNotDest, kReported };

  ModuleOp module;
  wafer::ArchAttr arch;
  int64_t W, H, K;
  std::vector<Placed> kernels;
  llvm::DenseMap<Operation *, int> index;
  std::map<int64_t, WaferState> wafers;
  wafer::LinksOp linksOp;
  std::vector<LinkRow> links;
  std::map<std::array<int64_t, 4>, size_t> linkFrom; // (wafer, x, y, color) -> link
  /// Origins are numbered in runs: a stream is one, a channel as many as
  /// it has hops (GPT-1T has ~10^8 hops: a record each would not fit).
  struct OriginRun {
    int first;
    int kernel;
    Origin what; // a channel's: its first hop
  };
  std::vector<OriginRun> origins;
  int nextOrigin = 0;
  uint32_t stamp = 0;
  std::vector<Hop> hops;
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
  for (auto [ki, k] : llvm::enumerate(kernels)) {
    if (k.wafer >= arch.getMaxWafers())
      return k.op.emitOpError("kernel '") << k.op.getName() << "' is on wafer " << k.wafer
                                          << " but the arch has " << arch.getMaxWafers();
    if (k.x + k.w > W || k.y + k.h > H)
      return k.op.emitOpError("kernel '") << k.op.getName() << "' at (" << k.x << ", " << k.y
                                          << ") leaves the " << W << "x" << H << " grid";
    WaferState &ws = state(k.wafer);
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
    if (wi >= arch.getMaxWafers())
      return routes.emitOpError("router table for wafer ")
             << wi << ", but arch '" << arch.getName() << "' has " << arch.getMaxWafers()
             << " wafers";
    WaferState &ws = state(wi);
    if (ws.routes)
      return routes.emitOpError("a second router table for wafer ") << wi;
    ws.routes = routes;
    ArrayRef<int32_t> values = routes.getFlatTable(ws.storage);
    int64_t n = routes.getNumEntries();
    static_assert(sizeof(std::array<int32_t, 5>) == 5 * sizeof(int32_t));
    ws.rows = ArrayRef(reinterpret_cast<const std::array<int32_t, 5> *>(values.data()), n);
    ws.used.assign(n, 0);
    ws.rowOwner.assign(n, -1);
    for (int64_t i = 0; i < n; ++i) {
      const auto &row = ws.rows[i];
      auto [x, y, color, in, mask] = row;
      if (x >= W || y >= H)
        return routes.emitOpError("router entry at PE (")
               << x << ", " << y << ") is off the " << W << "x" << H << " grid";
      if (color >= K)
        return routes.emitOpError("router entry at PE (")
               << x << ", " << y << ") uses color " << color << ", but arch '" << arch.getName()
               << "' has " << K << " colors";
      if (i > 0) {
        const auto &prev = ws.rows[i - 1];
        auto here = std::make_tuple(y, x, color, in);
        auto before = std::make_tuple(prev[1], prev[0], prev[2], prev[3]);
        if (here == before)
          return routes.emitOpError("two router entries for PE (")
                 << x << ", " << y << ") color " << color << " input " << kPortNames[in];
        if (here < before)
          return routes.emitOpError("router entries are not sorted by (y, x, color, in) at PE (")
                 << x << ", " << y << ")";
      }
    }
    ws.rowStart.assign(W * H + 1, 0);
    for (const auto &row : ws.rows)
      ++ws.rowStart[row[1] * W + row[0] + 1];
    for (int64_t c = 0; c < W * H; ++c)
      ws.rowStart[c + 1] += ws.rowStart[c];
  }
  return success();
}

LogicalResult Checker::loadLinks() {
  for (wafer::LinksOp op : module.getOps<wafer::LinksOp>()) {
    linksOp = op;
    for (const auto &row : op.getRows()) {
      auto [sw, sx, sy, sc, dw, dx, dy, dc] = row;
      auto diag = [&, row = row]() {
        InFlightDiagnostic d = op.emitOpError("link [");
        for (int k = 0; k < 8; ++k)
          d << (k ? ", " : "") << row[k];
        return std::move(d << "]");
      };
      for (auto [w, x, y, c, side] : {std::make_tuple(sw, sx, sy, sc, "leaves"),
                                      std::make_tuple(dw, dx, dy, dc, "arrives at")}) {
        if (w >= arch.getMaxWafers())
          return diag() << " " << side << " wafer " << w << ", but arch '" << arch.getName()
                        << "' has " << arch.getMaxWafers() << " wafers";
        if (x >= W || y >= H || !onEdge(x, y))
          return diag() << " " << side << " PE (" << x << ", " << y
                        << "), which is not on the edge of the " << W << "x" << H << " grid";
        if (c >= K)
          return diag() << " uses color " << c << ", but arch '" << arch.getName() << "' has "
                        << K << " colors";
        WaferState &ws = state(w);
        if (ws.defects.peDead(x, y))
          return diag() << " " << side << " the dead PE (" << x << ", " << y << ") of wafer " << w;
        if (ws.defects.offWaferLinkDead(x, y))
          return diag() << " uses the dead off-wafer link of PE (" << x << ", " << y
                        << ") of wafer " << w;
      }
      WaferState &dst = state(dw);
      if (dst.find(W, dx, dy, dc, wafer::Link) < 0)
        return diag() << " arrives at PE (" << dx << ", " << dy << ") of wafer " << dw
                      << " on color " << dc << ", but that router has no entry for color " << dc
                      << " input LINK";
      linkFrom[{sw, sx, sy, sc}] = links.size();
      links.push_back({row});
    }
  }
  return success();
}

FailureOr<int> Checker::addOrigins(KernelOp op, int kernel, const Origin &what, int64_t count) {
  if (count > std::numeric_limits<int>::max() - nextOrigin)
    return op.emitOpError("kernel '")
           << op.getName() << "': more than " << std::numeric_limits<int>::max()
           << " streams and channel hops to check";
  origins.push_back({nextOrigin, kernel, what});
  nextOrigin += int(count);
  return origins.back().first;
}

std::string Checker::originStr(int o) const {
  const OriginRun &run = *std::prev(
      llvm::upper_bound(origins, o, [](int o, const OriginRun &r) { return o < r.first; }));
  if (!run.what.channel || o == run.first)
    return run.what.str();
  const Placed &p = kernels[run.kernel];
  wskernel::ChannelHop hop = wskernel::channelHops(p.op, run.what.port)[o - run.first];
  Origin what = run.what;
  what.x = p.x + hop.px, what.y = p.y + hop.py;
  return what.str();
}

template <typename Deliver>
LogicalResult Checker::walk(KernelOp op, const Origin &what, int origin, int64_t wi, int64_t sx,
                            int64_t sy, int64_t color, Deliver deliver, int64_t expected,
                            llvm::function_ref<std::string()> missing) {
  WaferState &home = wafers[wi];
  auto diag = [&]() { return op.emitOpError() << what.str() << " (color " << color << ")"; };
  // "PE (x, y)", with the wafer once the flow has left its own.
  auto pe = [&](const WaferState &ws, int64_t x, int64_t y) {
    std::string s = ("PE (" + Twine(x) + ", " + Twine(y) + ")").str();
    if (ws.index != wi)
      s += " of wafer " + std::to_string(ws.index);
    return s;
  };
  auto onColor = [&](int64_t c) {
    return c == color ? std::string() : " on color " + std::to_string(c);
  };
  // Resources are owned through the entries that use them: an entry by the
  // first origin that reaches it, and a link (the ramp out, or LINK) of PE
  // (x, y) on `color` by whichever entry of (x, y, color) forwards to it.
  auto siblingOwner = [&](const WaferState &ws, int64_t row, int port) -> int {
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
  int64_t first = home.find(W, sx, sy, color, wafer::Ramp);
  if (first < 0)
    return diag() << " has no router entry at its sending PE (" << sx << ", " << sy
                  << ") for input RAMP";
  if (int o = home.rowOwner[first]; o >= 0)
    return diag() << " and " << originStr(o) << " are both sent from PE (" << sx << ", " << sy
                  << ") on color " << color << ": collision";
  home.rowOwner[first] = origin;
  ++stamp;
  auto mark = [&](WaferState &ws, std::vector<uint32_t> WaferState::*field, int64_t x,
                  int64_t y) -> bool {
    std::vector<uint32_t> &v = ws.*field;
    if (v.size() != size_t(W * H))
      v.assign(W * H, 0);
    bool was = v[y * W + x] == stamp;
    v[y * W + x] = stamp;
    return was;
  };
  mark(home, &WaferState::visited, sx, sy);
  home.used[first] = 1;
  int64_t delivered = 0;
  std::vector<Hop> &stack = hops; // reused: a walk per channel hop
  stack.assign(1, {&home, sx, sy, color, first});
  while (!stack.empty()) {
    auto [wsp, x, y, c, row] = stack.back();
    WaferState &ws = *wsp;
    stack.pop_back();
    int32_t mask = ws.rows[row][4];
    for (int p = 0; p <= wafer::Link; ++p) {
      if (!(mask >> p & 1))
        continue;
      if (p == wafer::Ramp) {
        int verdict = deliver(ws.index, x, y, c);
        if (verdict == kReported)
          return failure();
        if (verdict == kNotDest)
          return diag() << " is delivered to " << pe(ws, x, y) << " (" << kernelAt(ws, x, y)
                        << ")" << onColor(c) << ", which is not one of its destinations";
        if (int o = siblingOwner(ws, row, wafer::Ramp); o >= 0)
          return diag() << " and " << originStr(o) << " are both delivered to " << pe(ws, x, y)
                        << " on color " << c << ": collision";
        mark(ws, &WaferState::deliveredAt, x, y);
        ++delivered;
        continue;
      }
      WaferState *next = &ws;
      int64_t nx = x, ny = y, nc = c;
      int in;
      if (p == wafer::Link) {
        auto l = linkFrom.find({ws.index, x, y, c});
        if (l == linkFrom.end())
          return diag() << " leaves " << pe(ws, x, y) << " through LINK" << onColor(c)
                        << ", but no link in 'wafer.links' leaves there on that color";
        if (int o = siblingOwner(ws, row, wafer::Link); o >= 0)
          return diag() << " and " << originStr(o) << " both use the link LINK of " << pe(ws, x, y)
                        << " on color " << c << ": collision";
        LinkRow &link = links[l->second];
        link.used = true;
        next = &state(link.row[4]);
        nx = link.row[5], ny = link.row[6], nc = link.row[7];
        in = wafer::Link;
      } else {
        wafer::stepDir(nx, ny, p);
        if (!ws.defects.onGrid(nx, ny))
          return diag() << " is forwarded " << kPortNames[p] << " from " << pe(ws, x, y)
                        << " off the grid";
        if (ws.defects.linkDead(x, y, p))
          return diag() << " is forwarded over the dead link " << kPortNames[p] << " of "
                        << pe(ws, x, y);
        if (ws.defects.peDead(nx, ny))
          return diag() << " is forwarded from " << pe(ws, x, y) << " into the dead PE (" << nx
                        << ", " << ny << ")";
        if (int o = siblingOwner(ws, row, p); o >= 0)
          return diag() << " and " << originStr(o) << " both use the link " << kPortNames[p]
                        << " of " << pe(ws, x, y) << " on color " << c << ": collision";
        in = wafer::oppositeDir(p);
      }
      if (mark(*next, &WaferState::visited, nx, ny))
        return diag() << " reaches " << pe(*next, nx, ny)
                      << " twice: a routing loop or merging branches";
      int64_t entry = next->find(W, nx, ny, nc, in);
      if (entry < 0)
        return diag() << " arrives at " << pe(*next, nx, ny) << " from " << kPortNames[in]
                      << onColor(nc) << ", but that router has no entry for it: a missing hop";
      if (int o = next->rowOwner[entry]; o >= 0 && o != origin)
        return diag() << " and " << originStr(o) << " both use the link " << kPortNames[p] << " of "
                      << pe(ws, x, y) << " on color " << c << ": collision";
      next->rowOwner[entry] = origin;
      next->used[entry] = 1;
      stack.push_back({next, nx, ny, nc, entry});
    }
  }
  if (delivered != expected)
    return diag() << " never reaches " << missing();
  return success();
}

LogicalResult Checker::run() {
  if (failed(loadKernels()) || failed(loadTables()) || failed(loadLinks()))
    return failure();
  for (auto [pi, p] : llvm::enumerate(kernels)) {
    // Ports with flows: checked against the body's sends and receives below.
    llvm::StringSet<> flowPorts;
    // Streams sent by this kernel.
    // Each sending port, with its consumers on any wafer and the ports they
    // read it on: results by their SSA uses, and the feedback ports ("fb",
    // "fbout<i>") by the readers' `feedback` entries.
    using Reads = llvm::SmallVector<std::pair<int, std::string>, 4>;
    llvm::SmallVector<std::pair<std::string, Reads>, 2> sent;
    for (OpResult r : p.op->getResults()) {
      if (!isa<wskernel::StreamType>(r.getType()))
        continue;
      Reads reads;
      for (OpOperand &use : r.getUses())
        if (auto it = index.find(use.getOwner()); it != index.end())
          reads.push_back({it->second, "in" + std::to_string(use.getOperandNumber())});
      sent.push_back({"out" + std::to_string(r.getResultNumber()), std::move(reads)});
    }
    for (wskernel::FeedbackStream &f : wskernel::feedbackStreams(p.op)) {
      Reads fedBack;
      for (auto &[reader, port] : f.reads)
        if (index.count(reader))
          fedBack.push_back({index[reader], port});
      sent.push_back({f.port, std::move(fedBack)});
    }
    for (auto &[port, allReads] : sent) {
      // The destinations: the PEs of each reader that receive on its port
      // (a reader that never does is none).
      // Per destination kernel, which of its PEs (row-major) receive.
      Reads reads;
      std::map<int, std::vector<char>> dests;
      for (auto &read : allReads) {
        const Placed &d = kernels[read.first];
        auto boxes = wskernel::portPes(d.op, read.second, /*sends=*/false);
        if (boxes.empty())
          continue;
        reads.push_back(read);
        std::vector<char> &mask = dests[read.first];
        mask.resize(d.h * d.w, 0);
        for (const wskernel::PeBox &b : boxes)
          for (int64_t y = b.y0; y <= b.y1; ++y)
            for (int64_t x = b.x0; x <= b.x1; ++x)
              mask[y * d.w + x] = 1;
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
      // On the producer's wafer a consumer reads the producer's color; on
      // another wafer, the color the stream arrives on (checked on delivery).
      for (auto &[d, in] : reads) {
        auto theirs = colorOf(d, in);
        bool local = kernels[d].wafer == p.wafer;
        if (!theirs || (local && *theirs != *color)) {
          auto diag = kernels[d].op.emitOpError("kernel '")
                      << kernels[d].op.getName() << "' reads " << what.str() << " as '" << in
                      << "' on ";
          if (theirs)
            diag << "color " << *theirs;
          else
            diag << "no color";
          if (!local)
            return diag;
          return diag << ", but the stream is on color " << *color;
        }
      }
      int64_t expected = 0;
      for (auto &[d, mask] : dests)
        expected += llvm::count(mask, 1);
      auto deliver = [&](int64_t w, int64_t x, int64_t y, int64_t c) -> int {
        int o = wafers[w].owner[y * W + x];
        auto dest = o < 0 ? dests.end() : dests.find(o);
        if (dest == dests.end() ||
            !dest->second[(y - kernels[o].y) * kernels[o].w + (x - kernels[o].x)])
          return kNotDest;
        for (auto &[d, in] : reads)
          if (d == o && *colorOf(d, in) != c) {
            kernels[d].op.emitOpError("kernel '")
                << kernels[d].op.getName() << "' reads " << what.str() << " as '" << in
                << "' on color " << *colorOf(d, in) << ", but the stream arrives at PE (" << x
                << ", " << y << ") of wafer " << w << " on color " << c;
            return kReported;
          }
        return kDelivered;
      };
      // The first destination PE it fails to reach, for the message.
      auto missing = [&]() -> std::string {
        for (auto &[d, mask] : dests) {
          WaferState &ws = wafers[kernels[d].wafer];
          for (int64_t y = kernels[d].y; y < kernels[d].y + kernels[d].h; ++y)
            for (int64_t x = kernels[d].x; x < kernels[d].x + kernels[d].w; ++x)
              if (mask[(y - kernels[d].y) * kernels[d].w + (x - kernels[d].x)] &&
                  (ws.deliveredAt.empty() || ws.deliveredAt[y * W + x] != stamp)) {
                std::string s = ("PE (" + Twine(x) + ", " + Twine(y) + ")").str();
                if (kernels[d].wafer != p.wafer)
                  s += " of wafer " + std::to_string(kernels[d].wafer);
                return s + " of kernel '" + kernels[d].op.getName().str() + "'";
              }
        }
        return "all of its destinations";
      };
      // It starts at the PE that sends it.
      auto src = wskernel::portPes(p.op, port, /*sends=*/true);
      wskernel::PeBox from =
          src.empty() ? wskernel::PeBox{p.w - 1, p.w - 1, p.h - 1, p.h - 1} : wskernel::boundingBox(src);
      int64_t sx = p.x + from.x1, sy = p.y + from.y1;
      FailureOr<int> origin = addOrigins(p.op, pi, what, 1);
      if (failed(origin) ||
          failed(walk(p.op, what, *origin, p.wafer, sx, sy, *color, deliver, expected, missing)))
        return failure();
    }
    // Receiving ports of streams from any wafer.
    for (OpOperand &operand : p.op->getOpOperands()) {
      auto def = operand.get().getDefiningOp<KernelOp>();
      if (def && isa<wskernel::StreamType>(operand.get().getType()) && index.count(def))
        flowPorts.insert("in" + std::to_string(operand.getOperandNumber()));
    }
    if (DictionaryAttr fb = p.op.getFeedbackAttr())
      for (NamedAttribute entry : fb)
        flowPorts.insert(entry.getName().getValue());
    // Channels.
    for (NamedAttribute ch : p.op.getChannels()) {
      StringRef name = ch.getName().getValue();
      flowPorts.insert(name);
      SmallVector<wskernel::ChannelHop> hops = wskernel::channelHops(p.op, name);
      if (hops.empty())
        continue;
      auto color = colorOf(pi, name);
      if (!color)
        return p.op.emitOpError("kernel '") << p.op.getName() << "' has channel '" << name
                                            << "' but no color for it in 'wafer.colors'";
      FailureOr<int> first = addOrigins(
          p.op, pi, {p.op.getName(), name, p.x + hops[0].px, p.y + hops[0].py, true}, hops.size());
      if (failed(first))
        return failure();
      for (auto [i, hop] : llvm::enumerate(hops)) {
        int64_t sx = p.x + hop.px, sy = p.y + hop.py;
        int64_t dx = sx + hop.dx, dy = sy + hop.dy;
        Origin what{p.op.getName(), name, sx, sy, true};
        auto deliver = [&](int64_t w, int64_t x, int64_t y, int64_t) -> int {
          return w == p.wafer && x == dx && y == dy ? kDelivered : kNotDest;
        };
        auto missing = [&]() { return ("PE (" + Twine(dx) + ", " + Twine(dy) + ")").str(); };
        if (failed(walk(p.op, what, *first + int(i), p.wafer, sx, sy, *color, deliver, 1, missing)))
          return failure();
      }
    }
    // Every port the body sends or receives on, that carries a flow, has a color.
    auto result = p.op.getBody().walk([&](Operation *op) {
      SmallVector<StringRef, 2> ports;
      if (auto send = dyn_cast<wskernel::SendOp>(op))
        ports.push_back(send.getPort());
      else if (auto recv = dyn_cast<wskernel::RecvOp>(op)) {
        ports.push_back(recv.getPort());
        if (recv.getForward())
          ports.push_back(*recv.getForward());
      }
      for (StringRef port : ports)
        if (flowPorts.contains(port) && !colorOf(pi, port)) {
          p.op.emitOpError("kernel '") << p.op.getName() << "' uses port '" << port
                                       << "' but has no color for it in 'wafer.colors'";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
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
  for (const LinkRow &l : links)
    if (!l.used) {
      InFlightDiagnostic d = linksOp.emitOpError("link [");
      for (int k = 0; k < 8; ++k)
        d << (k ? ", " : "") << l.row[k];
      return d << "] is used by no stream";
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
