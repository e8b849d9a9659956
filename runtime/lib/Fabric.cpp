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

Status Fabric::route(uint64_t origin, const OutMsg &msg, std::vector<PeState> &pes,
                     std::vector<uint64_t> &reached) {
  const Region &src = m_.regions[m_.peRegion[origin]];
  uint32_t sx, sy;
  m_.peXY(origin, sx, sy);
  // An origin is the sending PE plus the color it sent on.
  uint64_t originId = (origin << 11) | msg.color;
  uint64_t n = msg.data->size();
  auto fail = [&](const char *kind, const Hop &h, std::string what) {
    return Status::failure(fmt::format("{}: {}, color {}: {} (sent by {} on color {})", kind,
                                       m_.where(h.wafer, h.x, h.y), h.color, what,
                                       m_.wherePe(origin), msg.color));
  };
  used_.clear();
  stack_.clear();
  stack_.push_back(Hop{src.wafer, sx, sy, msg.color, wafer::RAMP, 0, 0});
  while (!stack_.empty()) {
    Hop h = stack_.back();
    stack_.pop_back();
    auto entry = m_.routes.find(routeKey(h.wafer, h.x, h.y, h.color, h.in));
    if (entry == m_.routes.end())
      return fail("no route", h,
                  fmt::format("a wavelet arriving on {} has no router entry", portName(h.in)));
    for (int port = 0; port < int(kNumPorts); ++port) {
      if (!(entry->second & (1u << port)))
        continue;
      uint64_t link = routeKey(h.wafer, h.x, h.y, h.color, uint32_t(port));
      if (!used_.insert(link).second)
        return fail("routing loop", h,
                    fmt::format("the same wavelet leaves through {} twice", portName(port)));
      auto own = owner_.emplace(link, originId);
      if (own.first->second != originId) {
        uint64_t other = own.first->second >> 11;
        return fail("collision", h,
                    fmt::format("{} already carries wavelets of {} on color {}", portName(port),
                                m_.wherePe(other), own.first->second & 2047));
      }
      if (port == wafer::RAMP) {
        int32_t r = m_.regionOf(h.wafer, h.x, h.y);
        if (r < 0)
          return fail("no kernel", h, "delivered to the core of a PE that runs no kernel");
        if (n == 0) // an empty SEND is routed (and checked) but delivers nothing
          continue;
        uint64_t pe = m_.peIndex(uint32_t(r), h.x, h.y);
        RecvQueue &q = pes[pe].queue(h.color);
        uint64_t t0 = msg.time + 1 + h.hops * m_.hopCycles + h.extra;
        q.chunks.push_back(Chunk{msg.data, 0, t0});
        q.words += n;
        reached.push_back(pe);
        continue;
      }
      words_[routeKey(h.wafer, h.x, h.y, 0, uint32_t(port))] += n;
      if (port == wafer::LINK) {
        auto l = m_.links.find(link);
        if (l == m_.links.end())
          return fail("no link", h, "routed through LINK but no inter-wafer link leaves here");
        uint64_t delay =
            m_.linkLatency + uint64_t(std::ceil(double(n) * 4 / m_.linkBytesPerCycle));
        stack_.push_back(Hop{l->second.wafer, l->second.x, l->second.y, l->second.color,
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
      stack_.push_back(Hop{h.wafer, uint32_t(nx), uint32_t(ny), h.color, opposite(port),
                           h.hops + 1, h.extra});
    }
  }
  return Status::success();
}

void Fabric::linkStats(uint64_t cycles, RunReport &report) const {
  report.linksUsed = words_.size();
  report.wavelets = 0;
  double maxU = 0, sumU = 0;
  for (const auto &[key, words] : words_) {
    report.wavelets += words;
    double busy = double(words);
    if ((key & 7) == wafer::LINK)
      busy = double(words) * 4 / m_.linkBytesPerCycle;
    double u = cycles ? busy / double(cycles) : 0;
    maxU = std::max(maxU, u);
    sumU += u;
  }
  report.linkMaxUtilization = maxU;
  report.linkMeanUtilization = words_.empty() ? 0 : sumU / double(words_.size());
}

} // namespace wsc::runtime::detail
