//===- KernelSizing.cpp - kernel shapes, and rebuilding a kernel ----------===//
//
// writeKernel turns a plan into a kernel's grid, body and figures with its
// kind (Kinds/); the lowering uses it, and so does the dialect's
// KernelSizingInterface registered here, through which placement asks for
// another shape of a kernel: its SRAM and cycles
// are then recomputed from the new body, never scaled. The grid helpers here
// serve every kind's sizer.
//
//===----------------------------------------------------------------------===//
#include "wsc/Conversion/KernelSizing.h"
#include "Kinds/Kind.h"
#include "wsc/Arch/Arch.h"

#include <cmath>
#include <map>
#include <memory>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;

namespace {

/// Splits `pes` PEs into h x w with h/w close to rows/cols, h <= rows, w <= cols.
std::pair<int64_t, int64_t> shapeGrid(int64_t pes, int64_t rows, int64_t cols, int64_t maxH,
                                      int64_t maxW) {
  double ratio = double(rows) / double(cols);
  int64_t h = std::max<int64_t>(1, std::llround(std::sqrt(double(pes) * ratio)));
  h = std::min({h, rows, maxH, std::max<int64_t>(1, pes)}); // no more rows than PEs
  int64_t w = std::min({std::max<int64_t>(1, pes / h), cols, maxW});
  // When the columns run out, give the rest of the budget to rows.
  h = std::min({std::max(h, ceilDiv(pes, w)), rows, maxH});
  // No all-padding rows or columns: each one holds part of the data.
  h = ceilDiv(rows, ceilDiv(rows, h));
  w = ceilDiv(cols, ceilDiv(cols, w));
  return {h, w};
}

} // namespace

std::pair<int64_t, int64_t> wsc::lowering::fitGrid(int64_t pes, int64_t rows, int64_t cols,
                                                   int64_t maxH, int64_t maxW, int64_t sramWords,
                                                   function_ref<int64_t(int64_t, int64_t)> words) {
  pes = std::max<int64_t>(1, pes);
  for (;;) {
    auto [h, w] = shapeGrid(pes, rows, cols, maxH, maxW);
    // Full: the grid cannot grow past one element per PE or the box.
    bool full = (h == std::min(rows, maxH) && w == std::min(cols, maxW)) ||
                pes >= std::min(rows, maxH) * std::min(cols, maxW);
    if (words(h, w) <= sramWords || full)
      return {h, w};
    pes = pes * 5 / 4 + 1;
  }
}

int64_t wsc::lowering::maxRows(const KernelPlan &p, wafer::ArchAttr arch) {
  return std::min(p.maxH, arch.getHeight());
}
int64_t wsc::lowering::maxCols(const KernelPlan &p, wafer::ArchAttr arch) {
  return std::min(p.maxW, arch.getWidth());
}

namespace {

/// The channels dictionary of a kernel on h x w PEs.
/// (A kernel whose rows keep host-read results passes them north on "up".)
DictionaryAttr channelsFor(Builder &b, const KernelPlan &p, int64_t group, bool hostRows) {
  SmallVector<NamedAttribute> c;
  bool layerNorm = p.kind == "layer_norm" || p.kind == "rms_norm"; // row all-reduces
  // Attention with several columns per head all-reduces its scores there.
  bool splitHeads =
      p.kind == "attention" && p.heads > 0 && p.w > p.attention.columnHeads(p.heads);
  if (p.h > 1)
    c.push_back(b.getNamedAttr("col", b.getStringAttr("col_chain")));
  // Gathers (blocks of several columns) and the all-reduces run along rows.
  if (p.w > 1 && (layerNorm || splitHeads || p.kind == "argmax" || p.picksNext ||
                  (!p.hostResult && group > 1)))
    c.push_back(b.getNamedAttr("row", b.getStringAttr("row_chain")));
  if (p.w > 1 && (layerNorm || splitHeads || p.topK)) // top-k all-reduces its counts
    c.push_back(b.getNamedAttr("back", b.getStringAttr("row_chain_west")));
  if (p.h > 1 && hostRows)
    c.push_back(b.getNamedAttr("up", b.getStringAttr("col_chain_north")));
  // A generating attention merges its partials up from the bottom half too.
  if (p.h > 1 && p.kind == "attention" && p.tokenAtATime)
    c.push_back(b.getNamedAttr("north", b.getStringAttr("col_chain_north")));
  return b.getDictionaryAttr(c);
}

} // namespace

