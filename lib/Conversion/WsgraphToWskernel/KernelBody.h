//===- KernelBody.h - kernel plans and body building ------------*- C++ -*-===//
//
// Private to the lowering: LowerToKernels.cpp plans and sizes kernels,
// KernelBodies.cpp writes their SPMD bodies with the Body helpers below.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_CONVERSION_KERNELBODY_H
#define WSC_LIB_CONVERSION_KERNELBODY_H

#include "wsc/Analysis/CostModel.h"
#include "wsc/Analysis/TokenGeometry.h"
#include "wskernel/WskernelDialect.h"
#include "wsgraph/WsgraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace wsc::lowering {

using namespace mlir;
namespace wk = wsc::wskernel;

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Tokens a layer norm takes per step: its all-reduces' round trips are
/// shared by that many tokens (the largest divisor of `tokens` up to 8).
inline int64_t layerNormTokens(int64_t tokens) {
  for (int64_t step = std::min<int64_t>(8, tokens); step > 1; --step)
    if (tokens % step == 0)
      return step;
  return 1;
}

/// Does a linear whose tile is held as `storage`, or in a sparse layout of
/// at most `entries` entries (-1: dense), take x straight into its
/// multiply-adds (a receive that multiplies, as the words arrive)? An f32
/// tile or a sparse one: a dense 16-bit tile's rows may start mid-word,
/// where a piece of x begins; a sparse tile's are found by their index.
inline bool streamsX(StringRef storage, int64_t entries) {
  return entries >= 0 || storage == "f32";
}

/// Is `v` known before the model runs (a weight or a literal)?
inline bool isStatic(Value v) {
  return v.getDefiningOp<wsgraph::WeightOp>() || v.getDefiningOp<wsgraph::ConstantOp>();
}

/// Estimated SRAM bytes one instruction of a kernel body takes.
inline constexpr int64_t kCodeBytesPerInstruction = 16;

/// Bump allocation of a PE's SRAM, in bytes.
struct Sram {
  int64_t next = 0;
  int64_t words(int64_t n) {
    int64_t at = next;
    next += 4 * n;
    return at;
  }
};

/// Where attention finds q, k and v: head h's d words start at word
/// base + h * stride of the input stream `input`.
struct HeadsIn {
  int64_t input = 0, base = 0, stride = 0;
};
struct AttentionLayout {
  HeadsIn q, k, v;
  int64_t d = 0;           // words per head
  int64_t group = 1;       // query heads per key/value head
  int64_t mask = -1;       // the padding mask's input, or -1
  int64_t rotary = -1;     // the rotary table's input ([2, R]: frequencies,
                           // amplitudes), or -1
  int64_t rotaryDims = 0;  // R, rotated as rotate_half pairs (i, i + R/2) unless rotaryPairs
  bool rotaryHalves = false; // the second half's angles repeat the first's (HF's cat(freqs, freqs))
  bool rotaryPairs = false;  // rotated as adjacent pairs (2i, 2i+1): rotate_every_two (GPT-J)
  int64_t maskHeld = 0;    // words of a host's mask every PE holds whole (0: it streams)
  // Grouped-query attention: each column scores `queries` query heads of
  // its key/value head (a divisor of group), so it holds each key/value
  // head group / queries times: once when it scores the whole group, once
  // per query head when it scores one.
  int64_t queries = 1;
  // Columns per column head, fixed with `queries` once the attention's
  // reader takes their order (0: the sizer picks both).
  int64_t parts = 0;
  bool queriesFixed = false; // `queries` asked for (the sizer picks parts alone)
  /// The heads the columns are split by (each `queries` query heads), of
  /// `heads` query heads.
  int64_t columnHeads(int64_t heads) const { return heads / std::max<int64_t>(1, queries); }
  /// Columns a key/value head's keys and values are held on, per share.
  int64_t copies() const { return group / std::max<int64_t>(1, queries); }
  /// As a kernel attribute keeps it (and back).
  SmallVector<int64_t> flat() const {
    return {q.input, q.base, q.stride, k.input,      k.base,       k.stride,
            v.input, v.base, v.stride, d,            group,        mask,
            rotary,  rotaryDims, rotaryHalves, maskHeld, queries, parts, rotaryPairs};
  }
  static std::optional<AttentionLayout> fromFlat(ArrayRef<int64_t> f) {
    if (f.size() != 19)
      return std::nullopt;
    AttentionLayout a;
    a.q = {f[0], f[1], f[2]}, a.k = {f[3], f[4], f[5]}, a.v = {f[6], f[7], f[8]};
    a.d = f[9], a.group = f[10], a.mask = f[11], a.rotary = f[12], a.rotaryDims = f[13];
    a.rotaryHalves = f[14] != 0, a.maskHeld = f[15], a.queries = f[16], a.parts = f[17];
    a.rotaryPairs = f[18] != 0;
    return a;
  }
};
/// The order a grouped-query attention's result comes in when each of its
/// columns sends its share of `queries` query heads, one after the other:
/// as init_tile's row_perm of a run of queries * d rows, which its reader's
/// weight takes (in order with one column per head).
SmallVector<int64_t> sharedHeadsOrder(int64_t queries, int64_t d, int64_t parts);

