// The region engine (RunOptions::Engine::Region, docs/runtime.md): a PE's
// loop nest run at once, each instruction over all its trips, with its
// cycles counted as the interpreter counts them.
#include "Core.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <map>

namespace wsc::runtime::detail {
namespace {

using format::Op;

typedef float V8 __attribute__((vector_size(32)));

/// Columns [c, c + 16) of four vectors' products (x and sums a vector's
/// `stride` and `cols` words apart), summed in registers in ascending row.
/// GCC's vector types keep each lane's adds in that order on every clone.
__attribute__((always_inline)) inline void vecmatBlock16(float *__restrict sums, const float *w,
                                                         const float *x, uint64_t rows,
                                                         uint64_t stride, uint64_t cols,
                                                         uint64_t c) {
  V8 a0 = {}, b0 = {}, a1 = {}, b1 = {}, a2 = {}, b2 = {}, a3 = {}, b3 = {};
  const float *x1 = x + stride, *x2 = x1 + stride, *x3 = x2 + stride;
  for (uint64_t r = 0; r < rows; ++r) {
    V8 lo, hi;
    std::memcpy(&lo, w + r * cols + c, sizeof lo);
    std::memcpy(&hi, w + r * cols + c + 8, sizeof hi);
    // Scalars: each times a vector is broadcast to it (V8{} + x[r] would
    // add, an instruction more a row; a sum starting at +0 ends the same).
    float v0 = x[r], v1 = x1[r], v2 = x2[r], v3 = x3[r];
    a0 += v0 * lo, b0 += v0 * hi;
    a1 += v1 * lo, b1 += v1 * hi;
    a2 += v2 * lo, b2 += v2 * hi;
    a3 += v3 * lo, b3 += v3 * hi;
  }
  float *s0 = sums + c, *s1 = s0 + cols, *s2 = s1 + cols, *s3 = s2 + cols;
  std::memcpy(s0, &a0, 32), std::memcpy(s0 + 8, &b0, 32);
  std::memcpy(s1, &a1, 32), std::memcpy(s1 + 8, &b1, 32);
  std::memcpy(s2, &a2, 32), std::memcpy(s2 + 8, &b2, 32);
  std::memcpy(s3, &a3, 32), std::memcpy(s3 + 8, &b3, 32);
}

/// Columns [c, c + 8) of kN vectors' products (as vecmatBlock16's), each
/// vector's sums a V8 with a column a lane: W's rows of those columns in
/// `padded`, 8 floats each. All 8 lanes are stored, past the last column
/// too (see vecmatTrips).
template <uint64_t kN>
__attribute__((always_inline)) inline void
vecmatNarrow(float *__restrict sums, const float *padded, const float *x, uint64_t rows,
             uint64_t stride, uint64_t cols, uint64_t c) {
  V8 a[kN] = {};
  for (uint64_t r = 0; r < rows; ++r) {
    V8 wr;
    std::memcpy(&wr, padded + 8 * r, sizeof wr);
    for (uint64_t v = 0; v < kN; ++v)
      a[v] += x[v * stride + r] * wr;
  }
  for (uint64_t v = 0; v < kN; ++v)
    std::memcpy(sums + v * cols + c, &a[v], sizeof a[v]);
}

/// out[i] += x[i], each word's add alone as ADD adds it. Inline, without
/// fastF32's dispatch and overlap checks: a batch calls it per trip on a
/// few words, and out (a trip's own words) never overlaps x (a log or the
/// products).
inline void addWords(SramF32 *__restrict out, const SramF32 *__restrict x, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    out[i] = out[i] + x[i];
}

/// VECMAT of `trips` vectors (`stride` words apart in x) by one W into `sums`
/// (`cols` words apart, each written, and 8 more words of room): vecmatRows'
/// sums bit for bit (each column's products added in ascending row), four
/// vectors at a time over blocks of 16 columns held in registers, each row
/// of W loaded once for four; the columns past the blocks (all of a narrow
/// W's) eight at a time for eight vectors, then four. `padded`: room for 8
/// * rows floats.
WSC_MULTIVERSION void vecmatTrips(float *__restrict sums, const float *w, const float *x,
                                  uint64_t trips, uint64_t rows, uint64_t stride, uint64_t cols,
                                  float *__restrict padded) {
  uint64_t wide = cols / 16 * 16, quads = trips / 4 * 4;
  // Eight columns a store: past a vector's last column it writes the next
  // vector's first ones, which the columns before (in falling order), the
  // blocks and the trips past the quads write after it.
  for (uint64_t g = (cols - wide + 7) / 8; g-- > 0;) {
    uint64_t c = wide + 8 * g;
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t l = 0; l < 8; ++l)
        padded[8 * r + l] = c + l < cols ? w[r * cols + c + l] : 0.0f;
    uint64_t t = 0;
    for (; t + 8 <= quads; t += 8)
      vecmatNarrow<8>(sums + t * cols, padded, x + t * stride, rows, stride, cols, c);
    if (t < quads)
      vecmatNarrow<4>(sums + t * cols, padded, x + t * stride, rows, stride, cols, c);
  }
  for (uint64_t t = 0; t < quads; t += 4)
    for (uint64_t c = 0; c < wide; c += 16)
      vecmatBlock16(sums + t * cols, w, x + t * stride, rows, stride, cols, c);
  for (uint64_t t = quads; t < trips; ++t) {
    std::fill_n(sums + t * cols, cols, 0.0f);
    vecmatRows(sums + t * cols, w, x + t * stride, rows, cols);
  }
}

/// The most trips a batch takes: its places and times grow with them.
constexpr uint64_t kMaxBatchTrips = 4096;
/// The fewest: a batch's setup costs more than a few trips interpreted (a
/// linear's parity loop, entered a token at a time, is left to run so).
constexpr uint64_t kMinBatchTrips = 4;

/// The ops a batch runs, with the operands they take (Core::Batch::Op).
bool batchable(const Instr &in) {
  if (!in.guard.empty())
    return false;
  switch (in.op) {
  case format::RECV:
  case format::RECV_ADD:
  case format::RECV_DROP:
  case format::SEND:
    return true;
  case format::RECV_VECMAT:
    return !in.async && in.storage == format::STORE_F32;
  case format::ADD:
  case format::SUB:
  case format::MUL:
  case format::DIV:
  case format::MAX:
  case format::MIN:
  case format::EXP:
  case format::ERF:
  case format::TANH:
  case format::SQRT:
  case format::RSQRT:
  case format::NEG:
  case format::GELU:
  case format::GELU_TANH:
  case format::LOG:
  case format::ABS:
  case format::SIN:
  case format::COS:
  case format::SIGMOID:
  case format::RECIPROCAL:
  case format::RELU:
  case format::FLOOR:
  case format::CEIL:
    return in.type == format::ELEM_F32;
  case format::COPY:
    return true;
  default:
    return false;
  }
}

/// Whether an op sends a message at each trip (a SEND, or a receive that forwards).
bool sends(const Instr &in) {
  return in.op == format::SEND || (in.op != format::RECV_VECMAT && in.forward >= 0);
}

/// Whether an op takes words from a queue at each trip.
bool receives(Op op) {
  return op == format::RECV || op == format::RECV_ADD || op == format::RECV_DROP ||
         op == format::RECV_VECMAT;
}

bool isBinaryF32(Op op) {
  return op == format::ADD || op == format::SUB || op == format::MUL || op == format::DIV ||
         op == format::MAX || op == format::MIN;
}
} // namespace

