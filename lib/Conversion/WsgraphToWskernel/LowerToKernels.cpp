//===- LowerToKernels.cpp - fused wsgraph to per-core kernels -------------===//
//
// Plans one kernel per fused op (absorbing the head split and merge around
// attention, GELU and residual adds), partitions the kernels into wafer
// stages, sizes each within its wafer and SRAM, and builds them. Plans that
// become several pieces are split in SplitKernels.cpp; the sizers and the
// kernel writer live in KernelSizing.cpp (placement rebuilds kernels with
// them too); the bodies are written by KernelBodies.cpp.
//
//===----------------------------------------------------------------------===//
#include "KernelBody.h"
#include "Kinds/Generic.h"
#include "Kinds/Kind.h"
#include "wsc/Analysis/CostModel.h"
#include "wsc/Analysis/WeightData.h"
#include "wsc/Arch/Arch.h"
#include "wsc/Conversion/Passes.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

namespace wsc {
#define GEN_PASS_DEF_WSCLOWERTOKERNELS
#include "wsc/Conversion/Passes.h.inc"
} // namespace wsc

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

struct LowerToKernelsPass : wsc::impl::WscLowerToKernelsBase<LowerToKernelsPass> {
  using WscLowerToKernelsBase::WscLowerToKernelsBase;
  void runOnOperation() override;

private:
  LogicalResult lowerFunction(func::FuncOp func, wafer::ArchAttr arch, StringRef storage);
  FailureOr<SmallVector<int64_t>> smallestShapes(std::vector<KernelPlan> &plans, double capacity);
  LogicalResult sizeOnWafers(func::FuncOp func, std::vector<KernelPlan> &plans,
                             wafer::ArchAttr arch, double capacity, int64_t maxPes,
                             int64_t tokens);
};

LogicalResult buildKernels(func::FuncOp func, std::vector<KernelPlan> &plans, int64_t batch,
                           int64_t tokens, const CostModel &cost);

/// A folded program's block: its output (the feeder's result) and the
/// stream that stands in for it in layer 0 (its producer's) reach the same
/// readers' ports. Null when the block has no feedback or several streams
/// come in.
std::pair<KernelPlan *, KernelPlan *> fedBackPair(std::vector<KernelPlan> &plans) {
  KernelPlan *feeder = nullptr, *standIn = nullptr;
  llvm::DenseSet<Value> fedFromOutside;
  for (KernelPlan &p : plans) {
    if (p.layers && p.feedsBack)
      feeder = &p;
    for (unsigned j : p.fedBack)
      if (p.layers)
        fedFromOutside.insert(p.inputs[j]);
  }
  int producers = 0;
  for (KernelPlan &p : plans)
    if (fedFromOutside.count(p.streamed()))
      standIn = &p, ++producers;
  if (!feeder || producers != 1 || fedFromOutside.size() != 1)
    return {nullptr, nullptr};
  return {feeder, standIn};
}

/// A folded program's block kernels hold every layer's tiles, and their
/// results leave in blocks as a pipelined program's do (a token waits for
/// no kernel's whole row to pass one PE). The block's output and its
/// stand-in in layer 0 come in on the same readers' ports, so they leave in
/// the same blocks (matchFedBackBlocks) when both are kinds that cut their
/// rows by columns (linear, embed); otherwise one stream each, as a
/// feedback port takes.
void blockFoldedStreams(std::vector<KernelPlan> &plans) {
  auto [feeder, standIn] = fedBackPair(plans);
  auto cutsByColumns = [](const KernelPlan *p) {
    return p && !p->hostResult && (p->kind == "linear" || p->kind == "embed");
  };
  bool inBlocks = cutsByColumns(feeder) && cutsByColumns(standIn);
  llvm::DenseSet<Value> fedFromOutside;
  for (const KernelPlan &p : plans)
    for (unsigned j : p.fedBack)
      fedFromOutside.insert(p.inputs[j]);
  for (KernelPlan &p : plans) {
    p.residentLayers = p.layers > 0;
    p.blocked = inBlocks || (!(p.layers && p.feedsBack) && !fedFromOutside.count(p.streamed()));
  }
}

