// Run-time state of the emulated PEs and the pieces that move it forward:
// the core interpreter (Core.cpp) and its region engine (RegionEngine.cpp),
// the fabric (Fabric.cpp) and the worklist scheduler (Scheduler.cpp).
#ifndef WSC_RUNTIME_LIB_MACHINE_H
#define WSC_RUNTIME_LIB_MACHINE_H

#include "HugePages.h"
#include "Model.h"
#include "wsc/runtime/Distributed.h"
#include "wsc/runtime/Emulator.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <tuple>
#include <unordered_set>
#include <utility>

namespace wsc::runtime::detail {

struct OutMsg;

/// The messages one origin (a sending PE and color) sent, in send order.
/// Every core the origin reaches reads them at its own pace through its
/// receive queue: a multicast to thousands of cores is written once, and
/// its delivery touches no receiver's words. Storage comes in segments;
/// the last reader to leave a segment hands it back to the log, which
/// keeps one to reuse. Segments grow only while the readers are a segment
/// or more behind: a relay's log, read as it is written, keeps two small
/// ones however long its stream.
/// One thread (the origin's) appends; a reader on another thread sees what
/// was published before the mail that woke it, and may see more.
class MessageLog {
public:
  /// The bytes a run's segments hold, now and at most: a fabric's logs
  /// share one.
  struct Bytes {
    std::atomic<uint64_t> live{0}, peak{0};
  };
  /// A message in a segment: kHeader words (its size, then the sender's
  /// clock when the SEND started, low and high word), then its words.
  static constexpr uint32_t kHeader = 3;
  struct Segment {
    std::atomic<uint32_t> readers;
    std::atomic<uint32_t> used{0}; ///< words published
    std::atomic<Segment *> next{nullptr};
    uint32_t capacity = 0;
    MessageLog *log = nullptr;
    uint64_t size() const { return sizeof(Segment) + uint64_t(capacity) * 4; }
    uint32_t *words() { return reinterpret_cast<uint32_t *>(this + 1); }
    const uint32_t *words() const { return reinterpret_cast<const uint32_t *>(this + 1); }
  };
  MessageLog(uint32_t readers, Bytes &bytes) : readers_(readers), bytes_(bytes) {}
  MessageLog(const MessageLog &) = delete;
  MessageLog &operator=(const MessageLog &) = delete;
  ~MessageLog() { dropSpare(); }
  /// The first segment, where readers start; it lives until they all left it.
  Segment *start() const { return start_; }
  void append(const uint32_t *words, uint32_t n, uint64_t time);
  /// Appends a visit's block of `count` messages (their words in `words`,
  /// `blockWords` with the headers) in one segment, up to a segment's
  /// largest size, read in order; a block that fits is published at once.
  void appendBlock(const uint32_t *words, const OutMsg *const *msgs, size_t count,
                   uint64_t blockWords);
  /// No message follows (the origin's PE ended): a reader that has read
  /// everything leaves the last segment too. No segment serves again.
  void close() {
    closed_.store(true, std::memory_order_release);
    dropSpare();
  }
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  /// The words of all the messages appended so far: a reader that sees a
  /// total sees the messages it counts.
  uint64_t wordsPublished() const { return words_.load(std::memory_order_acquire); }
  /// Drops a reader's hold on `s`; when it was the last, the log keeps it
  /// to reuse, or frees it if it keeps one already.
  static void leave(Segment *s) {
    if (s->readers.fetch_sub(1, std::memory_order_acq_rel) != 1)
      return;
    Segment *none = nullptr;
    MessageLog &log = *s->log;
    if (!log.spare_.compare_exchange_strong(none, s, std::memory_order_acq_rel,
                                            std::memory_order_relaxed))
      log.free(s);
    else if (log.closed()) // no writer takes the spare now
      log.dropSpare();
  }

private:
  /// Words the last segment still has room for.
  uint64_t room() const {
    return tail_ ? tail_->capacity - tail_->used.load(std::memory_order_relaxed) : 0;
  }
  /// Starts a segment of at least `atLeast` words.
  void grow(uint64_t atLeast);
  /// Writes a message, its header then its words, at `d`; the word past it.
  static uint32_t *put(uint32_t *d, const uint32_t *words, uint32_t n, uint64_t time) {
    d[0] = n;
    d[1] = uint32_t(time);
    d[2] = uint32_t(time >> 32);
    std::memcpy(d + kHeader, words, size_t(n) * 4);
    return d + kHeader + n;
  }
  /// Publishes the last segment's words up to `used`, which hold `sent`
  /// more messages' words.
  void publish(uint32_t used, uint64_t sent) {
    tail_->used.store(used, std::memory_order_release);
    words_.store(words_.load(std::memory_order_relaxed) + sent, std::memory_order_release);
  }
  void dropSpare() {
    if (Segment *s = spare_.exchange(nullptr, std::memory_order_acq_rel))
      free(s);
  }
  void free(Segment *s) {
    bytes_.live.fetch_sub(s->size(), std::memory_order_relaxed);
    s->~Segment();
    ::operator delete(s);
  }
  uint32_t readers_;
  /// A relay's messages are mostly a token's few words, and a keeping-up
  /// relay holds two segments: small first ones keep those small.
  uint32_t nextCapacity_ = kFirstSegment;
  Bytes &bytes_;
  Segment *start_ = nullptr, *tail_ = nullptr;
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> words_{0};
  /// A segment every reader left (its bytes still count as live), or null.
  std::atomic<Segment *> spare_{nullptr};
  static constexpr uint32_t kFirstSegment = 16, kMaxSegment = 1 << 16;
};

/// A reader's place in a log: at word `off` of `seg`, the header of the
/// next message (once published); `phase`: the origin's words before it,
/// modulo the reader's filter period (kept by adding, not dividing).
struct LogCursor {
  MessageLog::Segment *seg = nullptr;
  uint32_t off = 0;
  uint32_t phase = 0;
  /// The next message's header, or null while none is published. Steps to
  /// the next segment when this one is used up, leaving it if `owner`.
  const uint32_t *message(bool owner) {
    while (off == seg->used.load(std::memory_order_acquire)) {
      MessageLog::Segment *next = seg->next.load(std::memory_order_acquire);
      // A segment is final once it has a successor; it may have grown
      // between the two loads.
      if (!next || off != seg->used.load(std::memory_order_acquire))
        return next ? seg->words() + off : nullptr;
      if (owner)
        MessageLog::leave(seg);
      seg = next;
      off = 0;
    }
    return seg->words() + off;
  }
  void pass(const uint32_t *header, uint32_t period) {
    off += MessageLog::kHeader + header[0];
    if (period)
      phase = wrap(uint64_t(phase) + header[0], period);
  }
  static uint32_t wrap(uint64_t v, uint32_t period) {
    return uint32_t(v < period ? v : v < 2 * uint64_t(period) ? v - period : v % period);
  }
};

/// The words that reached one PE's core on one color: a reader of the log of
/// the one origin that feeds the color there (two origins on one core's ramp
/// are a collision). The fabric owns every queue (one per router slot that
/// delivers to a core).
struct RecvQueue {
  /// Set by the origin's thread when it first sends; `delay` before it.
  std::atomic<MessageLog *> log{nullptr};
  uint32_t delay = 0; ///< cycles from a SEND's start to its word 0 here, but see `links`
  /// The router's filter: the core gets words [first, first + count) of
  /// each `period` words on the color (count 0: all of them).
  uint32_t first = 0, count = 0, period = 0;
  /// Consumption: the message being read, and its next word to look at.
  LogCursor read;
  uint32_t pos = 0;
  /// The words of this core that RECVs took.
  uint64_t taken = 0;
  /// Words the PE's blocked RECV waits for (0: not waiting): the origin's
  /// next messages wake the PE to count again.
  uint64_t need = 0;
  uint64_t pe = 0;
  uint32_t color = 0;
  uint8_t lane = 0; ///< the thread that runs the PE (and alone reads this queue)
  bool drained = false; ///< read all of a closed log, and left it
  /// Inter-wafer links on the way here, which `delay` counts the latency of:
  /// each adds Model::linkCrossing of the message's size.
  uint16_t links = 0;

