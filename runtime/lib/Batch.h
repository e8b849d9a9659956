// The region engine's batch (docs/runtime.md, The region engine): a PE's
// loop nest as Core::batchNest runs it, shared by the engine's files
// (RegionEngine.cpp: shape, places, walks, data; BatchTiming.cpp: times;
// BatchProducts.cpp: RECV_VECMAT's products).
#ifndef WSC_RUNTIME_LIB_BATCH_H
#define WSC_RUNTIME_LIB_BATCH_H

#include "Core.h"

#include <algorithm>
#include <deque>
#include <map>

namespace wsc::runtime::detail {

/// Whether an op sends a message at each trip (a SEND, or a receive that forwards).
inline bool sendsEachTrip(const Instr &in) {
  return in.op == format::SEND || (in.op != format::RECV_VECMAT && in.forward >= 0);
}

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
      op.sendRank = sendsEachTrip(*op.in) ? int32_t(sendsPerTrip++) : -1;
      wordsSentPerTrip += sendsEachTrip(*op.in) ? op.n : 0;
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

} // namespace wsc::runtime::detail

#endif
