// Validation of a Program and its translation into the emulator's Model.
// Every check here turns a malformed program into an error that names the
// region or PE, so the emulator itself can trust the Model.
#include "Model.h"

#include "wsc/format/SparseTile.h"

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

namespace wsc::runtime::detail {
namespace {

using format::Op;

Status fail(std::string msg) { return Status::failure(std::move(msg)); }

std::string regionName(const format::Region &r, size_t index) {
  return r.name().empty() ? fmt::format("#{}", index) : r.name();
}

/// Why an instruction (its op and m read) may not have its storage; empty if it may.
std::string storageError(const Instr &o) {
  bool product = o.op == format::MATVEC || o.op == format::VECMAT || o.op == format::RECV_VECMAT;
  if (isSparse(o.storage)) {
    if (!product)
      return "only MATVEC, VECMAT and RECV_VECMAT read sparse storage";
    // A constant m is refused now; any other is checked against the tile when it runs.
    bool constant = o.m.stride.empty() && !o.m.px && !o.m.py;
    if (constant && o.m.base > int64_t(format::kMaxSparseCols))
      return fmt::format("m = {} is more than the {} columns a sparse tile indexes", o.m.base,
                         format::kMaxSparseCols);
    return "";
  }
  if (o.storage != format::STORE_F32 && !product && o.op != format::GATHER)
    return "only MATVEC, VECMAT, RECV_VECMAT and GATHER read packed 16-bit storage";
  return "";
}

/// Number of addr operands each op needs.
int addrCount(Op op) {
  switch (op) {
  case format::NOP:
  case format::LOOP:
  case format::END:
    return 0;
  case format::RECV_DROP:
    return 0;
  case format::SEND:
  case format::RECV:
  case format::RECV_ADD:
  case format::RECV_MAX:
  case format::FILL:
    return 1;
  case format::ADD_I:
  case format::MUL_I:
  case format::COPY:
  case format::EXP:
  case format::ERF:
  case format::TANH:
  case format::SQRT:
  case format::RSQRT:
  case format::NEG:
  case format::GELU:
  case format::GELU_TANH:
  case format::REDUCE_SUM:
  case format::REDUCE_MAX:
  case format::REDUCE_MIN:
  case format::EXT_LOAD:
  case format::RECV_VECMAT:
  case format::NOT:
  case format::BIT_NOT:
  case format::LOG:
  case format::ABS:
  case format::SIN:
  case format::COS:
  case format::SIGMOID:
  case format::RECIPROCAL:
  case format::RELU:
  case format::TO_INT:
  case format::TO_FLOAT:
  case format::FLOOR:
  case format::CEIL:
    return 2;
  case format::SELECT:
    return 4;
  default: // MATVEC, VECMAT, GATHER, INDEX_COPY and the binary ops
    return 3;
  }
}

bool fitsInt32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/// Sets `o.shortGuard` from `o.guard` where every guard fits one.
void shortenGuards(Instr &o) {
  o.shortGuards = Instr::kLongGuards;
  if (o.guard.size() > Instr::kMaxShortGuards)
    return;
  for (size_t g = 0; g < o.guard.size(); ++g) {
    const Affine &a = o.guard[g];
    int64_t stride = a.stride.empty() ? 0 : a.stride[0];
    if (a.stride.size() > 1 || !fitsInt32(a.base) || !fitsInt32(stride) || !fitsInt32(a.px) ||
        !fitsInt32(a.py))
      return;
    o.shortGuard[g] = ShortGuard{int32_t(a.base), int32_t(stride), int32_t(a.px), int32_t(a.py)};
  }
  o.shortGuards = uint8_t(o.guard.size());
}

/// The ops whose words `Instr.type` says how to read (F32 or I32).
bool takesElemType(Op op) {
  switch (op) {
  case format::ADD:
  case format::SUB:
  case format::MUL:
  case format::DIV:
  case format::MAX:
  case format::MIN:
  case format::POW:
  case format::MOD:
  case format::ADD_S:
  case format::SUB_S:
  case format::MUL_S:
  case format::DIV_S:
  case format::ADD_I:
  case format::MUL_I:
  case format::FILL:
  case format::NEG:
  case format::ABS:
  case format::RELU:
  case format::REDUCE_SUM:
  case format::REDUCE_MAX:
  case format::REDUCE_MIN:
  case format::EQ:
  case format::LT:
  case format::LE:
  case format::GT:
  case format::GE:
    return true;
  default:
    return false;
  }
}

class Builder {
public:
  Builder(const format::Program &p, const SramImageFile *images) : p_(p) { m_.images = images; }
  Expected<Model> build();

private:
  Status checkArch();
  Status checkWafer(uint32_t wi);
  Status checkRegion(uint32_t wi, const format::Region &r, size_t index);
  Status checkCode(const std::string &where, const format::Region &r, Region &out);
  Status checkRoutes(uint32_t wi);
  Status checkFilters(uint32_t wi);
  Status checkLinks();
  Status checkTensors(bool outputs);
  Status checkGeneration();
  /// Words of SRAM over every kernel's PEs.
  uint64_t sramWords() const {
    uint64_t words = 0;
    for (const Region &r : m_.regions)
      words += uint64_t(r.w) * r.h * (r.sramBytes / 4);
    return words;
  }
  bool isEdge(uint32_t x, uint32_t y) const {
    return x == 0 || y == 0 || x + 1 == m_.width || y + 1 == m_.height;
  }