/// What one kernel needs before its body is written.
struct KernelPlan {
  std::string name, kind;
  int64_t h = 1, w = 1;
  SmallVector<Value> inputs; // streams, then tensors
  Operation *anchor;          // the wsgraph op whose result the kernel replaces
  unsigned result = 0;        // which result of it
  // A generic kernel's chunk: rows [rowLo, rowHi) of its result (rowHi 0:
  // all); a chunk after the first takes the chunks before it as its last
  // input and passes their rows on first.
  int64_t rowLo = 0, rowHi = 0;
  bool chained = false;
  SmallVector<unsigned> operandInput; // generic: operand i of the anchor is inputs[operandInput[i]]
  double work = 1;            // multiply-accumulates (or elements) per token
  float epsilon = 1e-5f;      // layer_norm, rms_norm
  bool geluTanh = false;      // linear_gelu: GELU in its tanh form (else exact)
  bool relu = false;          // linear: a ReLU after the bias (OPT's MLP)
  std::string gateActivation = "silu"; // linear_glu: silu, gelu or gelu_tanh
  float scale = 1.0f;         // attention; embed: the lookup times this
  // attention: future keys score this plus the mask (else they are left
  // out); the kernel takes a whole sequence before it answers.
  std::optional<float> futureFill;
  // attention: what makes the mask from the words that come (a host's
  // attention_mask): to_float, add c, mul c or rsub c (c - x), in order.
  SmallVector<std::pair<std::string, float>> maskSteps;
  int64_t heads = 0;          // attention: its heads, each on w / heads columns
  bool hostResult = false;    // the result goes to the host, not to a stream
  std::string storage = "f32"; // how weight matrices and tables are held (precision=)
  bool blocked = true;        // its result is one block per column (not in weight streaming)
  int64_t maxBlocks = 0;      // result blocks at most (0: half the arch's colors)
  int64_t align = 0;          // result blocks start at multiples of this many words (0: any)
  int64_t stage = 0;          // the wafer it runs on
  int64_t layer = -1;         // its transformer block, -1 outside the blocks
  // The box the shape must stay in (placement asks for smaller ones).
  int64_t maxH = std::numeric_limits<int64_t>::max(), maxW = std::numeric_limits<int64_t>::max();
  int64_t minW = 0; // the fewest columns the embedding's sizer takes (0: any)
  std::function<void(KernelPlan &)> size; // picks h, w for a PE budget of h * w
  // Estimated cycles per token at the current h x w (null: not estimated;
  // such kernels get PEs in proportion to their work).
  std::function<double(const KernelPlan &)> cycles;
  // One token's cycles through it alone, when its stages add up rather
  // than overlap with other tokens' (null: as `cycles`).
  std::function<double(const KernelPlan &)> alone;

  // Weight streaming (StreamWeights.cpp): the kernel runs `layers` layers
  // (0: its weights stay resident), taking the weights of layers 1 and on
  // as further operands; inputs `fedBack` come from the block's output
  // after layer 0, and the block's output kernel `feedsBack`.
  int64_t layers = 0;
  SmallVector<Value> laterWeights;
  SmallVector<unsigned> fedBack;
  bool feedsBack = false;
  // Defect splitting (LowerToKernels.cpp): a piece of a linear or embedding
  // holds weight rows [weightRowBase, weightRowBase + its rows) of the whole
  // weight; a piece after the first adds the partial sum of the one before,
  // which streams in as operand 1. Before the last piece, `partialKey` (the
  // piece's weight slice, unique to it) stands for its partial sum in the
  // next piece's inputs.
  int64_t weightRowBase = 0;
  Value partialKey;
  // A piece of a host-read linear split by output columns computes columns
  // [colLo, colHi) of the whole weight (colHi 0: all of them); every piece
  // after the first writes into the one before's result.
  int64_t colLo = 0, colHi = 0;
  bool writesIntoPrevious = false;
  // A linear whose reader is attention: its result's columns as [groups,
  // unit] interleave them (init_tile's col_interleave): [3, ds] puts each
  // attention column's ds words of q, k and v side by side, so the column
  // reads one window of the blocks. Empty: in order.
  SmallVector<int64_t, 3> colInterleave;
  // Attention whose input is so interleaved, [3, qkvUnit] (0: in order).
  int64_t qkvUnit = 0;
  // A linear whose result's columns come in this order within each run of
  // its size (init_tile's col_perm; empty: in order).
  SmallVector<int64_t> colPerm;
  // A linear whose x arrives in this order within each run of its size
  // (init_tile's row_perm of the weight; empty: in order): the result of a
  // grouped-query attention whose columns each score several query heads.
  SmallVector<int64_t> rowPerm;
  // A linear that turns its result for rotary attention: words 2j and
  // 2j + 1 of every block are a pair (rotate_half's i and i + R/2, put side
  // by side by colPerm); its last input holds each pair's frequency and
  // amplitude ([2, N/2]; 0 and 1 for a pair not turned). Its blocks hold
  // whole pairs.
  bool turns = false;
  AttentionLayout attention;
  // A generating program's kernels hand each token on before the next one
  // arrives (its next token is picked from this one's logits): no kernel
  // waits for a group of tokens or for the next one.
  bool tokenAtATime = false;
  // A block kernel that holds every layer's tiles in SRAM (mode=folded)
  // rather than loading them each layer (weight streaming).
  bool residentLayers = false;
  // A generating program's LM head also picks each next token (the argmax
  // of its logits): its second host result, fed back to the embedding.
  bool picksNext = false;
  // It picks by sampling (wsgraph.sample): its last input is [temperature,
  // seed], after the indices.
  bool samples = false;
  // Its [temperature, seed, top_k] also keep each pick among the top_k
  // largest logits (NextToken::keepTopK).
  bool topK = false;
  /// The value the kernel's output stream stands for in later plans' inputs.
  Value streamed() const { return partialKey ? partialKey : anchor->getResult(result); }
};

/// Words per message of the stream that carries `v`: its last dimension
/// (1 for a scalar); the stream carries the tensor row by row.
int64_t streamWords(Value v);