  /// Cycles from the start of a SEND of `size` words to its word 0 here.
  uint64_t delayOf(uint32_t size, const Model &m) const {
    return delay + (links ? links * m.linkCrossing(size) : 0);
  }

  /// Leaves the log once it is closed and read to its end (the last
  /// segment has no successor to move on to).
  void leaveIfDrained() {
    // Closed first, so that available() sees every message.
    if (!read.seg || !log.load(std::memory_order_relaxed)->closed() || available())
      return;
    // What is left holds no words for this core.
    while (const uint32_t *h = read.message(true)) {
      read.pass(h, period);
      pos = 0;
    }
    MessageLog::leave(read.seg);
    read.seg = nullptr;
    drained = true;
  }
  /// The first window [from, to) of this core's words in words [at, n) of
  /// a message that starts at `phase` of the filter's period; from = n: none.
  void window(uint32_t phase, uint32_t n, uint32_t at, uint32_t &from, uint32_t &to) const {
    if (!count) {
      from = at, to = n;
      return;
    }
    uint32_t o = LogCursor::wrap(uint64_t(phase) + at, period);
    bool inside = o >= first && o < first + count;
    uint64_t start = o < first ? at + (first - o) : inside ? at : at + (period - o) + first;
    uint64_t end = inside ? at + (first + count - o) : start + count;
    from = uint32_t(std::min<uint64_t>(start, n));
    to = uint32_t(std::min<uint64_t>(end, n));
  }
  /// A RECV took n of the words available.
  void took(uint64_t n) { taken += n; }
  /// Of the first `stream` words the origin sent, those the filter passes.
  uint64_t passing(uint64_t stream) const {
    if (!count)
      return stream;
    uint64_t rest = stream % period;
    return stream / period * count + std::min<uint64_t>(count, rest > first ? rest - first : 0);
  }
  /// The words published for this core that no RECV has taken yet: the
  /// filter passes each word by its place in the stream, so the log's total
  /// says how many, without a look at its messages.
  uint64_t available() {
    if (!read.seg) {
      MessageLog *l = log.load(std::memory_order_acquire);
      if (!l || drained) // a drained queue had none left
        return 0;
      read.seg = l->start();
    }
    return passing(log.load(std::memory_order_relaxed)->wordsPublished()) - taken;
  }
};

struct LoopFrame {
  uint32_t iter = 0;
  uint32_t count = 0;
};

/// A SEND waiting to be routed when its PE's visit ends.
struct OutMsg {
  uint32_t color = 0;
  uint32_t size = 0;
  uint64_t time = 0;   ///< the sender's clock when the SEND started
  size_t offset = 0;   ///< of its words in the outbox
};

/// A std::vector allocator whose resize leaves new words uninitialized: a
/// batch grows a visit's outbox by whole messages that it writes next.
template <typename T> struct UninitializedAllocator : std::allocator<T> {
  template <typename U> struct rebind { using other = UninitializedAllocator<U>; };
  UninitializedAllocator() = default;
  template <typename U> UninitializedAllocator(const UninitializedAllocator<U> &) {}
  template <typename U> void construct(U *p) noexcept { ::new (static_cast<void *>(p)) U; }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

/// A visit's SENDs and their words, in send order.
struct Outbox {
  std::vector<OutMsg> msgs;
  std::vector<uint32_t, UninitializedAllocator<uint32_t>> words;
  /// Loop trips the region engine ran batched in the thread's visits
  /// (RunReport::batchedTrips); clear() keeps it.
  uint64_t batchedTrips = 0;
  void add(uint32_t color, const uint32_t *first, uint32_t n, uint64_t time) {
    msgs.push_back(OutMsg{color, n, time, words.size()});
    words.insert(words.end(), first, first + n);
  }
  void clear() {
    msgs.clear();
    words.clear();
  }
};

/// Ready: runnable (also a PE that yielded after a visit's worth of sends).
enum class PeStatus : uint8_t { Ready, Blocked, Done, Faulted };

/// How much a PE may send in one visit before it yields (checked at each
/// SEND): the bounds keep a producer from running far ahead of its
/// consumers and filling the host's memory with queued words.
struct VisitLimit {
  size_t sends = 4096;
  uint64_t words = 1 << 16;
};

/// SRAM words [lo, hi) of one PE whose last write the run records: those
/// of a generating program's next_token output, so that each picked
/// token has the cycle it was picked at.
struct StoreWatch {
  static constexpr uint64_t kNever = UINT64_MAX;
  uint64_t pe = 0; ///< the PE whose words it watches
  uint32_t lo = 0, hi = 0;
  std::vector<uint64_t> cycle; ///< per word from lo: the end of its last write, or kNever
  std::vector<int64_t> element; ///< per word from lo: its output element, or -1
  /// RunOptions::onNextToken, when given.
  const std::function<void(uint64_t, int32_t, uint64_t)> *onStore = nullptr;
  /// Set when element RunOptions::stopAfterToken is written (null: never).
  std::atomic<bool> *stopped = nullptr;
  int64_t stopElement = -1;
};

/// In a PE's view of its code: a LOOP whose body it selects nothing of but ENDs.
constexpr uint32_t kIdleLoop = 1u << 31;

/// A PE's async engine: when it is next free, and its last two ops (an
/// SRAM word range, a color, the end). Its methods move the core's clock
/// where the ops make the core wait.
///
/// The engine runs its ops in order, so their ends rise; the core's clock
/// never falls. So the ops in flight are always among the last two (a third
/// waits for the older to end), and an op that ended is harmless to a join
/// (its end is behind the clock): nothing need be retired.
struct AsyncEngine {
  struct Op {
    uint64_t end = 0;
    uint32_t lo = 0, hi = 0;
    int32_t color = -1, forward = -1; ///< -1: none
  };
  uint64_t free = 0;
  Op last, before; ///< the latest op and the one before it; end 0 when none

  /// Whether an op is still in flight at `clock`.
  bool busy(uint64_t clock) const { return last.end > clock; }
  /// At most two ops in flight: a third waits for the older to end.
  void awaitSlot(uint64_t &clock) const { clock = std::max(clock, before.end); }
  /// The core waits for the ops in flight that use SRAM words [lo, hi) (a
  /// range) or the color `color` (lo == hi; received or forwarded on).
  void join(uint64_t &clock, uint32_t lo, uint32_t hi, int64_t color) const {
    for (const Op *p : {&last, &before})
      if (lo < hi ? lo < p->hi && p->lo < hi
                  : color >= 0 && (color == p->color || color == p->forward))
        clock = std::max(clock, p->end);
  }
  /// An op over SRAM words [lo, hi) ran on the engine up to `clock`: the
  /// engine is busy until then.
  void start(uint64_t clock, uint32_t lo, uint32_t hi, int32_t color, int32_t forward) {
    free = clock;
    before = last;
    last = Op{clock, lo, hi, color, forward};
  }
  /// The PE ended, and with it the engine's ops.
  void clear() { last = before = Op{}; }
};

/// A PE's run-time state, in three cache lines, the fields a visit reads
/// first at the front.
struct alignas(64) PeState {
  uint32_t *sram = nullptr; ///< the kernel's SRAM words, in the run's arena; null: no kernel
  /// Per pc (and one past the end): the first instruction from pc on that
  /// the PE's predicates select, a skipped LOOP jumping past its END; with
  /// kIdleLoop on a LOOP whose body they select nothing of but ENDs.
  const uint32_t *view = nullptr;
  RecvQueue *queues = nullptr; ///< numQueues queues by ascending color, owned by the Fabric
  /// The enclosing LOOPs' frames, outermost first: `depth` of the region's
  /// Region::loopDepth, in the run's array of them.
  LoopFrame *loops = nullptr;
  uint64_t clock = 0;
  uint64_t busy = 0; ///< sum of instruction costs
  uint64_t instructions = 0;
  uint64_t messages = 0;
  uint64_t waitWords = 0; ///< when Blocked: the RECV's word count
  uint32_t sramWords = 0; ///< of the kernel's SRAM, those its code can reach (Model::sramWords)
  uint32_t numQueues = 0;
  uint32_t pc = 0;
  uint32_t waitColor = 0; ///< when Blocked: the RECV's color
  uint32_t depth = 0;     ///< of the LOOPs it is in
  /// The pc after a LOOP whose nest the region engine cannot batch here, or 0.
  uint32_t unbatchable = 0;
  /// Its router's slots, by color: Fabric::slots_[firstSlot, firstSlot + slotCount).
  uint32_t firstSlot = 0, slotCount = 0;
  PeStatus status = PeStatus::Ready;
  StoreWatch *watch = nullptr; ///< null but on the PEs that hold a watched output
  std::unique_ptr<std::vector<TraceEvent>> trace; ///< null: not traced
  std::unique_ptr<std::string> faultText;         ///< when Faulted
  AsyncEngine async;

  void setFault(std::string what) {
    status = PeStatus::Faulted;
    faultText = std::make_unique<std::string>(std::move(what));
  }
  const std::string &fault() const { return *faultText; }
  /// The queue of `color`, or null when no route delivers that color here.
  RecvQueue *queue(uint32_t color) const {
    for (uint32_t i = 0; i < numQueues; ++i)
      if (queues[i].color == color)
        return &queues[i];
    return nullptr;
  }
  /// Counts every word published for `color` here.
  uint64_t available(uint32_t color) const {
    RecvQueue *q = queue(color);
    return q ? q->available() : 0;
  }
};
static_assert(sizeof(PeState) == 192);

/// Runs PE `pe` until it blocks in a RECV, ends its program or faults, or
/// yields (staying Ready) when it reaches `limit`; its SENDs go to `outbox`.
void runPe(const Model &m, uint64_t pe, PeState &s, const RunOptions &options,
           const VisitLimit &limit, Outbox &outbox);
/// Starts a thread's lane of a run: the region engine keeps no walk
/// through an earlier run's logs, whose memory the new run's may reuse.
void forgetBatchWalks();
/// Sets every PE's view of its region's code; PEs that select the same
/// instructions share one. Returns the views' storage.
std::vector<std::vector<uint32_t>> resolvePredicates(const Model &m, PeStates &pes);

/// What a run's links carried: the links used, the words times links
/// crossed, the busiest link's and all links' cycles of traffic, and the
/// message logs' peak.
struct LinkLoad {
  uint64_t used = 0, wavelets = 0;
  double maxBusy = 0, sumBusy = 0;
  uint64_t logPeakBytes = 0;
  /// Another process's share (its logs' peak adds: an upper bound).
  void add(const LinkLoad &other);
  /// Fills the link fields of `report` for a run of `cycles` cycles.
  void report(uint64_t cycles, RunReport &report) const;
};

/// Moves messages hop by hop through the router tables and keeps link statistics.
/// Router tables and link ownership are flat arrays indexed by grid position
/// (no hashing on the hot path).
class Fabric {
public:
  /// Also creates the receive queues of `pes`.
  Fabric(const Model &m, PeStates &pes);
  /// The bytes a fabric of `m` takes before any message: its slots, their
  /// origins, the receive queues and the index by position.
  static uint64_t plannedBytes(const Model &m);
  /// Frees the logs' segments: every queue leaves the ones it has not left.
  ~Fabric();
  /// New messages for the queue of a PE that another thread runs: that
  /// thread wakes the PE if it waits for them.
  struct Remote {
    uint32_t queue;
    uint8_t lane; ///< that thread
  };
  /// A hop of the message being walked.
  struct Hop {
    int32_t slot; ///< or kNoEntry
    uint32_t pos, color, in;
    uint64_t hops;
    uint64_t extra; ///< the latencies of the inter-wafer links on the way
    uint32_t links; ///< those links: each also takes a time that follows the message's size
  };
  /// A core the message being walked reaches: its receive queue.
  struct Arrival {
    uint32_t queue;
  };
  /// One thread's scratch for walking.
  struct Walker {
    std::vector<Hop> stack;
    std::vector<Arrival> arrivals;
    std::vector<const OutMsg *> order; ///< a visit's messages by color, in send order
    std::vector<uint32_t> colors;      ///< the colors of a visit's messages
    /// Of a distributed run: the hops the walk left to another process.
    std::vector<std::pair<unsigned, Hop>> crossings;
    /// Per process: the walks it is to go on with (Fabric::receive's input).
    std::vector<std::vector<uint8_t>> outgoing;
    Outbox received; ///< the messages of a walk another process passed on
  };
  /// In a distributed run: the process this fabric is, and which process
  /// owns each row. A message walks on up to the first hop that another
  /// process owns; its words go there with that hop (Walker::outgoing).
  void setPartition(const Partition &partition, unsigned rank);
  /// Goes on with the walks another process passed on (its `outgoing`):
  /// appends their messages to the logs of this process's cores and adds
  /// the PEs they wake to `woken`. A single-threaded run only.
  Status receive(Walker &w, const uint8_t *bytes, size_t size, std::vector<uint64_t> &woken);
  /// Bounds the bytes the message logs may hold at once: past it, route()
  /// fails. 0: no bound.
  void setLogBudget(uint64_t bytes) { logBudget_ = bytes ? bytes : UINT64_MAX; }
  /// Sets which thread runs each PE (all 0 until then).
  void assignLanes(const std::vector<uint8_t> &laneOfPe);
  /// PE `pe` ended: the logs of what it sent get no more messages.
  void close(uint64_t pe);
  /// Routes the messages `sender` sent in a visit, in send order: walks
  /// them and appends each to its origin's log, adds the blocked PEs of
  /// thread `lane` that they reach to `woken` and the queues of the others'
  /// PEs to `remote`; clears `outbox`. Stops at the first fault.
  /// Threads may route concurrently: only the origin's thread touches its
  /// state, and links are claimed atomically.
  Status route(Walker &w, uint64_t sender, const PeState &state, Outbox &outbox, uint8_t lane,
               std::vector<uint64_t> &woken, std::vector<Remote> &remote);
  /// Fetches the router slots that `state`'s PE sends into, for route().
  void prefetchSlots(const PeState &state) const {
    if (!state.slotCount)
      return;
    const Slot *first = slots_.data() + state.firstSlot;
    __builtin_prefetch(first);
    __builtin_prefetch(first + state.slotCount - 1);
  }
  /// Wakes the PE of a remote queue if it waits; on the thread that runs it.
  void deliver(const Remote &r, std::vector<uint64_t> &woken);
  /// What the links carried that this fabric's walks claimed.
  LinkLoad linkLoad() const;
  /// Per region: whether the streams its PEs send one another (followed
  /// inside its rectangle) cross between its `n` column strips only one
  /// way, so that no strip waits for a later one and the strips can run on
  /// different threads without a round trip between them per token.
  std::vector<bool> stripsOneWay(unsigned n) const;

private:
  /// Slot of a neighbour that has no entry for the color, or no neighbour.
  static constexpr int32_t kNoEntry = -1, kOffGrid = -2, kDead = -3;
  /// The router entries of one (grid position, color) and the state of its
  /// links. Its neighbours are looked up as a walk reaches them: an origin
  /// is walked once (its delivery plan), so a slot is seldom walked twice.
  struct Slot {
    uint8_t mask[kNumPorts] = {}; ///< out mask per input port; 0 = no entry
    uint8_t outs = 0;             ///< union of the masks
    int32_t queue = -1;           ///< receive queue of the core here; -1: no kernel
    /// Per out port: the origin that first used the link, as the slot where
    /// it enters the fabric + 1 (0 = none). An origin is a sending PE and
    /// its color, so its slot at the sender names it.
    uint32_t owner[kNumPorts] = {};
    uint32_t color = 0;
    uint32_t pos = 0;
    /// Its origin (origins_) when a core may send into it; else -1.
    int32_t origin = -1;
  };
  static_assert(sizeof(Slot) == 48);
  /// The slot of `color` at the neighbour of grid position `pos` through
  /// `port` (NORTH..WEST): kOffGrid, kDead, or kNoEntry where it has none.
  /// `to` is the neighbour's grid position, when on the grid.
  int32_t neighbour(size_t pos, uint32_t color, uint32_t port, uint32_t &to) const;
  struct Origin;
  /// Where a walk starts: at the sending PE's ramp, or at the hop where
  /// another process left it.
  struct Source {
    uint64_t pe;      ///< the sending PE
    uint32_t ownerId; ///< the origin's slot at the sender + 1
    Origin *from;     ///< its messages and log here (null: the sender has no entry)
    Hop start;
  };
  /// Walks `count` messages of one color and size as one block: the
  /// tables of every hop are consulted once for them all.
  Status walk(Walker &w, const Source &src, const Outbox &outbox, const OutMsg *const *msgs,
              size_t count, uint8_t lane, std::vector<uint64_t> &woken,
              std::vector<Remote> &remote);
  /// Appends a block of `from`'s messages (`words` words in all) to its
  /// log and wakes the cores it reaches that wait; `first`: its first
  /// block, which tells them the log.
  void deliver(Origin &from, const Outbox &outbox, const OutMsg *const *msgs, size_t count,
               uint64_t words, uint8_t lane, std::vector<uint64_t> &woken,
               std::vector<Remote> &remote, bool first = false);
  /// Adds the walk's crossings, with its messages, to Walker::outgoing.
  void passOn(Walker &w, const Source &src, const Outbox &outbox, const OutMsg *const *msgs,
              size_t count);
  bool local(size_t pos) const {
    return rankOfRow_.empty() || rankOfRow_[pos / m_.width] == rank_;
  }
  static void wake(RecvQueue &q, std::vector<uint64_t> &woken) {
    if (q.need) {
      q.need = 0;
      woken.push_back(q.pe);
    }
  }
  int32_t slotOf(size_t pos, uint32_t color) const {
    return slotIn(slotStart_[pos], slotStart_[pos + 1], color);
  }
  /// The slot of `color` among slots [first, end) (a position's), or kNoEntry.
  int32_t slotIn(uint32_t first, uint32_t end, uint32_t color) const;
  size_t position(uint32_t wafer, uint32_t x, uint32_t y) const {
    return (size_t(wafer) * m_.height + y) * m_.width + x;
  }
  /// The wafer and PE of a grid position: position()'s inverse.
  struct Place {
    uint32_t wafer, x, y;
  };
  Place place(size_t pos) const {
    size_t plane = size_t(m_.width) * m_.height;
    return Place{uint32_t(pos / plane), uint32_t(pos % plane % m_.width),
                 uint32_t(pos % plane / m_.width)};
  }
  size_t pePosition(uint64_t pe) const {
    uint32_t x, y;
    m_.peXY(pe, x, y);
    return position(m_.regions[m_.peRegion[pe]].wafer, x, y);
  }

  const Model &m_;
  std::vector<uint32_t> slotStart_; ///< per position: first slot; positions + 1 entries
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  /// Per slot that a core may send into (Slot::origin): what its origin
  /// sent. Every message of an origin crosses the same links, and only its
  /// messages cross the links it owns, so a link carried its owner's words.
  /// Only the thread that runs the origin's PE touches it. Its log and its
  /// usual one or two cores are inline: a program has about one origin per
  /// PE, and a heap block each cost GPT-2-small 90 MB.
  struct Origin {
    uint64_t messages = 0;
    uint64_t words = 0;
    /// Every message of an origin reaches the same cores (its walks read the
    /// same tables): they are learnt from its first non-empty message.
    void setTargets(const std::vector<Arrival> &arrivals);
    const Arrival *targetsBegin() const { return spill ? spill.get() : near; }
    const Arrival *targetsEnd() const { return targetsBegin() + numTargets; }
    uint32_t numTargets = 0;
    /// Its first walk found its cores, and a later block needs none.
    bool planned = false;
    Arrival near[2];
    std::unique_ptr<Arrival[]> spill; ///< more than two targets
    std::optional<MessageLog> log;
  };
  /// The origin that sends into `slot`, or null when no core may.
  Origin *originOf(int32_t slot) {
    return slot >= 0 && slots_[size_t(slot)].origin >= 0
               ? &origins_[size_t(slots_[size_t(slot)].origin)]
               : nullptr;
  }
  std::vector<Origin, HugePageAllocator<Origin>> origins_;
  /// Of a distributed run: an origin of another process as it enters this
  /// one at a hop, by (owner id, slot, input port) of that hop.
  std::map<std::tuple<uint32_t, int32_t, uint32_t>, std::unique_ptr<Origin>> entries_;
  std::vector<uint16_t> rankOfRow_;
  unsigned rank_ = 0, ranks_ = 1;
  std::vector<RecvQueue, HugePageAllocator<RecvQueue>> queues_; ///< sized once: a queue never moves
  MessageLog::Bytes logBytes_;
  uint64_t logBudget_ = UINT64_MAX;
};

/// What process `rank` of a run of `m` split over `ranks` takes of its
/// host's memory (Emulator::memoryPlan).
MemoryPlan planMemory(const Model &m, unsigned ranks = 1, unsigned rank = 0);

/// The threads a run uses: `options.threads` (0: the host's cores), at
/// most 256 and one per PE.
unsigned threadCount(const RunOptions &options, uint64_t pes);

/// Runs every PE to completion from worklists, one per thread; see
/// docs/runtime.md. A fault with several threads may be another than the
/// one a single thread meets first: Emulator::run then runs again on one.
/// Once `stopped` is set (by a StoreWatch), the run ends where it is. With
/// `dist`, this process runs its own PEs only, on one thread. `sram` has
/// each kernel's images in before its PEs run, and its pages back after.
class Distributed;
class KernelSram;
Status schedule(const Model &m, PeStates &pes, KernelSram &sram, const RunOptions &options,
                RunReport &report, const std::atomic<bool> *stopped = nullptr,
                Distributed *dist = nullptr);

} // namespace wsc::runtime::detail

#endif
