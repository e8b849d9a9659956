// The fabric: a message follows the router tables hop by hop, multicasting
// where an entry names several ports. Every way a compiler can get routing
// wrong ends here as a fault message.
#include "Machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace wsc::runtime::detail {
namespace {

uint32_t opposite(uint32_t port) {
  switch (port) {
  case wafer::NORTH:
    return wafer::SOUTH;
  case wafer::SOUTH:
    return wafer::NORTH;
  case wafer::EAST:
    return wafer::WEST;
  case wafer::WEST:
    return wafer::EAST;
  default:
    return port;
  }
}

} // namespace

Fabric::Fabric(const Model &m, std::vector<PeState> &pes) : m_(m) {
  size_t positions = size_t(m.wafers) * m.width * m.height;
  // Group the router entries by (position, color): count, prefix-sum, fill.
  std::vector<std::pair<uint64_t, uint8_t>> entries(m.routes.begin(), m.routes.end());
  std::sort(entries.begin(), entries.end());
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
  // Resolve every slot's neighbours and core queue once, so that a hop is a
  // few array reads. Slots are by position, then color, so a PE's queues are
  // contiguous and by ascending color.
  size_t plane = size_t(m.width) * m.height;
  for (Slot &sl : slots_) {
    uint32_t wafer = uint32_t(sl.pos / plane), x = uint32_t(sl.pos % plane % m.width),
             y = uint32_t(sl.pos % plane / m.width);
    for (uint32_t port = wafer::NORTH; port <= wafer::WEST; ++port) {
      int64_t nx = int64_t(x) + (port == wafer::EAST) - (port == wafer::WEST);
      int64_t ny = int64_t(y) + (port == wafer::SOUTH) - (port == wafer::NORTH);
      int32_t &next = sl.next[port - wafer::NORTH];
      if (!m.onGrid(nx, ny))
        next = kOffGrid;
      else if (m.dead[wafer][size_t(ny) * m.width + size_t(nx)])
        next = kDead;
      else
        next = slotOf(position(wafer, uint32_t(nx), uint32_t(ny)), sl.color);
    }
    for (uint8_t mask : sl.mask)
      sl.outs |= mask;
    int32_t r = m.regionOf(wafer, x, y);
    if ((sl.outs & (1u << wafer::RAMP)) && r >= 0) {
      sl.queue = int32_t(queues_.size());
      RecvQueue q;
      q.pe = m.peIndex(uint32_t(r), x, y);
      q.color = sl.color;
      if (auto f = m.filters.find(routeKey(wafer, x, y, sl.color, wafer::RAMP));
          f != m.filters.end())
        q.first = f->second->first(), q.count = f->second->count(), q.period = f->second->period();
      queues_.push_back(std::move(q));
    }
  }
  for (RecvQueue &q : queues_) {
    PeState &s = pes[q.pe];
    if (!s.numQueues++)
      s.queues = &q;
  }
  origins_.assign(slots_.size(), Origin{});
}

Fabric::~Fabric() = default;

void Fabric::assignLanes(const std::vector<uint8_t> &laneOfPe) {
  for (RecvQueue &q : queues_)
    q.lane = laneOfPe[q.pe];
}

int32_t Fabric::slotOf(size_t pos, uint32_t color) const {
  for (uint32_t i = slotStart_[pos], e = slotStart_[pos + 1]; i < e; ++i)
    if (slots_[i].color == color)
      return int32_t(i);
  return kNoEntry;
}