/// Host-read results the last row keeps whole when every token's block
/// fits this many words: then no row passes results north every token.
inline constexpr int64_t kHostKeptWords = 4096;
inline bool hostKeepsAll(int64_t tokens, int64_t nb) { return tokens * nb <= kHostKeptWords; }

/// How a planned kernel hands its result on; a host-read one needs the
/// tokens per run and its result's width.
inline CostModel::Output outputOf(const KernelPlan &p, int64_t tokens = 0, int64_t n = 0) {
  if (!p.hostResult)
    return CostModel::Output::Blocks;
  return tokens > 0 && hostKeepsAll(tokens, ceilDiv(n, p.w)) ? CostModel::Output::HostKept
                                                            : CostModel::Output::Host;
}

/// Columns per result block of a kernel w PEs wide: at most `maxBlocks`
/// blocks, by default half the colors (the streams leaving one kernel
/// converge on the same readers, whose routers need colors for the rest
/// too; the pipeline asks for more and lowers again with fewer when the
/// routers run out, see docs/cost-model.md). One block (the whole row) in
/// weight streaming, whose feedback is one stream. With `align` (a
/// reader's unit, say attention's head size), blocks hold whole units when
/// the columns' share divides the unit.
inline int64_t blockColumns(const KernelPlan &p, int64_t w, int64_t n, wafer::ArchAttr arch) {
  if (!p.blocked)
    return w;
  int64_t cap = p.maxBlocks > 0 ? p.maxBlocks : arch.getColors() / 2;
  int64_t g = ceilDiv(w, std::max<int64_t>(1, cap));
  int64_t nb = ceilDiv(n, w);
  if (p.align > 0 && p.align % nb == 0) {
    int64_t unit = p.align / nb; // columns per unit
    g = std::min(w, ceilDiv(g, unit) * unit);
  }
  return g;
}
/// The same at the plan's own width.
inline int64_t blockColumns(const KernelPlan &p, int64_t n, wafer::ArchAttr arch) {
  return blockColumns(p, p.w, n, arch);
}
/// The words of each block of an n-word result that leaves the plan's
/// columns ceil(n / w) words each, blockColumns of them a block (as
/// Body::sendGroups cuts it).
inline SmallVector<int64_t> resultBlocks(const KernelPlan &p, int64_t n, wafer::ArchAttr arch) {
  int64_t nb = ceilDiv(n, p.w), g = std::min(blockColumns(p, n, arch), p.w);
  SmallVector<int64_t> sizes;
  for (int64_t x0 = 0; x0 < ceilDiv(n, nb); x0 += g)
    sizes.push_back(std::min(n, (x0 + g) * nb) - x0 * nb);
  return sizes;
}

/// One token through a linear kind (Kind::chainCycles): x along the
/// columns, a hop a PE, and the partial sums down the tile rows, a relay a
/// row (each row adds the words from above as they arrive, so the nb words
/// stream down the column once), then its result: a block's last word
/// leaves after the block's other words (a reader's rows whose x lies late in a block
/// wait for it), and its stages that a pipeline overlaps (KernelPlan::alone).
inline double linearChainCycles(const KernelPlan &p, int64_t n, const CostModel &cost) {
  int64_t nb = ceilDiv(n, p.w);
  double overlapped = p.alone && p.cycles ? std::max(0.0, p.alone(p) - p.cycles(p)) : 0.0;
  return overlapped + double(p.w - 1) * double(cost.arch.getHopCycles()) +
         double(p.h - 1) * cost.relay() +
         (p.hostResult ? cost.words(nb)
                       : cost.output(CostModel::Output::Blocks, n, nb, p.w, p.h,
                                     blockColumns(p, n, cost.arch)));
}

/// The function attribute that keeps the lowering's max-blocks (absent: 0).
inline constexpr llvm::StringLiteral kMaxBlocksAttr = "wskernel.max_blocks";
/// In a folded program, the kernel attribute of a plan that is not
/// blocked (blockFoldedStreams).
inline constexpr llvm::StringLiteral kOneStreamAttr = "wskernel.one_stream";
/// The kernel attribute that keeps a plan's `align` (absent: 0).
inline constexpr llvm::StringLiteral kBlockAlignAttr = "wskernel.block_align";
/// The kernel attributes that keep a plan's colInterleave (absent: in
/// order) and an attention's qkvUnit (absent: 0).
inline constexpr llvm::StringLiteral kColInterleaveAttr = "wskernel.col_interleave";
inline constexpr llvm::StringLiteral kQkvUnitAttr = "wskernel.qkv_unit";
/// The kernel attribute that keeps a plan's colPerm (absent: in order).
inline constexpr llvm::StringLiteral kColPermAttr = "wskernel.col_perm";
/// The kernel attribute that keeps a plan's rowPerm (absent: in order).
inline constexpr llvm::StringLiteral kRowPermAttr = "wskernel.row_perm";
/// The kernel attribute that keeps a piece's weightRowBase (absent: 0).
inline constexpr llvm::StringLiteral kWeightRowBaseAttr = "wskernel.weight_row_base";
/// The kernel attribute that keeps a column piece's [colLo, colHi).
inline constexpr llvm::StringLiteral kWeightColsAttr = "wskernel.weight_cols";

/// Weight streaming: checks that the transformer blocks of `plans` lower
/// to the same kernels, keeps block 0's plans (each carrying the later
/// blocks' weights and its feedback ports) and drops the others; `layers`
/// is the number of blocks. Errors name the kernel that breaks the pattern.
LogicalResult foldLayerPlans(func::FuncOp func, std::vector<KernelPlan> &plans,
                             int64_t &layers);