  const format::Program &p_;
  Model m_;
  std::unordered_map<uint32_t, uint32_t> blobIndex_;
  bool usesExtLoad_ = false;
};

Status Builder::checkArch() {
  const format::Arch &a = p_.arch();
  if (!p_.has_arch())
    return fail("program has no arch");
  if (a.width() == 0 || a.height() == 0 || a.width() > kMaxGridSide || a.height() > kMaxGridSide ||
      uint64_t(a.width()) * a.height() > kMaxPesPerWafer)
    return fail(fmt::format("arch: grid {}x{} must be between 1x1 and {}x{}, at most {} PEs",
                            a.width(), a.height(), kMaxGridSide, kMaxGridSide, kMaxPesPerWafer));
  if (a.sram_bytes_per_pe() == 0 || a.sram_bytes_per_pe() % 4)
    return fail(fmt::format("arch: sram_bytes_per_pe {} must be a positive multiple of 4",
                            a.sram_bytes_per_pe()));
  if (a.colors() == 0 || a.colors() > kMaxColors)
    return fail(fmt::format("arch: colors {} must be between 1 and {}", a.colors(), kMaxColors));
  if (!(a.clock_hz() > 0) || !std::isfinite(a.clock_hz()))
    return fail(fmt::format("arch: clock_hz {} must be positive and finite", a.clock_hz()));
  if (a.simd_fp32() == 0 || a.fmac_per_cycle_fp32() == 0)
    return fail("arch: simd_fp32 and fmac_per_cycle_fp32 must be positive");
  // NaN fails these too. Tiny ones are allowed: their cycles are checked
  // before they become integers.
  for (auto [name, value] : {std::pair{"ext_mem_bytes_per_cycle", a.ext_mem_bytes_per_cycle()},
                             std::pair{"link_bytes_per_cycle", a.link_bytes_per_cycle()}})
    if (!(value >= 0) || !std::isfinite(value))
      return fail(fmt::format("arch: {} {} must be finite and not negative", name, value));
  m_.width = a.width();
  m_.height = a.height();
  m_.sramBytes = a.sram_bytes_per_pe();
  m_.colors = a.colors();
  m_.clockHz = a.clock_hz();
  m_.hopCycles = a.hop_cycles();
  m_.simd = a.simd_fp32();
  m_.fmac = a.fmac_per_cycle_fp32();
  m_.transcendentalCycles = a.transcendental_cycles();
  m_.extBytesPerCycle = a.ext_mem_bytes_per_cycle();
  m_.linkBytesPerCycle = a.link_bytes_per_cycle();
  m_.linkLatency = a.link_latency_cycles();
  return Status::success();
}

Status Builder::checkCode(const std::string &where, const format::Region &r, Region &out) {
  std::vector<uint32_t> open; // pcs of enclosing LOOPs
  out.code.resize(r.code_size());
  for (int pc = 0; pc < r.code_size(); ++pc) {
    const format::Instr &in = r.code(pc);
    Instr &o = out.code[pc];
    if (!format::Op_IsValid(in.op()))
      return fail(fmt::format("{} instruction {}: unknown op {}", where, pc, int(in.op())));
    std::string at = fmt::format("{} instruction {} ({})", where, pc, opName(in.op()));
    o.op = in.op();
    if (o.op == format::END) {
      if (open.empty())
        return fail(at + ": END without LOOP");
      Instr &loop = out.code[open.back()];
      o.jump = open.back();
      loop.jump = pc;
      for (uint32_t i = o.jump + 1; i < uint32_t(pc); ++i) {
        const Instr &b = out.code[i];
        if (b.op == format::END)
          continue;
        loop.bodyAny |= b.pred.empty();
        loop.bodyPred.insert(loop.bodyPred.end(), b.pred.begin(), b.pred.end());
      }
      if (loop.bodyAny)
        loop.bodyPred.clear();
      open.pop_back();
      continue;
    }
    for (const format::PeRange &pr : in.pred()) {
      if (pr.x0() > pr.x1() || pr.y0() > pr.y1())
        return fail(fmt::format("{}: empty predicate range x {}..{} y {}..{}", at, pr.x0(), pr.x1(),
                                pr.y0(), pr.y1()));
      o.pred.push_back({pr.x0(), pr.x1(), pr.y0(), pr.y1()});
    }
    int need = addrCount(o.op);
    if (in.addr_size() < need)
      return fail(fmt::format("{}: needs {} addresses, has {}", at, need, in.addr_size()));
    auto affine = [&](const format::Affine &a, Affine &dst, const char *what) -> Status {
      if (size_t(a.stride_size()) > open.size())
        return fail(fmt::format("{}: {} has {} strides but only {} enclosing LOOPs", at, what,
                                a.stride_size(), open.size()));
      dst.base = a.base();
      dst.stride.assign(a.stride().begin(), a.stride().end());
      dst.px = a.px();
      dst.py = a.py();
      return Status::success();
    };
    static const char *addrNames[] = {"addr[0]", "addr[1]", "addr[2]", "addr[3]"};
    for (int k = 0; k < need; ++k)
      if (Status s = affine(in.addr(k), o.addr[k], addrNames[k]); !s)
        return s;
    if (Status s = affine(in.n(), o.n, "n"); !s)
      return s;
    if (Status s = affine(in.m(), o.m, "m"); !s)
      return s;
    if (Status s = affine(in.k(), o.k, "k"); !s)
      return s;
    if (Status s = affine(in.first_row(), o.firstRow, "first_row"); !s)
      return s;
    o.guard.resize(in.guard_size());
    for (int g = 0; g < in.guard_size(); ++g)
      if (Status s = affine(in.guard(g), o.guard[g], "guard"); !s)
        return s;
    shortenGuards(o);
    if (usesColor(o.op) && in.color() >= m_.colors)
      return fail(fmt::format("{}: color {} >= arch.colors {}", at, in.color(), m_.colors));
    o.color = in.color();
    if (in.has_forward()) {
      if (o.op != format::RECV && o.op != format::RECV_ADD && o.op != format::RECV_DROP)
        return fail(fmt::format("{}: only RECV, RECV_ADD and RECV_DROP forward", at));
      if (in.forward() >= m_.colors)
        return fail(fmt::format("{}: forward color {} >= arch.colors {}", at, in.forward(),
                                m_.colors));
      o.forward = in.forward();
    }
    if (in.async()) {
      if (o.op != format::SEND && o.op != format::RECV && o.op != format::RECV_ADD &&
          o.op != format::RECV_DROP)
        return fail(fmt::format("{}: only SEND, RECV, RECV_ADD and RECV_DROP run async", at));
      o.async = true;
    }
    o.imm = in.imm();
    o.count = in.count();
    if (!format::Storage_IsValid(in.storage()))
      return fail(fmt::format("{}: unknown storage {}", at, int(in.storage())));
    o.storage = in.storage();
    if (std::string bad = storageError(o); !bad.empty())
      return fail(fmt::format("{}: {}", at, bad));
    if (in.has_first_row() && !(o.op == format::RECV_VECMAT && isSparse(o.storage)))
      return fail(fmt::format("{}: only a RECV_VECMAT over sparse storage takes first_row", at));
    if (!format::ElemType_IsValid(in.type()))
      return fail(fmt::format("{}: unknown element type {}", at, int(in.type())));
    o.type = in.type();
    if (o.type != format::ELEM_F32 && !takesElemType(o.op))
      return fail(fmt::format("{}: takes no element type {} (only ADD..MAX, MIN, POW, MOD, *_S, "
                              "ADD_I, MUL_I, FILL, NEG, ABS, RELU, REDUCE_* and the comparisons do)",
                              at, format::ElemType_Name(o.type)));
    if (o.op == format::EXT_LOAD) {
      auto it = blobIndex_.find(in.blob());
      if (it == blobIndex_.end())
        return fail(fmt::format("{}: no external blob with id {}", at, in.blob()));
      o.blob = it->second;
      usesExtLoad_ = true;
    }
    if (o.op == format::LOOP) {
      open.push_back(pc);
      out.loopDepth = std::max(out.loopDepth, uint32_t(open.size()));
    }
  }
  if (!open.empty())
    return fail(fmt::format("{} instruction {} (LOOP): no matching END", where, open.back()));
  // The instructions every PE runs: a LOOP without pred or guard runs, and
  // its END once per trip, `count` times the trips around it.
  auto mul = [](uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
  };
  auto add = [](uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
  };
  std::vector<uint64_t> trips{1}; // of the body of each enclosing LOOP; 0 when not certain
  for (const Instr &o : out.code) {
    bool certain = o.pred.empty() && o.guard.empty();
    if (o.op == format::END) {
      out.minInstructions = add(out.minInstructions, trips.back());
      trips.pop_back();
      continue;
    }
    if (certain)
      out.minInstructions = add(out.minInstructions, trips.back());
    if (o.op == format::LOOP)
      trips.push_back(certain ? mul(trips.back(), o.count) : 0);
  }
  return Status::success();
}

Status Builder::checkRegion(uint32_t wi, const format::Region &r, size_t index) {
  std::string where = fmt::format("region '{}' (wafer {})", regionName(r, index), wi);
  if (r.w() == 0 || r.h() == 0)
    return fail(fmt::format("{}: empty size {}x{}", where, r.w(), r.h()));
  if (uint64_t(r.x()) + r.w() > m_.width || uint64_t(r.y()) + r.h() > m_.height)
    return fail(fmt::format("{}: {}x{} at ({},{}) does not fit the {}x{} grid", where, r.w(), r.h(),
                            r.x(), r.y(), m_.width, m_.height));
  if (r.sram_bytes_per_pe() % 4 || r.sram_bytes_per_pe() > m_.sramBytes)
    return fail(fmt::format("{}: sram_bytes_per_pe {} must be a multiple of 4 and at most {}",
                            where, r.sram_bytes_per_pe(), m_.sramBytes));
  uint32_t ri = uint32_t(m_.regions.size());
  std::vector<int32_t> &at = m_.regionAt[wi];
  for (uint32_t y = r.y(); y < r.y() + r.h(); ++y)
    for (uint32_t x = r.x(); x < r.x() + r.w(); ++x) {
      size_t cell = size_t(y) * m_.width + x;
      if (m_.dead[wi][cell])
        return fail(fmt::format("{}: covers dead PE ({},{})", where, x, y));
      if (at[cell] >= 0)
        return fail(fmt::format("{}: overlaps region '{}' at PE ({},{})", where,
                                m_.regions[at[cell]].name, x, y));
      at[cell] = int32_t(ri);
    }
  Region reg;
  reg.name = regionName(r, index);
  reg.kind = r.kind();
  reg.wafer = wi;
  reg.indexInWafer = uint32_t(index);
  reg.x = r.x();
  reg.y = r.y();
  reg.w = r.w();
  reg.h = r.h();
  reg.sramBytes = r.sram_bytes_per_pe() ? r.sram_bytes_per_pe() : m_.sramBytes;
  reg.firstPe = m_.numPes;
  reg.proto = &r;
  if (Status s = checkCode(where, r, reg); !s)
    return s;
  for (int i = 0; i < r.init_size(); ++i) {
    const format::SramInit &init = r.init(i);
    uint64_t bytes = m_.initBytes(reg, i);
    if (init.px() >= r.w() || init.py() >= r.h())
      return fail(fmt::format("{}: init {} names local PE ({},{}) outside the {}x{} region", where,
                              i, init.px(), init.py(), r.w(), r.h()));
    if (init.offset() % 4 || bytes % 4)
      return fail(fmt::format("{}: init {} offset and size must be multiples of 4", where, i));
    if (uint64_t(init.offset()) + bytes > reg.sramBytes)
      return fail(fmt::format("{}: init {} at local PE ({},{}) spans bytes [{}, {}) beyond the "
                              "kernel's {} SRAM bytes",
                              where, i, init.px(), init.py(), init.offset(),
                              uint64_t(init.offset()) + bytes, reg.sramBytes));
  }
  m_.numPes += uint64_t(r.w()) * r.h();
  m_.regions.push_back(std::move(reg));
  return Status::success();
}

Status Builder::checkRoutes(uint32_t wi) {
  const format::Wafer &w = p_.wafers(wi);
  // Keys grow with the wafer: each wafer's entries, sorted, follow the last one's.
  size_t first = m_.routes.size();
  m_.routes.reserve(first + size_t(w.routes_size()));
  // Formatted only for an error: a wafer has millions of entries.
  auto where = [&](int i) {
    const format::Route &r = w.routes(i);
    return fmt::format("route {} of wafer {} at PE ({},{})", i, wi, r.x(), r.y());
  };
  for (int i = 0; i < w.routes_size(); ++i) {
    const format::Route &r = w.routes(i);
    if (!m_.onGrid(r.x(), r.y()))
      return fail(where(i) + ": outside the grid");
    if (m_.dead[wi][size_t(r.y()) * m_.width + r.x()])
      return fail(where(i) + ": the PE is dead");
    if (r.color() >= m_.colors)
      return fail(fmt::format("{}: color {} >= arch.colors {}", where(i), r.color(), m_.colors));
    if (!format::Port_IsValid(r.in()))
      return fail(fmt::format("{}: bad input port {}", where(i), int(r.in())));
    if (r.out_mask() == 0 || r.out_mask() >= (1u << kNumPorts))
      return fail(fmt::format("{}: out_mask {:#x} must be a non-empty set of ports 0..5", where(i),
                              r.out_mask()));
    bool link = r.in() == format::LINK || (r.out_mask() & (1u << format::LINK));
    if (link && !isEdge(r.x(), r.y()))
      return fail(where(i) + ": uses LINK but the PE is not on the wafer's edge");
    m_.routes.emplace_back(routeKey(wi, r.x(), r.y(), r.color(), r.in()), uint8_t(r.out_mask()));
  }
  auto begin = m_.routes.begin() + std::ptrdiff_t(first), end = m_.routes.end();
  std::sort(begin, end);
  // The keys given twice (sorted); none is the common case.
  std::vector<uint64_t> twice;
  auto same = [](const auto &a, const auto &b) { return a.first == b.first; };
  for (auto it = begin; (it = std::adjacent_find(it, end, same)) != end; ++it)
    if (twice.empty() || twice.back() != it->first)
      twice.push_back(it->first);
  // Name the first repeat in the program's order.
  std::vector<bool> met(twice.size());
  for (int i = 0; i < w.routes_size() && !twice.empty(); ++i) {
    const format::Route &r = w.routes(i);
    uint64_t key = routeKey(wi, r.x(), r.y(), r.color(), r.in());
    auto at = std::lower_bound(twice.begin(), twice.end(), key);
    if (at == twice.end() || *at != key)
      continue;
    if (met[size_t(at - twice.begin())])
      return fail(fmt::format("{}: a second entry for color {} input {}", where(i), r.color(),
                              portName(r.in())));
    met[size_t(at - twice.begin())] = true;
  }
  return Status::success();
}

Status Builder::checkFilters(uint32_t wi) {
  struct Seen {
    uint64_t key;
    const format::Region *region;
    int index;
  };
  std::vector<Seen> seen;
  for (const format::Region &r : p_.wafers(wi).regions())
    for (int i = 0; i < r.filters_size(); ++i) {
      const format::Filter &f = r.filters(i);
      auto where = [&] { return fmt::format("filter {} of region '{}'", i, r.name()); };
      if (f.px() >= r.w() || f.py() >= r.h())
        return fail(fmt::format("{}: PE ({},{}) is outside the {}x{} region", where(), f.px(),
                                f.py(), r.w(), r.h()));
      uint32_t x = r.x() + f.px(), y = r.y() + f.py();
      if (f.color() >= m_.colors)
        return fail(fmt::format("{}: color {} >= arch.colors {}", where(), f.color(), m_.colors));
      if (f.count() == 0 || uint64_t(f.first()) + f.count() > f.period())
        return fail(fmt::format("{}: window [{}, {}) must be non-empty and inside the period {}",
                                where(), f.first(), uint64_t(f.first()) + f.count(), f.period()));
      bool delivered = false;
      for (uint32_t in = 0; in < kNumPorts; ++in)
        if (m_.routeMask(routeKey(wi, x, y, f.color(), in)) & (1u << format::RAMP))
          delivered = true;
      if (!delivered)
        return fail(fmt::format("{}: PE ({},{}) of wafer {} gets nothing on color {} for its core",
                                where(), x, y, wi, f.color()));
      seen.push_back(Seen{routeKey(wi, x, y, f.color(), format::RAMP), &r, i});
    }
  // By key, keeping the program's order among equal keys: the later one is
  // the second. A wafer's keys follow the wafers before it.
  std::stable_sort(seen.begin(), seen.end(),
                   [](const Seen &a, const Seen &b) { return a.key < b.key; });
  for (size_t k = 0; k < seen.size(); ++k) {
    const format::Filter &f = seen[k].region->filters(seen[k].index);
    if (k && seen[k].key == seen[k - 1].key)
      return fail(
          fmt::format("filter {} of region '{}': a second filter for color {} at PE ({},{})",
                      seen[k].index, seen[k].region->name(), f.color(),
                      seen[k].region->x() + f.px(), seen[k].region->y() + f.py()));
    m_.filters.push_back(FilterRef{seen[k].key, f.first(), f.count(), f.period()});
  }
  return Status::success();
}

Status Builder::checkLinks() {
  if (p_.links_size() && !(m_.linkBytesPerCycle > 0))
    return fail("arch: link_bytes_per_cycle must be positive when the program has links");
  for (int i = 0; i < p_.links_size(); ++i) {
    const format::InterWaferLink &l = p_.links(i);
    std::string where = fmt::format("link {}", i);
    auto end = [&](uint32_t wafer, uint32_t x, uint32_t y, uint32_t color,
                   const char *side) -> Status {
      if (wafer >= m_.wafers)
        return fail(fmt::format("{}: {} wafer {} does not exist", where, side, wafer));
      if (!m_.onGrid(x, y) || !isEdge(x, y))
        return fail(fmt::format("{}: {} PE ({},{}) is not on the edge of the grid", where, side, x,
                                y));
      if (m_.dead[wafer][size_t(y) * m_.width + x])
        return fail(fmt::format("{}: {} PE ({},{}) of wafer {} is dead", where, side, x, y, wafer));
      if (color >= m_.colors)
        return fail(fmt::format("{}: {} color {} >= arch.colors {}", where, side, color, m_.colors));
      return Status::success();
    };
    if (Status s = end(l.src_wafer(), l.src_x(), l.src_y(), l.color(), "source"); !s)
      return s;
    if (Status s = end(l.dst_wafer(), l.dst_x(), l.dst_y(), l.dst_color(), "destination"); !s)
      return s;
    uint64_t key = routeKey(l.src_wafer(), l.src_x(), l.src_y(), l.color(), format::LINK);
    LinkEnd dst{l.dst_wafer(), l.dst_x(), l.dst_y(), l.dst_color()};
    if (!m_.links.emplace(key, dst).second)
      return fail(fmt::format("{}: a second link from wafer {} PE ({},{}) color {}", where,
                              l.src_wafer(), l.src_x(), l.src_y(), l.color()));
  }
  return Status::success();
}

Status Builder::checkTensors(bool outputs) {
  const auto &list = outputs ? p_.outputs() : p_.inputs();
  const char *kind = outputs ? "output" : "input";
  std::unordered_set<std::string> names;
  for (const format::HostTensor &t : list) {
    std::string where = fmt::format("{} '{}'", kind, t.name());
    if (t.name().empty())
      return fail(fmt::format("an {} has no name", kind));
    if (!names.insert(t.name()).second)
      return fail(where + ": declared twice");
    if (!format::DType_IsValid(t.dtype()))
      return fail(fmt::format("{}: bad dtype {}", where, int(t.dtype())));
    TensorRef ref;
    ref.name = t.name();
    ref.dtype = t.dtype();
    if (t.has_valid()) {
      bool integer = t.dtype() != format::F32 && t.dtype() != format::F64 &&
                     t.dtype() != format::F16 && t.dtype() != format::BF16 &&
                     t.dtype() != format::BOOL;
      if (outputs || !integer)
        return fail(where + ": a valid range is only for inputs of an integer dtype");
      if (t.valid().lo() >= t.valid().hi())
        return fail(fmt::format("{}: valid range [{}, {}) is empty", where, t.valid().lo(),
                                t.valid().hi()));
      ref.bounded = true;
      ref.lo = t.valid().lo();
      ref.hi = t.valid().hi();
    }
    ref.numel = 1;
    for (int64_t d : t.shape()) {
      if (d < 0 || d > (int64_t(1) << 40) || (d && ref.numel > (int64_t(1) << 40) / d))
        return fail(fmt::format("{}: bad shape", where));
      ref.shape.push_back(d);
      ref.numel *= d;
    }
    // Every output element is read from some PE's SRAM, so an output larger
    // than the machine's SRAM cannot be covered (and is not allocated).
    if (outputs && uint64_t(ref.numel) > sramWords())
      return fail(fmt::format("{}: {} elements, more than the {} words of SRAM its kernels have",
                              where, ref.numel, sramWords()));
    std::vector<bool> covered(outputs ? size_t(ref.numel) : 0);
    for (int i = 0; i < t.pieces_size(); ++i) {
      const format::Piece &pc = t.pieces(i);
      std::string pw = fmt::format("{} piece {}", where, i);
      if (pc.wafer() >= m_.wafers || !m_.onGrid(pc.x(), pc.y()))
        return fail(fmt::format("{}: wafer {} PE ({},{}) does not exist", pw, pc.wafer(), pc.x(),
                                pc.y()));
      int32_t r = m_.regionOf(pc.wafer(), pc.x(), pc.y());
      if (r < 0)
        return fail(fmt::format("{}: wafer {} PE ({},{}) has no kernel, hence no SRAM", pw,
                                pc.wafer(), pc.x(), pc.y()));
      uint32_t rows = pc.rows() ? pc.rows() : 1;
      uint64_t bytes = uint64_t(rows) * pc.count() * 4;
      if (pc.offset() % 4 || pc.offset() + bytes > m_.regions[r].sramBytes)
        return fail(fmt::format("{}: SRAM bytes [{}, {}) of wafer {} PE ({},{}) are not aligned or "
                                "beyond kernel '{}''s {} bytes",
                                pw, pc.offset(), pc.offset() + bytes, pc.wafer(), pc.x(), pc.y(),
                                m_.regions[r].name, m_.regions[r].sramBytes));
      if (pc.count()) {
        uint64_t last = 0;
        bool overflow = __builtin_mul_overflow(uint64_t(rows - 1), pc.row_stride(), &last) ||
                        __builtin_add_overflow(last, pc.tensor_offset(), &last) ||
                        __builtin_add_overflow(last, uint64_t(pc.count()), &last);
        if (overflow || last > uint64_t(ref.numel))
          return fail(fmt::format("{}: tensor elements beyond the {} elements of shape {}", pw,
                                  ref.numel, fmt::join(ref.shape, "x")));
      }
      PieceRef p{m_.peIndex(r, pc.x(), pc.y()), pc.offset(), pc.tensor_offset(), pc.count(), rows,
                 pc.row_stride()};
      if (outputs)
        for (uint32_t row = 0; row < rows; ++row)
          for (uint32_t k = 0; k < p.count; ++k)
            covered[p.tensorOffset + row * p.rowStride + k] = true;
      ref.pieces.push_back(p);
    }
    if (outputs)
      for (int64_t e = 0; e < ref.numel; ++e)
        if (!covered[e])
          return fail(fmt::format("{}: element {} is not held by any piece", where, e));
    (outputs ? m_.outputs : m_.inputs).push_back(std::move(ref));
  }
  return Status::success();
}

/// A generating program's token input and next_token output: integer
/// [B, T] tensors of one shape, T its context.
Status Builder::checkGeneration() {
  if (!p_.has_generation())
    return Status::success();
  const format::Generation &g = p_.generation();
  auto find = [](const std::vector<TensorRef> &list, const std::string &name) {
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const TensorRef &t) { return t.name == name; });
    return it == list.end() ? nullptr : &*it;
  };
  auto integer = [](const TensorRef &t) {
    return t.dtype != format::F32 && t.dtype != format::F64 && t.dtype != format::F16 &&
           t.dtype != format::BF16 && t.dtype != format::BOOL;
  };
  const TensorRef *in = find(m_.inputs, g.token_input());
  const TensorRef *out = find(m_.outputs, g.next_token_output());
  if (!in || !integer(*in) || in->shape.size() != 2)
    return fail(fmt::format("generation: token input '{}' is not a [batch, positions] integer "
                            "input of the program",
                            g.token_input()));
  if (!out || !integer(*out) || out->shape != in->shape)
    return fail(fmt::format("generation: next-token output '{}' is not an integer output of the "
                            "token input's shape {}",
                            g.next_token_output(), fmt::join(in->shape, "x")));
  if (g.context() == 0 || int64_t(g.context()) != in->shape[1])
    return fail(fmt::format("generation: context {} is not the token input's {} positions",
                            g.context(), in->shape[1]));
  return Status::success();
}