/// Once the shapes are chosen: the stand-in takes the feeder's width, and
/// so its columns per block, on the fewest rows that hold it, while the
/// wafer's `capacity` holds every kernel; when their blocks still differ (or
/// either reorders its columns), both leave as one stream.
void matchFedBackBlocks(std::vector<KernelPlan> &plans, wafer::ArchAttr arch, double capacity) {
  auto [feeder, standIn] = fedBackPair(plans);
  if (!feeder || !feeder->blocked || !standIn->blocked)
    return;
  int64_t n = streamWords(feeder->streamed());
  if (standIn->w != feeder->w && standIn->size) {
    KernelPlan before = *standIn;
    standIn->minW = standIn->maxW = feeder->w;
    standIn->h = 1, standIn->w = int64_t(capacity);
    standIn->size(*standIn);
    double pes = 0;
    for (const KernelPlan &p : plans)
      pes += double(p.h * p.w);
    if (pes > capacity || resultBlocks(*standIn, n, arch) != resultBlocks(*feeder, n, arch))
      *standIn = std::move(before);
  }
  standIn->align = feeder->align;
  auto reorders = [](const KernelPlan *p) {
    return !p->colInterleave.empty() || !p->colPerm.empty();
  };
  if (resultBlocks(*standIn, n, arch) != resultBlocks(*feeder, n, arch) || reorders(feeder) ||
      reorders(standIn) || streamWords(standIn->streamed()) != n)
    feeder->blocked = standIn->blocked = false;
}

/// Plans a function's kernels in program order: one per op a fused kind
/// takes, and a generic one per result of an op none takes, made when a
/// kernel or a result needs its value.
class FunctionPlanner {
public:
  FunctionPlanner(PlanContext &ctx, int64_t maxBlocks, bool weightStreaming)
      : ctx(ctx), maxBlocks(maxBlocks), weightStreaming(weightStreaming) {
    ctx.streamOf = [this](Value v) { return ensureProduced(v); };
  }
  /// Plans every op of `func`; false after an error (reported).
  bool planFunction(func::FuncOp func);

private:
  void fail(Operation *op, const Twine &msg) {
    op->emitError() << msg;
    failed = true;
  }
  bool ensureProduced(Value v);
  bool planGenericFor(Operation *op);
  bool planGenericResult(Operation *op, OpResult r);
  void planFused(Operation *op);

  PlanContext &ctx;
  int64_t maxBlocks;
  bool weightStreaming;
  llvm::DenseSet<Operation *> deferred; // ops planned when a kernel needs them
  int residuals = 0;
  bool failed = false;
};

bool FunctionPlanner::planFunction(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (ctx.absorbed.count(&op) || isa<wg::WeightOp, wg::ConstantOp, func::ReturnOp>(op))
      continue;
    // Head split and merge around attention are claimed when the attention
    // op is reached; what no attention takes is planned when needed.
    if (isa<wg::SplitOp, wg::ReshapeOp, wg::TransposeOp, wg::SliceOp, wg::RotaryOp>(op))
      deferred.insert(&op);
    else
      planFused(&op);
  }
  // What the function returns, from ops no kernel has taken yet.
  // (The next token an LM head picks is its second result.)
  for (Value v : func.getBody().front().getTerminator()->getOperands())
    if (!failed && !isStatic(v) && !isa<BlockArgument>(v) &&
        !(isa_and_nonnull<wg::ArgMaxOp, wg::SampleOp>(v.getDefiningOp()) &&
          ctx.absorbed.count(v.getDefiningOp())))
      ensureProduced(v);
  // A generating program hands each token on before the next comes back:
  // a generic kernel, which holds the whole sequence, would wait for ever.
  if (ctx.generate)
    for (const KernelPlan &p : ctx.plans)
      if (p.kind == "generic") {
        fail(p.anchor, "a generating program needs kernels that take one token at a time; '" +
                           p.anchor->getName().getStringRef() +
                           "' runs on a generic kernel, which takes the whole sequence");
        break;
      }
  return !failed;
}

