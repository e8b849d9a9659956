// The validated, flattened form of a Program that the emulator executes.
#ifndef WSC_RUNTIME_LIB_MODEL_H
#define WSC_RUNTIME_LIB_MODEL_H

#include "wsc/runtime/Status.h"
#include "wafer.pb.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace wsc::runtime::detail {

/// base + sum_k stride[k] * idx[k] + px * localX + py * localY; validation
/// guarantees stride.size() <= loop depth.
struct Affine {
  int64_t base = 0;
  std::vector<int64_t> stride;
  int64_t px = 0, py = 0;
};

struct PeRange {
  uint32_t x0, x1, y0, y1;
};

/// A guard in 32-bit terms with at most the innermost loop's stride, read
/// from an instruction's first cache line: the guards a PE skips most are
/// then decided without following `Instr::guard` and its strides.
struct ShortGuard {
  int32_t base, stride, px, py;
};

struct Instr {
  format::Op op = format::NOP;
  /// The guards as ShortGuards when they all fit; kLongGuards otherwise.
  uint8_t shortGuards = 0;
  static constexpr uint8_t kLongGuards = 0xff;
  static constexpr uint8_t kMaxShortGuards = 3;
  ShortGuard shortGuard[kMaxShortGuards];
  std::vector<PeRange> pred;
  Affine addr[4]; ///< SELECT has four: dst, cond, a, b
  Affine n, m;
  Affine k;                  ///< GATHER: row_lo; RECV_VECMAT over a sparse tile: its rows (0: n)
  Affine firstRow;           ///< RECV_VECMAT over a sparse tile: the row its first word meets
  std::vector<Affine> guard; ///< all must be >= 0 for the instruction to run
  uint32_t color = 0;
  int64_t forward = -1; ///< RECV/RECV_ADD: the color the words also leave on (-1: none)
  bool async = false;   ///< SEND/RECV/RECV_ADD on the PE's async engine
  float imm = 0;
  uint32_t count = 0;
  uint32_t blob = 0; ///< index into Model::blobs (EXT_LOAD)
  format::Storage storage = format::STORE_F32; ///< MATVEC/VECMAT/RECV_VECMAT matrix, GATHER table
  format::ElemType type = format::ELEM_F32; ///< how arithmetic and comparisons read words
  uint32_t jump = 0; ///< LOOP: index of its END; END: index of its LOOP
  /// LOOP: whether some body instruction has no `pred`; if not, `bodyPred` is
  /// the union of the body's preds, and a PE outside it runs only the ENDs.
  bool bodyAny = false;
  std::vector<PeRange> bodyPred;
};

/// Whether a matrix of this storage is in the sparse layout.
inline bool isSparse(format::Storage s) {
  return s == format::STORE_SPARSE || s == format::STORE_SPARSE_F16 ||
         s == format::STORE_SPARSE_BF16;
}
/// The packed storage of a sparse layout's values (F32, F16 or BF16), or s itself.
inline format::Storage valueStorage(format::Storage s) {
  return s == format::STORE_SPARSE        ? format::STORE_F32
         : s == format::STORE_SPARSE_F16  ? format::STORE_F16
         : s == format::STORE_SPARSE_BF16 ? format::STORE_BF16
                                          : s;
}

struct Region {
  std::string name;
  std::string kind;
  uint32_t wafer = 0, x = 0, y = 0, w = 0, h = 0;
  uint32_t indexInWafer = 0; ///< of proto in its Wafer.regions
  uint32_t sramBytes = 0; ///< effective per-PE limit
  uint64_t firstPe = 0;   ///< global index of its PE (0,0); PEs are row-major
  std::vector<Instr> code;
  const format::Region *proto = nullptr;
  /// Instructions (LOOP and END included) that every PE of the region runs
  /// in a run that ends, whatever its predicates and guards: those outside
  /// any pred, guard or such LOOP; saturates at UINT64_MAX.
  uint64_t minInstructions = 0;
  /// The most LOOPs its code nests: the frames a PE's run keeps.
  uint32_t loopDepth = 0;
};

/// PEs [x0, x1) x [y0, y1) of a region (local coordinates) that every
/// instruction's predicate selects alike.
struct Cell {
  uint32_t x0, x1, y0, y1;
  /// Whether `in`'s predicate selects the cell's PEs.
  bool selects(const Instr &in) const;
};
/// Calls `fn` for the cells the predicates' edges cut region `r` into.
void forEachPredicateCell(const Region &r, const std::function<void(const Cell &)> &fn);

struct LinkEnd {
  uint32_t wafer, x, y, color;
};

/// Where a host tensor piece lives, resolved to a PE.
struct PieceRef {
  uint64_t pe;
  uint32_t offset;
  uint64_t tensorOffset;
  uint32_t count, rows;
  uint64_t rowStride;
};

struct TensorRef {
  std::string name;
  format::DType dtype;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  std::vector<PieceRef> pieces;
  /// Inputs: every element must lie in [lo, hi) when `bounded` (HostTensor.valid).
  bool bounded = false;
  int64_t lo = 0, hi = 0;
};

constexpr uint32_t kNumPorts = 6;
/// The grid bounds, the same as the compiler's (wafer/WaferDialect.h).
constexpr uint32_t kMaxGridSide = 65535;
constexpr uint64_t kMaxPesPerWafer = uint64_t(1) << 24;
constexpr uint32_t kMaxColors = 1024;
constexpr uint32_t kMaxWafers = 65535;