/// A loop nest that Core::batchNest runs: one LOOP, or one around a single
/// inner LOOP (a token loop around a parity loop); trip t is inner trip
/// t % innerTrips of outer trip t / innerTrips.
struct Core::Batch {
  uint32_t outerPc = 0, loopPc = 0; ///< loopPc: the innermost LOOP
  bool two = false;
  uint64_t innerTrips = 0, outerTrips = 0, trips = 0;
  /// An operand: word `at` at trip 0, `inner` more per inner trip and
  /// `outer` per outer trip; `words` of them.
  struct Operand {
    int64_t at = 0, inner = 0, outer = 0;
    uint64_t words = 0;
    bool reads = false, writes = false;
    uint32_t word(uint64_t in, uint64_t out) const {
      return uint32_t(at + inner * int64_t(in) + outer * int64_t(out));
    }
    /// Its first word at the trip where it is lowest, and where it is highest.
    uint64_t lowest(const Batch &b) const {
      return uint64_t(at + std::min<int64_t>(inner * int64_t(b.innerTrips - 1), 0) +
                      std::min<int64_t>(outer * int64_t(b.outerTrips - 1), 0));
    }
    uint64_t highest(const Batch &b) const {
      return uint64_t(at + std::max<int64_t>(inner * int64_t(b.innerTrips - 1), 0) +
                      std::max<int64_t>(outer * int64_t(b.outerTrips - 1), 0));
    }
  };
  struct Op {
    const Instr *in = nullptr;
    uint32_t pc = 0;
    uint64_t n = 0, m = 0;
    Operand operand[3];
    uint32_t operands = 0;
    RecvQueue *q = nullptr; ///< what it receives from
    uint32_t reader = 0;    ///< of q, in `readers`
    int32_t sendRank = -1;  ///< its message's place among a trip's, or -1
    uint64_t cost = 0;      ///< of a vector op, or of a RECV_VECMAT's n rows
    /// The SRAM words its writes may reach over all the trips.
    uint64_t writeLo = UINT64_MAX, writeHi = 0;
  };
  std::vector<Op> ops;
  /// Per trip and op and operand: the SRAM word, or ~(word of `store`).
  std::vector<uint64_t> place;
  /// The words the trips wrote that no later trip writes again, in trip
  /// order: SRAM words [lo, hi) kept from `at` in `store` until the nest
  /// ends.
  struct Span {
    uint32_t lo, hi;
    uint64_t at;
  };
  std::vector<Span> spans;
  std::vector<uint32_t> store;
  std::vector<uint64_t> sendTime; ///< per trip and op: its SEND's or forward's time
  /// A receive's words in one message: words [i, i + take) of the n, the
  /// first arriving at `arrives` (with its walk's delay).
  struct Run {
    const uint32_t *src;
    uint32_t i, take;
    uint64_t arrives;
  };
  /// A reader's way through its log over a batch's trips: the runs of its
  /// ops, in trip and op order, and where it ends. The runs follow from the
  /// log, the filter and the words it passed before, so the PEs that read
  /// one multicast stream alike (a kernel's row) share one walk.
  struct Walk {
    const MessageLog *log = nullptr;
    uint32_t first = 0, count = 0, period = 0;
    uint16_t links = 0;
    uint64_t taken = 0, trips = 0;
    std::vector<uint64_t> takes; ///< its ops' n, in a trip's order
    uint32_t delay = 0;          ///< that the arrivals count
    std::vector<Run> runs;
    LogCursor end;
    uint32_t endPos = 0;
    uint64_t lastUse = 0;
    bool matches(const RecvQueue &q, const std::vector<uint64_t> &n, uint64_t tripCount) const {
      return log == q.log.load(std::memory_order_relaxed) && first == q.first && count == q.count &&
             period == q.period && links == q.links && taken == q.taken && trips == tripCount &&
             takes == n;
    }
  };
  /// A queue's reader, shared by the ops that receive from it in trip order.
  struct Reader {
    RecvQueue *q = nullptr;
    uint64_t words = 0;          ///< that all the trips take
    std::vector<uint64_t> takes; ///< its ops' n, in a trip's order
    const Walk *walk = nullptr;
    int64_t delay = 0; ///< this queue's delay less the walk's
    uint32_t next = 0; ///< its next run
    /// Moves the queue's own reader past the words read, leaving the
    /// segments passed: the data has read them.
    void commit() {
      for (MessageLog::Segment *s = q->read.seg; s != walk->end.seg;) {
        MessageLog::Segment *next = s->next.load(std::memory_order_acquire);
        MessageLog::leave(s);
        s = next;
      }
      q->read = walk->end;
      q->pos = walk->endPos;
      q->took(words);
      q->leaveIfDrained();
    }
  };
  std::vector<Reader> readers;
  uint32_t sendsPerTrip = 0;
  uint64_t wordsSentPerTrip = 0;
  /// Per trip and op: its runs, [first, last) of its reader's walk's.
  std::vector<std::pair<uint32_t, uint32_t>> runSpan;
  struct Runs {
    const Run *first, *last;
    const Run *begin() const { return first; }
    const Run *end() const { return last; }
  };
  Runs runsOf(uint64_t t, size_t j) const {
    auto [first, last] = runSpan[t * ops.size() + j];
    const Run *runs = readers[ops[j].reader].walk->runs.data();
    return Runs{runs + first, runs + last};
  }
  /// Gives each reader its walk: one the thread walked before from where
  /// the queue is now, or a new one.
  void walkReaders(const Model &m);
  /// The walks a thread keeps within a run (from forgetWalks), the least
  /// recently used replaced: a row's PEs take turns with their own queues'
  /// walks in between.
  static thread_local std::deque<Walk> walks;
  static thread_local uint64_t walkBatches; ///< batches that took walks
  static constexpr size_t kWalks = 8;
  /// What the trips' times move: the PE's clocks, or a trial's.
  struct Clocks {
    uint64_t clock = 0, busy = 0, messages = 0;
    AsyncEngine async;
  };
  /// Times the trips from `c` (sendTime, runSpan). kMarked: each time t is
  /// held as 2t + 1 when it follows from the arrivals alone, 2t when from
  /// the clocks `c` started at (a max takes the later, and of two alike
  /// the arrivals').
  template <bool kMarked> void timeTrips(Clocks &c, uint64_t fmac);
  /// A batch's times that follow from its arrivals alone, not from the
  /// clock its PE started at (docs/runtime.md, The region engine): another PE's
  /// batch keyed alike whose arrivals are these moved by d takes these
  /// times moved by d.
  struct Timing {
    std::vector<int64_t> key;
    std::vector<uint64_t> shape, arrivals; ///< per reader's run: i << 32 | take; arrives + delay
    std::vector<size_t> readerEnds;        ///< where each reader's runs end in them
    std::vector<uint64_t> sendTime;
    std::vector<std::pair<uint32_t, uint32_t>> runSpan;
    uint64_t startClock = 0; ///< the latest start clock they hold for
    Clocks end;              ///< busy and messages: what the trips add
    bool asyncOps = false;
    uint64_t lastUse = 0;
  };
  static thread_local std::deque<Timing> timings;
  static constexpr size_t kTimings = 8;
  /// Per nest (region code, outer pc): times tried for a Timing and not found one.
  static thread_local std::map<std::pair<const void *, uint32_t>, uint32_t> untimed;
  std::vector<int64_t> timingKey;
  void keyTiming(const void *code);
  /// The shift d of a Timing whose arrivals this batch's are, moved by d.
  bool matches(const Timing &tm, int64_t &d) const;
  /// Takes a Timing's times moved by d.
  void takeTiming(const Timing &tm, int64_t d, Clocks &c);
  /// Keeps this batch's times, marked as following from its arrivals
  /// alone, as a Timing for a PE whose clock starts no later than `startClock`.
  void keepTiming(const Clocks &end, uint64_t startClock, bool asyncOps);
  /// Times the trips from `c`: a Timing's moved, when one matches.
  void time(Clocks &c, uint64_t fmac, const void *code);
  /// Times the trips from `c`, marked, and keeps them as a Timing where
  /// they follow from the arrivals alone (else false).
  bool timeMarked(Clocks &c, uint64_t fmac);
  /// Op j's n words of trip 0, when every trip's are one message's, each
  /// `stride` words after the trip before's (a log's messages of one size):
  /// read there, not gathered. Null otherwise.
  const uint32_t *wordsInPlace(size_t j, uint64_t n, uint64_t &stride) const {
    const uint32_t *first = nullptr;
    for (uint64_t t = 0; t < trips; ++t) {
      Runs r = runsOf(t, j);
      if (r.last - r.first != 1 || r.first->take != n)
        return nullptr;
      const uint32_t *src = r.first->src;
      if (t == 0)
        first = src;
      else if (t == 1 && src > first)
        stride = uint64_t(src - first);
      else if (src != first + t * stride)
        return nullptr;
    }
    return first;
  }
  /// Gives each receive the reader of its queue and each message its place
  /// in a trip's.
  void connect() {
    readers.clear();
    sendsPerTrip = 0, wordsSentPerTrip = 0;
    for (Op &op : ops) {
      op.sendRank = sends(*op.in) ? int32_t(sendsPerTrip++) : -1;
      wordsSentPerTrip += sends(*op.in) ? op.n : 0;
      if (!op.q)
        continue;
      size_t r = 0;
      while (r < readers.size() && readers[r].q != op.q)
        ++r;
      if (r == readers.size())
        readers.emplace_back().q = op.q;
      op.reader = uint32_t(r);
      readers[r].words += op.n * trips;
      readers[r].takes.push_back(op.n);
    }
  }
  /// Whether a trip of the nest may write a word of [lo, hi).
  bool writes(uint64_t lo, uint64_t hi) const {
    for (const Op &w : ops)
      if (w.writeLo < hi && lo < w.writeHi)
        return true;
    return false;
  }
  /// Places trip t's operands (inner trip `in` of outer trip `out`) after
  /// the `stored` words of the trips before; false when it does not keep
  /// its writes to itself.
  bool placeTrip(uint64_t t, uint64_t in, uint64_t out, uint64_t &stored);
  /// After trip 0 is placed: whether every trip places as it does, moved
  /// by the writes' strides. So when all writes move alike, a read of a
  /// trip's own words moves with them, and any other read meets no write.
  /// `moves`: a write, null when none.
  bool tripsAlike(const Operand *&moves) const;
  /// What the places follow from: the trips, and each operand's words and
  /// how they move. A batch keyed as the one before (the next PE of a row,
  /// mostly) keeps its places.
  std::vector<int64_t> placeKey, placedKey;
  void keyPlaces();
  uint32_t *where(size_t t, size_t op, int k, uint32_t *sram) {
    uint64_t p = place[(t * ops.size() + op) * 3 + size_t(k)];
    return int64_t(p) >= 0 ? sram + p : store.data() + ~p;
  }
};