Sizer wsc::lowering::tiledSizer(int64_t rows, int64_t cols, wafer::ArchAttr arch,
                        std::function<int64_t(int64_t, int64_t)> words) {
  int64_t sramWords = arch.getSramBytes() / 4;
  return [=](KernelPlan &p) {
    std::tie(p.h, p.w) = fitGrid(p.h * p.w, rows, cols, maxRows(p, arch), maxCols(p, arch),
                                 sramWords / tileCopies(p), words);
  };
}

/// The most instructions one PE of `kernel` runs: its program holds those
/// (an instruction whose `when` leaves a PE out is not in that PE's code).
static int64_t instructionsPerPe(wk::KernelOp kernel) {
  int64_t h = kernel.getHeight(), w = kernel.getWidth(), all = 0;
  // Per-range counts, summed by a 2-D difference array.
  std::vector<int64_t> diff((h + 1) * (w + 1), 0);
  kernel.getBody().walk([&](Operation *op) {
    if (isa<wk::LoopOp>(op)) {
      all += 2; // LOOP and END
      return;
    }
    if (isa<wk::InitTileOp, wk::HostInputOp, wk::HostOutputOp, wk::FilterOp, wk::KernelOp>(op))
      return;
    auto when = op->getAttrOfType<ArrayAttr>("when");
    if (!when || when.empty()) {
      ++all;
      return;
    }
    for (Attribute a : when) {
      auto r = cast<wk::PeRangeAttr>(a);
      int64_t x0 = std::max<int64_t>(0, r.getX0()), x1 = std::min(w - 1, r.getX1());
      int64_t y0 = std::max<int64_t>(0, r.getY0()), y1 = std::min(h - 1, r.getY1());
      if (x0 > x1 || y0 > y1)
        continue;
      diff[y0 * (w + 1) + x0] += 1, diff[y0 * (w + 1) + x1 + 1] -= 1;
      diff[(y1 + 1) * (w + 1) + x0] -= 1, diff[(y1 + 1) * (w + 1) + x1 + 1] += 1;
    }
  });
  int64_t most = 0;
  std::vector<int64_t> row(w + 1, 0);
  for (int64_t y = 0; y < h; ++y) {
    int64_t run = 0;
    for (int64_t x = 0; x < w; ++x) {
      row[x] += diff[y * (w + 1) + x];
      run += row[x];
      most = std::max(most, run);
    }
  }
  return all + most;
}

int64_t wsc::lowering::writeKernel(wk::KernelOp kernel, const KernelPlan &p, int64_t batch,
                                   int64_t tokens, const CostModel &cost,
                                   SmallVectorImpl<int64_t> *outBlocks) {
  OpBuilder b(kernel.getContext());
  kernel.setGridAttr(b.getDenseI64ArrayAttr({p.h, p.w}));
  // The result's width: the stream result(s) it has so far, in blocks or whole.
  int64_t n = 0;
  for (Type t : kernel->getResultTypes())
    if (auto s = dyn_cast<wk::StreamType>(t))
      n += s.getSize();
  int64_t group = blockColumns(p, n, cost.arch);
  // How the result leaves: in blocks, or kept for the host (by the rows
  // that hold its tokens, or all on the last row when it fits).
  CostModel::Output out = CostModel::Output::Blocks;
  if (auto t = dyn_cast<ShapedType>(kernel->getResult(0).getType()); t && p.hostResult)
    out = outputOf(p, batch * tokens, p.colHi ? p.colHi - p.colLo : t.getShape().back());
  kernel.setChannelsAttr(channelsFor(b, p, group, out == CostModel::Output::Host));
  kernel.getBody().getBlocks().clear();
  b.setInsertionPointToStart(&kernel.getBody().emplaceBlock());
  Body body(b, kernel, batch, tokens);
  body.group = group;
  body.output = out;
  const KernelKind *kind = kernelKind(p.kind);
  assert(kind && "every plan names a kind");
  auto [dataBytes, cycles] = kind->writeBody(body, p, batch, tokens, cost);
  if (dataBytes < 0)
    return -1; // the body could not be written; the error is on the op
  if (outBlocks)
    outBlocks->assign(body.outBlocks.begin(), body.outBlocks.end());
  if (p.layers) {
    int64_t added = foldLayerBody(kernel, p, batch, tokens, body.layerState, dataBytes);
    if (added < 0)
      return -1;
    dataBytes += added;
    cycles *= double(p.layers); // every token passes it once per layer
  }
  // The program lives in SRAM too: about 16 bytes per instruction.
  int64_t bytes = dataBytes + kCodeBytesPerInstruction * instructionsPerPe(kernel);
  kernel.setSramBytesPerPeAttr(b.getI64IntegerAttr(bytes));
  kernel->setAttr("wafer.stage", b.getI64IntegerAttr(p.stage));
  kernel.setCyclesPerTokenAttr(b.getF64FloatAttr(cycles));
  if (double chain = kind->chainCycles(p, n, tokens, cost); chain > 0)
    kernel->setAttr(wk::kChainCyclesAttr, b.getF64FloatAttr(chain));
  kind->annotate(kernel, p);
  if (p.weightRowBase)
    kernel->setAttr(kWeightRowBaseAttr, b.getI64IntegerAttr(p.weightRowBase));
  if (auto func = kernel->getParentOfType<func::FuncOp>();
      !p.blocked && func && func->hasAttr(wk::kResidentLayersAttr))
    kernel->setAttr(kOneStreamAttr, b.getUnitAttr());
  if (p.colHi)
    kernel->setAttr(kWeightColsAttr, b.getDenseI64ArrayAttr({p.colLo, p.colHi}));
  if (p.align)
    kernel->setAttr(kBlockAlignAttr, b.getI64IntegerAttr(p.align));
  if (!p.colInterleave.empty())
    kernel->setAttr(kColInterleaveAttr, b.getDenseI64ArrayAttr(p.colInterleave));
  if (!p.colPerm.empty())
    kernel->setAttr(kColPermAttr, b.getDenseI64ArrayAttr(p.colPerm));
  if (!p.rowPerm.empty())
    kernel->setAttr(kRowPermAttr, b.getDenseI64ArrayAttr(p.rowPerm));
  if (p.qkvUnit)
    kernel->setAttr(kQkvUnitAttr, b.getI64IntegerAttr(p.qkvUnit));
  return bytes;
}

