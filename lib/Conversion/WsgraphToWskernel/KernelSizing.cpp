//===- KernelSizing.cpp - kernel shapes, and rebuilding a kernel ----------===//
//
// The sizers pick each kind's grid for a PE budget; writeKernel turns a plan
// into a kernel's grid, body and figures. The lowering uses both, and so does
// resizeKernel, which placement calls when a kernel must take another shape:
// its SRAM and cycles are then recomputed from the new body, never scaled.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "wsc/Conversion/KernelSizing.h"

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

/// Grows a grid from `pes` PEs until `words(h, w)` fits a PE's SRAM or the
/// grid cannot grow; the caller reports what still does not fit.
std::pair<int64_t, int64_t> fitGrid(int64_t pes, int64_t rows, int64_t cols, int64_t maxH,
                                    int64_t maxW, int64_t sramWords,
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

int64_t maxRows(const KernelPlan &p, wafer::ArchAttr arch) {
  return std::min(p.maxH, arch.getHeight());
}
int64_t maxCols(const KernelPlan &p, wafer::ArchAttr arch) {
  return std::min(p.maxW, arch.getWidth());
}

/// The channels dictionary of a kernel on h x w PEs.
/// (A kernel whose rows keep host-read results passes them north on "up".)
DictionaryAttr channelsFor(Builder &b, const KernelPlan &p, int64_t group, bool hostRows) {
  SmallVector<NamedAttribute> c;
  bool layerNorm = p.kind == "layer_norm";
  // Attention with several columns per head all-reduces its scores there.
  bool splitHeads = p.kind == "attention" && p.heads > 0 && p.w > p.heads;
  if (p.h > 1)
    c.push_back(b.getNamedAttr("col", b.getStringAttr("col_chain")));
  // Gathers and the all-reduces run along rows.
  if (p.w > 1 &&
      (layerNorm || splitHeads || (!p.hostResult && p.kind != "add" && group > 1)))
    c.push_back(b.getNamedAttr("row", b.getStringAttr("row_chain")));
  if (p.w > 1 && (layerNorm || splitHeads))
    c.push_back(b.getNamedAttr("back", b.getStringAttr("row_chain_west")));
  if (p.h > 1 && hostRows)
    c.push_back(b.getNamedAttr("up", b.getStringAttr("col_chain_north")));
  return b.getDictionaryAttr(c);
}

// The kernel parameters that its operand types do not carry.
constexpr StringLiteral kEpsilonAttr = "wskernel.epsilon";
constexpr StringLiteral kScaleAttr = "wskernel.scale";
constexpr StringLiteral kHeadsAttr = "wskernel.heads";

} // namespace

/// A sizer that tiles a rows x cols matrix over the grid, grown until
/// `words(h, w)` per PE fit SRAM.
static Sizer tiledSizer(int64_t rows, int64_t cols, wafer::ArchAttr arch,
                        std::function<int64_t(int64_t, int64_t)> words) {
  int64_t sramWords = arch.getSramBytes() / 4;
  return [=](KernelPlan &p) {
    std::tie(p.h, p.w) =
        fitGrid(p.h * p.w, rows, cols, maxRows(p, arch), maxCols(p, arch), sramWords, words);
  };
}