void FunctionPlanner::planFused(Operation *op) {
  KernelPlan plan;
  plan.anchor = op;
  plan.blocked = !weightStreaming;
  Planned planned = Planned::NotThisKind;
  for (const KernelKind *kind : fusedKinds())
    if ((planned = kind->plan(op, ctx, plan)) != Planned::NotThisKind)
      break;
  if (planned == Planned::Failed) {
    failed = true; // (reported)
    return;
  }
  if (planned == Planned::NotThisKind) {
    // A generic kernel, made when a kernel or a result needs its value: an
    // op whose users fused kinds absorb makes none.
    deferred.insert(op);
    return;
  }
  // A block ends with its second residual add (after the attention's
  // projection, then after the MLP's), whatever the MLP's form; with a
  // parallel residual (NeoX), the MLP's projection adds the attention's
  // and an add kernel the block's input.
  bool residualAdd = plan.kind == "add" || (plan.kind == "linear" && plan.inputs.size() > 1 &&
                                            !isStatic(plan.inputs[1]));
  if (residualAdd && ++residuals % 2 == 0)
    ++ctx.layer;
  plan.storage = ctx.storage;
  plan.maxBlocks = maxBlocks;
  plan.tokenAtATime = ctx.generate;
  ctx.produced[plan.anchor->getResult(0)] = ctx.plans.size();
  ctx.plans.push_back(std::move(plan));
}

// A value some kernel must stream: a deferred op (one no fused kind took)
// becomes a generic kernel when first needed.
bool FunctionPlanner::ensureProduced(Value v) {
  if (ctx.produced.count(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (def && deferred.contains(def) && !ctx.absorbed.count(def) && !failed) {
    ctx.absorbed.insert(def);
    auto rotary = dyn_cast<wg::RotaryOp>(def);
    auto attention = dyn_cast<wg::AttentionOp>(def);
    if (rotary || attention) {
      // No attention kernel took it whole: the ops it stands for (a rotary's
      // elementwise and movement ops; an attention's products, masks and
      // softmax, which generic kernels split into rows).
      Operation *next = def->getNextNode();
      OpBuilder after(next);
      Value same = rotary ? rotary.decompose(after) : attention.decompose(after);
      for (Operation *op = def->getNextNode(); op != next; op = op->getNextNode())
        deferred.insert(op);
      // Users see the decomposition's stream (kernels find their inputs'
      // producers by value).
      v.replaceAllUsesWith(same);
      return ensureProduced(same);
    }
    return planGenericFor(def);
  }
  if (auto arg = dyn_cast<BlockArgument>(v); arg && !failed) {
    // A fused kernel that reads a graph input (float rows, no embedding
    // before it): a generic copy streams it from the host.
    auto b = OpBuilder::atBlockBegin(arg.getOwner());
    auto copy = wg::ReshapeOp::create(b, arg.getLoc(), arg.getType(), arg);
    arg.replaceAllUsesExcept(copy, copy);
    return planGenericFor(copy);
  }
  if (!failed && def)
    fail(def, "'" + def->getName().getStringRef() + "' produces no stream for its users");
  return false;
}

bool FunctionPlanner::planGenericFor(Operation *op) {
  SmallVector<Operation *> made;
  if (Value split = splitWideWeight(op, ctx.arch.getSramBytes() / 3, made)) {
    deferred.insert(made.begin(), made.end()); // planned as their users need them
    return ensureProduced(split);
  }
  if (!hasGenericKernel(op)) {
    fail(op, "'" + op->getName().getStringRef() +
                 "' is not supported by wsc-lower-to-kernels (no kernel implements it)");
    return false;
  }
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || t.getNumElements() == 0) {
      fail(op, "operand of type " + llvm::formatv("{0}", v.getType()).str() +
                   " is not a static non-empty tensor; the generic kernel needs one");
      return false;
    }
    if (!isStatic(v) && !isa<BlockArgument>(v) && !ensureProduced(v))
      return false;
  }
  for (OpResult r : op->getResults())
    if (!(r.use_empty() && op->getNumResults() > 1) && !planGenericResult(op, r))
      return false;
  return true;
}