bool Core::batchShape(Batch &b) {
  if (s_.watch || s_.trace)
    return false;
  const std::vector<Instr> &code = reg_.code;
  b.outerPc = s_.pc - 1;
  const Instr &outer = code[b.outerPc];
  uint32_t first = s_.view[b.outerPc + 1] & ~kIdleLoop;
  b.loopPc = b.outerPc;
  b.two = first != outer.jump && code[first].op == format::LOOP;
  if (b.two) {
    const Instr &inner = code[first];
    if ((s_.view[inner.jump + 1] & ~kIdleLoop) != outer.jump || !inner.guard.empty() ||
        (s_.view[first] & kIdleLoop) || inner.count == 0 || inner.count > kMaxBatchTrips)
      return never(b);
    b.loopPc = first;
  }
  // From the trip the outer LOOP is at, as many as a batch takes.
  uint64_t left = outer.count - s_.loops[s_.depth - 1].iter;
  b.innerTrips = b.two ? code[b.loopPc].count : std::min(left, kMaxBatchTrips);
  b.outerTrips = b.two ? std::min(left, kMaxBatchTrips / b.innerTrips) : 1;
  b.trips = b.innerTrips * b.outerTrips;
  if (b.trips < kMinBatchTrips)
    return false;
  b.ops.clear();
  uint32_t end = code[b.loopPc].jump;
  for (uint32_t p = s_.view[b.loopPc + 1] & ~kIdleLoop; p != end; p = s_.view[p + 1] & ~kIdleLoop) {
    if (!batchable(code[p]))
      return never(b);
    Batch::Op op;
    op.in = &code[p];
    op.pc = p;
    b.ops.push_back(op);
  }
  return !b.ops.empty();
}