Sizer wsc::lowering::embedSizer(int64_t v, int64_t c, bool positions, bool chained, int64_t batch,
                                int64_t tokens, StringRef storage, wafer::ArchAttr arch) {
  std::string st = storage.str();
  int64_t sramWords = arch.getSramBytes() / 4;
  auto words = [=](int64_t h, int64_t w) {
    int64_t vb = ceilDiv(v, h), cb = ceilDiv(c, w);
    int64_t tb = ceilDiv(tokens, h);
    return batch * tokens + wk::storageWords(st, vb * cb) +
           (positions ? wk::storageWords(st, tb * cb) + cb + 1 : 0) + (chained ? 3 : 2) * cb;
  };
  Sizer tiled = tiledSizer(v, c, arch, words);
  CostModel cost{arch};
  // Its program (about 20 instructions) must fit beside the table.
  int64_t dataWords = sramWords - 32 * kCodeBytesPerInstruction / 4;
  // Each column passes its share of the row down and hands it on, so the
  // cycles follow the width; rows only hold the table. Within the budget,
  // the width that takes the fewest cycles per token, on the fewest rows
  // whose table slices fit; the tiled shape when none fits.
  return [=](KernelPlan &p) {
    int64_t budget = p.h * p.w, most = std::min(v, maxRows(p, arch));
    int64_t bestH = 0, bestW = 0;
    double best = 0;
    for (int64_t w = 1; w <= std::min(c, maxCols(p, arch)); ++w) {
      if (w != ceilDiv(c, ceilDiv(c, w)))
        continue; // the same columns as a narrower grid, one of them padding
      if (words(most, w) > dataWords)
        continue;
      int64_t lo = 1, hi = most; // the fewest rows that fit
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (words(mid, w) <= dataWords)
          hi = mid;
        else
          lo = mid + 1;
      }
      int64_t h = ceilDiv(v, ceilDiv(v, lo));
      if (h * w > budget)
        continue;
      double cycles = cost.embed(v, c, h, w, positions, CostModel::Output::Blocks, 0,
                                 blockColumns(p, w, c, arch));
      if (!bestW || cycles < best || (cycles == best && h * w < bestH * bestW))
        best = cycles, bestH = h, bestW = w;
    }
    if (!bestW)
      return tiled(p);
    p.h = bestH, p.w = bestW;
  };
}

Sizer wsc::lowering::layerNormSizer(int64_t c, int64_t tokens, wafer::ArchAttr arch) {
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  using Output = CostModel::Output;
  // The width within the PE budget that takes the fewest cycles per token:
  // more PEs share the vector, but the all-reduces' round trips grow. Its
  // buffers (a group of tokens' x) and code must fit a PE.
  int64_t step = layerNormTokens(tokens);
  return [=](KernelPlan &p) {
    int64_t most = std::max<int64_t>(1, std::min({p.h * p.w, c, maxCols(p, arch)}));
    int64_t best = most;
    double bestCycles = 0;
    for (int64_t w = 1; w <= most; ++w) {
      int64_t cb = ceilDiv(c, w);
      if ((step + 4) * cb + 512 > sramWords && w < most)
        continue;
      double cycles =
          cost.layerNorm(c, w, Output::Blocks, cb, blockColumns(p, w, c, arch), step);
      if (best == most || cycles < bestCycles)
        best = w, bestCycles = cycles;
    }
    p.h = 1, p.w = ceilDiv(c, ceilDiv(c, best));
  };
}

