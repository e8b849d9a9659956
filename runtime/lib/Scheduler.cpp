// Scheduling in turns: kernels take turns in pipeline order; a visit runs
// one PE until it blocks, ends or yields, then routes its messages at once
// and readies the PEs they wake. A PE's results depend only on the words it
// receives and their timestamps, never on when the host ran it, so any
// order gives bit-identical numbers and cycles; the order is fixed, so
// faults are too.
#include "Distributed.h"
#include "KernelSram.h"
#include "Machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace wsc::runtime::detail {
namespace {

constexpr size_t kMaxListedPes = 8;
constexpr size_t kMaxWarnings = 20;

Status deadlock(const Model &m, const PeStates &pes) {
  std::vector<uint64_t> blocked;
  for (uint64_t pe = 0; pe < pes.size(); ++pe)
    if (pes[pe].status == PeStatus::Blocked)
      blocked.push_back(pe);
  std::string msg = fmt::format("deadlock: {} PE{} blocked in RECV and no wavelet in flight",
                                blocked.size(), blocked.size() == 1 ? "" : "s");
  for (size_t i = 0; i < blocked.size() && i < kMaxListedPes; ++i) {
    const PeState &s = pes[blocked[i]];
    msg += fmt::format("\n  {}, color {}: waits for {} words, has {} (instruction {})",
                       m.wherePe(blocked[i]), s.waitColor, s.waitWords, s.available(s.waitColor),
                       s.pc);
  }
  if (blocked.size() > kMaxListedPes)
    msg += fmt::format("\n  ... and {} more", blocked.size() - kMaxListedPes);
  return Status::failure(msg);
}

void leftovers(const Model &m, const PeStates &pes, RunReport &report) {
  size_t total = 0;
  for (uint64_t pe = 0; pe < pes.size(); ++pe)
    for (uint32_t i = 0; i < pes[pe].numQueues; ++i) {
      RecvQueue &q = pes[pe].queues[i];
      uint64_t words = q.available();
      if (!words)
        continue;
      if (++total <= kMaxWarnings)
        report.warnings.push_back(fmt::format("{}, color {}: {} received words never consumed",
                                              m.wherePe(pe), q.color, words));
    }
  if (total > kMaxWarnings)
    report.warnings.push_back(
        fmt::format("... and {} more PE colors with unconsumed words", total - kMaxWarnings));
}

} // namespace

namespace {

/// One thread's regions, their ready PEs, and the notes of other threads
/// about messages for its PEs. A kernel whose streams between its N column
/// strips all run one way (a linear's sums run down its columns and its
/// result along its last row; an attention's heads talk within their
/// columns) is dealt out by strips: every thread works on every token of
/// it, and no strip waits for a later one. The others go to the threads in
/// turn (region i to thread i mod N), so neighbouring kernels of the
/// pipeline run on different threads and a kernel works on the tokens its
/// producer has already passed on while the producer goes on. (Cutting the
/// pipeline into N contiguous stages left the later threads idle until the
/// whole sequence reached them; splitting every kernel by strips made the
/// threads wait for each other on every token, a layer norm's all-reduce
/// running along its row and back.)
///
/// The thread gives its regions turns in pipeline order. A turn runs the
/// region's ready PEs, and the PEs of the same region they wake, until none
/// is left; a PE woken in another region waits for that region's turn, and
/// a PE that yields waits for its region's next turn. So a kernel takes
/// every token its producers sent since its last turn in one go: each PE
/// runs many tokens per visit while its weights and queues are in the
/// host's cache (one token per visit fetched them from memory every time).
struct Lane {
  std::vector<std::vector<uint64_t>> ready; ///< per region: PEs for its next turn
  uint32_t cursor = 0;                      ///< the region whose turn is next
  size_t readyCount = 0;
  std::vector<uint64_t> turn; ///< the current turn's PEs, last woken first
  uint32_t turnRegion = 0;    ///< whose turn it is
  std::mutex mailMu;
  std::vector<Fabric::Remote> mail;
  std::atomic<bool> hasMail{false};
  uint64_t visits = 0;
  Outbox outbox; ///< of the PE being visited; routed when the visit ends

