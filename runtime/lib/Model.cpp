// Naming helpers shared by validation and fault messages.
#include "Model.h"

#include "SramImages.h"

#include <fmt/format.h>

#include <algorithm>

namespace wsc::runtime::detail {

const char *opName(format::Op op) {
  // The proto enum names are the ISA mnemonics.
  const std::string &name = format::Op_Name(op);
  return name.empty() ? "?" : name.c_str();
}

const char *portName(uint32_t port) {
  static const char *names[] = {"RAMP", "NORTH", "EAST", "SOUTH", "WEST", "LINK"};
  return port < kNumPorts ? names[port] : "?";
}

uint64_t Model::initBytes(const Region &r, int i) const {
  return images ? images->size(r.wafer, r.indexInWafer, i) : r.proto->init(i).data().size();
}

std::string Model::where(uint32_t wafer, uint32_t x, uint32_t y) const {
  int32_t r = onGrid(x, y) && wafer < wafers ? regionOf(wafer, x, y) : -1;
  if (r < 0)
    return fmt::format("wafer {} PE ({},{}) (no kernel)", wafer, x, y);
  return fmt::format("wafer {} PE ({},{}) (kernel '{}')", wafer, x, y, regions[r].name);
}

void Model::peXY(uint64_t pe, uint32_t &x, uint32_t &y) const {
  const Region &r = regions[peRegion[pe]];
  uint64_t local = pe - r.firstPe;
  x = r.x + uint32_t(local % r.w);
  y = r.y + uint32_t(local / r.w);
}

std::string Model::wherePe(uint64_t pe) const {
  uint32_t x, y;
  peXY(pe, x, y);
  return where(regions[peRegion[pe]].wafer, x, y);
}

const FilterRef *Model::filter(uint64_t key) const {
  auto it = std::lower_bound(filters.begin(), filters.end(), key,
                             [](const FilterRef &f, uint64_t k) { return f.key < k; });
  return it != filters.end() && it->key == key ? &*it : nullptr;
}

} // namespace wsc::runtime::detail