/// The copies of its tiles a plan's PEs hold: in a folded block
/// (mode=folded) one per layer past the body's data, and the slot the body
/// laid out (foldLayerBody); else one. Sizers fit that many in SRAM.
inline int64_t tileCopies(const KernelPlan &p) {
  return p.residentLayers ? std::max<int64_t>(1, p.layers) + 1 : 1;
}
/// Weight streaming: wraps a built kernel's body in a loop over its plan's
/// layers that first loads the layer's weight tiles (init_tile becomes
/// load_tile), and switches fed-back inputs and the block output between
/// their feedback ports and their layer-0 / last-layer ports by layer.
/// In a generating program the layer loop runs inside the token loop (a
/// token passes every layer before the next one is picked), and the bytes
/// of `layerState` move past the body's data (`dataBytes`), one copy per
/// layer. Returns the SRAM bytes that adds, or -1 (with an error) when the
/// body has no per-token loop.
int64_t foldLayerBody(wk::KernelOp kernel, const KernelPlan &p, int64_t batch, int64_t tokens,
                      ArrayRef<std::pair<int64_t, int64_t>> layerState, int64_t dataBytes);

/// Sizers per kind: each picks h x w for the PE budget p.h * p.w inside
/// p.maxH x p.maxW (and the arch), grown until the tiles fit a PE's SRAM
/// where the kind allows. The lowering and placement's reshaping share them.
/// `storage` is how weight matrices and tables are held (f32, f16, bf16).
using Sizer = std::function<void(KernelPlan &)>;
Sizer embedSizer(int64_t v, int64_t c, bool positions, bool chained, int64_t batch, int64_t tokens,
                 StringRef storage, wafer::ArchAttr arch);
/// A layer norm's (`center`) or an RMS norm's row of PEs.
Sizer normSizer(int64_t c, int64_t tokens, wafer::ArchAttr arch, bool center);
/// With `cycles` (the plan's estimate), a linear takes the fastest of the
/// shapes within the budget (one per count of rows, as wide as it allows),
/// fewer PEs on a tie; the square-ish tiles are one of them.
/// `density`: the weight's fraction of nonzeros (wsgraph.density), whose
/// tiles are held sparse when that takes fewer words.
Sizer linearSizer(int64_t k, int64_t n, bool host, bool residual, int64_t batch, int64_t tokens,
                  StringRef storage, wafer::ArchAttr arch,
                  std::function<double(const KernelPlan &)> cycles = nullptr,
                  double density = 1.0);
/// The nonzeros a linear's kb x nb weight tiles are sized for when held
/// sparse (the densest expected at `density`), or -1 when they are held
/// dense at `storage` (the sparse layout would not take fewer words).
int64_t sparseTileEntries(StringRef storage, int64_t kb, int64_t nb, double density);
/// Words of a kb x nb weight tile at `storage`, or sparse (sparseTileEntries).
int64_t weightTileWords(StringRef storage, int64_t kb, int64_t nb, double density);
/// How a plan holds the kb x nb tiles of its weight input `first`: sparse,
/// "sparse:N" for the densest tile's N nonzeros (over every layer's weight
/// in weight streaming), when the weight is marked sparse and that takes
/// fewer words; else at the plan's storage. Sets `entries` to N or -1.
std::string tileStorage(const KernelPlan &p, unsigned first, int64_t kb, int64_t nb,
                        int64_t &entries);
/// (An attention whose input is interleaved keeps its columns per head:
/// each takes the plan's qkvUnit of d.)
Sizer attentionSizer(int64_t tokens, int64_t heads, int64_t d, wafer::ArchAttr arch);
/// Once sized: each grouped-query attention that stores its key/value heads
/// once keeps its columns per head, and its reader (a whole linear) takes
/// their order (sharedHeadsOrder); without such a reader, it takes one
/// column a key/value head, or, when that is taller than `rows`, one query
/// head a column.
void orderSharedHeads(std::vector<KernelPlan> &plans, int64_t rows);
/// A linear that computes its whole result (not a piece, not weight
/// streaming, not for the host): its result columns may come in any order.
inline bool isWholeLinear(const KernelPlan &q) {
  return (q.kind == "linear" || q.kind == "linear_gelu") && !q.partialKey &&
         q.weightRowBase == 0 && q.colHi == 0 && (q.layers == 0 || q.residentLayers) &&
         !q.hostResult;
}
/// Rotary attention whose q and k come from whole linears of their own
/// (Llama's q_proj and k_proj): the linears turn them, each pair once per
/// token, instead of every attention row turning q. The attention then
/// reads plain heads, their dimensions in the same pair order for q and k.
/// (Not in a generating program, whose decode waits for the turning.)
void turnInProducers(std::vector<KernelPlan> &plans);
/// A linear whose result holds each head's q, k and v side by side (NeoX's
/// per-head qkv, 3d words a head): its columns reordered so that each
/// attention column's ds words of q, k and v follow one another, after any
/// reordering for rotary (whose pairs move with them: ds is even).
void interleaveHeadByColumn(KernelPlan &producer, int64_t d, int64_t ds);
/// A row of PEs, each adding its block of the two vectors.
Sizer addSizer(int64_t c, wafer::ArchAttr arch);
double addCycles(int64_t c, int64_t w, const CostModel &cost);

/// A generic linear whose stored weight takes more than `budget` bytes, as
/// linears on views of the weight: columns side by side (joined by a tree
/// of concats), or, when one column is too tall, summed pieces of rows.
/// Returns the value that replaces the linear's, the ops made in `made`;
/// null when it fits, or when its weight is pruned or masked (its values
/// depend on the whole matrix). lib/Conversion/WsgraphToWskernel/WideWeights.cpp.
Value splitWideWeight(Operation *op, int64_t budget, SmallVectorImpl<Operation *> &made);

