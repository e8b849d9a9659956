// Worklist scheduling. A visit runs one PE until it blocks, ends or yields,
// then routes its messages at once and queues the PEs they wake. A PE's
// results depend only on the words it receives and their timestamps, never
// on when the host ran it, so any order gives bit-identical numbers and
// cycles; the order is fixed, so faults are too.
#include "Machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

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
  Fabric fabric(m, pes);
  std::vector<std::vector<uint32_t>> views = resolvePredicates(m, pes);
  // Woken PEs run next (last woken first), while the words just delivered
  // to them and their senders' state are still in the host's cache; PEs
  // that yielded wait at the back of `later`, behind every PE yet to start.
  std::vector<uint64_t> next, woken;
  std::vector<OutMsg> outbox; // of the PE being visited; routed when the visit ends
  std::deque<uint64_t> later;
  for (uint64_t pe = 0; pe < pes.size(); ++pe)
    later.push_back(pe);
  while (!next.empty() || !later.empty()) {
    uint64_t pe;
    if (!next.empty()) {
      pe = next.back();
      next.pop_back();
    } else {
      pe = later.front();
      later.pop_front();
    }
    ++report.rounds;
    PeState &s = pes[pe];
    runPe(m, pe, s, options, outbox);
    if (s.status == PeStatus::Faulted)
      return Status::failure(s.fault);
    woken.clear();
    if (Status st = fabric.route(pe, outbox, woken); !st)
      return st;
    if (s.status == PeStatus::Ready)
      later.push_back(pe);
    next.insert(next.end(), woken.rbegin(), woken.rend());
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