  void add(uint32_t region, uint64_t pe) {
    ready[region].push_back(pe);
    ++readyCount;
  }
  /// Moves the next region with ready PEs into `turn` (first added runs first).
  void startTurn() {
    while (ready[cursor].empty())
      cursor = cursor + 1 == ready.size() ? 0 : cursor + 1;
    turnRegion = cursor;
    std::vector<uint64_t> &r = ready[cursor];
    turn.assign(r.rbegin(), r.rend());
    readyCount -= r.size();
    r.clear();
    cursor = cursor + 1 == ready.size() ? 0 : cursor + 1;
  }
};

struct Shared {
  Shared(const Model &m, PeStates &pes, KernelSram &sram, const RunOptions &options, Fabric &fabric)
      : m(m), pes(pes), sram(sram), options(options), fabric(fabric) {}
  const Model &m;
  PeStates &pes;
  KernelSram &sram;
  const RunOptions &options;
  Fabric &fabric;
  VisitLimit limit;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::mutex mu; ///< guards idle, done, failure and the sleeping threads' wake-ups
  std::condition_variable cv;
  std::atomic<unsigned> idle{0};
  std::atomic<bool> stop{false};
  bool done = false;
  /// Remote messages sent but not yet delivered: the run ends when every
  /// thread is idle and none is in flight.
  std::atomic<int64_t> inFlight{0};
  Status failure = Status::success();

