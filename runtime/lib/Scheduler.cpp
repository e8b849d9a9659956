// Bulk-synchronous scheduling. A round runs every ready PE (in parallel) until
// it blocks or ends, then routes the round's messages in PE-index order.
// A PE's results depend only on the words it receives and their timestamps,
// never on the round or thread that ran it, so any thread count gives
// bit-identical numbers, cycles and faults.
#include "Machine.h"
#include "ThreadPool.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace wsc::runtime::detail {
namespace {

constexpr size_t kMaxListedPes = 8;
constexpr size_t kMaxWarnings = 20;

Status deadlock(const Model &m, const std::vector<PeState> &pes) {
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

void leftovers(const Model &m, const std::vector<PeState> &pes, RunReport &report) {
  size_t total = 0;
  for (uint64_t pe = 0; pe < pes.size(); ++pe)
    for (uint32_t i = 0; i < pes[pe].numQueues; ++i) {
      const RecvQueue &q = pes[pe].queues[i];
      if (!q.words)
        continue;
      if (++total <= kMaxWarnings)
        report.warnings.push_back(fmt::format("{}, color {}: {} received words never consumed",
                                              m.wherePe(pe), q.color, q.words));
    }
  if (total > kMaxWarnings)
    report.warnings.push_back(
        fmt::format("... and {} more PE colors with unconsumed words", total - kMaxWarnings));
}

} // namespace

Status schedule(const Model &m, std::vector<PeState> &pes, const RunOptions &options,
                RunReport &report) {
  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, 256));
  ThreadPool pool(threads);
  Fabric fabric(m, threads, pes);
  std::vector<uint64_t> ready(pes.size()), woken;
  struct Parked {
    uint64_t pe, since;
  };
  std::vector<Parked> parked;
  for (uint64_t pe = 0; pe < pes.size(); ++pe)
    ready[pe] = pe;
  while (!ready.empty()) {
    ++report.rounds;
    uint64_t earliest = UINT64_MAX;
    for (uint64_t pe : ready)
      earliest = std::min(earliest, pes[pe].clock);
    uint64_t horizon = earliest > UINT64_MAX - kRoundWindow ? UINT64_MAX : earliest + kRoundWindow;
    pool.parallelFor(
        ready.size(), [&](size_t i) { runPe(m, ready[i], pes[ready[i]], options, horizon); },
        ready.size() >= kParallelPes);
    // `ready` is sorted, so the lowest-index fault wins whatever the threads did.
    for (uint64_t pe : ready)
      if (pes[pe].status == PeStatus::Faulted)
        return Status::failure(pes[pe].fault);
    woken.clear();
    if (Status s = fabric.routeRound(ready, pes, woken, pool); !s)
      return s;
    // PEs that yielded run again next round, with those whose RECV can now
    // complete (blocked ones, so none is in both lists).
    size_t keep = 0;
    for (uint64_t pe : ready)
      if (pes[pe].status == PeStatus::Ready)
        ready[keep++] = pe;
    ready.resize(keep);
    // Woken matrix PEs wait for a batch of inputs (see kStreamWords).
    for (uint64_t pe : woken)
      if (pes[pe].streams && pes[pe].batchable)
        parked.push_back({pe, report.rounds});
      else
        ready.push_back(pe);
    bool starving = ready.empty();
    size_t stay = 0;
    for (const Parked &p : parked) {
      PeState &s = pes[p.pe];
      uint64_t have = s.available(s.waitColor);
      if (have >= kBatchRecvs * s.waitWords)
        ready.push_back(p.pe);
      else if (starving || report.rounds - p.since >= kBatchRounds) {
        // Its inputs did not pile up: it likely waits for answers to its
        // own sends, and parking would only stall that exchange.
        if (have < 2 * s.waitWords)
          s.batchable = false;
        ready.push_back(p.pe);
      } else
        parked[stay++] = p;
    }
    parked.resize(stay);
    std::sort(ready.begin(), ready.end());
  }
  for (const PeState &s : pes)
    if (s.status != PeStatus::Done)
      return deadlock(m, pes);

  for (const PeState &s : pes) {
    report.cycles = std::max(report.cycles, s.clock);
    report.instructions += s.instructions;
    report.messages += s.messages;
  }
  fabric.linkStats(report.cycles, report);
  leftovers(m, pes, report);
  return Status::success();
}

} // namespace wsc::runtime::detail