bool Core::batchOperands(Batch &b) const {
  uint64_t limitWords = std::min<uint64_t>(reg_.sramBytes / 4, s_.sramWords);
  // A count the same at every trip, that count() takes.
  auto counted = [&](const Affine &a, uint64_t &out) {
    if ((!a.stride.empty() && a.stride[0]) || (b.two && a.stride.size() > 1 && a.stride[1]))
      return false;
    int64_t v = eval(a);
    out = uint64_t(v);
    return v >= 0 && v <= int64_t(reg_.sramBytes);
  };
  auto operand = [&](const Affine &a, uint64_t words, bool reads, bool writes, Batch::Operand &o) {
    int64_t at = eval(a); // the frames are at the nest's first trips
    int64_t inner = a.stride.empty() ? 0 : a.stride[0];
    int64_t outer = b.two && a.stride.size() > 1 ? a.stride[1] : 0;
    __int128 di = __int128(inner) * (b.innerTrips - 1), dout = __int128(outer) * (b.outerTrips - 1);
    __int128 lo = at + std::min<__int128>(di, 0) + std::min<__int128>(dout, 0);
    __int128 hi = at + std::max<__int128>(di, 0) + std::max<__int128>(dout, 0);
    if (at % 4 || inner % 4 || outer % 4 || lo < 0 || hi / 4 + words > limitWords)
      return false;
    o = Batch::Operand{at / 4, inner / 4, outer / 4, words, reads, writes};
    return true;
  };
  bool ok = true;
  if (b.two)
    s_.loops[s_.depth++] = LoopFrame{0, uint32_t(b.innerTrips)};
  for (Batch::Op &op : b.ops) {
    const Instr &in = *op.in;
    Op code = in.op;
    op.writeLo = UINT64_MAX, op.writeHi = 0;
    bool usesM = code == format::RECV_VECMAT;
    if (!counted(in.n, op.n) || (usesM && !counted(in.m, op.m))) {
      ok = false;
      break;
    }
    uint64_t n = op.n;
    if (receives(code)) {
      op.q = s_.queue(in.color);
      ok = op.q != nullptr;
    }
    if (code == format::RECV_DROP) // no SRAM
      op.operands = 0;
    else if (code == format::SEND)
      ok = ok && operand(in.addr[0], n, true, false, op.operand[0]), op.operands = 1;
    else if (code == format::RECV || code == format::RECV_ADD)
      ok = ok && operand(in.addr[0], n, code == format::RECV_ADD, true, op.operand[0]),
      op.operands = 1;
    else if (usesM)
      ok = ok && operand(in.addr[0], op.m, in.count == 1, true, op.operand[0]) &&
           operand(in.addr[1], n * op.m, true, false, op.operand[1]),
      op.operands = 2, op.cost = ceilDiv(n * op.m, m_.fmac);
    else {
      op.operands = isBinaryF32(code) ? 3 : 2;
      ok = ok && operand(in.addr[0], n, false, true, op.operand[0]);
      for (uint32_t k = 1; ok && k < op.operands; ++k)
        ok = operand(in.addr[k], n, true, false, op.operand[k]);
      op.cost = isTranscendental(code) ? n * m_.transcendentalCycles : vectorCost(n);
    }
    if (!ok)
      break;
    const Batch::Operand &w = op.operand[0];
    if (w.writes && w.words) {
      for (uint64_t out : {uint64_t(0), b.outerTrips - 1})
        for (uint64_t in : {uint64_t(0), b.innerTrips - 1}) {
          uint64_t lo = w.word(in, out);
          op.writeLo = std::min(op.writeLo, lo);
          op.writeHi = std::max(op.writeHi, lo + w.words);
        }
    }
  }
  if (b.two)
    --s_.depth;
  return ok;
}

bool Core::Batch::placeTrip(uint64_t t, uint64_t in, uint64_t out, uint64_t &stored) {
  size_t k = ops.size(), mine = spans.size(); // this trip's spans
  auto within = [&](uint64_t lo, uint64_t hi) -> const Span * {
    for (size_t i = mine; i < spans.size(); ++i)
      if (lo >= spans[i].lo && hi <= spans[i].hi)
        return &spans[i];
    return nullptr;
  };
  for (size_t j = 0; j < k; ++j) {
    const Op &op = ops[j];
    // An op reads its sources (and a read-modify-write dst) before it writes.
    for (bool writing : {false, true})
      for (uint32_t o = 0; o < op.operands; ++o) {
        const Operand &x = op.operand[o];
        if (writing ? !x.writes || x.reads : !x.reads)
          continue;
        uint64_t lo = x.word(in, out), hi = lo + x.words;
        uint64_t &at = place[(t * k + j) * 3 + o];
        at = lo;
        if (!x.words)
          continue;
        if (const Span *s = within(lo, hi)) { // written earlier in this trip
          at = ~(s->at + (lo - s->lo));
          continue;
        }
        if (!writing) { // then no trip may write it
          if (writes(lo, hi))
            return false;
          continue;
        }
        for (size_t i = mine; i < spans.size(); ++i)
          if (lo < spans[i].hi && spans[i].lo < hi)
            return false; // part of a span: kept whole or apart
        spans.push_back(Span{uint32_t(lo), uint32_t(hi), stored});
        at = ~stored;
        stored += x.words;
      }
  }
  return true;
}

