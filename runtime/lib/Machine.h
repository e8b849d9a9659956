// Run-time state of the emulated PEs and the pieces that move it forward:
// the core interpreter (Core.cpp), the fabric (Fabric.cpp) and the
// worklist scheduler (Scheduler.cpp).
#ifndef WSC_RUNTIME_LIB_MACHINE_H
#define WSC_RUNTIME_LIB_MACHINE_H

#include "Model.h"
#include "wsc/runtime/Emulator.h"

#include <atomic>
#include <cstring>
#include <new>
#include <memory>
#include <unordered_set>

namespace wsc::runtime::detail {

/// The words of one SEND, shared by every destination of a multicast: one
/// allocation (header and words), reference counted without a control block.
class Payload {
public:
  Payload() = default;
  /// Copies words [first, first + n).
  static Payload make(const uint32_t *first, uint32_t n, uint64_t time) {
    void *mem = ::operator new(sizeof(Block) + size_t(n) * 4);
    Block *b = new (mem) Block;
    b->refs.store(1, std::memory_order_relaxed);
    b->size = n;
    b->time = time;
    if (n)
      std::memcpy(b->words(), first, size_t(n) * 4);
    return Payload(b);
  }
  Payload(const Payload &o) : b_(o.b_) {
    if (b_)
      b_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  Payload(Payload &&o) noexcept : b_(o.b_) { o.b_ = nullptr; }
  Payload &operator=(Payload o) noexcept {
    std::swap(b_, o.b_);
    return *this;
  }
  ~Payload() { reset(); }
  void reset() {
    if (b_ && b_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      b_->~Block();
      ::operator delete(b_);
    }
    b_ = nullptr;
  }
  uint32_t size() const { return b_->size; }
  /// The sender's clock when the SEND started.
  uint64_t time() const { return b_->time; }
  const uint32_t *data() const { return b_->words(); }
  /// `count` more references, taken at once (the caller hands them out with
  /// adopt()): a multicast to thousands of PEs costs one atomic add.
  void addRefs(uint32_t count) const { b_->refs.fetch_add(count, std::memory_order_relaxed); }
  void prefetch() const { __builtin_prefetch(b_); }
  Payload adopt() const { return Payload(b_); }

private:
  struct Block {
    std::atomic<uint32_t> refs;
    uint32_t size;
    uint64_t time;
    uint32_t *words() { return reinterpret_cast<uint32_t *>(this + 1); }
  };
  explicit Payload(Block *b) : b_(b) {}
  Block *b_ = nullptr;
};

/// Part of a message waiting in a receive queue, 24 bytes (a GPT-2 run holds
/// tens of millions). Word j is at the core from cycle t0() + j on (words
/// stream in one per cycle).
struct Chunk {
  Payload data;
  uint32_t pos = 0;   ///< words already popped (a filter's window starts later)
  uint32_t delay = 0; ///< cycles from the SEND's start to word 0's arrival
  uint32_t end = 0;   ///< one past the last word the core gets
  uint64_t t0() const { return data.time() + delay; }
};

/// A FIFO of chunks in one vector (popped ones are reclaimed in bulk). Unlike
/// std::deque it costs nothing while empty and moves cheaply, and a PE has
/// one per color it receives on.
class ChunkQueue {
public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  Chunk &front() { return items_[head_]; }
  Chunk &operator[](size_t i) { return items_[head_ + i]; }
  /// Fetches the line the next push_back writes (prefetches never fault).
  void prefetchBack() const { __builtin_prefetch(items_.data() + items_.size(), 1); }
  void push_back(Chunk c) { items_.push_back(std::move(c)); }
  void pop_front() {
    items_[head_++].data.reset();
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
      if (items_.capacity() > 16) // a batch's storage is given back
        std::vector<Chunk>().swap(items_);
    } else if (head_ >= 32 && head_ * 2 >= items_.size()) {
      // In place: reallocating here was a malloc per compaction.
      std::move(items_.begin() + ptrdiff_t(head_), items_.end(), items_.begin());
      items_.resize(items_.size() - head_);
      head_ = 0;
    }
  }

private:
  std::vector<Chunk> items_;
  size_t head_ = 0;
};

/// The words that reached one PE's core on one color. The fabric owns every
/// queue (one per router slot that delivers to a core), so a delivery finds
/// its queue without touching the PE.
struct RecvQueue {
  ChunkQueue chunks;
  uint64_t words = 0;
  /// The router's filter: the core gets words [first, first + count) of
  /// each `period` words on the color (count 0: all of them). Where the
  /// next word falls in its period is the fabric's (Fabric::Target).
  uint32_t first = 0, count = 0, period = 0;
  /// Words the PE's blocked RECV waits for (0: not waiting): the delivery
  /// that makes them available wakes the PE.
  uint64_t need = 0;
  uint64_t pe = 0;
  uint32_t color = 0;
  uint8_t lane = 0; ///< the thread that runs the PE (and alone fills this queue)
};

struct LoopFrame {
  uint32_t iter = 0;
  uint32_t count = 0;
};

/// A SEND waiting to be routed when its PE's visit ends.
struct OutMsg {
  uint32_t color = 0;
  Payload data; ///< with the sender's clock when the SEND started
};

/// Ready: runnable (also a PE that yielded after a visit's worth of sends).
enum class PeStatus : uint8_t { Ready, Blocked, Done, Faulted };

/// How much a PE may do in one visit before it yields: so many messages or
/// words sent, or so many cycles of its clock (checked at each SEND). The
/// bounds keep a producer from running far ahead of its consumers and
/// filling the host's memory with queued words; see schedule().
struct VisitLimit {
  size_t sends = 4096;
  uint64_t words = 1 << 16;
  uint64_t cycles = UINT64_MAX;
};

/// In a PE's view of its code: a LOOP whose body it selects nothing of but ENDs.
constexpr uint32_t kIdleLoop = 1u << 31;

/// A PE's run-time state, the fields a visit reads first at the front.
struct alignas(64) PeState {
  uint32_t *sram = nullptr; ///< the kernel's SRAM words, in the run's arena; null: no kernel
  /// Per pc (and one past the end): the first instruction from pc on that
  /// the PE's predicates select, a skipped LOOP jumping past its END; with
  /// kIdleLoop on a LOOP whose body they select nothing of but ENDs.
  const uint32_t *view = nullptr;
  RecvQueue *queues = nullptr; ///< numQueues queues by ascending color, owned by the Fabric
  uint32_t numQueues = 0;
  uint32_t pc = 0;
  uint64_t clock = 0;
  uint64_t busy = 0; ///< sum of instruction costs
  uint64_t instructions = 0;
  uint64_t messages = 0;
  PeStatus status = PeStatus::Ready;
  bool traced = false;
  uint32_t waitColor = 0; ///< when Blocked: the RECV's color and word count
  uint64_t waitWords = 0;
  std::vector<LoopFrame> loops; ///< innermost last
  std::string fault;            ///< when Faulted
  std::vector<TraceEvent> trace;