bool FunctionPlanner::planGenericResult(Operation *op, OpResult r) {
  auto t = cast<RankedTensorType>(r.getType());
  if (!t.hasStaticShape() || t.getNumElements() == 0) {
    fail(op, "result is not a static non-empty tensor; the generic kernel needs one");
    return false;
  }
  std::string name = op->getName().stripDialect().str();
  if (op->getNumResults() > 1)
    name += "." + std::to_string(r.getResultNumber());
  // Too large for one PE: chunks of rows, each passing the ones before it
  // on (a key value stands for a chunk's stream).
  auto chunks = chunkRows(op, r.getResultNumber(), ctx.arch.getSramBytes() / 4);
  Value previous;
  for (auto [c, rows] : llvm::enumerate(chunks)) {
    bool last = c + 1 == chunks.size();
    KernelPlan plan = planGeneric(op, r.getResultNumber(),
                                  chunks.size() > 1 ? name + ".c" + std::to_string(c) : name);
    plan.rowLo = rows.first, plan.rowHi = chunks.size() > 1 ? rows.second : 0;
    if (previous) {
      plan.inputs.push_back(previous);
      plan.chained = true;
    }
    if (!last) {
      OpBuilder keys(op);
      plan.partialKey = wg::ConstantOp::create(
          keys, op->getLoc(),
          DenseIntElementsAttr::get(RankedTensorType::get({1}, keys.getI32Type()), int32_t(c)));
      previous = plan.partialKey;
    }
    plan.storage = "f32";
    plan.maxBlocks = maxBlocks;
    plan.work /= double(chunks.size());
    if (last)
      ctx.produced[r] = ctx.plans.size();
    ctx.plans.push_back(std::move(plan));
  }
  return true;
}

/// Attention's producer cuts blocks of what one attention column takes of
/// a head, now that the columns per head are chosen.
void alignAttentionProducers(std::vector<KernelPlan> &plans) {
  for (KernelPlan &attention : plans) {
    // One stream split in thirds (GPT-2's qkv) or in per-head thirds
    // (NeoX's) is interleaved.
    const AttentionLayout &in = attention.attention;
    int64_t d = in.d, c = attention.heads * d;
    bool thirds = in.k.base == c && in.v.base == 2 * c && in.q.stride == d && in.k.stride == d &&
                  in.v.stride == d;
    bool perHead = in.k.base == d && in.v.base == 2 * d && in.q.stride == 3 * d &&
                   in.k.stride == 3 * d && in.v.stride == 3 * d;
    if (attention.kind != "attention" || attention.heads <= 0 || in.group != 1 ||
        in.rotary >= 0 || in.q.input || in.k.input || in.v.input || in.q.base ||
        !(thirds || perHead))
      continue;
    // (Plans were split around defects since `produced` was filled.)
    auto from = llvm::find_if(
        plans, [&](const KernelPlan &q) { return q.streamed() == attention.inputs[0]; });
    if (from == plans.end())
      continue;
    KernelPlan &q = *from;
    int64_t ds = d / (attention.w / attention.heads); // one attention column's share
    if (q.turns && ds % 2)
      continue; // the shares would split its rotary pairs
    // Kept only when the aligned shape is no slower. (Blocks of whole
    // heads are not asked for: their q, k and v blocks cover the same
    // attention columns, and three 128-word streams on every link there
    // bound GPT-2-small at 438 cycles per token; see docs/cost-model.md.)
    KernelPlan before = q;
    q.align = ds;
    q.h = 1, q.w = before.h * before.w;
    q.size(q);
    if (q.cycles && q.cycles(q) > before.cycles(before))
      q = std::move(before);
    // A whole linear (not a piece, not weight streaming) interleaves its
    // columns by attention column: each column's q, k and v leave side by
    // side (in order they come from three thirds of the producer and cross
    // on their way).
    if (isWholeLinear(q)) {
      if (thirds)
        q.colInterleave = {3, ds};
      else
        interleaveHeadByColumn(q, d, ds);
      attention.qkvUnit = ds;
    }
  }
}

} // namespace