/// The estimate of a linear K -> N (`tokens` per run), for its plan;
/// with `alone`, of one token through it alone (CostModel::tokenAlone).
std::function<double(const KernelPlan &)> linearCycles(int64_t k, int64_t n, bool gelu,
                                                       bool residual, int64_t tokens,
                                                       wafer::ArchAttr arch, bool asyncSums,
                                                       double density = 1.0, bool alone = false);
/// Does a linear K -> N at the plan's shape finish in two rows: the
/// finishing row (bias, GELU, the residual) and below it a row that only
/// hands the result on? When that is faster by the estimate (the gather of
/// a result block no longer waits for the finishing work) and the tiles,
/// on one row fewer, still fit a PE.
bool linearHandOnRow(const KernelPlan &p, int64_t k, int64_t n, bool gelu, bool residual,
                     int64_t tokens, wafer::ArchAttr arch, bool asyncSums, double density = 1.0);
/// Do a linear's weight rows pass its column sums on with their async
/// engines (with a finishing row)? Their partial sums alternate between two
/// buffers by token parity, so a batch's tokens must be even.
inline bool asyncColumnSums(int64_t tokensPerBatch) {
  return tokensPerBatch >= 2 && tokensPerBatch % 2 == 0;
}
/// Does an attention take each token's q, k and v on its async engines while
/// its cores work on the token before? It then holds each token until the
/// next one arrives (its engine waits for it), a token of latency per
/// attention: not for sequences shorter than kPrefetchTokens, where that
/// weighs on the run and the steady pace matters little (the tiny GPTs'
/// 8 tokens), nor with weight streaming (its layers follow one another
/// through the same kernels).
inline constexpr int64_t kPrefetchTokens = 16;
inline bool attentionPrefetches(const KernelPlan &p, int64_t tokensPerBatch) {
  return p.layers == 0 && tokensPerBatch >= kPrefetchTokens && !p.tokenAtATime;
}
/// Room left for a linear's program when its tiles lose a row to a gather row.
inline constexpr int64_t kHandOnRowCodeBytes = 64 * kCodeBytesPerInstruction;
/// Splits each host-read linear too wide for the arch's columns at its
/// share of `capacity` PEs into column pieces (SplitKernels.cpp).
void splitWideHostLinears(std::vector<KernelPlan> &plans, double capacity, int64_t batch,
                          int64_t tokens, wafer::ArchAttr arch);
/// Splits each linear and embedding whose weights alone need more than
/// `maxPes` PEs into pieces (docs/defects.md); errors name the kernel.
LogicalResult splitForDefects(std::vector<KernelPlan> &plans, int64_t maxPes, double defectRate,
                              int64_t batch, int64_t tokens, wafer::ArchAttr arch);

/// Contiguous stages [begin, end) of plans, one per wafer: `wafers` "auto"
/// takes the fewest wafers whose PE capacity holds every kernel's minimum,
/// a number forces that many. Within that count, the busiest stage's work
/// is as small as it can be (within 5%), then the fewest words cross
/// (BalanceKernels.cpp).
FailureOr<SmallVector<std::pair<size_t, size_t>>>
partitionStages(const std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes, double capacity,
                StringRef wafers);
/// PE budgets for plans [first, last) of one wafer: the least cycles per
/// token T that all estimated kernels reach together within `capacity`
/// PEs (binary search on T; each kernel takes the smallest budget that
/// reaches T, or its fastest). Kernels without an estimate get PEs in
/// proportion to their work, as do all when the estimated ones fit anyway.
SmallVector<int64_t> balanceStage(std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes,
                                  size_t first, size_t last, double capacity, int64_t maxPes);
/// A generating program's budgets for plans [first, last), replacing
/// `budgets` (balanceStage's) when they fit: each kernel's latency at a
/// budget is its cycles and its chains (once a layer in a block), on a grid
/// of budgets 8% apart, and their sum is the least the wafer allows.
/// Kernels without estimates keep theirs.
void spendOnLatency(std::vector<KernelPlan> &plans, ArrayRef<int64_t> minPes, size_t first,
                    size_t last, double capacity, int64_t maxPes, int64_t tokens,
                    wafer::ArchAttr arch, SmallVectorImpl<int64_t> &budgets);

/// Writes the grid, channels, body, stage and figures of `kernel` for plan
/// `p` (replacing any body it had; a weight-streaming plan's body loops over
/// its layers); returns its SRAM bytes per PE, which the caller checks
/// against the arch.
int64_t writeKernel(wk::KernelOp kernel, const KernelPlan &p, int64_t batch, int64_t tokens,
                    const CostModel &cost, SmallVectorImpl<int64_t> *outBlocks = nullptr);

/// One block of a stream input: the port it arrives on and the elements
/// [offset, offset + size) of the vector it carries each token.
struct InBlock {
  std::string port;
  int64_t offset, size;
};

/// A logical input of a kernel: a tensor operand, or a stream split into
/// blocks that arrive as consecutive operands (all results of the producer).
struct LogicalInput {
  unsigned operand; // its first operand
  Type type;        // that operand's type
  SmallVector<InBlock, 1> blocks; // empty for a tensor
  int64_t words() const { return blocks.empty() ? 0 : blocks.back().offset + blocks.back().size; }
  /// Its ports: one per block ("in<operand>"), a tensor's one.
  SmallVector<std::string, 1> ports() const {
    if (blocks.empty())
      return {"in" + std::to_string(operand)};
    return SmallVector<std::string, 1>(
        llvm::map_range(blocks, [](const InBlock &b) { return b.port; }));
  }
};

/// Groups the operands of `kernel` into logical inputs: consecutive stream
/// operands that are results 0, 1, ... of one kernel are one input.
SmallVector<LogicalInput> logicalInputs(wk::KernelOp kernel);