Sizer wsc::lowering::linearSizer(int64_t k, int64_t n, bool host, bool residual, int64_t batch,
                                 int64_t tokens, StringRef storage, wafer::ArchAttr arch,
                                 std::function<double(const KernelPlan &)> cycles) {
  std::string st = storage.str();
  auto tileWords = [=](int64_t h, int64_t w) {
    int64_t kb = ceilDiv(k, h), nb = ceilDiv(n, w);
    // Host results: the last row keeps every token's block, or each row its
    // share of the tokens.
    int64_t all = batch * tokens;
    int64_t kept = hostKeepsAll(all, nb) ? all * nb : ceilDiv(all, h) * nb;
    // (two partial sums, see asyncColumnSums)
    return kb + wk::storageWords(st, kb * nb) + 3 * nb + (host ? kept + 2 * nb : 2 * nb) +
           (residual ? nb : 0);
  };
  Sizer tiled = tiledSizer(k, n, arch, tileWords);
  Sizer squareish = [=](KernelPlan &p) {
    int64_t budget = p.h * p.w;
    tiled(p);
    // A result handed on in blocks, or kept on the last row for the host,
    // is finished by a row of its own (bias, GELU, residual, the gather)
    // while the rows above hold the tiles: the tiles take the budget less
    // that row.
    int64_t most = maxRows(p, arch);
    bool finishes = !host || hostKeepsAll(batch * tokens, ceilDiv(n, p.w));
    if (finishes && p.h >= 2 && most >= 3) {
      int64_t maxH = p.maxH, h = p.h, w = p.w;
      p.maxH = most - 1;
      p.h = 1, p.w = std::max<int64_t>(1, budget - p.w);
      tiled(p);
      p.maxH = maxH;
      // Tiles on one row leave no room for a finishing row: keep the shape
      // without one (fewer PEs for a larger budget would break the
      // balancing's search, which takes cycles to fall as budgets grow).
      if (p.h >= 2)
        p.h += 1;
      else
        p.h = h, p.w = w;
    }
    if (p.align <= 0 || host)
      return;
    // Columns of a share that divides the unit (a little narrower, so the
    // tiles still fit), when the box and a quarter more PEs allow.
    int64_t nb = ceilDiv(n, p.w);
    for (int64_t share = std::min(nb, p.align); share >= 1; --share)
      if (p.align % share == 0) {
        int64_t w = ceilDiv(n, share);
        if (w <= maxCols(p, arch) && 4 * p.h * w <= 5 * std::max(budget, p.h * p.w))
          p.w = w;
        return;
      }
  };
  if (!cycles)
    return squareish;
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  // The balancing asks for the same budgets again and again (GPT-1T: 10 s
  // of lowering without this); a plan's copies share it.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, bool>;
  auto shapes = std::make_shared<std::map<Key, std::pair<int64_t, int64_t>>>();
  return [=](KernelPlan &p) {
    if (p.align > 0)
      return squareish(p); // aligned to its reader's unit: kept
    int64_t budget = p.h * p.w;
    Key key{budget, p.maxH, p.maxW, p.maxBlocks, p.blocked};
    if (auto it = shapes->find(key); it != shapes->end()) {
      std::tie(p.h, p.w) = it->second;
      return;
    }
    squareish(p);
    // Square-ish tiles are not always the fastest for their PEs: the tile's
    // rounding (kb x nb) decides. Each count of tile rows (one per kb), plus
    // a finishing row and a hand-on row, as wide as the budget allows. The
    // square-ish shape is a candidate within the budget; past it (grown
    // until the tiles fit SRAM, or rounded up), only when no other fits.
    int64_t maxH = maxRows(p, arch), maxW = maxCols(p, arch);
    int64_t squareH = p.h, squareW = p.w, bestH = 0, bestW = 0;
    double best = std::numeric_limits<double>::infinity();
    if (p.h * p.w <= budget)
      best = cycles(p), bestH = p.h, bestW = p.w;
    for (int64_t kb = k; kb >= 1;) {
      int64_t rows = ceilDiv(k, kb);
      for (int64_t h = rows; h <= rows + 2 && h <= maxH; ++h) {
        int64_t w = std::min({budget / h, maxW, n});
        if (w < 1)
          continue;
        w = ceilDiv(n, ceilDiv(n, w));
        // No row holds fewer than k / h rows of the weights: a shape whose
        // multiply-adds alone take longer than the best cannot beat it.
        if (cost.matvec(ceilDiv(k, h), ceilDiv(n, w)) > best)
          continue;
        // The tiles on all rows but the finishing one fit (the hand-on row's
        // are checked where it is chosen).
        if (4 * tileWords(std::max<int64_t>(1, h - (h >= 3 ? 1 : 0)), w) + kHandOnRowCodeBytes >
            4 * sramWords)
          continue;
        p.h = h, p.w = w;
        double c = cycles(p);
        if (c < best || (c == best && h * w < bestH * bestW))
          best = c, bestH = h, bestW = w;
      }
      int64_t next = ceilDiv(k, rows + 1); // the next kb with more rows
      kb = next < kb ? next : kb - 1;
    }
    p.h = bestH ? bestH : squareH, p.w = bestH ? bestW : squareW;
    (*shapes)[key] = {p.h, p.w};
  };
}

