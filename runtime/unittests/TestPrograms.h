// Helpers that build small Programs in C++ for the unit tests.
#ifndef WSC_RUNTIME_UNITTESTS_TESTPROGRAMS_H
#define WSC_RUNTIME_UNITTESTS_TESTPROGRAMS_H

#include "wsc/runtime/Emulator.h"

#include <initializer_list>
#include <map>

namespace wsc::runtime::test {

/// A version-2 (kFormatVersion) program with one wafer of w x h PEs and a simple arch:
/// 4096 B SRAM, 1 GHz, 1 cycle/hop, simd 4, fmac 4, 8 cycles/transcendental,
/// 16 B/cycle external memory, 4 B/cycle links with 10 cycles latency.
format::Program makeProgram(uint32_t w, uint32_t h, uint32_t colors = 8, uint32_t wafers = 1);

format::Region *addRegion(format::Program &p, const std::string &name, uint32_t x, uint32_t y,
                         uint32_t w, uint32_t h, uint32_t waferIndex = 0);

/// base + sum_k stride[k] * idx[k] + px * localX + py * localY.
format::Affine aff(int64_t base, std::initializer_list<int64_t> stride = {}, int64_t px = 0,
                  int64_t py = 0);

/// An instruction with constant addresses and counts.
format::Instr ins(format::Op op, std::initializer_list<int64_t> addrs, int64_t n = 0, int64_t m = 0);
format::Instr send(uint32_t color, int64_t addr, int64_t n);
format::Instr recv(uint32_t color, int64_t addr, int64_t n, format::Op op = format::RECV);
format::Instr loop(uint32_t count);
format::Instr end();
/// Restricts `i` to local PEs x0..x1, y0..y1.
format::Instr only(format::Instr i, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1);

void addRoute(format::Program &p, uint32_t x, uint32_t y, uint32_t color, format::Port in,
              std::initializer_list<format::Port> out, uint32_t waferIndex = 0);
/// Routes `color` from (x0,y) east to (x1,y), delivered to x1's core.
void routeEast(format::Program &p, uint32_t y, uint32_t x0, uint32_t x1, uint32_t color);

/// Two wafers of 3x1 PEs: kernel "a" at (0, 0) of wafer 0 sends 4 words on
/// color 2, east to the link of PE (2, 0), which delivers them on color 3 to
/// (0, 0) of wafer 1 and on east to kernel "b" at (1, 0), which receives them.
format::Program twoWafersOverALink();

/// A stand-in for a generating program with a [2, 4] token input `ids` and
/// output `next_token`: PE "ids" at (0, 0) sends ids[i] + 1 east (or south)
/// to PE "argmax", which receives each into next_token[i]; the receive's
/// end is the pick. In `lockstep`, "argmax" acknowledges each back and
/// "ids" waits for it before the next.
format::Program relay(bool lockstep, bool south = false);

void initFloats(format::Region *r, uint32_t px, uint32_t py, uint32_t offset,
                const std::vector<float> &v);

/// Declares a host tensor held in one piece per entry of `pieces`.
format::HostTensor *addTensor(format::Program &p, bool output, const std::string &name,
                             format::DType dtype, std::vector<int64_t> shape);
void addPiece(format::HostTensor *t, uint32_t x, uint32_t y, uint32_t offset, uint64_t tensorOffset,
              uint32_t count, uint32_t rows = 1, uint64_t rowStride = 0, uint32_t waferIndex = 0);

struct RunResult {
  Status status;
  std::map<std::string, HostArray> outputs;
  RunReport report;
  std::vector<float> out(const std::string &name) const { return outputs.at(name).f32; }
};

/// Validates and runs `p`; a validation error is returned as the status.
RunResult runProgram(const format::Program &p, const std::map<std::string, HostArray> &inputs = {},
                     unsigned threads = 1, bool trace = false, int64_t stopAfterToken = -1,
                     RunOptions::Engine engine = RunOptions::Engine::Reference);

} // namespace wsc::runtime::test

#endif
