//===- WriteReport.cpp - the compile report -------------------------------===//
#include "wsc/Analysis/CostModel.h"
#include "wsc/Analysis/KvCache.h"
#include "wsc/Analysis/WeightData.h"
#include "wsc/Arch/Arch.h"
#include "wsc/Pipeline/Pipeline.h"
#include "wsc/runtime/OutputFiles.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <set>

namespace wsc {
#define GEN_PASS_DEF_WSCWRITEREPORT
#include "wsc/Pipeline/Passes.h.inc"
} // namespace wsc

using namespace mlir;
namespace json = llvm::json;

namespace {
/// One token's way through kernels, by what it spends: the kernels' cycles
/// per token (compute), what it alone waits for inside them (chains), the
/// hops between kernels (fabric), the links between wafers and, in weight
/// streaming, the wait for a layer's weights (loads).
struct DecodePath {
  double compute = 0, chains = 0, fabric = 0, links = 0, loads = 0;
  double total() const { return compute + chains + fabric + links + loads; }
  /// The largest term's name.
  StringRef bound() const {
    std::pair<double, StringRef> terms[] = {
        {compute, "compute"},   {chains, "chains"}, {fabric, "fabric latency"},
        {links, "wafer links"}, {loads, "external bandwidth"}};
    return llvm::max_element(terms, [](auto &a, auto &b) { return a.first < b.first; })->second;
  }
};

/// A generating program's decode step: one token along the longest path
/// through the kernels and back to the embedding; and the keys and values
/// the attention kernels hold.
struct DecodeFigures {
  bool generates = false;
  DecodePath path;
  int64_t kvCacheBytes = 0;
};

/// The way from kernel `from`'s centre to `to`'s: the hops between them; on
/// another wafer, to this wafer's east edge, the link, and on from the west
/// edge.
DecodePath wayBetween(wsc::wskernel::KernelOp from, wsc::wskernel::KernelOp to,
                     const wsc::CostModel &cost) {
  auto centre = [](wsc::wskernel::KernelOp op) -> std::array<double, 3> {
    auto origin = op->getAttrOfType<DenseI64ArrayAttr>("wafer.origin");
    if (!origin || origin.size() != 3)
      return {0, 0, 0};
    return {double(origin[0]), origin[1] + op.getWidth() / 2.0, origin[2] + op.getHeight() / 2.0};
  };
  auto [w, x, y] = centre(from);
  auto [rw, rx, ry] = centre(to);
  double east = double(cost.arch.getWidth() - 1);
  double hops = rw == w ? std::abs(rx - x) + std::abs(ry - y) : (east - x) + std::abs(ry - y) + rx;
  DecodePath way;
  way.fabric = hops * double(cost.arch.getHopCycles());
  way.links = rw == w ? 0.0 : double(cost.arch.getLinkLatencyCycles());
  return way;
}

DecodePath operator+(DecodePath a, const DecodePath &b) {
  a.compute += b.compute, a.chains += b.chains, a.fabric += b.fabric, a.links += b.links;
  a.loads += b.loads;
  return a;
}
DecodePath operator-(DecodePath a, const DecodePath &b) {
  a.compute -= b.compute, a.chains -= b.chains, a.fabric -= b.fabric, a.links -= b.links;
  a.loads -= b.loads;
  return a;
}
DecodePath operator*(DecodePath a, double k) {
  a.compute *= k, a.chains *= k, a.fabric *= k, a.links *= k, a.loads *= k;
  return a;
}

/// The cycles each kernel of a weight-streaming program takes to load one
/// layer's tiles: its PEs' bytes at their share of the external bandwidth
/// (the loading PEs split it evenly, as the export sets it).
llvm::DenseMap<Operation *, double> layerLoadCycles(func::FuncOp func, const wsc::CostModel &cost) {
  namespace wk = wsc::wskernel;
  llvm::DenseMap<Operation *, double> bytes, cycles;
  int64_t loadingPes = 0;
  func.walk([&](wk::KernelOp k) {
    k.walk([&](wk::LoadTileOp t) {
      bytes[k] += 4.0 * double(wk::tileWords(t.getStorage(), int64_t(t.getRows()),
                                             int64_t(t.getCols())));
    });
    if (bytes.count(k))
      loadingPes += k.getHeight() * k.getWidth();
  });
  for (auto [k, b] : bytes)
    cycles[k] = cost.streamCycles(int64_t(b * double(loadingPes)));
  return cycles;
}

/// A weight-streaming block in a generating program: a token passes its
/// kernels once a layer, from the block's first kernel to the one whose
/// output comes back to it (the feeder).
class FoldedBlock {
public:
  FoldedBlock(func::FuncOp func, const wsc::CostModel &cost) : cost(cost) {
    if (auto l = func->getAttrOfType<IntegerAttr>(wsc::wskernel::kStreamedLayersAttr))
      layers = std::max<int64_t>(1, l.getInt());
    loads = layerLoadCycles(func, cost);
  }
  bool holds(wsc::wskernel::KernelOp k) const {
    return k->hasAttr(wsc::wskernel::kStreamedLayersAttr);
  }
  /// The layers a kernel's cycles per token cover.
  int64_t layersOf(wsc::wskernel::KernelOp k) const { return holds(k) ? layers : 1; }
  /// Records a block kernel's start and own time, in program order: the
  /// first one's start begins the block; a kernel fed back the block's
  /// output names its feeder, which comes later.
  void noteStart(wsc::wskernel::KernelOp k, const DecodePath &start, const DecodePath &own) {
    if (!holds(k))
      return;
    if (!entered)
      entry = start, entered = true;
    worstLoad = std::max(worstLoad, loads.lookup(k) + own.total());
    if (DictionaryAttr fb = k.getFeedbackAttr(); fb && !fb.empty()) {
      readers.push_back(k);
      feederName = cast<StringAttr>(fb.begin()->getValue()).getValue();
    }
    if (k.getName() == feederName)
      feeder = k;
  }
  /// What the layers after the first add once the token leaves the block:
  /// each a pass from the block's start to the feeder's end, the way back,
  /// and any wait for its weights that the pass does not hide.
  DecodePath laterLayers(const llvm::DenseMap<Operation *, DecodePath> &finish) const {
    if (layers <= 1 || !feeder)
      return {};
    DecodePath layer = finish.lookup(feeder) - entry, back;
    for (wsc::wskernel::KernelOp r : readers) {
      DecodePath way = wayBetween(feeder, r, cost);
      if (way.total() > back.total())
        back = way;
    }
    layer = layer + back;
    layer.loads += std::max(0.0, worstLoad - layer.total());
    return layer * double(layers - 1);
  }

private:
  const wsc::CostModel &cost;
  int64_t layers = 1;
  llvm::DenseMap<Operation *, double> loads;
  DecodePath entry;
  bool entered = false;
  double worstLoad = 0;
  SmallVector<wsc::wskernel::KernelOp> readers;
  StringRef feederName;
  wsc::wskernel::KernelOp feeder;
};

DecodeFigures decodeFigures(ModuleOp module, const wsc::CostModel &cost) {
  DecodeFigures f;
  auto longer = [](DecodePath &into, const DecodePath &way) {
    if (way.total() > into.total())
      into = way;
  };
  module.walk([&](func::FuncOp func) {
    if (!func->hasAttr("wsgraph.generate"))
      return;
    f.generates = true;
    f.kvCacheBytes += wsc::kvCacheBytes(func);
    // Kernels come in program order, producers first: each starts when its
    // last input arrives (kernels side by side, as q, k and v, overlap).
    // A step ends when the picked token is back at the kernels that read
    // it (the feedback to the embedding).
    llvm::DenseMap<Operation *, DecodePath> finish;
    llvm::StringMap<wsc::wskernel::KernelOp> byName;
    // Weight streaming: a token passes the block's kernels once a layer.
    FoldedBlock block(func, cost);
    func.walk([&](wsc::wskernel::KernelOp k) {
      byName[k.getName()] = k;
      DecodePath start;
      for (Value in : k.getInputs())
        if (auto from = in.getDefiningOp<wsc::wskernel::KernelOp>()) {
          DecodePath way = finish.lookup(from) + wayBetween(from, k, cost);
          if (block.holds(from) && !block.holds(k))
            way = way + block.laterLayers(finish);
          longer(start, way);
        }
      DecodePath own;
      own.compute = k.getCyclesPerToken().convertToDouble() / double(block.layersOf(k));
      if (auto chain = k->getAttrOfType<FloatAttr>(wsc::wskernel::kChainCyclesAttr))
        own.chains = chain.getValueAsDouble();
      block.noteStart(k, start, own);
      finish[k] = start + own;
      longer(f.path, finish[k]);
    });
    func.walk([&](wsc::wskernel::KernelOp k) {
      if (DictionaryAttr feedback = k.getFeedbackAttr())
        for (NamedAttribute entry : feedback)
          if (auto from = dyn_cast<StringAttr>(entry.getValue()))
            if (wsc::wskernel::KernelOp source = byName.lookup(from.getValue()))
              longer(f.path, finish.lookup(source) + wayBetween(source, k, cost));
    });
  });
  return f;
}

/// A kernel's weight tiles held sparse (storage "sparse:N"): the weights'
/// fraction of zeros, the SRAM bytes their tiles take against the same
/// tiles held dense at the program's precision, and one tile's multiply-add
/// cycles per token both ways (the densest tile's, which sets the pace).
struct SparseFigures {
  double zeros = 0;
  int64_t heldBytes = 0, denseBytes = 0;
  double tileCycles = 0, denseTileCycles = 0;
};

std::optional<SparseFigures> sparseFigures(wsc::wskernel::KernelOp k, const wsc::CostModel &cost,
                                           StringRef denseStorage) {
  namespace wk = wsc::wskernel;
  SparseFigures f;
  bool any = false;
  int64_t pes = k.getHeight() * k.getWidth();
  k.walk([&](Operation *op) {
    auto init = dyn_cast<wk::InitTileOp>(op);
    auto load = dyn_cast<wk::LoadTileOp>(op);
    if (!init && !load)
      return;
    StringRef storage = init ? init.getStorage() : load.getStorage();
    std::optional<int64_t> entries = wk::sparseEntries(storage);
    if (!entries)
      return;
    int64_t rows = init ? int64_t(init.getRows()) : int64_t(load.getRows());
    int64_t cols = init ? int64_t(init.getCols()) : int64_t(load.getCols());
    int64_t source = init ? int64_t(init.getSource()) : int64_t(load.getSource());
    any = true;
    f.zeros = std::max(f.zeros, 1.0 - wsc::weightDensity(k.getInputs()[source]));
    f.heldBytes += 4 * pes * wk::tileWords(storage, rows, cols);
    f.denseBytes += 4 * pes * wk::storageWords(denseStorage, rows * cols);
    f.tileCycles += cost.sparseMatvec(rows, *entries);
    f.denseTileCycles += cost.matvec(rows, cols);
  });
  if (!any)
    return std::nullopt;
  return f;
}

/// Weight streaming's schedule and estimate: every layer, each streaming
/// kernel loads its tiles of that layer's weights (the bytes it moves
/// include the tiles' zero padding), then the tokens pipeline through the
/// block. Loads and compute of a layer do not overlap.
struct StreamingFigures {
  int64_t layers = 0, bytesPerLayer = 0, tokens = 1;
  bool resident = false; // folded: every layer's tiles stay in SRAM
  double loadCycles = 0, computeCycles = 0, slowestOutside = 0;
  json::Array schedule;
  /// Per run every layer loads, then computes; the kernels outside the
  /// block keep their own pace.
  double cyclesPerToken() const {
    return std::max(slowestOutside,
                    double(layers) * (loadCycles + computeCycles) / double(tokens));
  }
};

StreamingFigures streamingFigures(ModuleOp module, const wsc::CostModel &cost) {
  namespace wk = wsc::wskernel;
  StreamingFigures f;
  struct Load {
    wk::KernelOp kernel;
    int64_t bytes = 0;
    llvm::SmallVector<std::pair<int64_t, int64_t>> sources; // (source, stride)
  };
  std::vector<Load> loads;
  module.walk([&](mlir::func::FuncOp func) {
    if (auto t = func->getAttrOfType<IntegerAttr>("wskernel.tokens"))
      f.tokens = std::max<int64_t>(1, t.getInt());
    if (auto l = func->getAttrOfType<IntegerAttr>(wk::kStreamedLayersAttr))
      f.layers = l.getInt();
    f.resident = func->hasAttr(wk::kResidentLayersAttr);
  });
  if (!f.layers)
    return f;
  module.walk([&](wk::KernelOp k) {
    Load load{k, 0, {}};
    k.walk([&](wk::LoadTileOp t) {
      load.bytes += 4 * wk::tileWords(t.getStorage(), int64_t(t.getRows()), int64_t(t.getCols())) *
                    k.getHeight() * k.getWidth();
      load.sources.push_back({int64_t(t.getSource()), int64_t(t.getStride())});
    });
    // A streaming kernel's figure covers every layer; its layer's share is
    // what the block pipelines at.
    double cycles = k.getCyclesPerToken().convertToDouble();
    if (!k->hasAttr(wk::kStreamedLayersAttr)) {
      f.slowestOutside = std::max(f.slowestOutside, cycles);
      return;
    }
    f.computeCycles = std::max(f.computeCycles, cycles / double(f.layers) * double(f.tokens));
    f.bytesPerLayer += load.bytes;
    if (!load.sources.empty())
      loads.push_back(std::move(load));
  });
  f.loadCycles = cost.streamCycles(f.bytesPerLayer);
  for (int64_t l = 0; l < f.layers; ++l)
    for (Load &load : loads) {
      json::Array weights;
      for (auto [source, stride] : load.sources) {
        Value v = load.kernel.getInputs()[source + l * stride];
        if (auto w = v.getDefiningOp<wsc::wsgraph::WeightOp>())
          weights.push_back(w.getName());
        else
          weights.push_back("operand " + std::to_string(source + l * stride));
      }
      f.schedule.push_back(json::Object{
          {"layer", l},
          {"kernel", load.kernel.getName()},
          {"weights", std::move(weights)},
          {"bytes", load.bytes},
          {"start_cycle", double(l) * (f.loadCycles + f.computeCycles)}});
    }
  return f;
}

struct WriteReportPass : wsc::impl::WscWriteReportBase<WriteReportPass> {
  using WscWriteReportBase::WscWriteReportBase;
  void runOnOperation() override;
};
} // namespace

void WriteReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto arch = wsc::wafer::getArch(module);
  if (failed(arch))
    return signalPassFailure();
  wsc::CostModel cost{*arch};
  struct WaferFigures {
    int64_t pes = 0, sram = 0;
    json::Array kernels;
  };
  std::map<int64_t, WaferFigures> wafers;
  double slowest = 0, macs = 0;
  int64_t interWaferBytes = 0, sparseHeld = 0, sparseDense = 0;
  std::string denseStorage = precision == "fp16" ? "f16" : precision == "bf16" ? "bf16" : "f32";
  module.walk([&](wsc::wskernel::KernelOp k) {
    int64_t wafer = 0, x = -1, y = -1;
    if (auto stage = k->getAttrOfType<IntegerAttr>("wafer.stage"))
      wafer = stage.getInt();
    if (auto origin = k->getAttrOfType<DenseI64ArrayAttr>("wafer.origin");
        origin && origin.size() == 3)
      wafer = origin[0], x = origin[1], y = origin[2];
    // Streams to kernels on other wafers cross a link once per wafer.
    for (Value out : k.getResults()) {
      auto stream = dyn_cast<wsc::wskernel::StreamType>(out.getType());
      if (!stream)
        continue;
      std::set<int64_t> remote;
      for (Operation *user : out.getUsers())
        if (auto s = user->getAttrOfType<IntegerAttr>("wafer.stage"); s && s.getInt() != wafer)
          remote.insert(s.getInt());
      interWaferBytes += int64_t(remote.size()) * stream.getSize() * 4;
    }
    int64_t pes = k.getHeight() * k.getWidth();
    WaferFigures &f = wafers[wafer];
    f.pes += pes;
    f.sram += pes * static_cast<int64_t>(k.getSramBytesPerPe());
    double cycles = k.getCyclesPerToken().convertToDouble();
    slowest = std::max(slowest, cycles);
    // Weights held by the kernel: its multiply-accumulates per token.
    // (A piece split by columns holds only its columns of the weight.)
    auto cols = k->getAttrOfType<DenseI64ArrayAttr>("wskernel.weight_cols");
    for (Value in : k.getInputs())
      if (auto t = dyn_cast<RankedTensorType>(in.getType()); t && t.getRank() == 2 &&
                                                              isa<FloatType>(t.getElementType()) &&
                                                              k.getKind().starts_with("linear"))
        // (A sparse weight's: its nonzeros, the work there is to do.)
        macs += (cols && cols.size() == 2 ? double(t.getDimSize(0)) * double(cols[1] - cols[0])
                                          : double(t.getNumElements())) *
                wsc::weightDensity(in);
    json::Object kernel{{"name", k.getName()},
                        {"kind", k.getKind()},
                        {"x", x},
                        {"y", y},
                        {"w", k.getWidth()},
                        {"h", k.getHeight()},
                        {"sram_bytes_per_pe", int64_t(k.getSramBytesPerPe())},
                        {"cycles_per_token", cycles}};
    if (std::optional<SparseFigures> sparse = sparseFigures(k, cost, denseStorage)) {
      kernel["sparsity"] = sparse->zeros; // the contract's field (CLI.md)
      kernel["sparse"] = json::Object{{"zeros", sparse->zeros},
                                      {"weight_bytes", sparse->heldBytes},
                                      {"dense_weight_bytes", sparse->denseBytes},
                                      {"tile_cycles", sparse->tileCycles},
                                      {"dense_tile_cycles", sparse->denseTileCycles}};
      sparseHeld += sparse->heldBytes, sparseDense += sparse->denseBytes;
    }
    f.kernels.push_back(std::move(kernel));
  });
  json::Array waferList;
  int64_t pesUsed = 0;
  for (auto &[index, f] : wafers) {
    pesUsed += f.pes;
    waferList.push_back(json::Object{{"index", index},
                                     {"pes_used", f.pes},
                                     {"sram_bytes_used", f.sram},
                                     {"kernels", std::move(f.kernels)}});
  }
  int64_t grid = arch->getWidth() * arch->getHeight() * std::max<int64_t>(1, wafers.size());
  // Every wafer of the pipeline shares the work.
  double ideal = cost.idealCyclesPerToken(macs) / double(std::max<size_t>(1, wafers.size()));
  StreamingFigures streaming = streamingFigures(module, cost);
  if (streaming.layers)
    slowest = streaming.cyclesPerToken();
  // A link moves a word per cycle: the most loaded one bounds the pipeline
  // too (routing lets it exceed the slowest kernel when it must).
  double linkLoad = 0;
  if (auto stats = module->getAttrOfType<DictionaryAttr>("wafer.route_stats"))
    if (auto load = stats.getAs<FloatAttr>("max_link_load"))
      linkLoad = load.getValueAsDouble() * double(arch->getHopCycles());
  double cycles = std::max(slowest, linkLoad);
  json::Object estimate{{"cycles_per_token", cycles},
                        {"tokens_per_s", cost.tokensPerSecond(cycles)},
                        {"bound", linkLoad > slowest ? "links" : "kernels"},
                        {"utilization", grid ? double(pesUsed) / double(grid) : 0.0},
                        {"ideal_cycles_per_token", ideal},
                        // Against the bound, kernels or links: what the pipeline delivers.
                        {"balance", cycles > 0 ? ideal / cycles : 0.0}};
  DecodeFigures decode = decodeFigures(module, cost);
  if (decode.generates) {
    // The CLI's decode figures. Every position waits for the pick before
    // it, prompt positions too, so a one-token prompt's first token takes
    // one step (a P-token prompt, about P).
    double step = decode.path.total();
    estimate["decode"] = json::Object{
        {"cycles_per_token", step},
        {"tokens_per_s", cost.tokensPerSecond(step)},
        {"time_to_first_token_s", step / double(arch->getClockHz())},
        {"kv_cache_bytes", decode.kvCacheBytes}};
  }
  json::Object report{{"arch", arch->getName()},
                      {"mode", mode},
                      {"precision", precision},
                      {"wafers", std::move(waferList)},
                      {"inter_wafer_bytes_per_token", interWaferBytes},
                      {"estimate", std::move(estimate)}};
  // The result blocks per kernel that routed (wsc-lower-place-route).
  module.walk([&](mlir::func::FuncOp func) {
    if (auto cap = func->getAttrOfType<IntegerAttr>("wskernel.max_blocks"))
      report["max_blocks"] = cap.getInt();
  });
  if (sparseDense)
    report["sparse_weights"] = json::Object{
        {"weight_bytes", sparseHeld},
        {"dense_weight_bytes", sparseDense},
        {"bytes_saved", sparseDense - sparseHeld}};
  if (streaming.layers && streaming.resident)
    report["folded"] = json::Object{{"layers", streaming.layers},
                                    {"compute_cycles_per_layer", streaming.computeCycles}};
  else if (streaming.layers)
    report["weight_streaming"] = json::Object{
        {"layers", streaming.layers},
        {"bytes_per_layer", streaming.bytesPerLayer},
        {"load_cycles_per_layer", streaming.loadCycles},
        {"compute_cycles_per_layer", streaming.computeCycles},
        {"bound", streaming.loadCycles > streaming.computeCycles ? "bandwidth" : "compute"},
        {"schedule", std::move(streaming.schedule)}};
  if (decode.generates)
    report["generation"] = json::Object{
        {"decode_cycles_per_token", decode.path.total()},
        {"decode_tokens_per_s", cost.tokensPerSecond(decode.path.total())},
        {"kv_cache_bytes", decode.kvCacheBytes},
        {"path", json::Object{{"compute_cycles", decode.path.compute},
                              {"chain_cycles", decode.path.chains},
                              {"fabric_cycles", decode.path.fabric},
                              {"wafer_link_cycles", decode.path.links},
                              {"weight_load_cycles", decode.path.loads}}},
        {"bound", decode.path.bound()},
        {"model", "the longest path through the kernels and back to the embedding: each kernel's cycles per token and "
                  "its chains (wskernel.chain_cycles), the hops between kernel centres and the "
                  "links between wafers"}};
  if (auto stats = module->getAttrOfType<DictionaryAttr>("wafer.route_stats")) {
    json::Object routing;
    for (NamedAttribute s : stats) {
      if (auto i = dyn_cast<IntegerAttr>(s.getValue()))
        routing[s.getName().getValue()] = i.getInt();
      else if (auto fl = dyn_cast<FloatAttr>(s.getValue()))
        routing[s.getName().getValue()] = fl.getValueAsDouble();
    }
    report["routing"] = std::move(routing);
  }
  // Through OutputFiles, as the tools write: whole or not at all, a link's
  // target replaced and the link kept, a device written through.
  std::string text = llvm::formatv("{0:2}", json::Value(std::move(report))).str() + "\n";
  wsc::runtime::OutputFiles out;
  std::string path = file;
  wsc::runtime::Status s = out.stage(path == "-" ? "/dev/stdout" : path, text);
  if (s)
    s = out.commit();
  if (!s) {
    module.emitError() << "cannot write the report: " << s.message();
    return signalPassFailure();
  }
}