/// Keys for hash maps of router state; fields are bounded by validation.
inline uint64_t peKey(uint32_t wafer, uint32_t x, uint32_t y) {
  return (uint64_t(wafer) << 32) | (uint64_t(y) << 16) | x;
}
inline uint64_t routeKey(uint32_t wafer, uint32_t x, uint32_t y, uint32_t color, uint32_t port) {
  return (peKey(wafer, x, y) << 13) | (uint64_t(color) << 3) | port;
}

/// A core's window of the words on a color (format::Filter).
struct FilterRef {
  uint64_t key; ///< routeKey(wafer, x, y, color, RAMP)
  uint32_t first, count, period;
};

class SramImageFile;

struct Model {
  const format::Program *program = nullptr;
  // Arch, as plain numbers.
  uint32_t width = 0, height = 0, sramBytes = 0, colors = 0;
  double clockHz = 0;
  uint32_t hopCycles = 0, simd = 1, fmac = 1, transcendentalCycles = 0;
  double extBytesPerCycle = 0, linkBytesPerCycle = 0;
  uint32_t linkLatency = 0;
  /// The cycles `words` words take to cross an inter-wafer link beyond its
  /// latency: clamped before it becomes an integer (a tiny bandwidth
  /// overflows any integer type), since 2^33 cycles already fail as a host
  /// limit.
  uint64_t linkCrossing(uint64_t words) const {
    double crossing = std::ceil(double(words) * 4 / linkBytesPerCycle);
    return crossing < 0x1p33 ? uint64_t(crossing) : uint64_t(1) << 33;
  }
  uint32_t wafers = 0;

  std::vector<Region> regions; ///< wafer-major, in Program order
  uint64_t numPes = 0;
  std::vector<uint32_t> peRegion; ///< global PE index -> region index
  /// Per wafer, per grid position (y * width + x): region index or -1.
  std::vector<std::vector<int32_t>> regionAt;
  std::vector<std::vector<uint8_t>> dead;
  /// (routeKey(wafer, x, y, color, in), out mask), sorted by key: the
  /// fabric groups them by position and color as they lie (a hash map of
  /// GPT-2-small's 3.5 M entries cost memory, then a copy and a sort).
  std::vector<std::pair<uint64_t, uint8_t>> routes;
  /// The out mask of a router entry, 0 for none.
  uint8_t routeMask(uint64_t key) const {
    auto it = std::lower_bound(routes.begin(), routes.end(), std::make_pair(key, uint8_t(0)));
    return it != routes.end() && it->first == key ? it->second : 0;
  }
  /// The router filters of the cores' queues (format::Filter), by
  /// routeKey(..., RAMP), sorted: a proto message and a hash node each
  /// took 90 MB for GPT-2-small's 967 K.
  std::vector<FilterRef> filters;
  /// The filter of the core of `key`'s PE on its color, or null.
  const FilterRef *filter(uint64_t key) const;
  /// routeKey(wafer, x, y, color, LINK) of the source end -> destination end.
  std::unordered_map<uint64_t, LinkEnd> links;
  std::vector<const std::string *> blobs;
  std::vector<TensorRef> inputs, outputs;
  /// Per PE: the SRAM words its code, its init and its host pieces can
  /// reach, to a whole cache line (sramFootprints); the run's arena holds these.
  std::vector<uint32_t> sramWords;
  /// Where the SRAM images are when they stayed in the program's file; null:
  /// in the program.
  const SramImageFile *images = nullptr;
  /// The bytes of init `i` of region `r`.
  uint64_t initBytes(const Region &r, int i) const;

  bool onGrid(int64_t x, int64_t y) const {
    return x >= 0 && y >= 0 && x < int64_t(width) && y < int64_t(height);
  }
  int32_t regionOf(uint32_t wafer, uint32_t x, uint32_t y) const {
    return regionAt[wafer][size_t(y) * width + x];
  }
  /// Global PE index of grid position (x, y), which must be inside region r.
  uint64_t peIndex(uint32_t r, uint32_t x, uint32_t y) const {
    const Region &reg = regions[r];
    return reg.firstPe + uint64_t(y - reg.y) * reg.w + (x - reg.x);
  }
  /// "wafer W PE (x,y) kernel 'name'" or "... no kernel".
  std::string where(uint32_t wafer, uint32_t x, uint32_t y) const;
  std::string wherePe(uint64_t pe) const;
  void peXY(uint64_t pe, uint32_t &x, uint32_t &y) const;
};

/// Per PE of a checked model: the SRAM words it can reach (see Model::sramWords).
std::vector<uint32_t> sramFootprints(const Model &m);

/// Validates `program` and builds its Model; errors name the region/PE.
/// `images`: where its SRAM images are when they stayed in its file.
Expected<Model> buildModel(const format::Program &program, const SramImageFile *images = nullptr);

/// The limit on a PE's clock in a run: `--max-cycles` when given; else
/// kEstimateFactor times the compiler's estimate of the run, at least
/// kMinEstimatedLimit, when the program has one; else kDefaultMaxCycles.
uint64_t cycleLimit(const Model &m, uint64_t maxCyclesOption);
/// Why the limit is what it is, for the fault message: "" or
/// " (64 x the program's estimate of N cycles)".
std::string cycleLimitReason(const Model &m, uint64_t maxCyclesOption);

const char *opName(format::Op op);

/// SEND and the RECVs: the instructions that name a router color.
inline bool usesColor(format::Op op) {
  return op == format::SEND || op == format::RECV || op == format::RECV_ADD ||
         op == format::RECV_MAX || op == format::RECV_DROP || op == format::RECV_VECMAT;
}
const char *portName(uint32_t port);

} // namespace wsc::runtime::detail

#endif