bool Core::Batch::tripsAlike(const Operand *&moves) const {
  size_t k = ops.size();
  moves = nullptr;
  for (const Op &op : ops)
    for (uint32_t o = 0; o < op.operands; ++o) {
      const Operand &x = op.operand[o];
      if (!x.words || !x.writes)
        continue;
      if (!moves)
        moves = &x;
      if (x.inner != moves->inner || x.outer != moves->outer)
        return false;
    }
  for (size_t j = 0; j < k; ++j)
    for (uint32_t o = 0; o < ops[j].operands; ++o) {
      const Operand &x = ops[j].operand[o];
      if (!x.words || x.writes)
        continue;
      if (int64_t(place[j * 3 + o]) < 0 ? x.inner != moves->inner || x.outer != moves->outer
                                        : writes(x.lowest(*this), x.highest(*this) + x.words))
        return false;
    }
  return true;
}

void Core::Batch::keyPlaces() {
  placeKey.assign({int64_t(trips), int64_t(innerTrips), int64_t(ops.size())});
  for (const Op &op : ops)
    for (uint32_t o = 0; o < op.operands; ++o) {
      const Operand &x = op.operand[o];
      placeKey.insert(placeKey.end(), {x.at, x.inner, x.outer, int64_t(x.words),
                                       int64_t(x.reads) | int64_t(x.writes) << 1});
    }
}

bool Core::batchPlaces(Batch &b) const {
  b.keyPlaces();
  if (b.placeKey == b.placedKey)
    return true;
  b.placedKey.clear();
  if (!placeAll(b))
    return false;
  b.placedKey = b.placeKey;
  return true;
}

bool Core::placeAll(Batch &b) const {
  size_t k = b.ops.size();
  b.place.assign(b.trips * k * 3, 0);
  b.spans.clear();
  uint64_t stored = 0;
  if (!b.placeTrip(0, 0, 0, stored))
    return false;
  const Batch::Operand *w;
  if (b.tripsAlike(w)) {
    // Trip t's places and spans are trip 0's, moved with the writes. A
    // trip whose words a later trip writes again leaves none of them: with
    // no move per outer trip only the last outer trip's spans are written
    // back, with no move at all only the last trip's.
    size_t firstSpans = b.spans.size();
    uint64_t perTrip = stored;
    uint64_t live = !w || (w->inner == 0 && w->outer == 0) ? 1
                    : w->outer == 0                        ? b.innerTrips
                                                           : b.trips;
    uint64_t firstLive = b.trips - live;
    for (uint64_t t = 1, in = 1 % b.innerTrips, out = in == 0; t < b.trips;
         ++t, in = in + 1 == b.innerTrips ? 0 : in + 1, out += in == 0) {
      int64_t move = w ? w->inner * int64_t(in) + w->outer * int64_t(out) : 0;
      for (size_t i = 0; i < firstSpans && t >= firstLive; ++i) {
        Batch::Span s = b.spans[i];
        b.spans.push_back(
            Batch::Span{uint32_t(s.lo + move), uint32_t(s.hi + move), s.at + t * perTrip});
      }
      for (size_t j = 0; j < k; ++j)
        for (uint32_t o = 0; o < b.ops[j].operands; ++o) {
          uint64_t p0 = b.place[j * 3 + o];
          b.place[(t * k + j) * 3 + o] =
              int64_t(p0) < 0 ? ~(~p0 + t * perTrip) : b.ops[j].operand[o].word(in, out);
        }
    }
    if (firstLive > 0) // trip 0's spans were the pattern
      b.spans.erase(b.spans.begin(), b.spans.begin() + std::ptrdiff_t(firstSpans));
    b.store.resize(perTrip * b.trips);
    return true;
  }
  for (uint64_t t = 1, in = 1 % b.innerTrips, out = in == 0; t < b.trips;
       ++t, in = in + 1 == b.innerTrips ? 0 : in + 1, out += in == 0)
    if (!b.placeTrip(t, in, out, stored))
      return false;
  b.store.resize(stored);
  return true;
}

thread_local std::deque<Core::Batch::Walk> Core::Batch::walks;
thread_local uint64_t Core::Batch::walkBatches = 0;

void forgetBatchWalks() { Core::forgetWalks(); }

void Core::forgetWalks() {
  Batch::walks.clear();
  Batch::walks.resize(Batch::kWalks);
  Batch::timings.clear();
  Batch::untimed.clear();
}

void Core::Batch::walkReaders(const Model &m) {
  uint64_t batch = ++walkBatches;
  for (Reader &r : readers) {
    const RecvQueue &q = *r.q;
    Walk *w = nullptr;
    for (Walk &c : walks)
      if (c.matches(q, r.takes, trips)) {
        w = &c;
        break;
      }
    if (!w) {
      // The least recently used that no reader of this batch holds.
      for (Walk &c : walks)
        if (c.lastUse != batch && (!w || c.lastUse < w->lastUse))
          w = &c;
      if (!w)
        w = &walks.emplace_back();
      w->log = q.log.load(std::memory_order_relaxed);
      w->first = q.first, w->count = q.count, w->period = q.period, w->links = q.links;
      w->taken = q.taken, w->trips = trips, w->takes = r.takes, w->delay = q.delay;
      w->runs.clear();
      LogCursor cur = q.read;
      uint32_t pos = q.pos;
      for (uint64_t t = 0; t < trips; ++t)
        for (uint64_t n : r.takes)
          eachRun(m, q, cur, pos, n, false,
                  [&](const uint32_t *src, uint64_t i, uint64_t take, uint64_t arrives) {
                    w->runs.push_back(Run{src, uint32_t(i), uint32_t(take), arrives});
                  });
      w->end = cur, w->endPos = pos;
    }
    w->lastUse = batch;
    r.walk = w;
    r.delay = int64_t(q.delay) - int64_t(w->delay);
    r.next = 0;
  }
}

