//===- GatedLinear.cpp - the gated MLP kind (linear_glu) ------------------===//
//
// act(x Wg + bg) * (x Wu + bu) over [batch, tokens, K], the gated MLP of the
// Llama family (SwiGLU: act(g) = g * sigmoid(g)) and of GeGLU (act = GELU,
// exact or tanh). Each column of PEs holds a tile of both weights for the
// same block of output columns; both partial sums run down the columns
// together, and the finishing row gates them and hands on one block of N
// words per token. The down projection after it is a plain linear.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"
#include "wsc/Analysis/WeightData.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

// The gate's activation (silu, gelu or gelu_tanh), which a resize needs again.
static constexpr StringLiteral kActivationAttr = "wskernel.gate_activation";

namespace {

/// The ops of one gated MLP: act(gate) * up.
struct GatedMlp {
  wg::LinearOp gate, up;
  std::string activation;
  SmallVector<Operation *, 2> activationOps; // sigmoid and g * it, or the GELU
  wg::MulOp product;
};

/// Where a linear_glu's operands are: x, then Wg [bg] Wu [bu] (-1: no bias).
struct GatedOperands {
  int gate = -1, gateBias = -1, up = -1, upBias = -1;
  int biases() const { return (gateBias >= 0) + (upBias >= 0); }
};

class GatedLinearKind : public KernelKind {
public:
  Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const override;
  std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch, int64_t tokens,
                                       const CostModel &cost) const override;
  LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                       int64_t batch, int64_t tokens, wafer::ArchAttr arch) const override;
  void annotate(wk::KernelOp kernel, const KernelPlan &p) const override;
  double chainCycles(const KernelPlan &p, int64_t n, int64_t tokens,
                     const CostModel &cost) const override {
    return linearChainCycles(p, n, cost);
  }
};

} // namespace

/// act(g) when g's users compute exactly that and nothing else: GELU, or
/// g * sigmoid(g) (the multiply's operands either way round). Returns its
/// value (null if none) and fills the activation's name and ops.
static Value activationOf(Value g, GatedMlp &m) {
  SmallVector<Operation *, 2> users(g.getUsers());
  if (users.size() == 1) {
    auto gelu = dyn_cast<wg::GeluOp>(users[0]);
    if (!gelu)
      return {};
    m.activation = gelu.isTanh() ? "gelu_tanh" : "gelu";
    m.activationOps = {gelu};
    return gelu.getResult();
  }
  if (users.size() != 2)
    return {};
  auto sigmoid = dyn_cast<wg::SigmoidOp>(users[0]);
  if (!sigmoid)
    sigmoid = dyn_cast<wg::SigmoidOp>(users[1]);
  auto mul = sigmoid ? dyn_cast_or_null<wg::MulOp>(singleUser(sigmoid.getResult())) : nullptr;
  if (!mul || !llvm::is_contained(users, mul.getOperation()) || mul.getType() != g.getType())
    return {};
  Value other = mul.getLhs() == sigmoid.getResult() ? mul.getRhs() : mul.getLhs();
  if (other != g)
    return {};
  m.activation = "silu";
  m.activationOps = {sigmoid, mul};
  return mul.getResult();
}

static bool staticWeights(wg::LinearOp l) {
  return isStatic(l.getWeight()) && (!l.getBias() || isStatic(l.getBias()));
}

/// The gated MLP whose gate projection is `gate`, if it is one.
static std::optional<GatedMlp> matchAsGate(wg::LinearOp gate) {
  GatedMlp m;
  m.gate = gate;
  Value act = activationOf(gate.getResult(), m);
  auto product = act ? dyn_cast_or_null<wg::MulOp>(singleUser(act)) : nullptr;
  if (!product || product.getLhs() == product.getRhs())
    return std::nullopt;
  Value other = product.getLhs() == act ? product.getRhs() : product.getLhs();
  auto up = other.getDefiningOp<wg::LinearOp>();
  if (!up || up == gate || !other.hasOneUse() || up.getInput() != gate.getInput() ||
      up.getType() != gate.getType() || product.getType() != gate.getType() ||
      up.getWeight().getType() != gate.getWeight().getType() || !staticWeights(gate) ||
      !staticWeights(up))
    return std::nullopt;
  m.up = up;
  m.product = product;
  return m;
}