/// Builds a kernel body with the skeleton's helpers.
class Body {
public:
  Body(OpBuilder &b, wk::KernelOp kernel, int64_t batch, int64_t tokens)
      : b(b), ctx(b.getContext()), h(kernel.getHeight()), w(kernel.getWidth()), batch(batch),
        tokens(tokens), topBlock(&kernel.getBody().front()), ins(logicalInputs(kernel)),
        kernelOp(kernel) {}

  /// The kernel being written.
  wk::KernelOp kernel() { return kernelOp; }

  /// The kernel's own block, outside the token loops.
  Block *top() { return topBlock; }

  /// Logical input i: its first operand, type, total words per token.
  const LogicalInput &input(unsigned i) const { return ins[i]; }
  unsigned operand(unsigned i) const { return ins[i].operand; }
  Type type(unsigned i) const { return ins[i].type; }
  bool isStream(unsigned i) const { return i < ins.size() && !ins[i].blocks.empty(); }
  int64_t words(unsigned i) const { return ins[i].words(); }

  /// A range of a stream input that each PE receives part of: part c (the
  /// PE's row or column) is elements [base + c*step, min(base + c*step +
  /// width, end)) (width 0: step), stored at dst (bytes) and on.
  /// With `keep`, only iterations those guards select store the part; the
  /// iterations that each of `otherwise` selects drop it (together they
  /// must cover every iteration).
  /// With `start`, part c starts at start(c) instead (base unused).
  struct Range {
    int64_t base, end;
    wk::AffAttr dst;
    ArrayAttr keep = nullptr;
    SmallVector<ArrayAttr, 2> otherwise = {};
    int64_t width = 0;
    std::function<int64_t(int64_t)> start = nullptr;
  };
  /// Receives part c of every range of stream input `in`, on the PEs `when`
  /// selects (one range or null), c being the PE's row (byRow) or column.
  /// A PE receives each block its parts touch whole, once, keeping its
  /// parts and dropping the rest. Returns the most words one PE receives.
  /// With `product` (one range), the words are not stored: they are the
  /// vector of a product with the rows of a matrix of `cols` columns at
  /// `matrix` (bytes) that match them, summed into dst. The matrix is a tile
  /// of `rows` held as `storage`: f32, or a sparse layout.
  struct Product {
    int64_t matrix, cols;
    StringRef storage = "f32";
    int64_t rows = 0;
  };
  /// With `guard`, every receive (kept, dropped or around the parts) runs
  /// only on the iterations it selects; with `async`, on the PEs' async
  /// engines. A second call on the same input (another token's words,
  /// other guards) reuses the first one's router filters.
  int64_t recvRanges(unsigned in, ArrayRef<Range> ranges, int64_t step, int64_t parts, bool byRow,
                     ArrayAttr when = nullptr, std::optional<Product> product = std::nullopt,
                     ArrayAttr guard = nullptr, bool async = false);
  int64_t recvRange(unsigned in, int64_t base, int64_t step, int64_t parts, int64_t end,
                    wk::AffAttr dst, bool byRow, ArrayAttr when = nullptr) {
    return recvRanges(in, {Range{base, end, dst}}, step, parts, byRow, when);
  }
  /// Receives the whole of stream input `in` into dst on the PEs `when` selects.
  int64_t recvAll(unsigned in, wk::AffAttr dst, ArrayAttr when = nullptr) {
    return recvRange(in, 0, words(in), 1, words(in), dst, true, when);
  }

  /// The sizes of the result blocks, once sent.
  SmallVector<int64_t> outBlocks;

  wk::AffAttr aff(int64_t base, ArrayRef<int64_t> loop = {}, int64_t px = 0, int64_t py = 0) {
    return wk::AffAttr::get(ctx, base, loop, px, py);
  }
  /// `a` moved by `bytes`.
  wk::AffAttr shifted(wk::AffAttr a, int64_t bytes) {
    return aff(a.getBase() + bytes, a.getLoop(), a.getPx(), a.getPy());
  }
  ArrayAttr pes(int64_t x0, int64_t x1, int64_t y0, int64_t y1) {
    return b.getArrayAttr({wk::PeRangeAttr::get(ctx, x0, x1, y0, y1)});
  }
  ArrayAttr lastRow() { return pes(0, w - 1, h - 1, h - 1); }