template <bool kMarked> void Core::Batch::timeTrips(Clocks &c, uint64_t fmac) {
  constexpr uint64_t kUnit = kMarked ? 2 : 1, kMark = kMarked ? 1 : 0;
  uint64_t &clock = c.clock;
  AsyncEngine &async = c.async;
  size_t k = ops.size();
  for (Reader &r : readers)
    r.next = 0;
  for (uint64_t t = 0, in = 0, out = 0; t < trips;
       ++t, in = in + 1 == innerTrips ? 0 : in + 1, out += in == 0) {
    for (size_t j = 0; j < k; ++j) {
      const Op &op = ops[j];
      const Instr &ins = *op.in;
      uint64_t n = op.n;
      uint64_t &time = sendTime[t * k + j];
      if (!ins.async) { // as span() and joinColors
        for (uint32_t o = 0; o < op.operands; ++o)
          if (op.operand[o].words && async.busy(clock)) {
            uint32_t lo = op.operand[o].word(in, out);
            async.join(clock, lo, lo + uint32_t(op.operand[o].words), -1);
          }
        if ((ins.op == format::SEND || op.q) && async.busy(clock)) {
          async.join(clock, 0, 0, ins.color);
          async.join(clock, 0, 0, ins.forward);
        }
      }
      uint64_t core = clock;
      if (ins.async) { // as runAsync
        async.awaitSlot(clock);
        core = clock;
        clock = std::max(core, async.free);
      }
      if (ins.op == format::SEND) {
        time = clock;
        ++c.messages;
        clock += n * kUnit;
        c.busy += ins.async ? 0 : n;
      } else if (op.q) {
        uint64_t end = clock + n * kUnit, done = clock;
        bool fused = ins.op == format::RECV_VECMAT;
        Reader &rd = readers[op.reader];
        const Run *runs = rd.walk->runs.data();
        uint32_t first = rd.next;
        for (uint64_t got = 0; got < n; got += runs[rd.next++].take) {
          const Run &r = runs[rd.next];
          uint64_t arrives = (r.arrives + uint64_t(rd.delay)) * kUnit + kMark;
          end = std::max(end, arrives + (n - r.i) * kUnit);
          if (fused) // rows of a message's words, all n of them mostly
            done = std::max(done, arrives) +
                   (r.take == n ? op.cost : ceilDiv(uint64_t(r.take) * op.m, fmac)) * kUnit;
        }
        runSpan[t * k + j] = {first, rd.next};
        if (fused) {
          clock = std::max(done, clock + op.cost * kUnit);
          c.busy += op.cost;
        } else {
          if (ins.forward >= 0) {
            time = end - n * kUnit;
            ++c.messages;
          }
          clock = end;
          c.busy += ins.async ? 0 : n;
        }
      } else {
        clock += op.cost * kUnit;
        c.busy += op.cost;
      }
      if (ins.async) {
        uint32_t lo = op.operands ? op.operand[0].word(in, out) : 0;
        async.start(clock, lo, op.operands ? lo + uint32_t(n) : lo, int32_t(ins.color),
                    int32_t(ins.forward));
        clock = core;
      }
    }
  }
}

thread_local std::deque<Core::Batch::Timing> Core::Batch::timings;
thread_local std::map<std::pair<const void *, uint32_t>, uint32_t> Core::Batch::untimed;

namespace {
/// An async engine that no op of a batch can wait for: whatever it ran
/// ended by `clock`, as for one that ran nothing.
bool idleBy(const AsyncEngine &a, uint64_t clock) {
  return a.free <= clock && a.last.end <= clock && a.before.end <= clock;
}
/// A nest that did not keep a Timing this often is timed unmarked.
constexpr uint32_t kUntimedTries = 4;
/// The times of an async engine's ops.
std::array<uint64_t *, 3> asyncTimes(AsyncEngine &a) {
  return {&a.free, &a.last.end, &a.before.end};
}
} // namespace

void Core::Batch::keyTiming(const void *code) {
  timingKey = placeKey;
  timingKey.insert(timingKey.end(), {int64_t(reinterpret_cast<intptr_t>(code)), int64_t(outerPc)});
  for (const Op &op : ops)
    timingKey.insert(timingKey.end(), {int64_t(op.pc), int64_t(op.n), int64_t(op.m)});
}

bool Core::Batch::matches(const Timing &tm, int64_t &d) const {
  if (tm.key != timingKey || tm.readerEnds.size() != readers.size())
    return false;
  auto moved = [&](const Reader &r, size_t i, size_t at) {
    const Run &run = r.walk->runs[i];
    return (uint64_t(run.i) << 32 | run.take) == tm.shape[at]
               ? int64_t(run.arrives + uint64_t(r.delay) - tm.arrivals[at])
               : INT64_MIN;
  };
  // Each reader's runs, first and last, before all of them: a batch of
  // another row mostly differs there.
  d = moved(readers[0], 0, 0);
  for (size_t j = 0, at = 0; j < readers.size(); at = tm.readerEnds[j++]) {
    size_t runs = readers[j].walk->runs.size();
    if (d == INT64_MIN || runs != tm.readerEnds[j] - at || moved(readers[j], 0, at) != d ||
        moved(readers[j], runs - 1, at + runs - 1) != d)
      return false;
  }
  for (size_t j = 0, at = 0; j < readers.size(); at = tm.readerEnds[j++])
    for (size_t i = 0; i < readers[j].walk->runs.size(); ++i)
      if (moved(readers[j], i, at + i) != d)
        return false;
  return true;
}

void Core::Batch::takeTiming(const Timing &tm, int64_t d, Clocks &c) {
  // (Only the sends' are read: the others move too.)
  for (size_t i = 0; i < sendTime.size(); ++i)
    sendTime[i] = tm.sendTime[i] + uint64_t(d);
  runSpan = tm.runSpan;
  c.clock = tm.end.clock + uint64_t(d);
  c.busy += tm.end.busy, c.messages += tm.end.messages;
  if (tm.asyncOps) {
    c.async = tm.end.async;
    for (uint64_t *t : asyncTimes(c.async))
      *t += uint64_t(d);
  }
}