/// The gated MLP `linear` is the gate or the up projection of, if any.
static std::optional<GatedMlp> matchGatedMlp(wg::LinearOp linear) {
  if (auto m = matchAsGate(linear))
    return m;
  // As the up projection: its one user multiplies it by act(gate), whose
  // op (the GELU, or g * sigmoid(g)) takes the gate's result.
  auto product = dyn_cast_or_null<wg::MulOp>(singleUser(linear.getResult()));
  if (!product)
    return std::nullopt;
  Value other = product.getLhs() == linear.getResult() ? product.getRhs() : product.getLhs();
  Operation *act = other.getDefiningOp();
  for (Value v : act ? act->getOperands() : ValueRange())
    if (auto gate = v.getDefiningOp<wg::LinearOp>())
      if (auto m = matchAsGate(gate); m && m->up == linear)
        return m;
  return std::nullopt;
}

/// The operand layout of a plan's inputs: the stream x, then each weight
/// matrix followed by its bias if it has one.
static std::optional<GatedOperands> gatedOperands(const KernelPlan &p) {
  GatedOperands ops;
  bool afterMatrix = false;
  for (int i = 1, e = int(p.inputs.size()); i < e; ++i) {
    auto t = dyn_cast<RankedTensorType>(p.inputs[i].getType());
    int rank = t ? int(t.getRank()) : 0;
    int *slot = nullptr;
    if (rank == 2)
      slot = ops.gate < 0 ? &ops.gate : ops.up < 0 ? &ops.up : nullptr;
    else if (rank == 1 && afterMatrix)
      slot = ops.up >= 0 ? &ops.upBias : &ops.gateBias;
    if (!slot)
      return std::nullopt; // a third matrix, or a bias after no matrix
    *slot = i;
    afterMatrix = rank == 2;
  }
  if (ops.gate < 0 || ops.up < 0 || matrixShape(p, ops.gate) != matrixShape(p, ops.up))
    return std::nullopt;
  return ops;
}

namespace {
/// The weights' fractions of nonzeros (wsgraph.density): sparse tiles when
/// below one.
struct GatedDensity {
  double gate = 1.0, up = 1.0;
  GatedDensity(const KernelPlan &p, const GatedOperands &ops)
      : gate(weightDensity(p.inputs[ops.gate])), up(weightDensity(p.inputs[ops.up])) {}
  std::pair<int64_t, int64_t> entries(StringRef storage, int64_t kb, int64_t nb) const {
    return {sparseTileEntries(storage, kb, nb, gate), sparseTileEntries(storage, kb, nb, up)};
  }
};
} // namespace

/// Words one PE needs for tiles of kb x nb: x, both tiles, the biases, the
/// two parities' partial sums (2·nb each) and the sigmoid's scratch.
static int64_t tileWords(int64_t kb, int64_t nb, StringRef storage, int biases,
                         const GatedDensity &d) {
  return kb + weightTileWords(storage, kb, nb, d.gate) + weightTileWords(storage, kb, nb, d.up) +
         biases * nb + 5 * nb;
}

/// Does a gated linear at the plan's shape finish in two rows (see
/// linearHandOnRow): when faster by the estimate and the tiles, on one row
/// fewer, still fit.
static bool gatedHandOnRow(const KernelPlan &p, int64_t k, int64_t n, bool silu, int biases,
                           wafer::ArchAttr arch, bool asyncSums, const GatedDensity &d) {
  auto out = CostModel::Output::Blocks;
  if (p.hostResult || !CostModel::finishingRow(p.h, out) || p.h < 4)
    return false;
  int64_t nb = ceilDiv(n, p.w), kb = ceilDiv(k, CostModel::tileRows(p.h, out, true));
  if (4 * tileWords(kb, nb, p.storage, biases, d) * tileCopies(p) + kHandOnRowCodeBytes >
      arch.getSramBytes())
    return false;
  CostModel cost{arch};
  int64_t group = blockColumns(p, n, arch);
  int64_t kbWithout = ceilDiv(k, CostModel::tileRows(p.h, out, false));
  auto [gate, up] = d.entries(p.storage, kb, nb);
  auto [gateWithout, upWithout] = d.entries(p.storage, kbWithout, nb);
  return cost.gatedLinear(k, n, p.h, p.w, silu, biases, kb, group, true, asyncSums, gate, up) <
         cost.gatedLinear(k, n, p.h, p.w, silu, biases, kbWithout, group, false, asyncSums,
                          gateWithout, upWithout);
}