/// Each plan's smallest shape, or an error naming a kernel that needs more
/// PEs than a wafer's `capacity`.
FailureOr<SmallVector<int64_t>> LowerToKernelsPass::smallestShapes(std::vector<KernelPlan> &plans,
                                                                   double capacity) {
  SmallVector<int64_t> minPes;
  for (auto &p : plans) {
    if (maxRows > 0)
      p.maxH = maxRows;
    if (p.kind == "attention" && attentionQueries > 0 &&
        p.attention.group % attentionQueries == 0)
      p.attention.queries = attentionQueries, p.attention.queriesFixed = true;
    p.h = 1, p.w = 1;
    p.size(p);
    minPes.push_back(p.h * p.w);
    if (double(minPes.back()) > capacity) {
      p.anchor->emitError() << "kernel '" << p.name << "' needs at least " << minPes.back()
                            << " PEs to hold its weights, more than one wafer offers ("
                            << int64_t(capacity) << ")"
                            << (weightStreaming ? "" : "; use mode=weight-streaming");
      return failure();
    }
  }
  return minPes;
}

/// Partitions the plans into wafer stages and sizes each stage's kernels
/// within its wafer's `capacity` PEs.
LogicalResult LowerToKernelsPass::sizeOnWafers(func::FuncOp func, std::vector<KernelPlan> &plans,
                                               wafer::ArchAttr arch, double capacity,
                                               int64_t maxPes, int64_t tokens) {
  auto minPes = smallestShapes(plans, capacity);
  if (failed(minPes))
    return failure();
  auto stages = partitionStages(plans, *minPes, capacity,
                                weightStreaming ? StringRef("1") : StringRef(wafers));
  if (failed(stages)) {
    if (weightStreaming && residentLayers)
      func.emitError() << "mode=folded: one transformer block holding every layer's weights, "
                       << "with the embedding and the head, does not fit a wafer of arch '"
                       << arch.getName() << "'";
    else if (weightStreaming)
      func.emitError() << "mode=weight-streaming: one transformer block with the embedding "
                       << "and the head does not fit a wafer of arch '" << arch.getName() << "'";
    else
      func.emitError() << "wafers=" << wafers << " is not a number of wafers, or the model "
                       << "does not fit that many wafers of arch '" << arch.getName() << "'";
    return failure();
  }
  if (int64_t(stages->size()) > arch.getMaxWafers())
    return func.emitError() << "the model needs " << stages->size() << " wafers but arch '"
                            << arch.getName() << "' joins at most " << arch.getMaxWafers()
                            << "; use mode=weight-streaming";
  for (auto [stage, range] : llvm::enumerate(*stages)) {
    SmallVector<int64_t> budgets =
        balanceStage(plans, *minPes, range.first, range.second, capacity, maxPes);
    // (Weight streaming's pace is its loads, which more PEs only pad.)
    if (plans[range.first].tokenAtATime && (!weightStreaming || residentLayers))
      spendOnLatency(plans, *minPes, range.first, range.second, capacity, maxPes, tokens, arch,
                     budgets);
    for (size_t i = range.first; i < range.second; ++i) {
      KernelPlan &p = plans[i];
      p.stage = stage;
      p.h = 1, p.w = budgets[i - range.first];
      p.size(p);
    }
  }
  return success();
}