void Core::Batch::keepTiming(const Clocks &end, uint64_t startClock, bool asyncOps) {
  Timing *tm = timings.size() < kTimings ? &timings.emplace_back() : nullptr;
  for (Timing &t : timings)
    if (!tm || t.lastUse < tm->lastUse)
      tm = &t;
  tm->key = timingKey;
  tm->shape.clear(), tm->arrivals.clear(), tm->readerEnds.clear();
  for (const Reader &r : readers) {
    for (const Run &run : r.walk->runs) {
      tm->shape.push_back(uint64_t(run.i) << 32 | run.take);
      tm->arrivals.push_back(run.arrives + uint64_t(r.delay));
    }
    tm->readerEnds.push_back(tm->shape.size());
  }
  tm->sendTime = sendTime;
  tm->runSpan = runSpan;
  tm->startClock = startClock;
  tm->end = end;
  tm->asyncOps = asyncOps;
  tm->lastUse = walkBatches;
}

void Core::Batch::time(Clocks &c, uint64_t fmac, const void *code) {
  keyTiming(code);
  int64_t d = 0;
  // A Timing moves with arrivals: every reader's first.
  bool arrivals =
      !readers.empty() && std::none_of(readers.begin(), readers.end(),
                                       [](const Reader &r) { return r.walk->runs.empty(); });
  bool idle = idleBy(c.async, c.clock);
  if (idle && arrivals)
    for (Timing &tm : timings)
      if (matches(tm, d) && int64_t(c.clock) - d <= int64_t(tm.startClock)) {
        tm.lastUse = walkBatches;
        takeTiming(tm, d, c);
        return;
      }
  uint32_t &tries = untimed[{code, outerPc}];
  if (!idle || !arrivals || tries >= kUntimedTries)
    return timeTrips<false>(c, fmac);
  if (!timeMarked(c, fmac))
    ++tries;
}

bool Core::Batch::timeMarked(Clocks &c, uint64_t fmac) {
  // From the first arrival (or the PE's clock, if later): times that
  // follow from the arrivals alone hold for any clock that starts no later,
  // this PE's, and, moved by d, for another PE's whose arrivals are these
  // moved by d (the timing is max-plus).
  uint64_t first = UINT64_MAX;
  for (const Reader &r : readers)
    first = std::min(first, r.walk->runs.front().arrives + uint64_t(r.delay));
  uint64_t start = std::max(c.clock, first);
  Clocks marked = c;
  marked.clock = 2 * start;
  for (uint64_t *t : asyncTimes(marked.async))
    *t *= 2;
  timeTrips<true>(marked, fmac);
  bool alone = marked.clock & 1;
  bool asyncOps = std::any_of(ops.begin(), ops.end(), [](const Op &op) { return op.in->async; });
  for (uint64_t *t : asyncTimes(marked.async))
    alone &= !asyncOps || (*t & 1), *t /= 2;
  for (size_t i = 0; i < sendTime.size();)
    for (const Op &op : ops)
      alone &= op.sendRank < 0 || (sendTime[i] & 1), sendTime[i++] /= 2;
  marked.clock /= 2;
  if (!alone && start != c.clock) { // not this PE's times
    timeTrips<false>(c, fmac);
    return false;
  }
  Clocks added = marked;
  added.busy -= c.busy, added.messages -= c.messages;
  c = marked;
  if (alone)
    keepTiming(added, start, asyncOps);
  return alone;
}

bool Core::batchTimes(Batch &b) {
  size_t k = b.ops.size();
  b.sendTime.resize(b.trips * k);
  b.walkReaders(m_);
  b.runSpan.resize(b.trips * k);
  // The trips' clocks run on copies, which the stores below cannot alias;
  // the PE takes them once every trip ran, and keeps its own otherwise.
  Batch::Clocks c{s_.clock, s_.busy, s_.messages, s_.async};
  b.time(c, m_.fmac, &reg_.code);
  // run() counts each op, the innermost END and, of a two-level nest, the
  // inner LOOP and the outer END of each outer trip.
  uint64_t instructions = s_.instructions + b.trips * (k + 1) + (b.two ? 2 * b.outerTrips : 0);
  // run() checks the limits before each instruction, LOOP and END included.
  // The clock at those checks never falls (an async op's clock goes back
  // only to where it started), so the last check holds for all of them.
  if (c.clock > maxCycles_ || instructions - 1 > maxInstructions_)
    return false;
  s_.clock = c.clock, s_.busy = c.busy, s_.instructions = instructions, s_.messages = c.messages;
  s_.async = c.async;
  return true;
}

void Core::batchData(Batch &b) {
  static thread_local std::vector<float> products;
  size_t k = b.ops.size();
  // The trips' messages go out in trip order, whatever op sent them.
  size_t firstMsg = outbox_.msgs.size();
  outbox_.msgs.resize(firstMsg + b.trips * b.sendsPerTrip);
  // Each op's messages lie together, trip after trip.
  size_t opWords = outbox_.words.size();
  outbox_.words.resize(opWords + b.trips * b.wordsSentPerTrip);
  auto message = [&](uint64_t t, size_t j, uint32_t color, uint32_t n) {
    size_t at = opWords + t * n;
    outbox_.msgs[firstMsg + t * b.sendsPerTrip + uint32_t(b.ops[j].sendRank)] =
        OutMsg{color, n, b.sendTime[t * k + j], at};
    return outbox_.words.data() + at;
  };
  auto send = [&](uint64_t t, size_t j, uint32_t color, const uint32_t *words, uint64_t n) {
    std::memcpy(message(t, j, color, uint32_t(n)), words, n * 4);
  };
  for (size_t j = 0; j < k; ++j) {
    const Batch::Op &op = b.ops[j];
    const Instr &in = *op.in;
    uint64_t n = op.n;
    if (j > 0 && b.ops[j - 1].sendRank >= 0)
      opWords += b.trips * b.ops[j - 1].n;
    if (in.op == format::RECV_VECMAT)
      batchProducts(b, j, products);
    for (uint64_t t = 0; t < b.trips; ++t) {
      uint32_t *dst = b.where(t, j, 0, s_.sram);
      switch (in.op) {
      case format::SEND:
        send(t, j, in.color, dst, n);
        break;
      case format::RECV_DROP: { // the words pass through, if on
        if (in.forward < 0)
          break;
        uint32_t *words = message(t, j, uint32_t(in.forward), uint32_t(n));
        for (const Batch::Run &r : b.runsOf(t, j))
          std::memcpy(words + r.i, r.src, r.take * 4);
        break;
      }
      case format::RECV:
      case format::RECV_ADD: {
        for (const Batch::Run &r : b.runsOf(t, j)) {
          if (in.op == format::RECV) {
            std::copy(r.src, r.src + r.take, dst + r.i);
            continue;
          }
          addWords(reinterpret_cast<SramF32 *>(dst + r.i), reinterpret_cast<const SramF32 *>(r.src),
                   r.take);
        }
        if (in.forward >= 0)
          send(t, j, uint32_t(in.forward), dst, n);
        break;
      }
      case format::RECV_VECMAT: {
        SramF32 *out = reinterpret_cast<SramF32 *>(dst);
        const float *sums = products.data() + t * op.m;
        if (in.count == 1)
          addWords(out, sums, op.m);
        else
          std::memcpy(out, sums, op.m * 4);
        break;
      }
      case format::COPY:
        std::memmove(dst, b.where(t, j, 1, s_.sram), n * 4);
        break;
      default: {
        SramF32 *out = reinterpret_cast<SramF32 *>(dst);
        const SramF32 *a = reinterpret_cast<const SramF32 *>(b.where(t, j, 1, s_.sram));
        if (isBinaryF32(in.op))
          fastF32(in.op, out, a, reinterpret_cast<const SramF32 *>(b.where(t, j, 2, s_.sram)), 1,
                  n);
        else
          unaryF32(in.op, out, a, n);
      }
      }
    }
  }
  for (Batch::Reader &r : b.readers)
    r.commit();
  // The trips' writes, in trip order: each word ends as the last trip left it.
  for (const Batch::Span &s : b.spans)
    std::memcpy(s_.sram + s.lo, b.store.data() + s.at, (s.hi - s.lo) * 4);
}

