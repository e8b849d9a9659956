// The region engine's times (docs/runtime.md, The region engine): a batch's
// cycles counted trip by trip as the interpreter counts them, or taken from
// another batch's whose arrivals are these moved by one shift.
#include "Batch.h"

#include <array>

namespace wsc::runtime::detail {

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

} // namespace wsc::runtime::detail