Sizer wsc::lowering::attentionSizer(int64_t tokens, int64_t heads, int64_t d,
                                    wafer::ArchAttr arch) {
  int64_t sramWords = arch.getSramBytes() / 4;
  CostModel cost{arch};
  // Within the PE budget, the fewest cycles per token over rows (key
  // blocks per head: each row scans fewer keys per token) and columns per
  // head (each takes a share of d that divides it; its scores are
  // all-reduced over the head's columns); fewer PEs on a tie. The caches
  // and about 80 instructions (16 bytes each) must fit a PE.
  return [=](KernelPlan &p) {
    // An interleaved input fixes the columns per head (its unit is their
    // share of d).
    int64_t fixedParts = p.qkvUnit ? d / p.qkvUnit : 0;
    int64_t budget = std::max<int64_t>(heads, p.h * p.w);
    int64_t bestH = tokens, bestW = heads * std::max<int64_t>(1, fixedParts);
    double best = std::numeric_limits<double>::infinity();
    // Over the budget, the fewest PEs whose caches fit.
    int64_t smallH = bestH, smallW = bestW;
    for (int64_t parts = 1; parts <= d && heads * parts <= maxCols(p, arch); ++parts) {
      if (d % parts || (fixedParts && parts != fixedParts))
        continue;
      int64_t ds = d / parts, w = heads * parts;
      // Each distinct row count once, at its fewest keys per row: O(sqrt T).
      for (int64_t tb = 1, rows = tokens; tb <= tokens;
           tb = rows > 1 ? ceilDiv(tokens, rows - 1) : tokens + 1) {
        rows = ceilDiv(tokens, tb);
        // Caches, scores, q and the partials (the result's ds words come out
        // of the program's allowance; the built body is checked exactly).
        if (rows > maxRows(p, arch) || 2 * tb * ds + tb + 3 * ds + 12 + 80 * 4 > sramWords)
          continue;
        double cycles = cost.attention(tokens, d, heads, parts, rows, CostModel::Output::Blocks,
                                       3 * ds, blockColumns(p, w, d * heads, arch),
                                       attentionPrefetches(p, tokens));
        bool within = rows * w <= budget;
        if (within && (cycles < best || (cycles == best && rows * w < bestH * bestW)))
          best = cycles, bestH = rows, bestW = w;
        if (rows * w < smallH * smallW)
          smallH = rows, smallW = w;
      }
    }
    if (best == std::numeric_limits<double>::infinity())
      bestH = smallH, bestW = smallW;
    p.h = bestH, p.w = bestW;
  };
}

Sizer wsc::lowering::addSizer() {
  return [](KernelPlan &p) { p.h = 1, p.w = 1; };
}

std::pair<int64_t, int64_t> wsc::lowering::tokenGeometry(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (t && t.getRank() == 2 && isa<IntegerType>(t.getElementType()) && t.hasStaticShape())
      return {t.getDimSize(0), t.getDimSize(1)};
  }
  return {0, 0};
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
  auto [dataBytes, cycles] = writeBody(body, p, batch, tokens, cost);
  if (dataBytes < 0)
    return -1; // the body could not be written; the error is on the op
  if (outBlocks)
    outBlocks->assign(body.outBlocks.begin(), body.outBlocks.end());
  if (p.layers) {
    foldLayerBody(kernel, p);
    cycles *= double(p.layers); // every token passes it once per layer
  }
  // The program lives in SRAM too: about 16 bytes per instruction.
  int64_t bytes = dataBytes + kCodeBytesPerInstruction * instructionsPerPe(kernel);
  kernel.setSramBytesPerPeAttr(b.getI64IntegerAttr(bytes));
  kernel->setAttr("wafer.stage", b.getI64IntegerAttr(p.stage));
  kernel.setCyclesPerTokenAttr(b.getF64FloatAttr(cycles));
  if (p.kind == "layer_norm")
    kernel->setAttr(kEpsilonAttr, b.getF32FloatAttr(p.epsilon));
  if (p.kind == "attention") {
    kernel->setAttr(kScaleAttr, b.getF32FloatAttr(p.scale));
    kernel->setAttr(kHeadsAttr, b.getI64IntegerAttr(p.heads));
  }
  if (p.weightRowBase)
    kernel->setAttr(kWeightRowBaseAttr, b.getI64IntegerAttr(p.weightRowBase));
  if (p.colHi)
    kernel->setAttr(kWeightColsAttr, b.getDenseI64ArrayAttr({p.colLo, p.colHi}));
  if (p.align)
    kernel->setAttr(kBlockAlignAttr, b.getI64IntegerAttr(p.align));
  if (!p.colInterleave.empty())
    kernel->setAttr(kColInterleaveAttr, b.getDenseI64ArrayAttr(p.colInterleave));
  if (p.qkvUnit)
    kernel->setAttr(kQkvUnitAttr, b.getI64IntegerAttr(p.qkvUnit));
  return bytes;
}

