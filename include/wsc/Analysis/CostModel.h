//===- CostModel.h - cycles per token of kernels ----------------*- C++ -*-===//
//
// Estimates derived from the arch attribute only. Each kernel runs its
// per-token body on every PE; tokens pipeline through kernels and through
// the chains inside them, so a kernel's cycles per token is the busiest
// PE's time per token, and the pipeline streams one token per
// slowest-kernel time. Formulas are documented in docs/cost-model.md.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_ANALYSIS_COSTMODEL_H
#define WSC_ANALYSIS_COSTMODEL_H

#include "wafer/WaferDialect.h"

#include <algorithm>
#include <cstdint>

namespace wsc {

struct CostModel {
  wafer::ArchAttr arch;
  /// One token with no other's work to overlap (a decode step): the stages
  /// a pipeline runs side by side for different tokens add up instead.
  bool tokenAlone = false;

  /// Cycles to receive or send n words through one PE's ramp.
  double words(int64_t n) const { return double(n); }
  /// Cycles of an n-element vector op.
  double vector(int64_t n) const { return double((n + arch.getSimdFp32() - 1) / arch.getSimdFp32()); }
  /// Cycles of n transcendental evaluations (exp, erf, rsqrt, division).
  double transcendental(int64_t n) const { return double(n * arch.getTranscendentalCycles()); }
  /// Cycles of a rows x cols matrix-vector product at fp32.
  double matvec(int64_t rows, int64_t cols) const {
    return double((rows * cols + arch.getFmacFp32() - 1) / arch.getFmacFp32());
  }
  /// Cycles of a product over a tile of `rows` holding `entries` nonzeros
  /// in the sparse form (runtime/format/wsc/format/SparseTile.h): one
  /// multiply-add per entry and one per row. The lowering holds a tile
  /// sparse only when that form is the smaller, so it is the form the
  /// tile takes.
  double sparseMatvec(int64_t rows, int64_t entries) const;
  /// The nonzeros to size for in each of the tiles of `elements` of a
  /// matrix with this density: the densest tile of random zeros is about
  /// three standard deviations above the mean.
  static int64_t densestTileEntries(int64_t elements, double density);
  /// Cycles a PE inside a chain spends per token passing on an n-word
  /// partial: it receives it and forwards it (after its add) in the same
  /// pass. Tokens pipeline through the chain, so its length adds latency,
  /// not time per token.
  double forwarded(int64_t n) const { return words(n) + double(arch.getHopCycles()); }
  /// The cycle a message takes from its last hop into the core.
  double delivery() const { return 1.0; }
  /// Cycles a word takes from a PE to the next one's core when that core
  /// passes it on (a chain's stage, as one token alone waits for it).
  double relay() const { return double(arch.getHopCycles()) + delivery(); }

  /// Cycles a PE of a w-PE row spends per token on an all-reduce of n
  /// words: a sum chain east, the total back west. It waits for the round
  /// trip, so here the chain's length is time per token.
  double rowAllReduce(int64_t w, int64_t n = 1) const {
    return w > 1 ? 4 * words(n) + double(2 * (w - 1) * arch.getHopCycles()) : 0.0;
  }

  /// How a kernel's last row hands its n-word result on: as blocks of
  /// `group` columns, each gathered along the row into its last PE, which
  /// forwards the others' words and sends its own: a block's words (Blocks;
  /// group 1: every PE sends its own nb words), or kept for the host to
  /// read: spread over the rows (Host; rows above the last pass theirs
  /// north) or all on the last row (HostKept).
  enum class Output { Blocks, Host, HostKept };
  double output(Output out, int64_t n, int64_t nb, int64_t w, int64_t h, int64_t group) const {
    if (out == Output::Host)
      return h > 1 ? forwarded(nb) : vector(nb);
    if (out == Output::HostKept)
      return vector(nb);
    return words(std::min(n, std::min(group, w) * nb));
  }