/// The estimate of a gated linear K -> N at a plan's shape; a tile row
/// receives its slice of x; with `alone`, of one token alone.
static std::function<double(const KernelPlan &)>
gatedCycles(int64_t k, int64_t n, bool silu, int biases, wafer::ArchAttr arch, bool asyncSums,
            GatedDensity d, bool alone = false) {
  CostModel cost{arch, alone};
  return [=](const KernelPlan &p) {
    bool handOnRow = gatedHandOnRow(p, k, n, silu, biases, arch, asyncSums, d);
    int64_t rows = CostModel::tileRows(p.h, CostModel::Output::Blocks, handOnRow);
    int64_t kb = ceilDiv(k, rows);
    auto [gate, up] = d.entries(p.storage, kb, ceilDiv(n, p.w));
    return cost.gatedLinear(k, n, p.h, p.w, silu, biases, kb, blockColumns(p, n, arch),
                            handOnRow, asyncSums, gate, up);
  };
}

/// The plan's estimate and sizer, from its operands and activation.
static void setSizing(KernelPlan &p, const GatedOperands &ops, int64_t batch, int64_t tokens,
                      wafer::ArchAttr arch) {
  ArrayRef<int64_t> shape = matrixShape(p, ops.gate);
  int64_t k = shape[0], n = shape[1];
  bool silu = p.gateActivation == "silu";
  int biases = ops.biases();
  std::string storage = p.storage;
  GatedDensity d(p, ops);
  p.cycles = gatedCycles(k, n, silu, biases, arch, asyncColumnSums(tokens), d);
  p.alone = gatedCycles(k, n, silu, biases, arch, asyncColumnSums(tokens), d, /*alone=*/true);
  p.size = linearFamilySizer(
      k, n, /*host=*/false, batch, tokens, arch,
      [=](int64_t h, int64_t w) {
        return tileWords(ceilDiv(k, h), ceilDiv(n, w), storage, biases, d);
      },
      p.cycles, std::min(d.gate, d.up));
}

Planned GatedLinearKind::plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
  auto linear = dyn_cast<wg::LinearOp>(op);
  if (!linear || !ctx.isActivation(linear.getInput()))
    return Planned::NotThisKind;
  std::optional<GatedMlp> mlp = matchGatedMlp(linear);
  // (A result the host reads is left to the linear kinds and generic ones.)
  if (!mlp || llvm::any_of(mlp->product->getUsers(),
                           [](Operation *u) { return isa<func::ReturnOp>(u); }))
    return Planned::NotThisKind;
  if (!ctx.streamOf(linear.getInput()))
    return Planned::Failed;
  plan.kind = "linear_glu";
  plan.gateActivation = mlp->activation;
  plan.inputs = {linear.getInput()};
  for (wg::LinearOp l : {mlp->gate, mlp->up}) {
    plan.inputs.push_back(l.getWeight());
    if (l.getBias())
      plan.inputs.push_back(l.getBias());
    ctx.absorbed.insert(l);
  }
  ctx.absorbed.insert(mlp->activationOps.begin(), mlp->activationOps.end());
  ctx.absorbed.insert(mlp->product);
  plan.anchor = mlp->product;
  plan.name = "l" + std::to_string(ctx.layer) + ".mlp_glu";
  plan.layer = ctx.layer;
  plan.storage = ctx.storage;
  auto ops = gatedOperands(plan);
  assert(ops && "the plan's operands are x, then each weight and its bias");
  ArrayRef<int64_t> shape = matrixShape(plan, ops->gate);
  GatedDensity density(plan, *ops);
  plan.work = (density.gate + density.up) * double(shape[0]) * double(shape[1]);
  setSizing(plan, *ops, ctx.batch, ctx.tokens, ctx.arch);
  return Planned::Yes;
}

