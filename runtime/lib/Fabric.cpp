// The fabric: a message follows the router tables hop by hop, multicasting
// where an entry names several ports. Every way a compiler can get routing
// wrong ends here as a fault message.
#include "Machine.h"
#include "ThreadPool.h"

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

Fabric::Fabric(const Model &m, unsigned threads) : m_(m) {
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
    }
    slots_[cur].mask[key & 7] = mask;
  }
  owner_.reset(new std::atomic<uint64_t>[slots_.size() * kNumPorts]);
  for (size_t i = 0; i < slots_.size() * kNumPorts; ++i)
    owner_[i].store(0, std::memory_order_relaxed);
  walkers_.resize(std::max(1u, threads));
  for (Walker &w : walkers_) {
    w.stamp.assign(slots_.size(), 0);
    w.usedMask.assign(slots_.size(), 0);
    w.words.assign(positions * kNumPorts, 0);
    w.touched.assign(positions * kNumPorts, 0);
  }
}

Fabric::~Fabric() = default;

int64_t Fabric::slotOf(uint32_t wafer, uint32_t x, uint32_t y, uint32_t color) const {
  size_t pos = position(wafer, x, y);
  for (uint32_t i = slotStart_[pos], e = slotStart_[pos + 1]; i < e; ++i)
    if (slots_[i].color == color)
      return i;
  return -1;
}

Status Fabric::walk(Walker &w, uint64_t origin, const OutMsg &msg) {
  const Region &src = m_.regions[m_.peRegion[origin]];
  uint32_t sx, sy;
  m_.peXY(origin, sx, sy);
  // An origin is the sending PE plus the color it sent on.
  uint64_t originId = (origin << 11) | msg.color;
  uint64_t n = msg.data.size();
  auto fail = [&](const char *kind, const Hop &h, std::string what) {
    return Status::failure(fmt::format("{}: {}, color {}: {} (sent by {} on color {})", kind,
                                       m_.where(h.wafer, h.x, h.y), h.color, what,
                                       m_.wherePe(origin), msg.color));
  };
  // A fresh serial per message marks which links it has used (routing loops).
  if (++w.serial == 0) {
    std::fill(w.stamp.begin(), w.stamp.end(), 0);
    w.serial = 1;
  }
  w.stack.clear();
  w.stack.push_back(Hop{src.wafer, sx, sy, msg.color, wafer::RAMP, 0, 0});
  while (!w.stack.empty()) {
    Hop h = w.stack.back();
    w.stack.pop_back();
    int64_t slot = slotOf(h.wafer, h.x, h.y, h.color);
    uint8_t mask = slot < 0 ? 0 : slots_[slot].mask[h.in];
    if (!mask)
      return fail("no route", h,
                  fmt::format("a wavelet arriving on {} has no router entry", portName(h.in)));
    if (w.stamp[slot] != w.serial) {
      w.stamp[slot] = w.serial;
      w.usedMask[slot] = 0;
    }
    size_t pos = position(h.wafer, h.x, h.y);
    for (int port = 0; port < int(kNumPorts); ++port) {
      if (!(mask & (1u << port)))
        continue;
      if (w.usedMask[slot] & (1u << port))
        return fail("routing loop", h,
                    fmt::format("the same wavelet leaves through {} twice", portName(port)));
      w.usedMask[slot] |= uint8_t(1u << port);
      std::atomic<uint64_t> &own = owner_[size_t(slot) * kNumPorts + port];
      uint64_t have = own.load(std::memory_order_relaxed);
      if (have != originId + 1) {
        if (have == 0 && own.compare_exchange_strong(have, originId + 1, std::memory_order_relaxed))
          w.claimed.push_back(size_t(slot) * kNumPorts + port);
        else if (have != originId + 1) {
          uint64_t other = (have - 1) >> 11;
          return fail("collision", h,
                      fmt::format("{} already carries wavelets of {} on color {}",
                                  portName(port), m_.wherePe(other), (have - 1) & 2047));
        }
      }
      if (port == wafer::RAMP) {
        int32_t r = m_.regionOf(h.wafer, h.x, h.y);
        if (r < 0)
          return fail("no kernel", h, "delivered to the core of a PE that runs no kernel");
        if (n == 0) // an empty SEND is routed (and checked) but delivers nothing
          continue;
        uint64_t delay = 1 + h.hops * m_.hopCycles + h.extra;
        if (delay > UINT32_MAX)
          return fail("host limit", h, "a message would take 2^32 cycles or more to arrive");
        w.deliveries.push_back(
            Delivery{m_.peIndex(uint32_t(r), h.x, h.y), &msg, uint32_t(delay), h.color});
        continue;
      }
      w.words[pos * kNumPorts + port] += n;
      w.touched[pos * kNumPorts + port] = 1;
      if (port == wafer::LINK) {
        auto l = m_.links.find(routeKey(h.wafer, h.x, h.y, h.color, uint32_t(port)));
        if (l == m_.links.end())
          return fail("no link", h, "routed through LINK but no inter-wafer link leaves here");
        uint64_t delay =
            m_.linkLatency + uint64_t(std::ceil(double(n) * 4 / m_.linkBytesPerCycle));
        w.stack.push_back(Hop{l->second.wafer, l->second.x, l->second.y, l->second.color,
                              wafer::LINK, h.hops, h.extra + delay});
        continue;
      }
      int64_t nx = h.x, ny = h.y;
      if (port == wafer::NORTH)
        --ny;
      else if (port == wafer::SOUTH)
        ++ny;
      else if (port == wafer::EAST)
        ++nx;
      else
        --nx;
      if (!m_.onGrid(nx, ny))
        return fail("off the grid", h,
                    fmt::format("routed {} off the edge of the wafer", portName(port)));
      if (m_.dead[h.wafer][size_t(ny) * m_.width + size_t(nx)])
        return fail("dead PE", h,
                    fmt::format("routed {} into dead PE ({},{})", portName(port), nx, ny));
      w.stack.push_back(Hop{h.wafer, uint32_t(nx), uint32_t(ny), h.color, opposite(port),
                            h.hops + 1, h.extra});
    }
  }
  return Status::success();
}

