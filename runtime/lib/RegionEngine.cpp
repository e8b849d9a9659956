// The region engine (RunOptions::Engine::Region, docs/runtime.md): a PE's
// loop nest run at once, each instruction over all its trips, with its
// cycles counted as the interpreter counts them. Here: which nests it
// takes, their trips' places and walks, and their data.
#include "Batch.h"

#include <algorithm>
#include <cstring>
#include <deque>

namespace wsc::runtime::detail {
namespace {

using format::Op;

/// out[i] += x[i], each word's add alone as ADD adds it. Inline, without
/// fastF32's dispatch and overlap checks: a batch calls it per trip on a
/// few words, and out (a trip's own words) never overlaps x (a log or the
/// products).
inline void addWords(SramF32 *__restrict out, const SramF32 *__restrict x, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    out[i] = out[i] + x[i];
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