namespace {
/// Where a gated kernel's words are in each PE's SRAM (bytes).
struct GatedLayout {
  int64_t x, gateTile, upTile, gateBias, upBias;
  // The gate's partial sum at `part`, the up's right after it (`up`): the
  // column sums carry both in one message. With async column sums, token
  // t's pair is at part + 8 nb (t mod 2).
  int64_t part, up, scratch, bytes;
};
} // namespace

static GatedLayout layOut(const GatedOperands &ops, int64_t kb, int64_t nb, StringRef gateStorage,
                          StringRef upStorage, bool silu, bool asyncSums) {
  Sram sram;
  GatedLayout at;
  at.x = sram.words(kb);
  at.gateTile = sram.words(wk::tileWords(gateStorage, kb, nb));
  at.upTile = sram.words(wk::tileWords(upStorage, kb, nb));
  at.gateBias = ops.gateBias >= 0 ? sram.words(nb) : 0;
  at.upBias = ops.upBias >= 0 ? sram.words(nb) : 0;
  at.part = sram.words(asyncSums ? 4 * nb : 2 * nb);
  at.up = at.part + 4 * nb;
  at.scratch = silu ? sram.words(nb) : 0;
  at.bytes = sram.next;
  return at;
}

/// Both partials down the columns (2 nb words from `rows` on the tile
/// rows): row 0 starts the sums, the rows between add theirs, row `fin`
/// takes them into `total` (or, without a finishing row, adds its own).
static void columnSums(Body &k, wk::AffAttr rows, wk::AffAttr total, int64_t nb, int64_t w,
                       int64_t fin, bool finishing, bool async) {
  k.send("col", rows, k.aff(2 * nb), k.pes(0, w - 1, 0, 0), nullptr, async);
  if (fin > 1)
    k.relay("col", "col", rows, k.aff(2 * nb), "add", k.pes(0, w - 1, 1, fin - 1), nullptr,
            async);
  k.recv("col", total, k.aff(2 * nb), finishing ? "copy" : "add", k.pes(0, w - 1, fin, fin));
}

/// The finishing row's work: the biases, act(g) (SiLU as g * sigmoid(g)),
/// times u, into the gate's nb words.
static void gating(Body &k, const GatedOperands &ops, const GatedLayout &at, StringRef activation,
                   int64_t nb, ArrayAttr finRow) {
  wk::AffAttr g = k.aff(at.part), u = k.aff(at.up), n = k.aff(nb);
  if (ops.gateBias >= 0)
    k.vector("add", g, g, k.aff(at.gateBias), n, finRow);
  if (ops.upBias >= 0)
    k.vector("add", u, u, k.aff(at.upBias), n, finRow);
  if (activation == "silu") {
    k.unary("sigmoid", k.aff(at.scratch), g, n, finRow);
    k.vector("mul", g, g, k.aff(at.scratch), n, finRow);
  } else {
    k.unary(activation, g, g, n, finRow);
  }
  k.vector("mul", g, g, u, n, finRow);
}