LogicalResult wsc::resizeKernel(wk::KernelOp kernel, int64_t pes, int64_t maxH, int64_t maxW,
                                double maxCycles) {
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
  // Weight streaming gathers results into one stream; otherwise they are
  // blocks, and the new shape must keep them (their readers rely on them).
  p.blocked = !func->hasAttr(wk::kStreamedLayersAttr);
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
    int64_t statics = llvm::count_if(p.inputs, [](Value v) { return isa<RankedTensorType>(v.getType()); });
    if (p.layers <= 0 || statics % p.layers)
      return failure();
    size_t later = size_t(statics / p.layers * (p.layers - 1));
    p.laterWeights.assign(p.inputs.end() - later, p.inputs.end());
    p.inputs.resize(p.inputs.size() - later);
    if (DictionaryAttr fb = kernel.getFeedbackAttr())
      for (NamedAttribute entry : fb) {
        unsigned operand;
        if (entry.getName().getValue().drop_front(2).getAsInteger(10, operand))
          return failure();
        p.fedBack.push_back(operand);
      }
    p.feedsBack = !wk::feedbackReaders(kernel).empty();
  }
  p.hostResult = !isa<wk::StreamType>(kernel->getResult(0).getType());
  if (auto stage = kernel->getAttrOfType<IntegerAttr>("wafer.stage"))
    p.stage = stage.getInt();
  if (auto base = kernel->getAttrOfType<IntegerAttr>(kWeightRowBaseAttr))
    p.weightRowBase = base.getInt();
  if (auto align = kernel->getAttrOfType<IntegerAttr>(kBlockAlignAttr))
    p.align = align.getInt();
  if (auto inter = kernel->getAttrOfType<DenseI64ArrayAttr>(kColInterleaveAttr))
    p.colInterleave.assign(inter.asArrayRef().begin(), inter.asArrayRef().end());
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
  auto tensorShape = [&](size_t i) -> ArrayRef<int64_t> {
    auto t = i < p.inputs.size() ? dyn_cast<RankedTensorType>(p.inputs[i].getType()) : nullptr;
    return t && t.getRank() == 2 ? t.getShape() : ArrayRef<int64_t>();
  };
  auto streamSize = [&](size_t i) -> int64_t { return i < ins.size() ? ins[i].words() : 0; };
  if (p.kind == "linear" || p.kind == "linear_gelu") {
    bool residual = streamSize(1) > 0;
    ArrayRef<int64_t> weight = tensorShape(residual ? 2 : 1);
    if (weight.empty() || !streamSize(0) || p.weightRowBase + weight[0] > streamSize(0))
      return failure();
    int64_t n = p.colHi ? p.colHi - p.colLo : weight[1];
    p.size = linearSizer(weight[0], n, p.hostResult, residual, batch, tokens, p.storage, *arch,
                         linearCycles(weight[0], n, p.kind == "linear_gelu", residual,
                                      batch * tokens, *arch, asyncColumnSums(tokens)));
  } else if (p.kind == "embed") {
    bool chained = streamSize(1) > 0;
    size_t at = chained ? 2 : 1;
    ArrayRef<int64_t> table = tensorShape(at);
    if (table.empty())
      return failure();
    p.size = embedSizer(table[0], table[1], p.inputs.size() > at + 1, chained, batch, tokens,
                        p.storage, *arch);
  } else if (p.kind == "layer_norm") {
    auto epsilon = kernel->getAttrOfType<FloatAttr>(kEpsilonAttr);
    if (!epsilon || !streamSize(0))
      return failure();
    p.epsilon = epsilon.getValueAsDouble();
    p.size = layerNormSizer(streamSize(0), tokens, *arch);
  } else if (p.kind == "attention") {
    auto scale = kernel->getAttrOfType<FloatAttr>(kScaleAttr);
    auto headsAttr = kernel->getAttrOfType<IntegerAttr>(kHeadsAttr);
    int64_t heads = headsAttr ? headsAttr.getInt() : 0, c3 = streamSize(0);
    if (!scale || heads <= 0 || !c3 || c3 % (3 * heads))
      return failure();
    p.scale = scale.getValueAsDouble();
    p.heads = heads;
    p.size = attentionSizer(tokens, heads, c3 / 3 / heads, *arch);
  } else {
    return failure();
  }
  p.h = 1, p.w = std::max<int64_t>(1, pes);
  p.maxH = maxH, p.maxW = maxW;
  p.size(p);
  int64_t oldH = kernel.getHeight(), oldW = kernel.getWidth();
  // A linear's blocked result keeps its columns (its readers rely on its
  // blocks): when the sizer's shape changes them, only the rows change.
  bool linear = p.kind == "linear" || p.kind == "linear_gelu";
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
