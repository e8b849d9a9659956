// The PE core: the interpreter of a region's SPMD code on one PE (Core.cpp)
// and its token batching, the region engine (RegionEngine.cpp), with the
// word helpers and kernels they share.
#ifndef WSC_RUNTIME_LIB_CORE_H
#define WSC_RUNTIME_LIB_CORE_H

#include "Machine.h"

#include "wsc/format/SparseTile.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace wsc::runtime::detail {

inline float asF(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
inline uint32_t asW(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

/// SRAM words read as fp32 / packed halves in place; may_alias keeps the
/// type punning defined and lets the loops over them vectorize.
typedef float __attribute__((may_alias)) SramF32;
typedef uint16_t __attribute__((may_alias)) SramU16;

/// IEEE binary16 to fp32, exactly (every half is a float), without branches
/// so that a row widens in vector registers.
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, mag = uint32_t(h & 0x7fff) << 13;
  uint32_t exp = mag & 0x0f800000u;
  float normal = asF(mag + (112u << 23));                 // rebias the exponent
  float special = asF(mag + (224u << 23));                // inf, nan
  float tiny = asF(mag + (113u << 23)) - asF(113u << 23); // zero, subnormal: frac * 2^-24
  float f = exp == 0x0f800000u ? special : exp == 0 ? tiny : normal;
  return asF(asW(f) | sign);
}

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Hot kernels get an AVX2 clone picked at load time; the binary stays
// portable. No FMA: contracting would change the rounding.
#if defined(__x86_64__) && defined(__GNUC__)
#define WSC_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define WSC_MULTIVERSION
#endif

/// VECMAT's rows of `w` (rows x cols) into `sums`: sums[c] += x[r] * w[r][c]
/// in ascending r for every c, the order of a row-at-a-time loop. Defined
/// WSC_MULTIVERSION; declared plain, so that other files call its resolver.
void vecmatRows(float *__restrict sums, const float *w, const float *x, uint64_t rows,
                uint64_t cols);
/// Whether an op costs Model::transcendentalCycles per element.
bool isTranscendental(format::Op op);
/// The fp32 arithmetic ops of a model's hot loops (ADD, SUB, MUL, DIV, MAX,
/// MIN and their _S and _I forms): out[i] = x[i] op y[i * step], step 0 or
/// 1, at vector speed; false for the others.
bool fastF32(format::Op op, SramF32 *out, const SramF32 *x, const SramF32 *y, uint64_t step,
             uint64_t n);
/// The one-operand fp32 ops: out[i] = op(x[i]) over n words.
void unaryF32(format::Op op, SramF32 *out, const SramF32 *x, uint64_t n);

/// A sparse-layout tile as Core::sparseTile found it where its instruction
/// runs: dense, its elements from word `first`; else its parts in SRAM.
struct SparseView {
  bool dense = false;
  uint32_t first = 0;
  uint64_t nnz = 0;
  const SramU16 *counts = nullptr, *cols = nullptr;
  const float *values = nullptr; ///< widened from halves when the tile holds 16-bit values
  /// Whether RECV_VECMAT charges its runs per entry: the form sparseTileCycles costs so.
  bool perEntry = false;
  format::SparseGaps gaps = format::SparseGaps::Bytes;
};

/// Walks the next n words a receive takes from `q`, from the reader's place
/// (`cur`, `pos`, moved on past them): fn(src, i, take, arrives) for each
/// run of them in one message, words i to i + take - 1 of the n, `arrives`
/// the cycle its first word arrives. The n words must have been counted.
template <class Fn>
void eachRun(const Model &m, const RecvQueue &q, LogCursor &cur, uint32_t &pos, uint64_t n,
             bool owner, Fn fn) {
  for (uint64_t i = 0; i < n;) {
    const uint32_t *h = cur.message(owner); // counted, so published
    uint32_t size = h[0], from, to;
    // An origin's messages mostly have one size: the header a few messages
    // on is where it puts it. (A prefetch past a segment's end does not fault.)
    __builtin_prefetch(h + 4 * (MessageLog::kHeader + size));
    q.window(cur.phase, size, pos, from, to);
    if (from == size) {
      cur.pass(h, q.period);
      pos = 0;
      continue;
    }
    uint64_t take = std::min<uint64_t>(n - i, to - from);
    uint64_t time = uint64_t(h[1]) | uint64_t(h[2]) << 32;
    fn(h + MessageLog::kHeader + from, i, take, time + q.delayOf(size, m) + from);
    i += take;
    pos = from + uint32_t(take);
  }
}

/// Interprets one PE's code until it blocks in a RECV, ends or faults.
class Core {
public:
  Core(const Model &m, uint64_t pe, PeState &s, const RunOptions &o, const VisitLimit &limit,
       Outbox &outbox)
      : m_(m), reg_(m.regions[m.peRegion[pe]]), s_(s), outbox_(outbox), limit_(limit),
        traceLimit_(o.traceEventsPerKernel), maxCyclesOption_(o.maxCycles),
        maxCycles_(cycleLimit(m, o.maxCycles)),
        maxInstructions_(o.maxCycles ? o.maxCycles : kDefaultMaxInstructions),
        batching_(o.engine == RunOptions::Engine::Region) {
    uint64_t local = pe - reg_.firstPe;
    px_ = uint32_t(local % reg_.w);
    py_ = uint32_t(local / reg_.w);
  }
  void run();
  /// Drops the region engine's walks of an earlier run (forgetBatchWalks).
  static void forgetWalks();

private:
  enum class Step { Next, Blocked, Fault };
  Step exec(const Instr &in);
  struct Batch;
  /// Token batching (RunOptions::Engine::Region, see docs/runtime.md): runs
  /// trips of the loop nest the PE is in at the start of a trip of its
  /// outer LOOP (pc on its first body instruction) at once, each
  /// instruction over all of them: the trips whose words are all there, up
  /// to the nest's end, when each trip keeps its writes to itself. True
  /// when it did (pc on the next trip, or past the nest); false with
  /// nothing changed.
  bool batchNest();
  /// The nest's shape and body as this PE runs it; false when it cannot batch.
  bool batchShape(Batch &b);
  /// False for a nest that this PE can never batch: noted, so that the
  /// trips after do not try again.
  bool never(Batch &b);
  /// Whether a receive of the nest has fewer than kMinBatchTrips trips'
  /// words there, so that cutBatch would leave too few: a look before the
  /// operands, for a PE that gets its words a token at a time.
  bool tooFewWords(const Batch &b);
  /// Cuts the batch to the outer trips whose words have all arrived and
  /// whose messages the visit may send before it yields; false when those
  /// are too few.
  bool cutBatch(Batch &b);
  /// Each operand as a linear function of the trips, checked for them all.
  bool batchOperands(Batch &b) const;
  /// Where each trip's operands are: the words a trip writes go to words of
  /// its own, which its later reads take; the others are SRAM words no trip
  /// writes. False when the trips do not keep to that.
  bool batchPlaces(Batch &b) const;
  /// batchPlaces for a batch not keyed as the one before.
  bool placeAll(Batch &b) const;
  /// The trips' cycles, as run() would count them, and each message's time;
  /// false (the PE's clocks as they were) when a limit stops the nest.
  bool batchTimes(Batch &b);
  /// The trips' data, instruction by instruction; then their writes to SRAM.
  void batchData(Batch &b);
  /// A RECV_VECMAT's words and products for all the trips, in `products`
  /// (m words a trip).
  void batchProducts(Batch &b, size_t op, std::vector<float> &products);
  /// RECV, RECV_ADD, RECV_MAX, RECV_DROP; and RECV_VECMAT, whose words
  /// (the vector) meet the rows of the cols-wide matrix at word `w` as
  /// they come, into dst.
  Step recv(const Instr &in, uint64_t n, uint32_t dst, uint32_t w = 0, uint64_t cols = 0);
  /// dst (+)= W x of MATVEC (`mv`) or VECMAT, W rows x cols at word w.
  void multiply(const Instr &in, bool mv, uint64_t rows, uint64_t cols, uint32_t dst, uint32_t w,
                const float *x, uint64_t firstRow = 0);
  /// multiply over a sparse-form tile.
  void multiplyEntries(const Instr &in, bool mv, uint64_t rows, uint64_t cols, uint32_t dst,
                       const SparseView &t, const float *x);
  /// dst = sums, or dst += sums when `count` is 1.
  void storeSums(const Instr &in, uint32_t dst, const float *__restrict sums, size_t len);
  /// MATVEC or VECMAT over a STORE_SPARSE tile.
  Step multiplySparse(const Instr &in, bool mv, uint64_t rows, uint64_t cols);
  /// Checks the STORE_SPARSE tile of rows x cols at addr[1] as it is now (the
  /// program may have written it) and finds its parts.
  bool sparseTile(const Instr &in, uint64_t rows, uint64_t cols, SparseView &t);
  /// The n rows of its sparse tile that a RECV_VECMAT meets (Instr::firstRow
  /// on, of k): the tile checked whole, the view narrowed to them.
  bool sparseRows(const Instr &in, uint64_t n, uint64_t cols, SparseView &t, uint64_t &firstRow);
  bool checkCounts(const Instr &in, uint64_t rows, uint64_t cols, uint64_t nnz,
                   const std::vector<uint16_t> &counts);
  bool badTile(const Instr &in, std::string what) {
    fault(in, "bad sparse tile", std::move(what));
    return false;
  }
  /// dst[i] = a[i] op b[i * bStep] for n words at word indices d and a; b
  /// is SRAM or a scalar the caller read. A zero int32 divisor faults.
  Step binaryOp(const Instr &in, uint64_t n, uint32_t d, uint32_t a, const uint32_t *b,
                uint64_t bStep);
  /// dst[i] = f(a[i]) for the one-operand ops, n words at word indices d and a.
  void unaryOp(const Instr &in, uint64_t n, uint32_t d, uint32_t a);
  /// REDUCE_SUM/MAX/MIN of the n words at a, as a word of the instruction's type.
  uint32_t reduce(const Instr &in, uint64_t n, uint32_t a) const;
  /// SELECT: dst[i] = cond[i] != 0 ? a[i] : b[i], raw words.
  Step select(const Instr &in, uint64_t n);
  /// INDEX_COPY of n words from an m-word source through an index table.
  Step indexCopy(const Instr &in, uint64_t n, uint64_t m);
  /// Where the n words a result goes to: dst itself, or a scratch buffer
  /// when dst overlaps a source (whose words must all be read first).
  uint32_t *resultWords(uint32_t d, uint64_t n, bool overlaps) {
    static thread_local std::vector<uint32_t> scratch;
    if (!overlaps)
      return s_.sram + d;
    scratch.resize(n);
    return scratch.data();
  }
  int64_t eval(const Affine &a) const {
    // Unsigned arithmetic wraps instead of overflowing; the range checks catch garbage.
    uint64_t v = uint64_t(a.base);
    for (size_t k = 0; k < a.stride.size(); ++k) // Validate: no more strides than loops
      v += uint64_t(a.stride[k]) * s_.loops[s_.depth - 1 - k].iter;
    v += uint64_t(a.px) * px_ + uint64_t(a.py) * py_;
    return int64_t(v);
  }
  /// Predicates are resolved per PE before the run (PeState::view).
  bool guarded(const Instr &in) const {
    if (in.shortGuards != Instr::kLongGuards) { // as eval() sums them
      uint64_t trip = s_.depth ? s_.loops[s_.depth - 1].iter : 0;
      for (uint8_t k = 0; k < in.shortGuards; ++k) {
        const ShortGuard &g = in.shortGuard[k];
        uint64_t v = uint64_t(int64_t(g.base)) + uint64_t(int64_t(g.stride)) * trip +
                     uint64_t(int64_t(g.px)) * px_ + uint64_t(int64_t(g.py)) * py_;
        if (int64_t(v) < 0)
          return false;
      }
      return true;
    }
    for (const Affine &g : in.guard)
      if (eval(g) < 0)
        return false;
    return true;
  }
  /// Checks that operand k covers `words` words inside the kernel's SRAM and
  /// returns its first word index.
  bool span(const Instr &in, int k, uint64_t words, uint32_t &first) {
    int64_t addr = eval(in.addr[k]);
    // The PE's words in the arena end before the kernel's SRAM or at it.
    if (addr % 4 || addr < 0 || words > reg_.sramBytes ||
        uint64_t(addr) + words * 4 > reg_.sramBytes || uint64_t(addr) / 4 + words > s_.sramWords)
      return spanFault(in, k, words, addr);
    first = uint32_t(addr / 4);
    if (!in.async && words && s_.async.busy(s_.clock))
      join(first, first + uint32_t(words), -1);
    return true;
  }
  /// The fault of an operand that span() refuses; false. Apart, so that
  /// span()'s checks inline without its messages.
  [[gnu::cold, gnu::noinline]] bool spanFault(const Instr &in, int k, uint64_t words, int64_t addr);
  bool count(const Instr &in, const Affine &a, const char *what, uint64_t &out) {
    int64_t v = eval(a);
    // Bounding counts here keeps the operand-size products from overflowing.
    // Dropped words never touch SRAM, so only a sanity bound applies to them.
    int64_t limit = in.op == format::RECV_DROP ? int64_t(1) << 32 : int64_t(reg_.sramBytes);
    if (v < 0 || v > limit)
      return countFault(in, what, v);
    out = uint64_t(v);
    return true;
  }
  [[gnu::cold, gnu::noinline]] bool countFault(const Instr &in, const char *what, int64_t v);
  Step fault(const Instr &in, std::string kind, std::string what);
  float f(uint32_t word) const { return asF(s_.sram[word]); }
  /// Whether the matrix's elements are fp32 words (a sparse tile's values
  /// are read as its storage packs them).
  static bool fp32Words(const Instr &in) { return valueStorage(in.storage) == format::STORE_F32; }
  /// Words that `elements` values of the instruction's storage take.
  static uint64_t storedWords(const Instr &in, uint64_t elements) {
    return fp32Words(in) ? elements : (elements + 1) / 2;
  }
  static format::SparseValues sparseValues(const Instr &in) {
    return fp32Words(in) ? format::SparseValues::Words : format::SparseValues::Halves;
  }
  /// Elements [first, first + count) of the array at word `word`, as fp32:
  /// in place for fp32 storage, else widened into `buf` (element i is half
  /// i of the little-endian words, the even one in the low half).
  const float *elements(const Instr &in, uint32_t word, uint64_t first, uint64_t count,
                        std::vector<float> &buf) const {
    const uint32_t *w = s_.sram + word;
    if (fp32Words(in))
      return reinterpret_cast<const SramF32 *>(w) + first;
    buf.resize(count);
    const SramU16 *h = reinterpret_cast<const SramU16 *>(w) + first;
    float *out = buf.data();
    if (valueStorage(in.storage) == format::STORE_F16)
      for (uint64_t i = 0; i < count; ++i)
        out[i] = halfToFloat(h[i]);
    else
      for (uint64_t i = 0; i < count; ++i)
        out[i] = asF(uint32_t(h[i]) << 16);
    return out;
  }
  SramF32 *words(uint32_t word) { return reinterpret_cast<SramF32 *>(s_.sram + word); }
  void setF(uint32_t word, float v) { s_.sram[word] = asW(v); }
  /// Busy time is the core's: an async op's cycles are its engine's.
  void charge(const Instr &in, uint64_t cost, uint64_t wait = 0) {
    if (s_.trace && s_.trace->size() < traceLimit_)
      s_.trace->push_back(TraceEvent{reg_.wafer, m_.peRegion[reg_.firstPe], in.op, in.color,
                                     s_.clock, cost + wait, wait, in.async});
    s_.clock += cost + wait;
    if (!in.async)
      s_.busy += cost;
    if (s_.watch)
      noteStore(in);
  }
  /// Records the end of the instruction just charged as the time of the
  /// watched words it wrote.
  void noteStore(const Instr &in);
  /// SEND, RECV, RECV_ADD or RECV_DROP on the async engine (Instr::async).
  Step runAsync(const Instr &in, uint64_t n);
  void awaitSlot() { s_.async.awaitSlot(s_.clock); }
  /// The async op `in` over SRAM words [lo, hi) ran on the engine up to the
  /// clock.
  void inFlight(const Instr &in, uint32_t lo, uint32_t hi) {
    s_.async.start(s_.clock, lo, hi, int32_t(in.color), int32_t(in.forward));
  }
  void join(uint32_t lo, uint32_t hi, int64_t color) { s_.async.join(s_.clock, lo, hi, color); }
  void joinColors(const Instr &in) {
    if (!in.async && s_.async.busy(s_.clock)) {
      join(0, 0, in.color);
      join(0, 0, in.forward);
    }
  }
  uint64_t vectorCost(uint64_t n) const { return ceilDiv(n, m_.simd); }

  const Model &m_;
  const Region &reg_;
  PeState &s_;
  Outbox &outbox_;
  const VisitLimit &limit_;
  uint32_t traceLimit_;
  uint64_t maxCyclesOption_, maxCycles_, maxInstructions_;
  uint32_t px_, py_;
  bool batching_;
  bool batchesStopped_ = false; ///< a batch met a limit: the visit runs on without
};

} // namespace wsc::runtime::detail

#endif