void Core::batchProducts(Batch &b, size_t j, std::vector<float> &products) {
  static thread_local std::vector<float> xs, padded;
  const Batch::Op &op = b.ops[j];
  uint64_t n = op.n, m = op.m;
  // Sized, not cleared: the products write every sum (and past the last).
  products.resize(b.trips * m + 8);
  if (!n) {
    std::fill(products.begin(), products.end(), 0.0f);
    return;
  }
  uint64_t stride = 0;
  const float *x = reinterpret_cast<const SramF32 *>(b.wordsInPlace(j, n, stride));
  if (!x) {
    xs.resize(b.trips * n);
    for (uint64_t t = 0; t < b.trips; ++t)
      for (const Batch::Run &r : b.runsOf(t, j))
        std::memcpy(xs.data() + t * n + r.i, r.src, r.take * 4);
    x = xs.data(), stride = n;
  }
  auto tile = [&](uint64_t t) {
    return reinterpret_cast<const SramF32 *>(b.where(t, j, 1, s_.sram));
  };
  if (op.operand[1].inner == 0 && op.operand[1].outer == 0) { // one W for every trip
    padded.resize(8 * n);
    vecmatTrips(products.data(), tile(0), x, b.trips, n, stride, m, padded.data());
    return;
  }
  std::fill(products.begin(), products.end(), 0.0f);
  for (uint64_t t = 0; t < b.trips; ++t)
    vecmatRows(products.data() + t * m, tile(t), x + t * stride, n, m);
}

bool Core::never(Batch &b) {
  s_.unbatchable = b.outerPc + 1;
  return false;
}

bool Core::tooFewWords(const Batch &b) {
  for (const Batch::Op &op : b.ops) {
    // (A count that moves with the trips waits for batchOperands, which
    // places the inner loop's frame.)
    if (!receives(op.in->op) || !op.in->n.stride.empty())
      continue;
    // A trip takes at least these words from the queue (cutBatch's perUnit / unit).
    int64_t n = eval(op.in->n);
    RecvQueue *q = s_.queue(op.in->color);
    if (n > 0 && q && q->available() / uint64_t(n) < kMinBatchTrips)
      return true;
  }
  return false;
}

bool Core::cutBatch(Batch &b) {
  // Whole trips of the outer loop: `units` of `unit` trips each.
  uint64_t unit = b.innerTrips, units = b.outerTrips;
  if (!b.two)
    unit = 1, units = b.innerTrips;
  uint64_t fit = units;
  for (Batch::Reader &r : b.readers)
    if (uint64_t perUnit = r.words / units)
      fit = std::min(fit, r.q->available() / perUnit);
  // Short of the SEND where run() would yield (the times need not check
  // it): the run goes on from there.
  auto budget = [&](uint64_t limit, uint64_t used, uint64_t perUnit) {
    if (perUnit)
      fit = std::min(fit, used < limit ? (limit - 1 - used) / perUnit : 0);
  };
  budget(limit_.sends, outbox_.msgs.size(), b.sendsPerTrip * unit);
  budget(limit_.words, outbox_.words.size(), b.wordsSentPerTrip * unit);
  if (fit == units)
    return true;
  if (fit * unit < kMinBatchTrips)
    return false;
  (b.two ? b.outerTrips : b.innerTrips) = fit;
  b.trips = fit * unit;
  if (!batchOperands(b))
    return false;
  b.connect();
  return true;
}

bool Core::batchNest() {
  static thread_local Batch b;
  if (batchesStopped_ || s_.unbatchable == s_.pc || !batchShape(b) || tooFewWords(b))
    return false;
  // Ops, operands or places outside a batch's do not change from trip to
  // trip; a time limit or the visit's send limit holds for the visit.
  if (!batchOperands(b))
    return never(b);
  b.connect();
  if (!cutBatch(b))
    return false;
  if (!batchPlaces(b))
    return never(b);
  if (!batchTimes(b)) {
    batchesStopped_ = true;
    return false;
  }
  batchData(b);
  outbox_.batchedTrips += b.trips;
  // The outer LOOP's frame, which run() pushed, at the trip after the batch's.
  LoopFrame &f = s_.loops[s_.depth - 1];
  f.iter += uint32_t(b.two ? b.outerTrips : b.innerTrips);
  if (f.iter == f.count) {
    --s_.depth;
    s_.pc = reg_.code[b.outerPc].jump + 1;
  }
  return true;
}

} // namespace wsc::runtime::detail