  /// Each figure below takes `in`, the most words one PE receives per token.
  /// A linear layer x[K] W[K,N] on h x w PEs (column reductions). With a
  /// finishing row (`finishingRow`), rows 0..h-2 hold the weights and the
  /// last row only finishes (bias, GELU, the residual, `inLast` words of
  /// it received) and hands the result on: the busier of the two roles.
  /// With `handOnRow` (h >= 4), the finishing row sends its result south
  /// to a last row that only hands it on, and the tiles are on rows 0..h-3.
  /// With `streamed`, x's words meet their rows of the tile as they arrive
  /// (RECV_VECMAT): receiving and multiplying overlap. With `asyncSums`
  /// (and a finishing row), the weight rows pass the column sums on with
  /// their async engines while their cores multiply the next token. With
  /// `tileEntries` >= 0 the tiles are sparse, the densest holding that many.
  /// With `turns`, the finishing row also turns its block by rotary pairs
  /// (turnPairs).
  double linear(int64_t k, int64_t n, int64_t h, int64_t w, bool gelu, Output out, int64_t in,
                int64_t group = 1, int64_t inLast = 0, bool handOnRow = false,
                bool streamed = false, bool asyncSums = false, int64_t tileEntries = -1,
                bool turns = false) const;
  /// Turning nb words as nb/2 rotary pairs at the token's position: the
  /// position, an angle, its sine and cosine and their amplitudes a pair,
  /// and the pair's four products and two sums.
  double turnPairs(int64_t nb) const {
    int64_t pairs = nb / 2;
    return 2 * vector(1) + vector(pairs) + 2 * transcendental(pairs) + 2 * vector(pairs) +
           6 * double(pairs) * vector(1);
  }
  /// A gated linear act(x Wg + bg) * (x Wu + bu), both weights K x N, on
  /// h x w PEs that hold a tile of each for the same output columns: a tile
  /// row stores its slice of x and multiplies it by both tiles, the column
  /// sums carry both partials (2·nb words), and the finishing row adds the
  /// `biases`, takes the activation (SiLU: a sigmoid and a multiply; GELU:
  /// one transcendental), multiplies by the up sum and hands nb words on.
  /// Rows, hand-on row, async sums and sparse tiles (`gateEntries`,
  /// `upEntries`) as in `linear` (the result leaves in blocks).
  double gatedLinear(int64_t k, int64_t n, int64_t h, int64_t w, bool silu, int64_t biases,
                     int64_t in, int64_t group = 1, bool handOnRow = false,
                     bool asyncSums = false, int64_t gateEntries = -1,
                     int64_t upEntries = -1) const;
  /// Does a linear on h rows end in a row that only finishes? When it has
  /// at least three rows and its result leaves in blocks or stays on the
  /// last row for the host (HostKept).
  static bool finishingRow(int64_t h, Output out) {
    return (out == Output::Blocks || out == Output::HostKept) && h >= 3;
  }
  /// The rows of a linear on h rows that hold weight tiles: all but the
  /// finishing row and the hand-on row below it, if any.
  static int64_t tileRows(int64_t h, Output out, bool handOnRow) {
    return h - (finishingRow(h, out) ? 1 : 0) - (handOnRow ? 1 : 0);
  }
  /// Layer norm of C on 1 x w PEs (two row all-reduces: mean, variance).
  double layerNorm(int64_t c, int64_t w, Output out, int64_t in, int64_t group = 1,
                   int64_t step = 1) const;
  /// RMS norm of C on 1 x w PEs (one row all-reduce: the sum of squares).
  double rmsNorm(int64_t c, int64_t w, Output out, int64_t in, int64_t group = 1,
                 int64_t step = 1) const;
  /// The levels of a tree that merges the rows at distance 1..far into
  /// the one at distance 0 (a level per power of two up to far).
  static int64_t treeLevels(int64_t far) {
    int64_t n = 0;
    for (int64_t span = 1; span <= far; span *= 2)
      ++n;
    return n;
  }
  /// Merging the partial softmax (m', s', o[ds]') from the rows above: its
  /// max with the row's (pipelined, taken before the row's exponents) or,
  /// `sideBySide`, the larger max, both differences and the row's own
  /// partial rescaled too; then the other's exp and its multiply-add pass.
  static double mergeCycles(const CostModel &cost, int64_t ds, bool sideBySide) {
    double other = cost.vector(1) + cost.transcendental(1) + cost.matvec(1, ds + 1);
    return sideBySide ? other + 3 * cost.vector(1) + cost.transcendental(1) +
                            cost.vector(ds + 1) + cost.vector(1)
                      : other + cost.vector(1);
  }
  /// Causal attention over `t` tokens: `heads` heads of size d, each on
  /// `parts` columns (d / parts of each head's q, k, v per column; the
  /// scores all-reduced along them) and `rows` rows holding blocks of keys,
  /// partial softmaxes merged down the columns. With `prefetch`, a token's
  /// words come on the async engines while the cores work on the token
  /// before. With `queries` > 1 (grouped-query attention storing each
  /// key/value head once), a column scores that many query heads against
  /// its keys: `parts` columns per key/value head.
  double attention(int64_t t, int64_t d, int64_t heads, int64_t parts, int64_t rows, Output out,
                   int64_t in, int64_t group = 1, bool prefetch = false,
                   bool sideBySide = false, int64_t queries = 1) const;
  /// Embedding lookup of a V x C table on h x w PEs, and of the positions
  /// (a second lookup and an add) when `positions`.
  double embed(int64_t v, int64_t c, int64_t h, int64_t w, bool positions, Output out, int64_t in,
               int64_t group = 1) const;

  /// Cycles to stream `bytes` of weights from external memory onto the wafer.
  double streamCycles(int64_t bytes) const {
    return double(bytes) / double(std::max<int64_t>(1, arch.getExtMemBytesPerCycle()));
  }

  /// The lower bound of a model: all multiply-accumulates spread over every PE.
  double idealCyclesPerToken(double macsPerToken) const {
    return macsPerToken / (double(arch.getWidth()) * arch.getHeight() * arch.getFmacFp32());
  }
  /// Tokens per second when the slowest kernel needs `cycles` per token.
  double tokensPerSecond(double cycles) const {
    return cycles > 0 ? double(arch.getClockHz()) / cycles : 0.0;
  }
};

} // namespace wsc

#endif // WSC_ANALYSIS_COSTMODEL_H