std::pair<int64_t, double> GatedLinearKind::writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                                      int64_t tokens,
                                                      const CostModel &cost) const {
  std::optional<GatedOperands> ops = gatedOperands(p);
  if (!ops || p.hostResult || !k.isStream(0)) {
    k.kernel().emitError("a gated linear takes a stream x and its two weights");
    return {-1, 0};
  }
  int64_t h = p.h, w = p.w;
  ArrayRef<int64_t> shape = cast<ShapedType>(k.type(ops->gate)).getShape();
  int64_t kdim = shape[0], n = shape[1];
  bool silu = p.gateActivation == "silu";
  int biases = ops->biases();
  // With a finishing row (and a hand-on row below it), the tiles are on
  // rows 0..tileRows-1, as in the linear kind.
  bool finishing = CostModel::finishingRow(h, CostModel::Output::Blocks);
  bool asyncSums = finishing && asyncColumnSums(tokens);
  bool handOnRow = gatedHandOnRow(p, kdim, n, silu, biases, cost.arch,
                                  asyncColumnSums(tokens), GatedDensity(p, *ops));
  int64_t tileRows = CostModel::tileRows(h, CostModel::Output::Blocks, handOnRow);
  int64_t fin = handOnRow ? h - 2 : h - 1; // the row that finishes
  int64_t kb = ceilDiv(kdim, tileRows), nb = ceilDiv(n, w);
  int64_t gateEntries, upEntries;
  std::string gateStorage = tileStorage(p, unsigned(ops->gate), kb, nb, gateEntries);
  std::string upStorage = tileStorage(p, unsigned(ops->up), kb, nb, upEntries);
  GatedLayout at = layOut(*ops, kb, nb, gateStorage, upStorage, silu, asyncSums);
  for (auto [matrix, bias, tile, biasAt, storage] :
       {std::tuple{ops->gate, ops->gateBias, at.gateTile, at.gateBias, StringRef(gateStorage)},
        std::tuple{ops->up, ops->upBias, at.upTile, at.upBias, StringRef(upStorage)}}) {
    k.initTile(k.operand(matrix), tile, kb, nb, {kb, 0}, {0, nb}, storage);
    if (bias >= 0)
      k.initTile(k.operand(bias), biasAt, 1, nb, {0, 0}, {0, nb}, "f32");
  }

  k.tokenLoops(asyncSums ? 2 : 1);
  if (asyncSums)
    k.openLoop(2);
  SmallVector<int64_t, 1> parity;
  if (asyncSums)
    parity = {8 * nb};
  wk::AffAttr rowGate = k.aff(at.part, parity), rowUp = k.aff(at.up, parity);
  // A tile row stores its kb-slice of x (the last may be shorter) and
  // multiplies it by both tiles.
  int64_t in = k.recvRange(0, 0, kb, tileRows, kdim, k.aff(at.x), /*byRow=*/true);
  ArrayAttr tiles = finishing ? k.pes(0, w - 1, 0, tileRows - 1) : nullptr;
  for (auto [dst, tile, storage] : {std::tuple{rowGate, at.gateTile, StringRef(gateStorage)},
                                    std::tuple{rowUp, at.upTile, StringRef(upStorage)}})
    k.matvec(dst, k.aff(tile), k.aff(at.x), k.aff(kb), k.aff(nb), true, tiles, nullptr, storage);
  if (h > 1)
    columnSums(k, rowGate, k.aff(at.part), nb, w, fin, finishing, asyncSums);
  ArrayAttr finRow = k.pes(0, w - 1, fin, fin);
  k.reduceGatherSend(
      k.aff(at.part), nb, n, [&] { gating(k, *ops, at, p.gateActivation, nb, finRow); },
      /*reduceColumns=*/false, /*gatherRow=*/true, finishing, handOnRow);
  return {at.bytes, cost.gatedLinear(kdim, n, h, w, silu, biases, in, k.group, handOnRow,
                                     asyncSums, gateEntries, upEntries)};
}

LogicalResult GatedLinearKind::resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins,
                                      KernelPlan &p, int64_t batch, int64_t tokens,
                                      wafer::ArchAttr arch) const {
  std::optional<GatedOperands> ops = gatedOperands(p);
  if (!ops || p.hostResult || streamWordsOf(ins, 0) != matrixShape(p, ops->gate)[0])
    return failure();
  if (auto act = kernel->getAttrOfType<StringAttr>(kActivationAttr))
    p.gateActivation = act.getValue().str();
  setSizing(p, *ops, batch, tokens, arch);
  return success();
}

void GatedLinearKind::annotate(wk::KernelOp kernel, const KernelPlan &p) const {
  kernel->setAttr(kActivationAttr, StringAttr::get(kernel.getContext(), p.gateActivation));
}

const KernelKind &wsc::lowering::gatedLinearKind() {
  static const GatedLinearKind kind;
  return kind;
}