  void recv(StringRef port, wk::AffAttr dst, wk::AffAttr n, StringRef combine = "copy",
            ArrayAttr when = nullptr, ArrayAttr guard = nullptr, bool async = false) {
    wk::RecvOp::create(b, loc(), port, dst, n, combine, nullptr, nullptr, nullptr, "f32", nullptr,
                       nullptr, when, guard, async);
  }
  /// Receives n words as the vector of dst (+)= x M, M n x cols at `matrix`;
  /// or, from a sparse tile of `tileRows` at `matrix`, its rows from `firstRow`.
  void recvProduct(StringRef port, wk::AffAttr dst, wk::AffAttr n, wk::AffAttr matrix,
                   wk::AffAttr cols, bool accumulate, ArrayAttr when = nullptr,
                   StringRef storage = "f32", int64_t tileRows = 0, int64_t firstRow = 0) {
    bool sparse = storage != "f32";
    wk::RecvOp::create(b, loc(), port, dst, n, accumulate ? "vecmat_add" : "vecmat", nullptr,
                       matrix, cols, storage, sparse ? b.getI64IntegerAttr(tileRows) : nullptr,
                       firstRow ? b.getI64IntegerAttr(firstRow) : nullptr, when, nullptr);
  }
  /// Receives n words into dst (copied or added) and sends them on `to` in
  /// the same pass.
  void relay(StringRef port, StringRef to, wk::AffAttr dst, wk::AffAttr n,
             StringRef combine = "copy", ArrayAttr when = nullptr, ArrayAttr guard = nullptr,
             bool async = false) {
    wk::RecvOp::create(b, loc(), port, dst, n, combine, b.getStringAttr(to), nullptr, nullptr,
                       "f32", nullptr, nullptr, when, guard, async);
  }
  /// Pops n words of a port that this PE does not need.
  void drop(StringRef port, wk::AffAttr n, ArrayAttr when = nullptr, ArrayAttr guard = nullptr,
            bool async = false) {
    if (n.getBase() == 0 && n.getLoop().empty() && n.getPx() == 0 && n.getPy() == 0)
      return;
    recv(port, aff(0), n, "discard", when, guard, async);
  }
  void send(StringRef port, wk::AffAttr src, wk::AffAttr n, ArrayAttr when = nullptr,
            ArrayAttr guard = nullptr, bool async = false) {
    wk::SendOp::create(b, loc(), port, src, n, when, guard, async);
  }
  /// The n words at `at` summed over row y's PEs: east on "row", the last
  /// PE's total back west on "back", each PE between adding (or taking)
  /// them as they pass: a hop each way, not the words again.
  void rowAllReduce(int64_t at, int64_t n, int64_t y) {
    if (w == 1)
      return;
    send("row", aff(at), aff(n), pes(0, 0, y, y));
    if (w > 2)
      relay("row", "row", aff(at), aff(n), "add", pes(1, w - 2, y, y));
    recv("row", aff(at), aff(n), "add", pes(w - 1, w - 1, y, y));
    send("back", aff(at), aff(n), pes(w - 1, w - 1, y, y));
    if (w > 2)
      relay("back", "back", aff(at), aff(n), "copy", pes(1, w - 2, y, y));
    recv("back", aff(at), aff(n), "copy", pes(0, 0, y, y));
  }
  ArrayAttr guards(ArrayRef<wk::AffAttr> conditions) {
    return b.getArrayAttr(SmallVector<Attribute>(conditions.begin(), conditions.end()));
  }
  /// The guards of both (each may be null: always).
  ArrayAttr bothGuards(ArrayAttr a, ArrayAttr c) {
    if (!a || !c)
      return a ? a : c;
    SmallVector<Attribute> all(a.begin(), a.end());
    all.append(c.begin(), c.end());
    return b.getArrayAttr(all);
  }

  void vector(StringRef kind, wk::AffAttr dst, wk::AffAttr lhs, wk::AffAttr rhs, wk::AffAttr n,
              ArrayAttr when = nullptr, ArrayAttr guard = nullptr, StringRef elem = "f32") {
    wk::VectorOp::create(b, loc(), kind, dst, lhs, rhs, n, when, guard, elem);
  }
  void scalar(StringRef kind, wk::AffAttr dst, wk::AffAttr lhs, wk::AffAttr s, wk::AffAttr n,
              ArrayAttr when = nullptr, ArrayAttr guard = nullptr, StringRef elem = "f32") {
    wk::ScalarOp::create(b, loc(), kind, dst, lhs, s, n, when, guard, elem);
  }
  void imm(StringRef kind, wk::AffAttr dst, wk::AffAttr src, float value, wk::AffAttr n,
           ArrayAttr when = nullptr, ArrayAttr guard = nullptr, StringRef elem = "f32") {
    wk::ImmOp::create(b, loc(), b.getStringAttr(kind), dst, src, b.getF32FloatAttr(value), n,
                      when, guard, b.getStringAttr(elem));
  }
  void unary(StringRef kind, wk::AffAttr dst, wk::AffAttr src, wk::AffAttr n,
             ArrayAttr when = nullptr, ArrayAttr guard = nullptr, StringRef elem = "f32") {
    wk::UnaryOp::create(b, loc(), kind, dst, src, n, when, guard, elem);
  }
  void reduce(StringRef kind, wk::AffAttr dst, wk::AffAttr src, wk::AffAttr n,
              ArrayAttr when = nullptr, ArrayAttr guard = nullptr, StringRef elem = "f32") {
    wk::ReduceOp::create(b, loc(), kind, dst, src, n, when, guard, elem);
  }
  void matvec(wk::AffAttr dst, wk::AffAttr m, wk::AffAttr v, wk::AffAttr rows, wk::AffAttr cols,
              bool transposed, ArrayAttr when = nullptr, ArrayAttr guard = nullptr,
              StringRef storage = "f32", bool accumulate = false) {
    wk::MatvecOp::create(b, loc(), dst, m, v, rows, cols, transposed, accumulate, storage, when,
                         guard);
  }
  OpBuilder &builder() { return b; }
  void gather(wk::AffAttr dst, wk::AffAttr table, wk::AffAttr index, wk::AffAttr rows,
              wk::AffAttr cols, wk::AffAttr rowLo, StringRef storage = "f32") {
    wk::GatherOp::create(b, loc(), dst, table, index, rows, cols, rowLo, storage, nullptr,
                         nullptr);
  }
  void initTile(int64_t source, int64_t offset, int64_t rows, int64_t cols,
                ArrayRef<int64_t> rowOrigin, ArrayRef<int64_t> colOrigin,
                StringRef storage = "f32", ArrayRef<int64_t> colWindow = {},
                ArrayRef<int64_t> colInterleave = {}, ArrayRef<int64_t> colPerm = {},
                ArrayRef<int64_t> rowPerm = {}) {
    wk::InitTileOp::create(b, loc(), source, offset, rows, cols,
                           b.getDenseI64ArrayAttr(rowOrigin), b.getDenseI64ArrayAttr(colOrigin),
                           storage, b.getDenseI64ArrayAttr(colWindow),
                           b.getDenseI64ArrayAttr(colInterleave), b.getDenseI64ArrayAttr(colPerm),
                           b.getDenseI64ArrayAttr(rowPerm));
  }