Status Fabric::routeRound(const std::vector<uint64_t> &senders, std::vector<PeState> &pes,
                          std::vector<uint64_t> &reached, ThreadPool &pool) {
  for (Walker &w : walkers_) {
    w.deliveries.clear();
    w.claimed.clear();
  }
  // Walk: every sender's messages on one worker, in send order. Any fault
  // stops the walk; it is then found again serially so that the reported one
  // does not depend on the threads.
  std::atomic<bool> faulted{false};
  unsigned threads = std::min<unsigned>(pool.threads(), unsigned(walkers_.size()));
  auto walkSender = [&](size_t i, unsigned t) {
    if (faulted.load(std::memory_order_relaxed))
      return;
    Walker &w = walkers_[t % threads];
    for (const OutMsg &msg : pes[senders[i]].outbox)
      if (!walk(w, senders[i], msg)) {
        faulted.store(true);
        return;
      }
  };
  if (threads > 1)
    pool.parallelFor(senders.size(), walkSender);
  else
    for (size_t i = 0; i < senders.size(); ++i)
      walkSender(i, 0);
  if (faulted.load()) {
    // Undo this round's claims, then replay it in the serial order.
    for (Walker &w : walkers_)
      for (uint64_t c : w.claimed)
        owner_[c].store(0, std::memory_order_relaxed);
    Walker &w = walkers_[0];
    for (uint64_t pe : senders)
      for (const OutMsg &msg : pes[pe].outbox)
        if (Status s = walk(w, pe, msg); !s)
          return s;
    return Status::failure("internal error: a fault of the parallel walk was not found again");
  }
  // Deliver. Every receive queue is fed by one origin (its ramp has one
  // owner), whose messages one walker saw in send order, so appending per
  // walker keeps each queue's order; destination PEs are split among threads.
  auto deliver = [&](size_t t, unsigned) {
    // References to a payload are counted here and taken in one add per run
    // of deliveries of the same message.
    const OutMsg *run = nullptr;
    uint32_t refs = 0;
    for (Walker &w : walkers_)
      for (const Delivery &d : w.deliveries) {
        if (threads > 1 && d.pe % threads != t)
          continue;
        if (d.msg != run) {
          if (refs)
            run->data.addRefs(refs);
          run = d.msg;
          refs = 0;
        }
        RecvQueue &q = pes[d.pe].queue(d.color);
        q.chunks.push_back(Chunk{d.msg->data.adopt(), 0, d.delay});
        q.words += d.msg->data.size();
        ++refs;
      }
    if (refs)
      run->data.addRefs(refs);
  };
  pool.parallelFor(threads, deliver);
  for (Walker &w : walkers_)
    for (const Delivery &d : w.deliveries)
      reached.push_back(d.pe);
  for (uint64_t pe : senders) {
    pes[pe].outbox.clear();
    pes[pe].outboxWords = 0;
  }
  return Status::success();
}

void Fabric::linkStats(uint64_t cycles, RunReport &report) const {
  report.linksUsed = 0;
  report.wavelets = 0;
  double maxU = 0, sumU = 0;
  size_t links = walkers_[0].words.size();
  for (size_t key = 0; key < links; ++key) {
    uint64_t words = 0;
    bool used = false;
    for (const Walker &w : walkers_) {
      words += w.words[key];
      used |= w.touched[key] != 0;
    }
    if (!used)
      continue;
    ++report.linksUsed;
    report.wavelets += words;
    double busy = double(words);
    if (key % kNumPorts == wafer::LINK)
      busy = double(words) * 4 / m_.linkBytesPerCycle;
    double u = cycles ? busy / double(cycles) : 0;
    maxU = std::max(maxU, u);
    sumU += u;
  }
  report.linkMaxUtilization = maxU;
  report.linkMeanUtilization = report.linksUsed ? sumU / double(report.linksUsed) : 0;
}

} // namespace wsc::runtime::detail