LogicalResult LowerToKernelsPass::lowerFunction(func::FuncOp func, wafer::ArchAttr arch,
                                                StringRef storage) {
  // Token geometry from the first [B, T] integer input; a graph without one
  // has no activations for the fused kinds and runs on generic ones.
  auto [batch, tokens] = tokenGeometry(func);
  bool haveTokens = batch > 0;
  if (!haveTokens)
    batch = tokens = 1;
  for (Type t : func.getArgumentTypes())
    if (auto rt = dyn_cast<RankedTensorType>(t); !rt || !rt.hasStaticShape())
      return func.emitError("input of type ")
             << t << " has no static shape; bind it with --input-shape NAME=DxD...";
  CostModel cost{arch};
  std::vector<KernelPlan> plans;
  llvm::DenseMap<Value, int> produced;
  llvm::DenseSet<Operation *> absorbed;
  PlanContext ctx{batch, tokens, haveTokens, arch, cost, storage.str(), plans, produced, absorbed};
  ctx.generate = func->hasAttr("wsgraph.generate");
  FunctionPlanner planner(ctx, maxBlocks, weightStreaming);
  if (!planner.planFunction(func))
    return failure();
  OpBuilder b(func.getContext());
  // Tokens per run, for throughput figures downstream.
  func->setAttr("wskernel.tokens", b.getI64IntegerAttr(batch * tokens));
  if (plans.empty()) // the results are inputs or constants: output kernels only
    return buildKernels(func, plans, batch, tokens, cost);
  int64_t layers = 0;
  if (weightStreaming) {
    if (wafers != "auto" && wafers != "1")
      return func.emitError() << "mode=weight-streaming runs on one wafer, but wafers=" << wafers;
    if (failed(foldLayerPlans(func, plans, layers)))
      return failure();
    if (residentLayers)
      blockFoldedStreams(plans);
  }
  // With dead PEs about, a rectangle of area A holds A * rate of them on
  // average; keep that well under one so placement finds room.
  int64_t maxPes = defectRate > 0 ? std::max<int64_t>(1, int64_t(0.3 / defectRate))
                                  : std::numeric_limits<int64_t>::max();
  double capacity = utilization * double(arch.getWidth()) * double(arch.getHeight());
  if (!weightStreaming)
    splitWideHostLinears(plans, capacity, batch, tokens, arch);
  if (defectRate > 0 && !weightStreaming &&
      failed(splitForDefects(plans, maxPes, defectRate, batch, tokens, arch)))
    return failure();
  // Before sizing: where q and k are turned changes both kernels' cycles.
  turnInProducers(plans);
  if (failed(sizeOnWafers(func, plans, arch, capacity, maxPes, tokens)))
    return failure();
  orderSharedHeads(plans, arch.getHeight());
  if (residentLayers)
    matchFedBackBlocks(plans, arch, capacity);
  alignAttentionProducers(plans);
  if (maxBlocks > 0) // resizing must cut the same blocks
    func->setAttr(kMaxBlocksAttr, b.getI64IntegerAttr(maxBlocks));
  if (layers)
    func->setAttr(wk::kStreamedLayersAttr, b.getI64IntegerAttr(layers));
  if (layers && residentLayers)
    func->setAttr(wk::kResidentLayersAttr, UnitAttr::get(func.getContext()));
  return buildKernels(func, plans, batch, tokens, cost);
}

void LowerToKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto archOr = wafer::getArch(module);
  if (failed(archOr))
    return signalPassFailure();
  // Weight matrices and tables are held at the storage precision.
  std::string storage = precision == "fp16" ? "f16" : precision == "bf16" ? "bf16" : "f32";
  if (storage == "f32" && precision != "fp32") {
    module.emitError() << "precision '" << precision << "' is not one of fp32, fp16, bf16";
    return signalPassFailure();
  }
  // (Negated so that NaN fails too: it would make every budget search spin.)
  if (!(utilization > 0 && utilization <= 1) || !(defectRate >= 0 && defectRate < 1)) {
    module.emitError() << "--wsc-lower-to-kernels: utilization=" << double(utilization)
                       << " must be in (0, 1] and defect-rate=" << double(defectRate)
                       << " in [0, 1)";
    return signalPassFailure();
  }
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!func.isExternal() && failed(lowerFunction(func, *archOr, storage)))
      return signalPassFailure();
}