/// The lowering's KernelSizingInterface::resize (KernelSizing.h).
static LogicalResult resizeLoweredKernel(wk::KernelOp kernel, int64_t pes, int64_t maxH,
                                         int64_t maxW, double maxCycles) {
  auto func = kernel->getParentOfType<func::FuncOp>();
  auto module = kernel->getParentOfType<ModuleOp>();
  auto arch = module ? wafer::getArch(module) : FailureOr<wafer::ArchAttr>(failure());
  if (!func || failed(arch) || kernel->getNumResults() < 1)
    return failure();
  auto [batch, tokens] = tokenGeometry(func);
  if (!batch)
    return failure();
  // The plan again, from the kernel's operands: streams first, then tensors.
  KernelPlan p;
  p.name = kernel.getName().str();
  p.kind = kernel.getKind().str();
  SmallVector<LogicalInput> ins = logicalInputs(kernel);
  for (const LogicalInput &in : ins)
    p.inputs.push_back(kernel.getInputs()[in.operand]);
  // Results leave in blocks, and the new shape must keep them (their
  // readers rely on them); weight streaming gathers each into one stream,
  // and so does a folded program the streams its layers feed back
  // (blockFoldedStreams).
  p.blocked = !func->hasAttr(wk::kStreamedLayersAttr) ||
              (func->hasAttr(wk::kResidentLayersAttr) && !kernel->hasAttr(kOneStreamAttr));
  if (auto cap = func->getAttrOfType<IntegerAttr>(kMaxBlocksAttr))
    p.maxBlocks = cap.getInt();
  // How its tiles are held, and (weight streaming) its layers: the operands
  // of layers 1 and on follow layer 0's, and its feedback ports stay.
  // (Matrices and tables carry it; bias and scale tiles are always f32.)
  kernel.walk([&](Operation *op) {
    StringRef storage = "f32";
    if (auto init = dyn_cast<wk::InitTileOp>(op))
      storage = init.getStorage();
    if (auto load = dyn_cast<wk::LoadTileOp>(op))
      storage = load.getStorage();
    if (storage != "f32")
      p.storage = storage.str();
  });
  if (auto layers = kernel->getAttrOfType<IntegerAttr>(wk::kStreamedLayersAttr)) {
    p.layers = layers.getInt();
    int64_t statics =
        llvm::count_if(p.inputs, [](Value v) { return isa<RankedTensorType>(v.getType()); });
    if (p.layers <= 0 || statics % p.layers)
      return failure();
    size_t later = size_t(statics / p.layers * (p.layers - 1));
    p.laterWeights.assign(p.inputs.end() - later, p.inputs.end());
    p.inputs.resize(p.inputs.size() - later);
  }
  // Feedback: weight streaming's block output, a generating program's
  // tokens; ports fb<operand> stand in for the logical input's blocks.
  if (DictionaryAttr fb = kernel.getFeedbackAttr())
    for (NamedAttribute entry : fb) {
      unsigned operand;
      if (entry.getName().getValue().drop_front(2).getAsInteger(10, operand))
        return failure();
      auto in = llvm::find_if(ins, [&](const LogicalInput &i) {
        return operand >= i.operand && operand < i.operand + std::max<size_t>(1, i.blocks.size());
      });
      if (in == ins.end())
        return failure();
      if (!llvm::is_contained(p.fedBack, unsigned(in - ins.begin())))
        p.fedBack.push_back(unsigned(in - ins.begin()));
    }
  p.feedsBack = !wk::feedbackReaders(kernel).empty();
  p.hostResult = !isa<wk::StreamType>(kernel->getResult(0).getType());
  if (auto func = kernel->getParentOfType<func::FuncOp>()) {
    p.tokenAtATime = func->hasAttr("wsgraph.generate");
    p.residentLayers = p.layers && func->hasAttr(wk::kResidentLayersAttr);
  }
  if (auto stage = kernel->getAttrOfType<IntegerAttr>("wafer.stage"))
    p.stage = stage.getInt();
  if (auto base = kernel->getAttrOfType<IntegerAttr>(kWeightRowBaseAttr))
    p.weightRowBase = base.getInt();
  if (auto align = kernel->getAttrOfType<IntegerAttr>(kBlockAlignAttr))
    p.align = align.getInt();
  if (auto inter = kernel->getAttrOfType<DenseI64ArrayAttr>(kColInterleaveAttr))
    p.colInterleave.assign(inter.asArrayRef().begin(), inter.asArrayRef().end());
  if (auto perm = kernel->getAttrOfType<DenseI64ArrayAttr>(kColPermAttr))
    p.colPerm.assign(perm.asArrayRef().begin(), perm.asArrayRef().end());
  if (auto perm = kernel->getAttrOfType<DenseI64ArrayAttr>(kRowPermAttr))
    p.rowPerm.assign(perm.asArrayRef().begin(), perm.asArrayRef().end());
  if (auto unit = kernel->getAttrOfType<IntegerAttr>(kQkvUnitAttr))
    p.qkvUnit = unit.getInt();
  if (auto cols = kernel->getAttrOfType<DenseI64ArrayAttr>(kWeightColsAttr);
      cols && cols.size() == 2)
    p.colLo = cols[0], p.colHi = cols[1];
  // The result it writes into is no input of the body.
  if (kernel->hasAttr(wk::kWritesIntoAttr)) {
    p.writesIntoPrevious = true;
    p.inputs.pop_back();
  }
  const KernelKind *kind = kernelKind(p.kind);
  if (!kind || failed(kind->resize(kernel, ins, p, batch, tokens, *arch)))
    return failure();
  p.h = 1, p.w = std::max<int64_t>(1, pes);
  p.maxH = maxH, p.maxW = maxW;
  p.size(p);
  int64_t oldH = kernel.getHeight(), oldW = kernel.getWidth();
  // A linear's blocked result keeps its columns (its readers rely on its
  // blocks): when the sizer's shape changes them, only the rows change.
  bool linear = StringRef(p.kind).starts_with("linear");
  if (linear && p.blocked && !p.hostResult && p.w != oldW && oldW <= maxW)
    p.w = oldW, p.h = std::min(maxH, std::max<int64_t>(1, pes / oldW));
  if (p.h > maxH || p.w > maxW || (p.h == oldH && p.w == oldW))
    return failure();
  CostModel cost{*arch};
  SmallVector<int64_t> blocks;
  int64_t bytes = writeKernel(kernel, p, batch, tokens, cost, &blocks);
  // Blocked results must keep their sizes (one gathered stream always does).
  auto size = [](Type t) { return cast<wk::StreamType>(t).getSize(); };
  bool sameBlocks = p.hostResult || !p.blocked ||
                    llvm::equal(blocks, llvm::map_range(kernel->getResultTypes(), size));
  bool inTime = maxCycles <= 0 || kernel.getCyclesPerToken().convertToDouble() <= maxCycles;
  if (sameBlocks && bytes <= arch->getSramBytes() && inTime)
    return success();
  // Too big for SRAM or too slow after all: the old shape again (the same body).
  p.h = oldH, p.w = oldW;
  writeKernel(kernel, p, batch, tokens, cost);
  return failure();
}

namespace {
struct LoweredKernelSizing : wk::KernelSizingInterface {
  using KernelSizingInterface::KernelSizingInterface;
  LogicalResult resize(wk::KernelOp kernel, int64_t pes, int64_t maxH, int64_t maxW,
                       double maxCycles) const override {
    return resizeLoweredKernel(kernel, pes, maxH, maxW, maxCycles);
  }
};
} // namespace

void wsc::registerKernelSizing(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, wk::WskernelDialect *dialect) {
    dialect->addInterfaces<LoweredKernelSizing>();
  });
}