  /// Opens the batch (outer) and token (inner) loops; index 0 is the token
  /// (with `step`, the group of `step` tokens: a divisor of the tokens).
  void tokenLoops(int64_t step = 1) {
    auto outer = wk::LoopOp::create(b, loc(), batch);
    b.setInsertionPointToStart(&outer.getBody().emplaceBlock());
    auto inner = wk::LoopOp::create(b, loc(), tokens / step);
    b.setInsertionPointToStart(&inner.getBody().emplaceBlock());
  }

  /// Opens a loop of `count` iterations; what follows goes inside it.
  void openLoop(int64_t count) {
    auto l = wk::LoopOp::create(b, loc(), count);
    b.setInsertionPointToStart(&l.getBody().emplaceBlock());
  }

  /// A loop of `count` iterations around what `body` writes; inside it,
  /// its index is loop index 0 of affine maps.
  void loop(int64_t count, function_ref<void()> body) {
    auto l = wk::LoopOp::create(b, loc(), count);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&l.getBody().emplaceBlock());
    body();
  }

  /// Steps 3 to 6: column reduction of `part` (nb words), a last-row
  /// epilogue, then the result leaves as blocks (sendGroups).
  /// With `finishing`, the last row holds no partial: it takes the sum.
  /// With `handOnRow`, the row above the last finishes (the epilogue) and
  /// sends its block south to the last row, which only hands it on.
  /// With `chain` (and `finishing`), the rows above the finishing one hold
  /// their partials there and pass the sum on with their async engines.
  void reduceGatherSend(wk::AffAttr part, int64_t nb, int64_t n, function_ref<void()> epilogue,
                        bool reduceColumns = true, bool gatherRow = true, bool finishing = false,
                        bool handOnRow = false, wk::AffAttr chain = nullptr) {
    int64_t last = handOnRow ? h - 2 : h - 1;
    if (h > 1 && reduceColumns) {
      // Row 0 starts the sum, the rows between add theirs as it passes,
      // the last adds its own or (finishing) takes it.
      assert((!chain || finishing) && "only weight rows pass sums on async");
      wk::AffAttr rows = chain ? chain : part;
      send("col", rows, aff(nb), pes(0, w - 1, 0, 0), nullptr, bool(chain));
      if (last > 1)
        relay("col", "col", rows, aff(nb), "add", pes(0, w - 1, 1, last - 1), nullptr,
              bool(chain));
      recv("col", part, aff(nb), finishing ? "copy" : "add", pes(0, w - 1, last, last));
    }
    epilogue();
    if (handOnRow) {
      send("col", part, aff(nb), pes(0, w - 1, last, last));
      recv("col", part, aff(nb), "copy", lastRow());
    }
    if (gatherRow)
      sendGroups(part, nb, n, h - 1);
  }

  /// The result (n words, nb per column, in `part` on row `row`) leaves as
  /// blocks: columns [k*group, k*group + group) make block k, which their
  /// last PE sends as result k. Inside a group the blocks travel east along
  /// the row ("row" channel): local column j passes on the j blocks of the
  /// columns west of it in one relay (the words pass through, nothing
  /// stored), then sends its own; the last PE relays them into the result.
  /// With `async`, the relays and sends run on the PEs' async engines (the
  /// caller keeps `part` for the next token's work to find it sent).
  void sendGroups(wk::AffAttr part, int64_t nb, int64_t n, int64_t row, bool async = false) {
    int64_t g = std::min(group, w);
    int64_t blocks = ceilDiv(ceilDiv(n, nb), g);
    for (int64_t k = 0; k < blocks; ++k) {
      int64_t x0 = k * g, x1 = std::min({x0 + g, w, ceilDiv(n, nb)}) - 1;
      int64_t size = std::min(n, (x1 + 1) * nb) - x0 * nb;
      std::string port = "out" + std::to_string(k);
      if (x1 > x0) {
        if (x1 - 1 > x0) // (px - x0) * nb words
          relay("row", "row", aff(0), aff(-x0 * nb, {}, nb), "discard",
                pes(x0 + 1, x1 - 1, row, row), nullptr, async);
        send("row", part, aff(nb), pes(x0, x1 - 1, row, row), nullptr, async);
        relay("row", port, aff(0), aff((x1 - x0) * nb), "discard", pes(x1, x1, row, row),
              nullptr, async);
      }
      send(port, part, aff(size - (x1 - x0) * nb), pes(x1, x1, row, row), nullptr, async);
      outBlocks.push_back(size);
    }
  }

  /// Columns per result block: 1, more when a kernel is wide (see
  /// blockColumns), all of them in weight streaming (one stream).
  int64_t group = 1;
  /// How the result leaves (see outputOf).
  CostModel::Output output = CostModel::Output::Blocks;
  /// The SRAM bytes [first, first + second) that carry a layer's state from
  /// one token to the next (a KV cache, a position): a generating program
  /// in weight streaming keeps one copy per layer.
  SmallVector<std::pair<int64_t, int64_t>, 2> layerState;

private:
  Location loc() { return b.getUnknownLoc(); }
  OpBuilder &b;
  MLIRContext *ctx;
  int64_t h, w, batch, tokens;
  Block *topBlock;
  SmallVector<LogicalInput> ins;
  wk::KernelOp kernelOp;
};

} // namespace wsc::lowering

#endif // WSC_LIB_CONVERSION_KERNELBODY_H
