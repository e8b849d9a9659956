//===- Defects.h - dead PEs and links of the wafers -------------*- C++ -*-===//
//
// The defect map lives in one place: the `wafer.defects` module attribute
// (a #wafer.defects). This header reads it into a per-wafer grid for fast
// lookups, parses the text file format of docs/defects.md and makes random
// maps. Placement, routing, the route checker and the exporters use it.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_ARCH_DEFECTS_H
#define WSC_ARCH_DEFECTS_H

#include "wafer/WaferDialect.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace wsc::wafer {

/// The neighbour of (x, y) in direction `dir` (North..West); no bounds check.
inline void stepDir(int64_t &x, int64_t &y, int dir) {
  switch (dir) {
  case North:
    --y;
    break;
  case East:
    ++x;
    break;
  case South:
    ++y;
    break;
  case West:
    --x;
    break;
  default:
    break;
  }
}

/// The port a wavelet arrives on after leaving in direction `dir`.
inline int oppositeDir(int dir) {
  return dir == North ? South : dir == South ? North : dir == East ? West : East;
}

/// One-letter name of a port: R, N, E, S, W, L.
inline char portLetter(int port) { return "RNESWL"[port >= 0 && port <= 5 ? port : 0]; }

/// Defects as plain lists: rows [wafer, x, y] and [wafer, x, y, dir]
/// (dir EAST, SOUTH, or LINK for the off-wafer link of an edge PE).
/// splitmix64: a small generator whose output is fixed by the arithmetic
/// below, so random maps and placements are the same on every platform.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return n <= 0 ? 0 : int64_t(next() % uint64_t(n)); }
  /// Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

struct DefectList {
  std::vector<std::array<int32_t, 3>> pes;
  std::vector<std::array<int32_t, 4>> links;
};

/// The defects of one wafer as a grid: O(1) lookups.
class DefectGrid {
public:
  DefectGrid() = default;
  DefectGrid(int64_t width, int64_t height)
      : width(width), height(height), cells(width * height, 0) {}

  /// Wafer `index` of `attr` (which may be null: no defects).
  static DefectGrid forWafer(DefectsAttr attr, int64_t width, int64_t height, int64_t index);

  bool onGrid(int64_t x, int64_t y) const { return x >= 0 && y >= 0 && x < width && y < height; }
  bool peDead(int64_t x, int64_t y) const { return cells[y * width + x] & 1; }
  /// Is the link leaving (x, y) in `dir` dead? Links off the grid count as dead.
  bool linkDead(int64_t x, int64_t y, int dir) const {
    int64_t nx = x, ny = y;
    stepDir(nx, ny, dir);
    return !onGrid(nx, ny) || (cells[y * width + x] >> dir & 1);
  }
  /// Is the off-wafer link (LINK port) of edge PE (x, y) dead?
  bool offWaferLinkDead(int64_t x, int64_t y) const { return cells[y * width + x] >> Link & 1; }
  /// Dead PE or any dead link: one byte per PE, bit 0 = PE, bit dir = link
  /// (dir 1..4), bit 5 = the off-wafer link.
  uint8_t cell(int64_t x, int64_t y) const { return cells[y * width + x]; }
  void killPe(int64_t x, int64_t y) { cells[y * width + x] |= 1; }
  /// Kills the link in both directions; `dir` LINK kills the PE's off-wafer link.
  void killLink(int64_t x, int64_t y, int dir);
  int64_t getWidth() const { return width; }
  int64_t getHeight() const { return height; }

private:
  int64_t width = 0, height = 0;
  std::vector<uint8_t> cells;
};

/// Parses the text format of docs/defects.md, checking coordinates against a
/// `width` x `height` grid and `maxWafers`. On failure sets `error` to
/// "NAME:LINE: message".
mlir::LogicalResult parseDefectFile(llvm::StringRef text, llvm::StringRef name, int64_t width,
                                    int64_t height, int64_t maxWafers, DefectList &out,
                                    std::string &error);

/// Dead PEs with probability `peRate` and dead links with `linkRate`, on
/// wafers 0..wafers-1; deterministic for a seed on every platform.
void addRandomDefects(DefectList &list, int64_t wafers, int64_t width, int64_t height,
                      double peRate, double linkRate, uint64_t seed);

/// The attribute: links canonicalised to EAST/SOUTH, rows sorted and unique.
DefectsAttr buildDefects(mlir::MLIRContext *context, DefectList list);

/// The lists held by `attr` (empty for null).
DefectList readDefects(DefectsAttr attr);

/// The module's map, or null.
DefectsAttr getDefects(mlir::ModuleOp module);

} // namespace wsc::wafer

#endif // WSC_ARCH_DEFECTS_H