Expected<Model> Builder::build() {
  m_.program = &p_;
  if (Status s = checkArch(); !s)
    return s;
  if (p_.wafers_size() == 0 || uint32_t(p_.wafers_size()) > kMaxWafers)
    return fail(fmt::format("program has {} wafers; 1 to {} are needed", p_.wafers_size(),
                            kMaxWafers));
  m_.wafers = uint32_t(p_.wafers_size());
  for (const format::ExternalBlob &b : p_.external()) {
    if (b.data().size() % 4)
      return fail(fmt::format("external blob {}: size {} is not a multiple of 4", b.id(),
                              b.data().size()));
    if (!blobIndex_.emplace(b.id(), uint32_t(m_.blobs.size())).second)
      return fail(fmt::format("external blob {}: id used twice", b.id()));
    m_.blobs.push_back(&b.data());
  }
  size_t cells = size_t(m_.width) * m_.height;
  for (uint32_t wi = 0; wi < m_.wafers; ++wi) {
    const format::Wafer &w = p_.wafers(wi);
    if (w.index() != wi)
      return fail(fmt::format("wafers[{}] has index {}", wi, w.index()));
    m_.regionAt.emplace_back(cells, -1);
    m_.dead.emplace_back(cells, 0);
    for (const format::Pe &d : w.dead_pes()) {
      if (!m_.onGrid(d.x(), d.y()))
        return fail(fmt::format("wafer {}: dead PE ({},{}) is outside the grid", wi, d.x(), d.y()));
      m_.dead[wi][size_t(d.y()) * m_.width + d.x()] = 1;
    }
    for (int i = 0; i < w.regions_size(); ++i)
      if (Status s = checkRegion(wi, w.regions(i), i); !s)
        return s;
    if (Status s = checkRoutes(wi); !s)
      return s;
    if (Status s = checkFilters(wi); !s)
      return s;
  }
  if (usesExtLoad_ && !(m_.extBytesPerCycle > 0))
    return fail("arch: ext_mem_bytes_per_cycle must be positive when the program uses EXT_LOAD");
  if (Status s = checkLinks(); !s)
    return s;
  if (Status s = checkTensors(false); !s)
    return s;
  if (Status s = checkTensors(true); !s)
    return s;
  if (Status s = checkGeneration(); !s)
    return s;
  m_.peRegion.resize(m_.numPes);
  for (uint32_t r = 0; r < m_.regions.size(); ++r) {
    const Region &reg = m_.regions[r];
    std::fill_n(m_.peRegion.begin() + reg.firstPe, uint64_t(reg.w) * reg.h, r);
  }
  m_.sramWords = sramFootprints(m_);
  return std::move(m_);
}

} // namespace

Expected<Model> buildModel(const format::Program &program, const SramImageFile *images) {
  return Builder(program, images).build();
}

} // namespace wsc::runtime::detail
