//===- MemoryPlan.cpp - the host memory a run takes, before it starts ------===//
//
// Counts what Emulator::run allocates from the program: the PE states, the
// SRAM arena, the fabric's slots and queues, the tensors. Not the message
// logs: they follow the traffic, and the run bounds them instead.
//
//===----------------------------------------------------------------------===//
#include "Distributed.h"
#include "Machine.h"
#include "Model.h"
#include "wsc/runtime/Emulator.h"

namespace wsc::runtime {
namespace {

using detail::Model;

/// The checked model beyond the program: code, routes, filters and the grid's maps.
uint64_t modelBytes(const Model &m) {
  uint64_t bytes = m.routes.capacity() * sizeof(m.routes[0]) +
                   m.filters.capacity() * sizeof(m.filters[0]) + m.peRegion.size() * 4 +
                   m.sramWords.size() * 4;
  for (const std::vector<int32_t> &at : m.regionAt)
    bytes += at.size() * sizeof(int32_t);
  for (const std::vector<uint8_t> &dead : m.dead)
    bytes += dead.size();
  for (const detail::Region &r : m.regions)
    bytes += r.code.size() * (sizeof(detail::Instr) + sizeof(uint32_t)); // and a view
  return bytes;
}

/// A host tensor holds floats as f32, integers as int64.
uint64_t tensorBytes(const detail::TensorRef &t) {
  bool floats = t.dtype == format::F32 || t.dtype == format::F64 || t.dtype == format::F16 ||
                t.dtype == format::BF16;
  return uint64_t(t.numel) * (floats ? 4 : 8);
}

} // namespace

MemoryPlan detail::planMemory(const Model &m, unsigned ranks, unsigned rank) {
  MemoryPlan p;
  // A process of a split run parses the whole program and keeps a state
  // per PE, but touches the SRAM of its own PEs only.
  p.program = uint64_t(m.program->SpaceUsedLong()) + modelBytes(m);
  p.pes = m.numPes * sizeof(PeState);
  for (const Region &r : m.regions)
    p.pes += uint64_t(r.w) * r.h * r.loopDepth * sizeof(LoopFrame);
  Partition part = partitionRows(m, ranks);
  for (const Region &r : m.regions)
    for (uint32_t y = r.y; y < r.y + r.h; ++y)
      if (part.rankOfRow[size_t(r.wafer) * m.height + y] == rank) {
        p.pesInUse += r.w;
        uint64_t row = r.firstPe + uint64_t(y - r.y) * r.w;
        for (uint64_t pe = row; pe < row + r.w; ++pe)
          p.sram += uint64_t(m.sramWords[pe]) * 4;
      }
  p.fabric = Fabric::plannedBytes(m);
  for (const TensorRef &t : m.inputs)
    p.tensors += tensorBytes(t);
  for (const TensorRef &t : m.outputs)
    p.tensors += (rank == 0 ? 2 : 0) * tensorBytes(t); // the run's, then the file's
  return p;
}

} // namespace wsc::runtime