namespace {

LogicalResult buildKernels(func::FuncOp func, std::vector<KernelPlan> &plans, int64_t batch,
                           int64_t tokens, const CostModel &cost) {
  MLIRContext *ctx = func.getContext();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  Type f32 = b.getF32Type();
  // Each streamed value: the kernel results that carry its blocks.
  llvm::DenseMap<Value, SmallVector<Value>> streams;
  llvm::StringMap<int> names;
  auto streamType = [&](Value v) { return wk::StreamType::get(ctx, streamWords(v), f32); };
  auto uniqueName = [&](StringRef name) {
    int n = names[name]++;
    return n == 0 ? name.str() : (name + "_" + Twine(n + 1)).str();
  };
  Value previousHostPiece;
  auto emit = [&](KernelPlan &p, TypeRange resultTypes) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> operands;
    for (Value in : p.inputs) {
      if (auto it = streams.find(in); it != streams.end())
        llvm::append_range(operands, it->second);
      else
        operands.push_back(in);
    }
    llvm::append_range(operands, p.laterWeights);
    // A column piece writes into the previous piece's host result.
    int64_t writesInto = -1;
    if (p.writesIntoPrevious) {
      writesInto = int64_t(operands.size());
      operands.push_back(previousHostPiece);
    }
    auto kernel = wk::KernelOp::create(
        b, p.anchor->getLoc(), resultTypes, b.getStringAttr(uniqueName(p.name)),
        b.getStringAttr(p.kind), b.getDenseI64ArrayAttr({p.h, p.w}), b.getI64IntegerAttr(0),
        b.getF64FloatAttr(0), b.getDictionaryAttr({}), /*feedback=*/nullptr, operands);
    if (writesInto >= 0)
      kernel->setAttr(wk::kWritesIntoAttr, b.getI64IntegerAttr(writesInto));
    SmallVector<int64_t> blocks;
    int64_t bytes = writeKernel(kernel, p, batch, tokens, cost, &blocks);
    if (bytes < 0)
      return failure();
    // The sizers estimate code bytes; when the written body (with its
    // layer loop, say) is a little over, a bigger grid may still fit.
    for (int grow = 0; grow < 8 && bytes > cost.arch.getSramBytes() && p.size; ++grow) {
      int64_t h = p.h, w = p.w;
      p.w = (p.h * p.w) * 5 / 4 + 1, p.h = 1;
      p.size(p);
      if (p.h * p.w <= h * w) {
        p.h = h, p.w = w;
        break;
      }
      bytes = writeKernel(kernel, p, batch, tokens, cost, &blocks);
    }
    // A blocked result is one stream per block: the kernel again with
    // those results, and the body moved over.
    if (blocks.size() > 1) {
      SmallVector<Type> types;
      for (int64_t size : blocks)
        types.push_back(wk::StreamType::get(ctx, size, b.getF32Type()));
      auto blocked = wk::KernelOp::create(
          b, kernel.getLoc(), types, kernel.getNameAttr(), kernel.getKindAttr(),
          kernel.getGridAttr(), kernel.getSramBytesPerPeAttr(), kernel.getCyclesPerTokenAttr(),
          kernel.getChannelsAttr(), kernel.getFeedbackAttr(), kernel.getInputs());
      blocked->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
      blocked.getBody().takeBody(kernel.getBody());
      kernel.erase();
      kernel = blocked;
    }
    if (bytes > cost.arch.getSramBytes())
      return kernel.emitError("kernel '")
             << kernel.getName() << "' (" << p.kind << " on " << p.h << "x" << p.w
             << " PEs) needs " << bytes << " bytes of SRAM per PE, but a PE of arch '"
             << cost.arch.getName() << "' has " << cost.arch.getSramBytes()
             << (p.layers ? "; one transformer block on one wafer cannot hold what this kernel "
                            "keeps for every layer (its tiles when folded, its keys and values "
                            "when generating)"
                          : "; a layer this large needs more wafers or weight streaming (wafers=N "
                            "or mode=weight-streaming)");
    return SmallVector<Value>(kernel.getResults());
  };
  // What comes back: to the block's kernels, the block's output (weight
  // streaming); to the others, the next token (generation).
  std::string blockFeeder, tokenFeeder;
  for (KernelPlan &p : plans)
    if (p.feedsBack)
      (p.layers ? blockFeeder : tokenFeeder) = p.name; // names of block kernels are unique
  for (KernelPlan &p : plans) {
    Value result = p.anchor->getResult(p.result);
    SmallVector<Type, 2> types = {p.hostResult ? result.getType() : Type(streamType(result))};
    // An LM head that picks the next token returns it too.
    Operation *next = nullptr;
    if (p.picksNext)
      for (Operation *user : result.getUsers())
        if (isa<wg::ArgMaxOp, wg::SampleOp>(user) && (next = user))
          break;
    if (next)
      types.push_back(next->getResult(0).getType());
    auto out = emit(p, types);
    if (failed(out))
      return failure();
    if (next)
      next->getResult(0).replaceUsesWithIf((*out)[1], [](OpOperand &use) {
        return isa<func::ReturnOp>(use.getOwner());
      });
    if (!p.fedBack.empty()) {
      auto kernel = out->front().getDefiningOp<wk::KernelOp>();
      SmallVector<LogicalInput> ins = logicalInputs(kernel);
      SmallVector<NamedAttribute> fb;
      for (unsigned j : p.fedBack)
        for (const std::string &port : ins[j].ports()) // each block comes back
          fb.push_back(b.getNamedAttr("fb" + port.substr(2),
                                      b.getStringAttr(p.layers ? blockFeeder : tokenFeeder)));
      kernel.setFeedbackAttr(b.getDictionaryAttr(fb));
    }
    if (p.hostResult) {
      // The function returns the last column piece's result.
      Value returned = p.writesIntoPrevious ? previousHostPiece : result;
      returned.replaceUsesWithIf(
          out->front(), [](OpOperand &use) { return isa<func::ReturnOp>(use.getOwner()); });
      previousHostPiece = out->front();
    } else {
      streams[p.streamed()] = *out;
    }
  }
  // The block's output comes back in the blocks its stand-in sent.
  if (auto [feeder, standIn] = fedBackPair(plans); feeder && feeder->blocked) {
    auto sizes = [&](const KernelPlan *p) {
      return llvm::to_vector(llvm::map_range(streams[p->streamed()], [](Value v) {
        return cast<wk::StreamType>(v.getType()).getSize();
      }));
    };
    if (sizes(feeder) != sizes(standIn))
      return func.emitError("kernel '")
             << feeder->name << "' feeds back other blocks than kernel '" << standIn->name
             << "' sends in layer 0, on the same ports";
  }
  // Host outputs: a one-PE kernel per returned activation.
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    // An empty result has no words for a PE to hold: the host writes it.
    if (v.getDefiningOp<wk::KernelOp>() || cast<ShapedType>(v.getType()).getNumElements() == 0)
      continue;
    // A result that is an input or a constant is held by its output kernel.
    bool held = isStatic(v) || isa<BlockArgument>(v);
    if (!streams.count(v) && !held)
      return ret.emitError("result ") << operand.getOperandNumber()
                                      << " is not computed by any kernel";
    KernelPlan sink;
    sink.name = "output";
    sink.kind = "output";
    sink.inputs = {v};
    sink.anchor = ret;
    sink.stage = plans.empty() ? 0 : plans.back().stage;
    // A returned stream too large for one PE is kept by a column of PEs.
    auto type = cast<ShapedType>(v.getType());
    int64_t rows = type.getNumElements() / streamWords(v);
    int64_t budget = cost.arch.getSramBytes() * 4 / 5;
    // Rows too wide for one PE (a generating program's logits) are kept by
    // a row of PEs, each a slice of every row.
    int64_t words = streamWords(v);
    if (streams.count(v) && 4 * type.getNumElements() > budget)
      sink.h = std::min(rows, ceilDiv(4 * type.getNumElements(), budget));
    if (streams.count(v) && sink.h == rows && 4 * words > budget)
      sink.h = 1, sink.w = std::min(words, ceilDiv(4 * type.getNumElements(), budget));
    auto out = emit(sink, TypeRange{v.getType()});
    if (failed(out))
      return failure();
    operand.set(out->front());
  }
  // Drop the wsgraph ops the kernels replaced.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
    if (op.getDialect() && isa<wg::WsgraphDialect>(op.getDialect()) && op.use_empty())
      op.erase();
  return success();
}

} // namespace
