//===- MemoryPlan.cpp - the host memory a run takes, before it starts ------===//
//
// Counts what Emulator::run allocates from the program: the PE states, the
// SRAM arena, the fabric's slots and queues, the tensors. Not the message
// logs: they follow the traffic, and the run bounds them instead.
//
//===----------------------------------------------------------------------===//
#include "Machine.h"
#include "Model.h"
#include "wsc/runtime/Emulator.h"

namespace wsc::runtime {
namespace {

using detail::Model;

/// The checked model beyond the program: code, routes and the grid's maps.
uint64_t modelBytes(const Model &m) {
  uint64_t bytes = m.routes.capacity() * sizeof(m.routes[0]) + m.peRegion.size() * 4;
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

MemoryPlan detail::planMemory(const Model &m) {
  MemoryPlan p;
  p.program = uint64_t(m.program->SpaceUsedLong()) + modelBytes(m);
  for (const Region &r : m.regions) {
    uint64_t pes = uint64_t(r.w) * r.h;
    p.pesInUse += pes;
    p.sram += pes * sramWordsPerPe(r) * 4;
  }
  p.pes = p.pesInUse * sizeof(PeState);
  p.fabric = Fabric::plannedBytes(m);
  for (const TensorRef &t : m.inputs)
    p.tensors += tensorBytes(t);
  for (const TensorRef &t : m.outputs)
    p.tensors += 2 * tensorBytes(t); // the run's, then the file's
  return p;
}

} // namespace wsc::runtime