  /// The queue of `color`, or null when no route delivers that color here.
  RecvQueue *queue(uint32_t color) const {
    for (uint32_t i = 0; i < numQueues; ++i)
      if (queues[i].color == color)
        return &queues[i];
    return nullptr;
  }
  uint64_t available(uint32_t color) const {
    const RecvQueue *q = queue(color);
    return q ? q->words : 0;
  }
};

/// Runs PE `pe` until it blocks in a RECV, ends its program or faults, or
/// yields (staying Ready) when it reaches `limit`; its SENDs go to `outbox`.
void runPe(const Model &m, uint64_t pe, PeState &s, const RunOptions &options,
           const VisitLimit &limit, std::vector<OutMsg> &outbox);
/// Sets every PE's view of its region's code; PEs that select the same
/// instructions share one. Returns the views' storage.
std::vector<std::vector<uint32_t>> resolvePredicates(const Model &m, std::vector<PeState> &pes);

/// Moves messages hop by hop through the router tables and keeps link statistics.
/// Router tables and link ownership are flat arrays indexed by grid position
/// (no hashing on the hot path).
class Fabric {
public:
  /// Also creates the receive queues of `pes`.
  Fabric(const Model &m, std::vector<PeState> &pes);
  ~Fabric();
  /// A message for the queue of a PE that another thread runs.
  struct Remote {
    Payload data;
    uint32_t queue;
    uint32_t delay;
    uint32_t pos, end; ///< the words of `data` the core gets
    uint8_t lane;      ///< that thread
  };
  /// A hop of the message being walked.
  struct Hop {
    int32_t slot; ///< or kNoEntry
    uint32_t pos, color, in;
    uint64_t hops;
    uint64_t extra; ///< inter-wafer link delays on the way
  };
  /// A core the message being walked reaches.
  struct Arrival {
    uint32_t queue;
    uint32_t delay;
  };
  /// Words [pos, end) of a message for a queue.
  struct Hit {
    uint32_t queue, delay, pos, end;
  };
  /// One thread's scratch for walking.
  struct Walker {
    std::vector<Hop> stack;
    std::vector<Arrival> arrivals;
    std::vector<Hit> hits;
    std::vector<const OutMsg *> order; ///< a visit's messages by color, in send order
    std::vector<uint32_t> colors;      ///< the colors of a visit's messages
  };
  /// Sets which thread runs each PE (all 0 until then).
  void assignLanes(const std::vector<uint8_t> &laneOfPe);
  /// Routes the messages `sender` sent in a visit, in send order: appends
  /// each to the receive queues of the PEs of thread `lane` it reaches
  /// (adding the blocked PEs whose RECV can now complete to `woken`) and to
  /// `remote` for the others; clears `outbox`. Stops at the first fault.
  /// Threads may route concurrently: only the origin's thread touches its
  /// state, and links are claimed atomically.
  Status route(Walker &w, uint64_t sender, std::vector<OutMsg> &outbox, uint8_t lane,
               std::vector<uint64_t> &woken, std::vector<Remote> &remote);
  /// Delivers a remote message; on the thread that runs its PE.
  void deliver(const Remote &r, std::vector<uint64_t> &woken);
  /// Fills the link fields of `report` for a run of `cycles` cycles.
  void linkStats(uint64_t cycles, RunReport &report) const;

private:
  /// Slot of a neighbour that has no entry for the color, or no neighbour.
  static constexpr int32_t kNoEntry = -1, kOffGrid = -2, kDead = -3;
  /// The router entries of one (grid position, color), with the hops they
  /// lead to resolved at start-up, and the state of its links: everything a
  /// hop reads or writes in one cache line.
  struct alignas(64) Slot {
    uint8_t mask[kNumPorts] = {}; ///< out mask per input port; 0 = no entry
    uint8_t outs = 0;             ///< union of the masks
    int32_t queue = -1;   ///< receive queue of the core here; -1: no kernel
    int32_t next[4] = {}; ///< NORTH..WEST: the neighbour's slot of this color
    /// Per out port: the origin that first used the link, as the slot where
    /// it enters the fabric + 1 (0 = none). An origin is a sending PE and
    /// its color, so its slot at the sender names it.
    uint32_t owner[kNumPorts] = {};
    uint32_t color = 0;
    uint32_t pos = 0;
  };
  static_assert(sizeof(Slot) <= 64);
  /// Walks `count` messages of one color and size as one block: the
  /// tables of every hop are consulted once for them all.
  Status walk(Walker &w, uint64_t origin, const OutMsg *const *msgs, size_t count, uint8_t lane,
              std::vector<uint64_t> &woken, std::vector<Remote> &remote);
  void deliver(RecvQueue &q, const Payload &data, uint32_t delay, uint32_t pos, uint32_t end,
               std::vector<uint64_t> &woken);
  int32_t slotOf(size_t pos, uint32_t color) const;
  size_t position(uint32_t wafer, uint32_t x, uint32_t y) const {
    return (size_t(wafer) * m_.height + y) * m_.width + x;
  }