Status Fabric::walk(Walker &w, uint64_t origin, const OutMsg *const *msgs, size_t count,
                    uint8_t lane, std::vector<uint64_t> &woken, std::vector<Remote> &remote) {
  const OutMsg &msg = *msgs[0];
  const Region &src = m_.regions[m_.peRegion[origin]];
  uint32_t sx, sy;
  m_.peXY(origin, sx, sy);
  uint64_t n = msg.data.size();
  size_t plane = size_t(m_.width) * m_.height;
  auto fail = [&](const char *kind, const Hop &h, std::string what) {
    uint32_t wafer = uint32_t(h.pos / plane), x = uint32_t(h.pos % plane % m_.width),
             y = uint32_t(h.pos % plane / m_.width);
    return Status::failure(fmt::format("{}: {}, color {}: {} (sent by {} on color {})", kind,
                                       m_.where(wafer, x, y), h.color, what,
                                       m_.wherePe(origin), msg.color));
  };
  std::vector<Hop> &stack = w.stack;
  std::vector<Arrival> &arrivals = w.arrivals;
  stack.clear();
  arrivals.clear();
  uint32_t srcPos = uint32_t(position(src.wafer, sx, sy));
  int32_t srcSlot = slotOf(srcPos, msg.color);
  // The origin (the sending PE and color) is named by its slot at the sender.
  uint32_t ownerId = uint32_t(srcSlot) + 1;
  // Every message of an origin follows the same tables, so its first one
  // finds any routing loop: it is the one that meets a link it owns.
  bool first = false;
  Origin *from = nullptr;
  if (srcSlot >= 0) {
    from = &origins_[size_t(srcSlot)];
    first = from->messages == 0;
    from->messages += count;
    from->words += n * count;
  }
  // Later walks read the same tables to the same cores: their arrivals are known.
  bool known = from && from->walked;
  stack.push_back(Hop{srcSlot, srcPos, msg.color, wafer::RAMP, 0, 0});
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
          uint32_t wafer = uint32_t(other.pos / plane), x = uint32_t(other.pos % plane % m_.width),
                   y = uint32_t(other.pos % plane / m_.width);
          return fail("collision", h,
                      fmt::format("{} already carries wavelets of {} on color {}",
                                  portName(port), m_.where(wafer, x, y), other.color));
        }
      }
      if (port == wafer::RAMP) {
        if (sl.queue < 0)
          return fail("no kernel", h, "delivered to the core of a PE that runs no kernel");
        uint64_t delay = 1 + h.hops * m_.hopCycles + h.extra;
        if (delay > UINT32_MAX)
          return fail("host limit", h, "a message would take 2^32 cycles or more to arrive");
        if (!known)
          arrivals.push_back(Arrival{uint32_t(sl.queue), uint32_t(delay)});
        continue;
      }
      if (port == wafer::LINK) {
        uint32_t wafer = uint32_t(h.pos / plane), x = uint32_t(h.pos % plane % m_.width),
                 y = uint32_t(h.pos % plane / m_.width);
        auto l = m_.links.find(routeKey(wafer, x, y, h.color, port));
        if (l == m_.links.end())
          return fail("no link", h, "routed through LINK but no inter-wafer link leaves here");
        uint64_t delay =
            m_.linkLatency + uint64_t(std::ceil(double(n) * 4 / m_.linkBytesPerCycle));
        const LinkEnd &e = l->second;
        uint32_t pos = uint32_t(position(e.wafer, e.x, e.y));
        stack.push_back(
            Hop{slotOf(pos, e.color), pos, e.color, wafer::LINK, h.hops, h.extra + delay});
        continue;
      }
      int32_t next = sl.next[port - wafer::NORTH];
      if (next == kOffGrid)
        return fail("off the grid", h,
                    fmt::format("routed {} off the edge of the wafer", portName(port)));
      int64_t step = port == wafer::NORTH   ? -int64_t(m_.width)
                     : port == wafer::SOUTH ? int64_t(m_.width)
                     : port == wafer::EAST  ? 1
                                            : -1;
      uint32_t pos = uint32_t(int64_t(h.pos) + step);
      if (next == kDead)
        return fail("dead PE", h,
                    fmt::format("routed {} into dead PE ({},{})", portName(port),
                                pos % plane % m_.width, pos % plane / m_.width));
      __builtin_prefetch(&slots_[next]); // a sibling branch waits on the stack meanwhile
      Hop &to = stack.emplace_back();
      to.slot = next;
      to.pos = pos;
      to.color = h.color;
      to.in = opposite(port);
      to.hops = h.hops + 1;
      to.extra = h.extra;
    }
  }
  if (n == 0) // an empty SEND is routed (and checked) but delivers nothing
    return Status::success();
  if (!from) // a sender without a router entry faulted above
    return Status::success();
  if (!known) {
    for (const Arrival &a : arrivals) {
      const RecvQueue &q = queues_[a.queue];
      from->targets.push_back(Target{a.queue, a.delay, q.first, q.count, q.period, 0});
    }
    from->walked = true;
  }
  std::vector<Target> &targets = from->targets;
  // The filters pick each core's words; only the cores that get some are
  // touched, their queue lines fetched a few ahead. References to the
  // payload are taken in one add. Queues of PEs that another thread runs
  // are that thread's to fill.
  constexpr size_t kAhead = 8;
  std::vector<Hit> &hits = w.hits;
  for (size_t k = 0; k < count; ++k) {
    const Payload &data = msgs[k]->data;
    hits.clear();
    for (Target &t : targets) {
      if (!t.count) {
        hits.push_back(Hit{t.queue, t.delay, 0, uint32_t(n)});
        continue;
      }
      // The filter's window of each period the message overlaps.
      for (int64_t at = 0; at < int64_t(n);) {
        int64_t start = at - t.seen; // where the current period began
        int64_t from = std::max(at, start + t.first);
        int64_t to = std::min<int64_t>(int64_t(n), start + t.first + t.count);
        if (from < to)
          hits.push_back(Hit{t.queue, t.delay, uint32_t(from), uint32_t(to)});
        int64_t next = std::min<int64_t>(int64_t(n), start + t.period);
        t.seen = uint32_t((t.seen + (next - at)) % t.period);
        at = next;
      }
    }
    for (size_t i = 0; i < hits.size() && i < kAhead; ++i)
      __builtin_prefetch(&queues_[hits[i].queue]);
    for (size_t i = 0, e = hits.size(); i < e; ++i) {
      if (i + kAhead < e)
        __builtin_prefetch(&queues_[hits[i + kAhead].queue]);
      const Hit &h = hits[i];
      RecvQueue &q = queues_[h.queue];
      if (q.lane == lane)
        deliver(q, data, h.delay, h.pos, h.end, woken);
      else
        remote.push_back(Remote{data.adopt(), h.queue, h.delay, h.pos, h.end, q.lane});
    }
    // deliver() and adopt() took one reference per hit without counting it.
    if (!hits.empty())
      data.addRefs(uint32_t(hits.size()));
  }
  return Status::success();
}

