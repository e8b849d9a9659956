// The fabric: a message follows the router tables hop by hop, multicasting
// where an entry names several ports. Every way a compiler can get routing
// wrong ends here as a fault message.
#include "Distributed.h"
#include "Machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

namespace wsc::runtime::detail {
namespace {

uint32_t opposite(uint32_t port) {
  switch (port) {
  case format::NORTH:
    return format::SOUTH;
  case format::SOUTH:
    return format::NORTH;
  case format::EAST:
    return format::WEST;
  case format::WEST:
    return format::EAST;
  default:
    return port;
  }
}

} // namespace

Fabric::Fabric(const Model &m, PeStates &pes) : m_(m) {
  size_t positions = size_t(m.wafers) * m.width * m.height;
  // Group the router entries by (position, color): count, prefix-sum, fill.
  const std::vector<std::pair<uint64_t, uint8_t>> &entries = m.routes; // sorted
  slotStart_.assign(positions + 1, 0);
  uint64_t lastSlotKey = ~uint64_t(0);
  for (const auto &[key, mask] : entries) {
    uint64_t slotKey = key >> 3; // drops the input port
    if (slotKey == lastSlotKey)
      continue;
    lastSlotKey = slotKey;
    uint64_t pk = key >> 13;
    size_t pos = position(uint32_t(pk >> 32), uint32_t(pk & 0xffff), uint32_t((pk >> 16) & 0xffff));
    ++slotStart_[pos + 1];
  }
  for (size_t i = 0; i < positions; ++i)
    slotStart_[i + 1] += slotStart_[i];
  slots_.resize(slotStart_[positions]);
  std::vector<uint32_t> fill(slotStart_.begin(), slotStart_.end() - 1);
  lastSlotKey = ~uint64_t(0);
  size_t cur = 0;
  for (const auto &[key, mask] : entries) {
    uint64_t slotKey = key >> 3;
    if (slotKey != lastSlotKey) {
      lastSlotKey = slotKey;
      uint64_t pk = key >> 13;
      size_t pos =
          position(uint32_t(pk >> 32), uint32_t(pk & 0xffff), uint32_t((pk >> 16) & 0xffff));
      cur = fill[pos]++;
      slots_[cur].color = uint32_t((key >> 3) & 1023);
      slots_[cur].pos = uint32_t(pos);
    }
    slots_[cur].mask[key & 7] = mask;
  }
  // Each slot's core queue. Slots are by position, then color, so a PE's
  // queues are contiguous and by ascending color.
  size_t numQueues = 0;
  for (Slot &sl : slots_) {
    for (uint8_t mask : sl.mask)
      sl.outs |= mask;
    Place at = place(sl.pos);
    numQueues += (sl.outs & (1u << format::RAMP)) && m.regionOf(at.wafer, at.x, at.y) >= 0;
  }
  queues_ = decltype(queues_)(numQueues);
  numQueues = 0;
  for (Slot &sl : slots_) {
    auto [wafer, x, y] = place(sl.pos);
    int32_t r = m.regionOf(wafer, x, y);
    if ((sl.outs & (1u << format::RAMP)) && r >= 0) {
      sl.queue = int32_t(numQueues);
      RecvQueue &q = queues_[numQueues++];
      q.pe = m.peIndex(uint32_t(r), x, y);
      q.color = sl.color;
      if (const FilterRef *f = m.filter(routeKey(wafer, x, y, sl.color, format::RAMP)))
        q.first = f->first, q.count = f->count, q.period = f->period;
    }
  }
  for (RecvQueue &q : queues_) {
    PeState &s = pes[q.pe];
    if (!s.numQueues++)
      s.queues = &q;
  }
  for (uint64_t pe = 0; pe < pes.size(); ++pe) {
    size_t pos = pePosition(pe);
    pes[pe].firstSlot = slotStart_[pos];
    pes[pe].slotCount = slotStart_[pos + 1] - slotStart_[pos];
  }
  size_t numOrigins = 0;
  for (Slot &sl : slots_)
    if (sl.mask[format::RAMP])
      sl.origin = int32_t(numOrigins++);
  origins_ = decltype(origins_)(numOrigins);
}

void Fabric::Origin::setTargets(const std::vector<Arrival> &arrivals) {
  numTargets = uint32_t(arrivals.size());
  Arrival *to = near;
  if (numTargets > std::size(near)) {
    spill = std::make_unique<Arrival[]>(numTargets);
    to = spill.get();
  }
  std::copy(arrivals.begin(), arrivals.end(), to);
}

uint64_t Fabric::plannedBytes(const Model &m) {
  // As the constructor groups them: a slot per (position, color), an origin
  // per slot a core sends into, a queue per slot that delivers to a core.
  uint64_t slots = 0, origins = 0, queues = 0, lastSlotKey = ~uint64_t(0),
           lastQueueKey = ~uint64_t(0);
  for (const auto &[key, mask] : m.routes) {
    uint64_t slotKey = key >> 3, pk = key >> 13;
    slots += slotKey != lastSlotKey;
    lastSlotKey = slotKey;
    origins += (key & 7) == format::RAMP;
    if (!(mask & (1u << format::RAMP)) || slotKey == lastQueueKey)
      continue;
    lastQueueKey = slotKey;
    queues +=
        m.regionOf(uint32_t(pk >> 32), uint32_t(pk & 0xffff), uint32_t((pk >> 16) & 0xffff)) >= 0;
  }
  uint64_t positions = uint64_t(m.wafers) * m.width * m.height;
  return slots * sizeof(Slot) + origins * sizeof(Origin) + queues * sizeof(RecvQueue) +
         (positions + 1) * sizeof(uint32_t);
}

Fabric::~Fabric() {
  for (RecvQueue &q : queues_) {
    if (q.drained)
      continue;
    MessageLog *log = q.log.load(std::memory_order_acquire);
    for (MessageLog::Segment *s = q.read.seg ? q.read.seg : log ? log->start() : nullptr; s;) {
      MessageLog::Segment *next = s->next.load(std::memory_order_acquire);
      MessageLog::leave(s);
      s = next;
    }
  }
}

void MessageLog::appendBlock(const uint32_t *words, const OutMsg *const *msgs, size_t count,
                             uint64_t blockWords) {
  if (room() < blockWords)
    grow(std::min<uint64_t>(blockWords, kMaxSegment));
  if (room() < blockWords) { // larger than a segment
    for (size_t k = 0; k < count; ++k)
      append(words + msgs[k]->offset, msgs[k]->size, msgs[k]->time);
    return;
  }
  uint32_t used = tail_->used.load(std::memory_order_relaxed);
  uint32_t *d = tail_->words() + used;
  uint64_t sent = 0;
  for (size_t k = 0; k < count; ++k) {
    d = put(d, words + msgs[k]->offset, msgs[k]->size, msgs[k]->time);
    sent += msgs[k]->size;
  }
  publish(used + uint32_t(blockWords), sent);
}

void MessageLog::grow(uint64_t atLeast) {
  // The readers left a segment: they keep up, and it serves again.
  Segment *s = spare_.exchange(nullptr, std::memory_order_acquire);
  if (s && s->capacity >= atLeast) {
    s->used.store(0, std::memory_order_relaxed);
    s->next.store(nullptr, std::memory_order_relaxed);
    s->readers.store(readers_, std::memory_order_relaxed);
  } else {
    if (s)
      free(s);
    // Else they lag: segments double up to 64 Ki words, so a busy
    // multicast's allocates rarely.
    uint32_t capacity = uint32_t(std::max<uint64_t>(nextCapacity_, atLeast));
    nextCapacity_ = std::min<uint32_t>(nextCapacity_ * 2, kMaxSegment);
    s = new (::operator new(sizeof(Segment) + size_t(capacity) * 4)) Segment;
    s->readers.store(readers_, std::memory_order_relaxed);
    s->capacity = capacity;
    s->log = this;
    uint64_t live = bytes_.live.fetch_add(s->size(), std::memory_order_relaxed) + s->size();
    for (uint64_t peak = bytes_.peak.load(std::memory_order_relaxed);
         live > peak && !bytes_.peak.compare_exchange_weak(peak, live, std::memory_order_relaxed);)
      ;
  }
  if (tail_)
    tail_->next.store(s, std::memory_order_release);
  else
    start_ = s;
  tail_ = s;
}

void MessageLog::append(const uint32_t *words, uint32_t n, uint64_t time) {
  uint32_t need = kHeader + n;
  if (room() < need)
    grow(need);
  uint32_t used = tail_->used.load(std::memory_order_relaxed);
  put(tail_->words() + used, words, n, time);
  publish(used + need, n);
}

void Fabric::assignLanes(const std::vector<uint8_t> &laneOfPe) {
  for (RecvQueue &q : queues_)
    q.lane = laneOfPe[q.pe];
}

void Fabric::close(uint64_t pe) {
  size_t pos = pePosition(pe);
  for (uint32_t i = slotStart_[pos]; i < slotStart_[pos + 1]; ++i)
    if (Origin *o = originOf(int32_t(i)); o && o->log)
      o->log->close();
}

int32_t Fabric::neighbour(size_t pos, uint32_t color, uint32_t port, uint32_t &to) const {
  auto [wafer, x, y] = place(pos);
  int64_t nx = int64_t(x) + (port == format::EAST) - (port == format::WEST);
  int64_t ny = int64_t(y) + (port == format::SOUTH) - (port == format::NORTH);
  if (!m_.onGrid(nx, ny))
    return kOffGrid;
  to = uint32_t(position(wafer, uint32_t(nx), uint32_t(ny)));
  if (m_.dead[wafer][size_t(ny) * m_.width + size_t(nx)])
    return kDead;
  return slotOf(to, color);
}

int32_t Fabric::slotIn(uint32_t first, uint32_t end, uint32_t color) const {
  for (uint32_t i = first; i < end; ++i)
    if (slots_[i].color == color)
      return int32_t(i);
  return kNoEntry;
}

Status Fabric::walk(Walker &w, const Source &src, const Outbox &outbox, const OutMsg *const *msgs,
                    size_t count, uint8_t lane, std::vector<uint64_t> &woken,
                    std::vector<Remote> &remote) {
  const OutMsg &msg = *msgs[0];
  // The largest message's delays bound the block's (a link's grow with size).
  uint64_t n = 0, words = 0;
  for (size_t k = 0; k < count; ++k) {
    n = std::max<uint64_t>(n, msgs[k]->size);
    words += msgs[k]->size;
  }
  auto fail = [&](const char *kind, const Hop &h, std::string what) {
    Place at = place(h.pos);
    return Status::failure(fmt::format("{}: {}, color {}: {} (sent by {} on color {})", kind,
                                       m_.where(at.wafer, at.x, at.y), h.color, what,
                                       m_.wherePe(src.pe), msg.color));
  };
  std::vector<Hop> &stack = w.stack;
  std::vector<Arrival> &arrivals = w.arrivals;
  stack.clear();
  arrivals.clear();
  w.crossings.clear();
  uint32_t ownerId = src.ownerId;
  // Every message of an origin follows the same tables, so its first one
  // finds any routing loop: it is the one that meets a link it owns.
  bool first = false;
  Origin *from = src.from;
  if (from) {
    first = from->messages == 0;
    from->messages += count;
    from->words += words;
  }
  // Later walks read the same tables to the same cores: their arrivals are known.
  bool known = from && from->log;
  // Its first walk checked every hop and claimed every link; the tables do
  // not change, so a later block needs no walk unless its delays depend on
  // its size (a LINK) or its walk goes on in another process.
  if (known && from->planned && n > 0) {
    deliver(*from, outbox, msgs, count, words, lane, woken, remote);
    return Status::success();
  }
  bool linked = false;
  // A hop another process owns is that process's to walk.
  auto next = [&](const Hop &to) {
    if (local(to.pos))
      stack.push_back(to);
    else
      w.crossings.emplace_back(rankOfRow_[to.pos / m_.width], to);
  };
  stack.push_back(src.start);
  while (!stack.empty()) {
    Hop h = stack.back();
    stack.pop_back();
    uint8_t mask = h.slot < 0 ? 0 : slots_[h.slot].mask[h.in];
    if (!mask)
      return fail("no route", h,
                  fmt::format("a wavelet arriving on {} has no router entry", portName(h.in)));
    Slot &sl = slots_[h.slot];
    for (uint32_t bits = mask; bits; bits &= bits - 1) {
      uint32_t port = uint32_t(__builtin_ctz(bits));
      // Threads walking other origins may claim links concurrently.
      uint32_t owner = __atomic_load_n(&sl.owner[port], __ATOMIC_RELAXED);
      if (owner == ownerId && first)
        return fail("routing loop", h,
                    fmt::format("the same wavelet leaves through {} twice", portName(port)));
      if (owner == 0 && __atomic_compare_exchange_n(&sl.owner[port], &owner, ownerId, false,
                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        owner = ownerId;
      if (owner != ownerId) {
        {
          const Slot &other = slots_[owner - 1];
          Place at = place(other.pos);
          return fail("collision", h,
                      fmt::format("{} already carries wavelets of {} on color {}", portName(port),
                                  m_.where(at.wafer, at.x, at.y), other.color));
        }
      }
      if (port == format::RAMP) {
        if (sl.queue < 0)
          return fail("no kernel", h, "delivered to the core of a PE that runs no kernel");
        uint64_t delay = 1 + h.hops * m_.hopCycles + h.extra;
        if (delay + h.links * m_.linkCrossing(n) > UINT32_MAX)
          return fail("host limit", h, "a message would take 2^32 cycles or more to arrive");
        if (!known) {
          // Read once the log is published (deliver), which orders these writes first.
          RecvQueue &q = queues_[size_t(sl.queue)];
          q.delay = uint32_t(delay);
          q.links = uint16_t(h.links);
          arrivals.push_back(Arrival{uint32_t(sl.queue)});
        }
        continue;
      }
      if (port == format::LINK) {
        linked = true;
        Place at = place(h.pos);
        auto l = m_.links.find(routeKey(at.wafer, at.x, at.y, h.color, port));
        if (l == m_.links.end())
          return fail("no link", h, "routed through LINK but no inter-wafer link leaves here");
        const LinkEnd &e = l->second;
        uint32_t pos = uint32_t(position(e.wafer, e.x, e.y));
        next(Hop{slotOf(pos, e.color), pos, e.color, format::LINK, h.hops, h.extra + m_.linkLatency,
                 h.links + 1});
        continue;
      }
      uint32_t pos = 0;
      int32_t slot = neighbour(h.pos, sl.color, port, pos);
      if (slot == kOffGrid)
        return fail("off the grid", h,
                    fmt::format("routed {} off the edge of the wafer", portName(port)));
      if (slot == kDead) {
        Place at = place(pos);
        return fail("dead PE", h,
                    fmt::format("routed {} into dead PE ({},{})", portName(port), at.x, at.y));
      }
      // A sibling branch waits on the stack meanwhile. (slot is -1 where the
      // neighbour has no entry for the color: "no route" on the next hop.)
      if (slot >= 0)
        __builtin_prefetch(&slots_[size_t(slot)]);
      next(Hop{slot, pos, h.color, opposite(port), h.hops + 1, h.extra, h.links});
    }
  }
  if (!w.crossings.empty())
    passOn(w, src, outbox, msgs, count);
  // An empty SEND is routed (and checked) but delivers nothing; a walk
  // that reaches only other processes' cores delivers nothing here.
  if (n == 0 || !from || (!known && arrivals.empty()))
    return Status::success();
  if (!known) {
    from->setTargets(arrivals);
    from->log.emplace(uint32_t(arrivals.size()), logBytes_);
    from->planned = !linked && w.crossings.empty();
  }
  deliver(*from, outbox, msgs, count, words, lane, woken, remote, !known);
  return Status::success();
}

void Fabric::deliver(Origin &from, const Outbox &outbox, const OutMsg *const *msgs, size_t count,
                     uint64_t words, uint8_t lane, std::vector<uint64_t> &woken,
                     std::vector<Remote> &remote, bool first) {
  from.log->appendBlock(outbox.words.data(), msgs, count, count * MessageLog::kHeader + words);
  // The queues learn their log here; a waiting PE is woken to count again.
  // A queue of a PE that another thread runs is that thread's to look at.
  for (const Arrival *a = from.targetsBegin(); a != from.targetsEnd(); ++a) {
    RecvQueue &q = queues_[a->queue];
    if (first)
      q.log.store(&*from.log, std::memory_order_release);
    if (q.lane == lane)
      wake(q, woken);
    else
      remote.push_back(Remote{a->queue, q.lane});
  }
}

namespace {
/// A visit's messages by color, stably, into `order`: a visit sends
/// thousands of messages on a few colors, and a batch's mostly on one.
void orderByColor(const Outbox &outbox, std::vector<const OutMsg *> &order,
                  std::vector<uint32_t> &colors) {
  order.clear();
  bool oneColor = true;
  for (const OutMsg &msg : outbox.msgs) {
    oneColor &= msg.color == outbox.msgs[0].color;
    order.push_back(&msg);
  }
  if (oneColor)
    return;
  order.clear();
  colors.clear();
  for (const OutMsg &msg : outbox.msgs)
    if (colors.empty() || (colors.back() != msg.color &&
                           std::find(colors.begin(), colors.end(), msg.color) == colors.end()))
      colors.push_back(msg.color);
  std::sort(colors.begin(), colors.end());
  for (uint32_t color : colors)
    for (const OutMsg &msg : outbox.msgs)
      if (msg.color == color)
        order.push_back(&msg);
}
} // namespace

Status Fabric::route(Walker &w, uint64_t sender, const PeState &state, Outbox &outbox, uint8_t lane,
                     std::vector<uint64_t> &woken, std::vector<Remote> &remote) {
  // A visit's messages of one color travel as one block (each color keeps
  // its send order; colors reach different queues): the tables they follow
  // do not depend on their sizes (a row gather's relay and send differ),
  // and a queue adds a link's size-dependent time per message. Empty
  // messages deliver nothing and go on their own.
  std::vector<const OutMsg *> &order = w.order;
  orderByColor(outbox, order, w.colors);
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && order[j]->color == order[i]->color &&
           (order[j]->size == 0) == (order[i]->size == 0))
      ++j;
    // The origin (the sending PE and color) is named by its slot at the sender.
    int32_t srcSlot = slotIn(state.firstSlot, state.firstSlot + state.slotCount, order[i]->color);
    uint32_t srcPos = srcSlot >= 0 ? slots_[size_t(srcSlot)].pos : uint32_t(pePosition(sender));
    Source source{sender, uint32_t(srcSlot) + 1, originOf(srcSlot),
                  Hop{srcSlot, srcPos, order[i]->color, format::RAMP, 0, 0, 0}};
    if (Status st = walk(w, source, outbox, order.data() + i, j - i, lane, woken, remote); !st)
      return st;
    i = j;
  }
  outbox.clear();
  if (uint64_t live = logBytes_.live.load(std::memory_order_relaxed); live > logBudget_)
    return Status::failure(fmt::format(
        "out of host memory: the message logs hold {} bytes of words sent and not yet read, "
        "more than the {} the run may take for them",
        live, logBudget_));
  return Status::success();
}

void Fabric::setPartition(const Partition &partition, unsigned rank) {
  rankOfRow_ = partition.rankOfRow;
  ranks_ = partition.ranks;
  rank_ = rank;
}

// A walk passed on: the sending PE, its owner id and color, the hop, then
// the messages (size, send time, words).
void Fabric::passOn(Walker &w, const Source &src, const Outbox &outbox, const OutMsg *const *msgs,
                    size_t count) {
  if (w.outgoing.size() < ranks_)
    w.outgoing.resize(ranks_);
  for (const auto &[rank, hop] : w.crossings) {
    ByteWriter out{w.outgoing[rank]};
    out.put(src.pe);
    out.put(src.ownerId);
    out.put(msgs[0]->color);
    out.put(hop.slot), out.put(hop.pos), out.put(hop.color), out.put(hop.in);
    out.put(hop.hops), out.put(hop.extra), out.put(hop.links);
    out.put(uint64_t(count));
    for (size_t k = 0; k < count; ++k) {
      out.put(msgs[k]->size), out.put(msgs[k]->time);
      out.words(outbox.words.data() + msgs[k]->offset, msgs[k]->size);
    }
  }
}

Status Fabric::receive(Walker &w, const uint8_t *bytes, size_t size, std::vector<uint64_t> &woken) {
  ByteReader in{bytes};
  std::vector<Remote> remote; // one thread: stays empty
  while (in.at < size) {
    Source src{};
    src.pe = in.get<uint64_t>();
    src.ownerId = in.get<uint32_t>();
    uint32_t color = in.get<uint32_t>();
    Hop &h = src.start;
    h.slot = in.get<int32_t>(), h.pos = in.get<uint32_t>(), h.color = in.get<uint32_t>();
    h.in = in.get<uint32_t>(), h.hops = in.get<uint64_t>(), h.extra = in.get<uint64_t>();
    h.links = in.get<uint32_t>();
    std::unique_ptr<Origin> &entry = entries_[{src.ownerId, h.slot, h.in}];
    if (!entry)
      entry = std::make_unique<Origin>();
    src.from = entry.get();
    Outbox &box = w.received;
    box.clear();
    for (uint64_t k = 0, count = in.get<uint64_t>(); k < count; ++k) {
      uint32_t words = in.get<uint32_t>();
      uint64_t time = in.get<uint64_t>();
      // Copied, not read in place: the words need not be aligned there.
      size_t at = box.words.size();
      box.msgs.push_back(OutMsg{color, words, time, at});
      box.words.resize(at + words);
      std::memcpy(box.words.data() + at, bytes + in.at, size_t(words) * 4);
      in.at += size_t(words) * 4;
    }
    std::vector<const OutMsg *> &order = w.order;
    order.clear();
    for (const OutMsg &msg : box.msgs)
      order.push_back(&msg);
    if (Status st = walk(w, src, box, order.data(), order.size(), 0, woken, remote); !st)
      return st;
  }
  return Status::success();
}

void Fabric::deliver(const Remote &r, std::vector<uint64_t> &woken) {
  wake(queues_[r.queue], woken);
}

std::vector<bool> Fabric::stripsOneWay(unsigned n) const {
  std::vector<bool> oneWay(m_.regions.size(), false);
  if (n < 2)
    return oneWay; // one strip: nothing to split
  // Each slot once per origin (a table with a loop ends there): a stamp per walk.
  std::vector<uint32_t> seen(slots_.size(), 0);
  uint32_t stamp = 0;
  std::vector<std::pair<int32_t, uint32_t>> stack; // slot, input port
  for (size_t r = 0; r < m_.regions.size(); ++r) {
    const Region &reg = m_.regions[r];
    if (reg.w < n)
      continue;
    auto strip = [&](uint32_t x) { return (x - reg.x) * n / reg.w; };
    auto inside = [&](uint32_t pos) {
      Place at = place(pos);
      return at.wafer == reg.wafer && at.x >= reg.x && at.x < reg.x + reg.w && at.y >= reg.y &&
             at.y < reg.y + reg.h;
    };
    bool east = false, west = false;
    for (uint32_t y = reg.y; y < reg.y + reg.h && !(east && west); ++y)
      for (uint32_t x = reg.x; x < reg.x + reg.w && !(east && west); ++x) {
        size_t pos = position(reg.wafer, x, y);
        for (uint32_t i = slotStart_[pos]; i < slotStart_[pos + 1]; ++i) {
          if (!slots_[i].mask[format::RAMP])
            continue; // the PE sends nothing on this color
          ++stamp;
          stack.assign(1, {int32_t(i), format::RAMP});
          while (!stack.empty()) {
            auto [slot, in] = stack.back();
            stack.pop_back();
            const Slot &sl = slots_[size_t(slot)];
            for (uint32_t bits = sl.mask[in]; bits; bits &= bits - 1) {
              uint32_t port = uint32_t(__builtin_ctz(bits));
              if (port == format::RAMP) {
                uint32_t to = strip(place(sl.pos).x);
                east |= to > strip(x);
                west |= to < strip(x);
                continue;
              }
              uint32_t to = 0;
              int32_t next =
                  port == format::LINK ? kNoEntry : neighbour(sl.pos, sl.color, port, to);
              // Followed inside the kernel only: its PEs' round trips.
              if (next < 0 || seen[size_t(next)] == stamp || !inside(slots_[size_t(next)].pos))
                continue;
              seen[size_t(next)] = stamp;
              stack.push_back({next, opposite(port)});
            }
          }
        }
      }
    oneWay[r] = !(east && west);
  }
  return oneWay;
}

LinkLoad Fabric::linkLoad() const {
  LinkLoad load;
  load.logPeakBytes = logBytes_.peak.load(std::memory_order_relaxed);
  // An origin of another process carried, on the links here, what its
  // entries here received (each receives all of its messages).
  std::unordered_map<uint32_t, uint64_t> enteredWords;
  for (const auto &[key, entry] : entries_)
    enteredWords[std::get<0>(key)] = entry->words;
  for (size_t pos = 0; pos + 1 < slotStart_.size(); ++pos)
    for (uint32_t port = 0; port < kNumPorts; ++port) {
      // Ramps into a core are not links; every link a message crossed has an owner.
      uint64_t words = 0;
      bool used = false;
      for (uint32_t i = slotStart_[pos]; i < slotStart_[pos + 1] && port != format::RAMP; ++i) {
        uint32_t owner = slots_[i].owner[port];
        if (owner) {
          int32_t o = slots_[owner - 1].origin;
          words += o >= 0 && origins_[size_t(o)].messages ? origins_[size_t(o)].words
                                                          : enteredWords[owner];
        }
        used |= owner != 0;
      }
      if (!used)
        continue;
      ++load.used;
      load.wavelets += words;
      double busy = double(words);
      if (port == format::LINK)
        busy = double(words) * 4 / m_.linkBytesPerCycle;
      load.maxBusy = std::max(load.maxBusy, busy);
      load.sumBusy += busy;
    }
  return load;
}

void LinkLoad::add(const LinkLoad &other) {
  used += other.used;
  wavelets += other.wavelets;
  maxBusy = std::max(maxBusy, other.maxBusy);
  sumBusy += other.sumBusy;
  logPeakBytes += other.logPeakBytes;
}

void LinkLoad::report(uint64_t cycles, RunReport &report) const {
  report.messageLogPeakBytes = logPeakBytes;
  report.linksUsed = used;
  report.wavelets = wavelets;
  report.linkMaxUtilization = cycles ? maxBusy / double(cycles) : 0;
  report.linkMeanUtilization = cycles && used ? sumBusy / double(cycles) / double(used) : 0;
}

} // namespace wsc::runtime::detail