  const Model &m_;
  std::vector<uint32_t> slotStart_; ///< per position: first slot; positions + 1 entries
  std::vector<Slot> slots_;
  /// Per origin (its slot at the sender): what it sent. Every message of an
  /// origin crosses the same links, and only its messages cross the links
  /// it owns, so a link carried its owner's words.
  /// A core an origin reaches, with the state of that core's filter: every
  /// message of the origin reaches the same cores (its walks read the same
  /// tables), and a queue is fed by one origin only, so the filter is
  /// applied here, by the thread that walks the origin, without touching
  /// the queues of the many cores that keep nothing of a message.
  struct Target {
    uint32_t queue, delay;
    uint32_t first, count, period;
    uint32_t seen; ///< where the origin's next word falls in the filter's period
  };
  /// Only the thread that runs the origin's PE touches it.
  struct Origin {
    uint64_t messages = 0;
    uint64_t words = 0;
    bool walked = false;          ///< a non-empty message was walked: `targets` is known
    std::vector<Target> targets;  ///< in the order its walks reach them
  };
  std::vector<Origin> origins_;
  std::vector<RecvQueue> queues_;
};

/// Runs every PE to completion from worklists, one per thread; see
/// docs/runtime.md. A fault with several threads may be another than the
/// one a single thread meets first: Emulator::run then runs again on one.
Status schedule(const Model &m, std::vector<PeState> &pes, const RunOptions &options,
                RunReport &report);

} // namespace wsc::runtime::detail

#endif