void Fabric::deliver(RecvQueue &q, const Payload &data, uint32_t delay, uint32_t pos,
                     uint32_t end, std::vector<uint64_t> &woken) {
  q.chunks.push_back(Chunk{data.adopt(), pos, delay, end});
  q.words += end - pos;
  if (q.need && q.words >= q.need) {
    q.need = 0;
    woken.push_back(q.pe);
  }
}

Status Fabric::route(Walker &w, uint64_t sender, std::vector<OutMsg> &outbox, uint8_t lane,
                     std::vector<uint64_t> &woken, std::vector<Remote> &remote) {
  // A visit's messages of one color and size travel as one block (each
  // color keeps its send order; colors reach different queues).
  // By color, stably: a visit sends thousands of messages on a few colors.
  std::vector<const OutMsg *> &order = w.order;
  std::vector<uint32_t> &colors = w.colors;
  order.clear();
  colors.clear();
  for (const OutMsg &msg : outbox)
    if (colors.empty() || (colors.back() != msg.color &&
                           std::find(colors.begin(), colors.end(), msg.color) == colors.end()))
      colors.push_back(msg.color);
  std::sort(colors.begin(), colors.end());
  for (uint32_t color : colors)
    for (const OutMsg &msg : outbox)
      if (msg.color == color)
        order.push_back(&msg);
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && order[j]->color == order[i]->color &&
           order[j]->data.size() == order[i]->data.size())
      ++j;
    if (Status st = walk(w, sender, order.data() + i, j - i, lane, woken, remote); !st)
      return st;
    i = j;
  }
  outbox.clear();
  return Status::success();
}

void Fabric::deliver(const Remote &r, std::vector<uint64_t> &woken) {
  deliver(queues_[r.queue], r.data, r.delay, r.pos, r.end, woken);
  r.data.addRefs(1); // the chunk's reference
}

void Fabric::linkStats(uint64_t cycles, RunReport &report) const {
  report.linksUsed = 0;
  report.wavelets = 0;
  double maxU = 0, sumU = 0;
  for (size_t pos = 0; pos + 1 < slotStart_.size(); ++pos)
    for (uint32_t port = 0; port < kNumPorts; ++port) {
      // Ramps into a core are not links; every link a message crossed has an owner.
      uint64_t words = 0;
      bool used = false;
      for (uint32_t i = slotStart_[pos]; i < slotStart_[pos + 1] && port != wafer::RAMP; ++i) {
        uint32_t owner = slots_[i].owner[port];
        if (owner)
          words += origins_[owner - 1].words;
        used |= owner != 0;
      }
      if (!used)
        continue;
      ++report.linksUsed;
      report.wavelets += words;
      double busy = double(words);
      if (port == wafer::LINK)
        busy = double(words) * 4 / m_.linkBytesPerCycle;
      double u = cycles ? busy / double(cycles) : 0;
      maxU = std::max(maxU, u);
      sumU += u;
    }
  report.linkMaxUtilization = maxU;
  report.linkMeanUtilization = report.linksUsed ? sumU / double(report.linksUsed) : 0;
}

} // namespace wsc::runtime::detail