  void fail(Status s) {
    if (dist)
      dist->fail(s.message());
    std::lock_guard<std::mutex> lock(mu);
    if (failure)
      failure = std::move(s);
    stop = true;
    cv.notify_all();
  }
  /// Ends the run where it is, without a failure (RunOptions::stopAfterToken).
  void halt() {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  const std::atomic<bool> *stopped = nullptr;
  /// A run split over processes (one thread each), or null.
  Distributed *dist = nullptr;
};

/// Sends the walks that left this process's PEs to the processes that own
/// their next hops.
void passOn(Shared &sh, Fabric::Walker &walker) {
  for (unsigned r = 0; r < walker.outgoing.size(); ++r)
    if (!walker.outgoing[r].empty()) {
      sh.dist->send(r, std::move(walker.outgoing[r]));
      walker.outgoing[r].clear();
    }
}

/// Of a distributed run: sends this process's walks, goes on with those
/// other processes passed on (their PEs go to `woken`), and learns whether
/// the run is over, as it is once every process is idle and no walk is on
/// its way. False once over.
bool exchange(Shared &sh, bool idle, Fabric::Walker &walker, std::vector<uint64_t> &woken) {
  passOn(sh, walker);
  Distributed::State state = sh.dist->poll([&](const uint8_t *bytes, size_t size) {
    return sh.fabric.receive(walker, bytes, size, woken);
  });
  passOn(sh, walker); // transit walks
  if (state == Distributed::State::Running && idle && woken.empty())
    state = sh.dist->idle();
  if (state == Distributed::State::Failed)
    sh.fail(Status::failure(sh.dist->failure()));
  return state == Distributed::State::Running;
}

/// Fetches what the next visits of a turn read first, a stage further
/// ahead for each load that needs the one before: their states, then their
/// queues and loop frames, then the messages at the queues' readers and
/// their SRAM; and the router slots the visit now sends into. A turn's PEs
/// last ran a turn ago, so each of these would miss the host's caches, one
/// after the other.
void prefetchTurn(const PeStates &pes, const Fabric &fabric, const std::vector<uint64_t> &turn) {
  constexpr uint32_t kSramBytes = 4096;
  size_t n = turn.size(); // turn[n - 1] runs now
  if (n >= 4) {
    const char *s = reinterpret_cast<const char *>(&pes[turn[n - 4]]);
    for (size_t at = 0; at < sizeof(PeState); at += 64)
      __builtin_prefetch(s + at);
  }
  if (n >= 3) {
    const PeState &s = pes[turn[n - 3]];
    const char *q = reinterpret_cast<const char *>(s.queues);
    for (size_t at = 0; at < s.numQueues * sizeof(RecvQueue); at += 64)
      __builtin_prefetch(q + at);
    __builtin_prefetch(s.loops);
  }
  if (n >= 2) {
    const PeState &s = pes[turn[n - 2]];
    for (uint32_t i = 0; i < s.numQueues; ++i)
      if (const MessageLog::Segment *seg = s.queues[i].read.seg)
        __builtin_prefetch(seg->words() + s.queues[i].read.off);
    const char *sram = reinterpret_cast<const char *>(s.sram);
    for (uint32_t at = 0; at < std::min<uint32_t>(4 * s.sramWords, kSramBytes); at += 64)
      __builtin_prefetch(sram + at);
  }
  if (n >= 1) // routed after the visit
    fabric.prefetchSlots(pes[turn[n - 1]]);
}

void runLane(Shared &sh, unsigned id);

/// A worker's exception would end the process: report it as a failure.
void runLaneGuarded(Shared &sh, unsigned id) {
  try {
    runLane(sh, id);
  } catch (const std::bad_alloc &) {
    sh.fail(Status::failure("out of host memory while emulating the program"));
  }
}

void runLane(Shared &sh, unsigned id) {
  forgetBatchWalks();
  Lane &lane = *sh.lanes[id];
  const std::vector<uint32_t> &regionOf = sh.m.peRegion;
  Fabric::Walker walker;
  std::vector<uint64_t> woken;
  Outbox &outbox = lane.outbox;
  std::vector<Fabric::Remote> remote, mail;
  // PEs of the region whose turn it is run in this turn, the last woken first.
  auto wake = [&](bool inTurn) {
    for (size_t i = woken.size(); i-- > 0;) {
      uint32_t r = regionOf[woken[i]];
      if (inTurn && r == lane.turnRegion)
        lane.turn.push_back(woken[i]);
      else
        lane.add(r, woken[i]);
    }
    woken.clear();
  };
  // A split run exchanges walks between turns, and within a long turn every
  // kExchangeVisits visits: a message per visit would cost more than the
  // visit (the receiver's results do not depend on when words arrive).
  constexpr uint64_t kExchangeVisits = 64;
  while (!sh.stop.load(std::memory_order_relaxed)) {
    if (sh.dist && (lane.turn.empty() || lane.visits % kExchangeVisits == 0)) {
      bool idle = lane.turn.empty() && lane.readyCount == 0;
      if (!exchange(sh, idle, walker, woken))
        return;
      wake(!lane.turn.empty());
      if (lane.turn.empty() && lane.readyCount == 0)
        continue;
    }
    if (lane.hasMail.load()) {
      {
        std::lock_guard<std::mutex> lock(lane.mailMu);
        mail.swap(lane.mail);
        lane.hasMail = false;
      }
      for (const Fabric::Remote &r : mail)
        sh.fabric.deliver(r, woken);
      sh.inFlight -= int64_t(mail.size());
      mail.clear();
      wake(!lane.turn.empty());
    }
    if (lane.turn.empty()) {
      if (lane.readyCount == 0) {
        std::unique_lock<std::mutex> lock(sh.mu);
        ++sh.idle;
        while (!sh.stop && !sh.done && !lane.hasMail.load()) {
          if (sh.idle == sh.lanes.size() && sh.inFlight == 0) {
            sh.done = true;
            sh.cv.notify_all();
          } else
            sh.cv.wait(lock);
        }
        --sh.idle;
        if (sh.done)
          return;
        continue;
      }
      lane.startTurn();
    }
    prefetchTurn(sh.pes, sh.fabric, lane.turn);
    uint64_t pe = lane.turn.back();
    lane.turn.pop_back();
    ++lane.visits;
    PeState &s = sh.pes[pe];
    if (Status st = sh.sram.enter(regionOf[pe]); !st)
      return sh.fail(st);
    runPe(sh.m, pe, s, sh.options, sh.limit, outbox);
    if (s.status == PeStatus::Faulted)
      return sh.fail(Status::failure(s.fault()));
    if (s.watch && sh.stopped && sh.stopped->load()) {
      if (sh.dist)
        sh.dist->halt();
      return sh.halt();
    }
    if (Status st = sh.fabric.route(walker, pe, sh.pes[pe], outbox, uint8_t(id), woken, remote);
        !st)
      return sh.fail(st);
    if (s.status == PeStatus::Ready)
      lane.add(lane.turnRegion, pe);
    else if (s.status == PeStatus::Done) {
      sh.fabric.close(pe);
      sh.sram.ended(regionOf[pe]);
    }
    wake(true);
    if (remote.empty())
      continue;
    // Post to the threads that run the receivers, in send order.
    sh.inFlight += int64_t(remote.size());
    for (unsigned to = 0; to < sh.lanes.size(); ++to) {
      if (to == id)
        continue;
      Lane &dst = *sh.lanes[to];
      std::lock_guard<std::mutex> lock(dst.mailMu);
      size_t before = dst.mail.size();
      for (Fabric::Remote &r : remote)
        if (r.lane == to)
          dst.mail.push_back(std::move(r));
      if (dst.mail.size() != before)
        dst.hasMail = true;
    }
    remote.clear();
    // A sleeping thread checks its mail under `mu` before it waits.
    if (sh.idle.load() > 0) {
      std::lock_guard<std::mutex> lock(sh.mu);
      sh.cv.notify_all();
    }
  }
}

} // namespace

unsigned threadCount(const RunOptions &options, uint64_t pes) {
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  return unsigned(std::max<uint64_t>(1, std::min<uint64_t>({threads, 256, pes})));
}

Status schedule(const Model &m, PeStates &pes, KernelSram &sram, const RunOptions &options,
                RunReport &report, const std::atomic<bool> *stopped, Distributed *dist) {
  unsigned threads = dist ? 1 : threadCount(options, pes.size());
  Fabric fabric(m, pes);
  fabric.setLogBudget(options.messageLogBytes);
  std::vector<std::vector<uint32_t>> views = resolvePredicates(m, pes);
  Shared sh(m, pes, sram, options, fabric);
  sh.stopped = stopped;
  sh.dist = dist;
  if (dist) {
    // Another process's PEs are none of this one's business.
    fabric.setPartition(dist->partition(), dist->rank());
    for (uint64_t pe = 0; pe < pes.size(); ++pe)
      if (!dist->owns(m, pe))
        pes[pe].status = PeStatus::Done;
  }
  // With several threads, smaller visits let a kernel's consumer on the
  // other thread start sooner (GPT-2-small at 2 threads: 1,024 sends per
  // visit 18-20 s, 512 21 s, 2,048 22 s, 4,096 21-24 s).
  if (threads > 1)
    sh.limit.sends /= 4;
  for (unsigned t = 0; t < threads; ++t) {
    sh.lanes.push_back(std::make_unique<Lane>());
    sh.lanes.back()->ready.resize(m.regions.size());
  }
  std::vector<uint8_t> laneOf(pes.size());
  std::vector<bool> oneWay = fabric.stripsOneWay(threads);
  for (uint32_t r = 0; r < m.regions.size(); ++r) {
    const Region &reg = m.regions[r];
    for (uint64_t i = 0; i < uint64_t(reg.w) * reg.h; ++i)
      laneOf[reg.firstPe + i] = uint8_t(oneWay[r] ? i % reg.w * threads / reg.w : r % threads);
  }
  for (uint64_t pe = 0; pe < pes.size(); ++pe)
    if (pes[pe].status == PeStatus::Ready)
      sh.lanes[laneOf[pe]]->add(m.peRegion[pe], pe);
  fabric.assignLanes(laneOf);
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(runLaneGuarded, std::ref(sh), t);
  runLaneGuarded(sh, 0);
  for (std::thread &w : workers)
    w.join();
  for (const auto &lane : sh.lanes) {
    report.rounds += lane->visits;
    report.batchedTrips += lane->outbox.batchedTrips;
  }
  if (!sh.failure)
    return sh.failure;
  bool halted = (stopped && stopped->load()) || (dist && dist->halted());
  for (const PeState &s : pes)
    if (s.status != PeStatus::Done && !halted)
      return deadlock(m, pes);

  for (const PeState &s : pes) {
    report.cycles = std::max(report.cycles, s.clock);
    report.instructions += s.instructions;
    report.messages += s.messages;
  }
  LinkLoad load = fabric.linkLoad();
  load.report(report.cycles, report);
  if (dist)
    dist->linkLoad = load; // the utilizations need the whole run's cycles
  if (!halted) // messages still on their way are no leftovers then
    leftovers(m, pes, report);
  return Status::success();
}

} // namespace wsc::runtime::detail
