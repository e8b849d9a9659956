//===- SramFootprint.cpp - the SRAM words each PE can reach ----------------===//
//
// A kernel's SRAM limit is its largest PE's: a linear's last row keeps every
// token's outputs, its other rows a few hundred words. The run's arena gives
// each PE only the words its code can reach (every address is affine in the
// loop indices and the PE coordinate, and every loop count is a constant), so
// a PE whose code stays low touches no page of its neighbours' limits.
// GPT-2-small's LM head: 2.6 GiB of limits, a tenth of it reachable.
// The analysis bounds from above; Core::span still holds every access to the
// kernel's limit (the fault the program meets), and to the PE's words.
//
//===----------------------------------------------------------------------===//
#include "Model.h"

#include <algorithm>

namespace wsc::runtime::detail {

void forEachPredicateCell(const Region &r, const std::function<void(const Cell &)> &fn) {
  std::vector<uint64_t> xs = {0, r.w}, ys = {0, r.h};
  for (const Instr &in : r.code)
    for (const PeRange &q : in.pred) {
      xs.insert(xs.end(), {q.x0, uint64_t(q.x1) + 1});
      ys.insert(ys.end(), {q.y0, uint64_t(q.y1) + 1});
    }
  auto sortCuts = [](std::vector<uint64_t> &cuts, uint64_t size) {
    cuts.erase(std::remove_if(cuts.begin(), cuts.end(), [&](uint64_t c) { return c > size; }),
               cuts.end());
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  };
  sortCuts(xs, r.w);
  sortCuts(ys, r.h);
  for (size_t j = 0; j + 1 < ys.size(); ++j)
    for (size_t i = 0; i + 1 < xs.size(); ++i)
      fn(Cell{uint32_t(xs[i]), uint32_t(xs[i + 1]), uint32_t(ys[j]), uint32_t(ys[j + 1])});
}

bool Cell::selects(const Instr &in) const {
  if (in.pred.empty())
    return true;
  for (const PeRange &q : in.pred)
    if (x0 >= q.x0 && x0 <= q.x1 && y0 >= q.y0 && y0 <= q.y1)
      return true;
  return false;
}

namespace {

/// The largest value of `a` over a cell's PEs and the enclosing loops'
/// indices (`trips`, innermost last), saturated to [0, cap].
int64_t maxValue(const Affine &a, const Cell &c, const std::vector<uint32_t> &trips, int64_t cap) {
  __int128 v = a.base;
  for (size_t j = 0; j < a.stride.size(); ++j)
    v += std::max<__int128>(0, __int128(a.stride[j]) * (trips[trips.size() - 1 - j] - 1));
  v += std::max<__int128>(__int128(a.px) * c.x0, __int128(a.px) * (c.x1 - 1));
  v += std::max<__int128>(__int128(a.py) * c.y0, __int128(a.py) * (c.y1 - 1));
  return int64_t(std::clamp<__int128>(v, 0, cap));
}

/// The words an instruction's operand `k` spans, in its counts n and m; -1
/// when they do not follow from them (a sparse tile's length is in its
/// words), or for an op not listed here: the PE then gets all of the limit.
int64_t operandWords(const Instr &in, int k, int64_t n, int64_t m) {
  using namespace format;
  bool sparse = isSparse(in.storage);
  switch (in.op) {
  case NOP:
  case LOOP:
  case END:
  case RECV_DROP:
    return 0;
  case SEND:
  case RECV:
  case RECV_ADD:
  case RECV_MAX:
  case FILL:
  case COPY:
  case EXT_LOAD:
    return k == 0 ? n : k == 1 && in.op == COPY ? n : 0;
  case MATVEC:
  case VECMAT: {
    bool mv = in.op == MATVEC;
    return k == 1 ? (sparse ? -1 : n * m) : k == 0 ? (mv ? n : m) : k == 2 ? (mv ? m : n) : 0;
  }
  case RECV_VECMAT:
    return k == 0 ? m : k == 1 ? (sparse ? -1 : n * m) : 0;
  case GATHER:
    return k == 0 ? m : k == 1 ? n * m : k == 2 ? 1 : 0;
  case INDEX_COPY:
    return k == 1 ? m : k <= 2 ? n : 0;
  case SELECT:
    return n;
  case REDUCE_SUM:
  case REDUCE_MAX:
  case REDUCE_MIN:
    return k == 0 ? 1 : k == 1 ? n : 0;
  case ADD_S:
  case SUB_S:
  case MUL_S:
  case DIV_S:
  case RANDOM:
    return k <= 1 ? n : k == 2 ? 1 : 0;
  case ADD:
  case SUB:
  case MUL:
  case DIV:
  case MAX:
  case MIN:
  case POW:
  case MOD:
  case EQ:
  case LT:
  case LE:
  case GT:
  case GE:
  case AND:
  case OR:
  case XOR:
  case BIT_AND:
  case BIT_OR:
  case BIT_XOR:
    return k <= 2 ? n : 0;
  case ADD_I:
  case MUL_I:
  case EXP:
  case ERF:
  case TANH:
  case SQRT:
  case RSQRT:
  case NEG:
  case GELU:
  case GELU_TANH:
  case NOT:
  case BIT_NOT:
  case LOG:
  case ABS:
  case SIN:
  case COS:
  case SIGMOID:
  case RECIPROCAL:
  case RELU:
  case TO_INT:
  case TO_FLOAT:
  case FLOOR:
  case CEIL:
    return k <= 1 ? n : 0;
  default:
    return -1;
  }
}

/// The bytes a cell's PEs can reach: past every operand of every
/// instruction they select, or the kernel's limit.
uint64_t cellBytes(const Region &r, const Cell &c) {
  int64_t limit = r.sramBytes;
  uint64_t reach = 0;
  std::vector<uint32_t> trips;
  for (size_t pc = 0; pc < r.code.size(); ++pc) {
    const Instr &in = r.code[pc];
    // A LOOP the cell does not select, or of no trips, skips its body.
    if (in.op == format::LOOP && (!c.selects(in) || in.count == 0)) {
      pc = in.jump;
      continue;
    }
    if (in.op == format::LOOP)
      trips.push_back(in.count);
    if (in.op == format::END)
      trips.pop_back();
    if (in.op == format::LOOP || in.op == format::END || !c.selects(in))
      continue;
    int64_t n = maxValue(in.n, c, trips, limit), m = maxValue(in.m, c, trips, limit);
    for (int k = 0; k < 4; ++k) {
      int64_t words = operandWords(in, k, n, m);
      if (words < 0)
        return uint64_t(limit);
      if (words)
        reach = std::max<uint64_t>(reach, maxValue(in.addr[k], c, trips, limit) + words * 4);
    }
  }
  return std::min<uint64_t>(reach, uint64_t(limit));
}

} // namespace

std::vector<uint32_t> sramFootprints(const Model &m) {
  std::vector<uint32_t> words(m.numPes, 0);
  auto reach = [&](uint64_t pe, uint64_t w) { words[pe] = std::max<uint64_t>(words[pe], w); };
  for (const Region &r : m.regions) {
    forEachPredicateCell(r, [&](const Cell &c) {
      uint64_t w = (cellBytes(r, c) + 3) / 4;
      for (uint32_t y = c.y0; y < c.y1; ++y)
        for (uint32_t x = c.x0; x < c.x1; ++x)
          reach(r.firstPe + uint64_t(y) * r.w + x, w);
    });
    for (int i = 0; i < r.proto->init_size(); ++i) {
      const format::SramInit &init = r.proto->init(i);
      reach(r.firstPe + uint64_t(init.py()) * r.w + init.px(),
            init.offset() / 4 + m.initBytes(r, i) / 4);
    }
  }
  for (const std::vector<TensorRef> *list : {&m.inputs, &m.outputs})
    for (const TensorRef &t : *list)
      for (const PieceRef &p : t.pieces)
        reach(p.pe, p.offset / 4 + uint64_t(p.rows) * p.count);
  // Each PE's words start on a cache line.
  for (uint32_t &w : words)
    w = (w + 15) & ~uint32_t(15);
  return words;
}

} // namespace wsc::runtime::detail
