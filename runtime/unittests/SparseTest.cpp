// Sparse weight tiles: the encoder (format/SparseTile.cpp), and MATVEC,
// VECMAT and RECV_VECMAT over them, which must compute as the dense path on
// the same tile (STORE_SPARSE as STORE_F32, STORE_SPARSE_F16/BF16 as
// STORE_F16/BF16), cost sparseTileCycles, and fault on a malformed tile.
#include "TestPrograms.h"
#include "wsc/format/SparseTile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

uint32_t W(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

constexpr auto kWords = format::SparseValues::Words, kHalves = format::SparseValues::Halves;

/// A rows x cols tile of fp32 bit patterns, row-major. Its 16-bit form
/// keeps each pattern's high half: a bf16 value, and as f16 one of about
/// the same size (the values here lie in [-2, 2]).
struct Tile {
  uint64_t rows, cols;
  std::vector<uint32_t> words;
  format::SparseGaps gaps = format::SparseGaps::Bytes;
  std::vector<uint16_t> halves() const {
    std::vector<uint16_t> h;
    for (uint32_t w : words)
      h.push_back(uint16_t(w >> 16));
    return h;
  }
  /// The entries of its sparse form: nonzeros and fillers.
  uint64_t entries(format::SparseValues v = kWords) const {
    return v == kWords ? format::countEntries(words.data(), rows, cols, gaps)
                       : format::countEntries(halves().data(), rows, cols, gaps);
  }
  std::vector<uint32_t> encoded(format::SparseValues v = kWords) const {
    return v == kWords ? format::encodeSparseTile(words.data(), rows, cols, gaps)
                       : format::encodeSparseTile(halves().data(), rows, cols, gaps);
  }
  /// The elements as the layout holds them: fp32 words, or halves.
  std::vector<uint32_t> elements(format::SparseValues v) const {
    if (v == kWords)
      return words;
    std::vector<uint32_t> h;
    for (uint16_t x : halves())
      h.push_back(x);
    return h;
  }
};

/// Value i of the run of values from word `base`.
uint32_t valueAt(const std::vector<uint32_t> &t, uint64_t base, uint64_t i,
                 format::SparseValues v) {
  return v == kWords ? t[base + i] : (t[base + i / 2] >> (16 * (i % 2))) & 0xFFFFu;
}

/// The layout read back, independently of the emulator: the elements, as
/// Tile::elements gives them.
std::vector<uint32_t> decode(const std::vector<uint32_t> &t, uint64_t rows, uint64_t cols,
                             format::SparseValues v = kWords) {
  std::vector<uint32_t> out(rows * cols, 0);
  if (t[0] == format::kDenseTile) {
    for (uint64_t i = 0; i < rows * cols; ++i)
      out[i] = valueAt(t, 1, i, v);
    return out;
  }
  bool nibbles = t[0] & 0x80000000u;
  uint64_t nnz = t[0] & 0x7FFFFFFFu, per = cols <= 255 ? 4 : 2, gapsPer = nibbles ? 8 : 4;
  auto packed = [&](uint64_t base, uint64_t i, uint64_t per) {
    uint64_t bits = 32 / per;
    return (t[base + i / per] >> (bits * (i % per))) & ((1u << bits) - 1);
  };
  uint64_t gaps = 1 + (rows + per - 1) / per, values = gaps + (nnz + gapsPer - 1) / gapsPer;
  uint64_t e = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t k = 0, c = 0; k < packed(1, r, per); ++k, ++e, ++c) {
      c += packed(gaps, e, gapsPer);
      out[r * cols + c] = valueAt(t, values, e, v); // a filler's +0.0 stands on a zero
    }
  EXPECT_EQ(e, nnz);
  return out;
}

/// Random values, a `density` share of them nonzero.
Tile randomTile(uint64_t rows, uint64_t cols, double density, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::bernoulli_distribution kept(density);
  Tile t{rows, cols, {}};
  for (uint64_t i = 0; i < rows * cols; ++i)
    t.words.push_back(kept(gen) ? W(value(gen)) : 0u);
  return t;
}

/// Two rows of 500 columns whose nonzeros lie far apart: fillers bridge
/// the gaps (row 0: column 3, a filler at 259, then 499; row 1: a filler
/// at 255, then 300).
Tile longGaps() {
  Tile t{2, 500, std::vector<uint32_t>(1000, 0)};
  t.words[3] = W(1.25f);
  t.words[499] = W(-0.5f);
  t.words[500 + 300] = W(2.0f);
  return t;
}

/// The tiles every product is tried on, with 8-bit gaps and with 4-bit ones.
std::vector<std::pair<std::string, Tile>> tiles() {
  Tile zeroRow = randomTile(6, 10, 0.3, 1);
  for (uint64_t c = 0; c < 10; ++c)
    zeroRow.words[2 * 10 + c] = 0;
  zeroRow.words[0] = W(-0.0f); // an entry, multiplied as the dense path does
  std::vector<std::pair<std::string, Tile>> all = {
      {"a zero row", zeroRow},
      {"all zero", Tile{5, 7, std::vector<uint32_t>(35, 0)}},
      {"fully dense", randomTile(5, 7, 1.0, 2)},
      {"75% sparse", randomTile(24, 40, 0.25, 3)},
      {"75% sparse, 16-bit counts", randomTile(3, 300, 0.25, 5)},
      {"gaps of more than 255 zeros", longGaps()},
      {"90% sparse", randomTile(10, 60, 0.1, 6)}};
  for (size_t i = 0, n = all.size(); i < n; ++i) {
    auto [name, t] = all[i];
    t.gaps = format::SparseGaps::Nibbles;
    all.push_back({name + ", 4-bit gaps", t});
  }
  return all;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float &f : v)
    f = value(gen);
  return v;
}

constexpr uint64_t kFmac = 4; // makeProgram's
constexpr uint32_t kTile = 0, kX = 4096, kDst = 8192, kFill = 12288;

void initWords(format::Region *r, uint32_t px, uint32_t offset, const std::vector<uint32_t> &w) {
  format::SramInit *s = r->add_init();
  s->set_px(px);
  s->set_offset(offset);
  s->set_data(std::string(reinterpret_cast<const char *>(w.data()), w.size() * 4));
}

/// The tile as `storage` holds it: its words for STORE_F32, its halves
/// packed for STORE_F16/BF16, else encoded.
std::vector<uint32_t> stored(const Tile &t, format::Storage storage) {
  switch (storage) {
  case format::STORE_F32:
    return t.words;
  case format::STORE_F16:
  case format::STORE_BF16: {
    std::vector<uint16_t> h = t.halves();
    std::vector<uint32_t> packed((h.size() + 1) / 2, 0);
    for (size_t i = 0; i < h.size(); ++i)
      packed[i / 2] |= uint32_t(h[i]) << (16 * (i % 2));
    return packed;
  }
  case format::STORE_SPARSE:
    return t.encoded();
  default:
    return t.encoded(kHalves);
  }
}

/// Each sparse storage beside the dense one that must compute the same.
struct StoragePair {
  format::Storage dense, sparse;
  format::SparseValues values;
};
const StoragePair kStoragePairs[] = {{format::STORE_F32, format::STORE_SPARSE, kWords},
                                     {format::STORE_F16, format::STORE_SPARSE_F16, kHalves},
                                     {format::STORE_BF16, format::STORE_SPARSE_BF16, kHalves}};

struct Outcome {
  std::vector<uint32_t> dst;
  uint64_t cycles = 0;
};

/// The raw words of output 'dst' and the run's cycles.
Outcome outcome(const format::Program &p) {
  RunResult res = runProgram(p);
  EXPECT_TRUE(res.status.ok()) << res.status.message();
  Outcome o;
  if (!res.status.ok())
    return o;
  for (int64_t v : res.outputs.at("dst").ints)
    o.dst.push_back(uint32_t(int32_t(v)));
  o.cycles = res.report.cycles;
  return o;
}

/// An output of dst's `words` raw words on local PE px.
void addDst(format::Program &p, uint32_t px, uint64_t words) {
  addPiece(addTensor(p, true, "dst", format::I32, {int64_t(words)}), px, 0, kDst, 0,
           uint32_t(words));
}

/// MATVEC or VECMAT on one PE over `t` held as `storage`; dst starts as
/// ones, so that an accumulating product shows.
Outcome runProduct(format::Op op, const Tile &t, format::Storage storage, bool accumulate) {
  bool mv = op == format::MATVEC;
  format::Program p = makeProgram(1, 1);
  p.mutable_arch()->set_sram_bytes_per_pe(16384);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  initWords(r, 0, kTile, stored(t, storage));
  initFloats(r, 0, 0, kX, randomFloats(mv ? t.cols : t.rows, 7));
  uint64_t out = mv ? t.rows : t.cols;
  initFloats(r, 0, 0, kDst, std::vector<float>(out, 1.0f));
  format::Instr in = ins(op, {kDst, kTile, kX}, int64_t(t.rows), int64_t(t.cols));
  in.set_storage(storage);
  in.set_count(accumulate ? 1 : 0);
  *r->add_code() = in;
  addDst(p, 0, out);
  return outcome(p);
}

void expectProductMatchesDense(format::Op op) {
  for (const StoragePair &pair : kStoragePairs)
    for (const auto &[name, t] : tiles())
      for (bool accumulate : {false, true}) {
        SCOPED_TRACE(testing::Message() << format::Storage_Name(pair.sparse) << ", " << name
                                        << (accumulate ? ", accumulating" : ""));
        Outcome dense = runProduct(op, t, pair.dense, accumulate);
        Outcome sparse = runProduct(op, t, pair.sparse, accumulate);
        EXPECT_EQ(sparse.dst, dense.dst);
        EXPECT_EQ(dense.cycles, (t.rows * t.cols + kFmac - 1) / kFmac);
        EXPECT_EQ(sparse.cycles, format::sparseTileCycles(t.rows, t.cols, t.entries(pair.values),
                                                          pair.values, kFmac, t.gaps));
      }
}

TEST(SparseTile, EncodingRoundTrips) {
  for (format::SparseValues v : {kWords, kHalves})
    for (const auto &[name, t] : tiles()) {
      SCOPED_TRACE(testing::Message() << name << (v == kHalves ? ", 16-bit values" : ""));
      std::vector<uint32_t> e = t.encoded(v);
      EXPECT_EQ(e.size(), format::storedTileWords(t.rows, t.cols, t.entries(v), v, t.gaps));
      EXPECT_EQ(decode(e, t.rows, t.cols, v), t.elements(v));
    }
  // Up to 255 columns, counts take 8 bits, four to a word; gaps always do.
  // The last word's unused ones stay zero.
  Tile odd{3, 5, std::vector<uint32_t>(15, 0)};
  odd.words[4] = W(1.5f);
  odd.words[10] = W(-2.0f);
  odd.words[11] = W(3.0f);
  std::vector<uint32_t> e = odd.encoded();
  EXPECT_EQ(e, (std::vector<uint32_t>{3, 1 | 0 << 8 | 2 << 16, 4 | 0 << 8 | 0 << 16, W(1.5f),
                                      W(-2.0f), W(3.0f)}));
  // Wider tiles' counts take 16 bits, two to a word. Column 299 is 299
  // zeros on: a filler at 255, then a gap of 43.
  Tile wide{3, 300, std::vector<uint32_t>(900, 0)};
  wide.words[299] = W(1.5f);
  wide.words[600] = W(-2.0f);
  wide.words[601] = W(3.0f);
  e = wide.encoded();
  EXPECT_EQ(e, (std::vector<uint32_t>{4, 2 | 0 << 16, 2, 255 | 43 << 8, 0, W(1.5f), W(-2.0f),
                                      W(3.0f)}));
  EXPECT_EQ(decode(e, 3, 300), wide.words);
  EXPECT_EQ(format::countEntries(longGaps().words.data(), 2, 500), 3u + 2u);
  // With 4-bit gaps, a filler every 16 zeros: row 0 (3, then 495 zeros to
  // 499) 1 + 30 + 1, row 1 (300 zeros to 300) 18 + 1.
  EXPECT_EQ(format::countEntries(longGaps().words.data(), 2, 500, format::SparseGaps::Nibbles),
            32u + 19u);
  // Word 0 flags 4-bit gaps; eight to a word. Row 0 of `odd`: a gap of 4;
  // row 2: 0 and 0.
  Tile odd4 = odd;
  odd4.gaps = format::SparseGaps::Nibbles;
  EXPECT_EQ(odd4.encoded(), (std::vector<uint32_t>{3 | format::kNibbleGaps, 1 | 0 << 8 | 2 << 16,
                                                   4 | 0 << 4 | 0 << 8, W(1.5f), W(-2.0f),
                                                   W(3.0f)}));
}

TEST(SparseTile, PacksHalfValuesTwoToAWord) {
  // Three entries: counts 1, 0, 2 and gaps 4, 0, 0 (8 bits each), then
  // the halves 0x3FC0, 0xC000 in one word and 0x4040 in the low half of the
  // next. Dense, the same tile takes 1 + ceil(15 / 2) words.
  Tile odd{3, 5, std::vector<uint32_t>(15, 0)};
  odd.words[4] = W(1.5f);
  odd.words[10] = W(-2.0f);
  odd.words[11] = W(3.0f);
  std::vector<uint32_t> e = odd.encoded(kHalves);
  EXPECT_EQ(e, (std::vector<uint32_t>{3, 1 | 0 << 8 | 2 << 16, 4 | 0 << 8 | 0 << 16,
                                      0x3FC0u | 0xC000u << 16, 0x4040u}));
  Tile full = randomTile(3, 5, 1.0, 4);
  e = full.encoded(kHalves);
  ASSERT_EQ(e.size(), 1u + 8u);
  EXPECT_EQ(e[0], format::kDenseTile);
  EXPECT_EQ(decode(e, 3, 5, kHalves), full.elements(kHalves));
}

TEST(SparseTile, KeepsNegativeZeroAsAnEntry) {
  Tile t{2, 4, std::vector<uint32_t>(8, 0)};
  t.words[5] = W(-0.0f);
  std::vector<uint32_t> e = t.encoded();
  ASSERT_EQ(e[0], 1u);
  EXPECT_EQ(e.back(), 0x80000000u);
  EXPECT_EQ(decode(e, 2, 4), t.words);
}

TEST(SparseTile, ZeroAndDenseTiles) {
  Tile zero{5, 7, std::vector<uint32_t>(35, 0)};
  EXPECT_EQ(zero.encoded(), (std::vector<uint32_t>{0, 0, 0}));
  Tile full = randomTile(2, 3, 1.0, 4);
  std::vector<uint32_t> e = full.encoded();
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[0], format::kDenseTile);
  EXPECT_EQ(std::vector<uint32_t>(e.begin() + 1, e.end()), full.words);
}

TEST(Sparse, MatvecMatchesDenseBitForBit) { expectProductMatchesDense(format::MATVEC); }

TEST(Sparse, VecmatMatchesDenseBitForBit) { expectProductMatchesDense(format::VECMAT); }

/// PE 0 sends x (t.rows words) on color 1, as rows [0, cut) and [cut, rows)
/// when cut < rows; PE 1 fills 400 words first (so that x is there), then
/// multiplies it into `t` as RECV_VECMAT, a receive per piece: a sparse
/// tile's second through first_row (of k rows), a dense one's at its rows'
/// address. The first accumulates into dst (ones) with `accumulate`.
format::Program recvVecmat(const Tile &t, format::Storage storage, bool accumulate,
                           uint64_t cut = 0) {
  cut = cut ? cut : t.rows;
  format::Program p = makeProgram(2, 1);
  p.mutable_arch()->set_sram_bytes_per_pe(16384);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
  initFloats(r, 0, 0, kX, randomFloats(t.rows, 8));
  initWords(r, 1, kTile, stored(t, storage));
  initFloats(r, 1, 0, kDst, std::vector<float>(t.cols, 1.0f));
  *r->add_code() = only(send(1, kX, int64_t(cut)), 0, 0, 0, 0);
  if (cut < t.rows)
    *r->add_code() = only(send(1, kX + 4 * uint32_t(cut), int64_t(t.rows - cut)), 0, 0, 0, 0);
  *r->add_code() = only(ins(format::FILL, {kFill}, 400), 1, 1, 0, 0); // 100 cycles
  bool sparse =
      storage != format::STORE_F32 && storage != format::STORE_F16 && storage != format::STORE_BF16;
  for (uint64_t first : {uint64_t(0), cut}) {
    if (first == t.rows)
      break;
    uint64_t words = storage == format::STORE_F32 ? first * t.cols : first * t.cols / 2;
    uint64_t n = first ? t.rows - cut : cut;
    format::Instr in = ins(format::RECV_VECMAT, {kDst, kTile + (sparse ? 0 : 4 * int64_t(words))},
                           int64_t(n), int64_t(t.cols));
    in.set_color(1);
    in.set_storage(storage);
    in.set_count(first || accumulate ? 1 : 0);
    if (sparse && cut < t.rows) {
      in.mutable_k()->set_base(int64_t(t.rows));
      in.mutable_first_row()->set_base(int64_t(first));
    }
    *r->add_code() = only(in, 1, 1, 0, 0);
  }
  routeEast(p, 0, 0, 1, 1);
  addDst(p, 1, t.cols);
  return p;
}

TEST(Sparse, RecvVecmatMatchesDenseBitForBit) {
  for (const auto &[name, t] : tiles())
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(testing::Message() << name << (accumulate ? ", accumulating" : ""));
      for (const StoragePair &pair : kStoragePairs) {
        SCOPED_TRACE(format::Storage_Name(pair.sparse));
        Outcome dense = outcome(recvVecmat(t, pair.dense, accumulate));
        Outcome sparse = outcome(recvVecmat(t, pair.sparse, accumulate));
        EXPECT_EQ(sparse.dst, dense.dst);
        EXPECT_EQ(dense.cycles, 100 + (t.rows * t.cols + kFmac - 1) / kFmac);
        EXPECT_EQ(sparse.cycles, 100 + format::sparseTileCycles(t.rows, t.cols,
                                                                t.entries(pair.values),
                                                                pair.values, kFmac, t.gaps));
      }
    }
}

TEST(Sparse, RecvVecmatTakesItsRowsFromFirstRow) {
  for (const auto &[name, t] : tiles()) {
    SCOPED_TRACE(name);
    uint64_t cut = t.rows / 2;
    ASSERT_EQ(cut * t.cols % 2, 0u) << "the dense 16-bit piece must start on a word";
    Tile upper{cut, t.cols, {t.words.begin(), t.words.begin() + int64_t(cut * t.cols)}, t.gaps};
    Tile lower{
        t.rows - cut, t.cols, {t.words.begin() + int64_t(cut * t.cols), t.words.end()}, t.gaps};
    for (const StoragePair &pair : kStoragePairs) {
      SCOPED_TRACE(format::Storage_Name(pair.sparse));
      Outcome dense = outcome(recvVecmat(t, pair.dense, false, cut));
      Outcome sparse = outcome(recvVecmat(t, pair.sparse, false, cut));
      EXPECT_EQ(sparse.dst, dense.dst);
      // Each piece costs its own rows' entries, when the tile is held sparse.
      uint64_t entries = t.entries(pair.values);
      bool perEntry = format::sparseTileWords(t.rows, t.cols, entries, pair.values, t.gaps) <
                      format::denseTileWords(t.rows, t.cols, pair.values);
      auto cycles = [&](const Tile &piece) {
        uint64_t work = perEntry ? piece.entries(pair.values) + piece.rows : piece.rows * t.cols;
        return (work + kFmac - 1) / kFmac;
      };
      EXPECT_EQ(sparse.cycles, 100 + cycles(upper) + cycles(lower));
    }
  }
}

TEST(Sparse, RecvVecmatRowsOutsideTheTileFault) {
  Tile t = randomTile(4, 8, 0.3, 9);
  for (auto [k, first] : {std::pair<int64_t, int64_t>{4, 1}, {3, 0}, {4, -1}}) {
    format::Program p = recvVecmat(t, format::STORE_SPARSE, false);
    format::Instr *in = p.mutable_wafers(0)->mutable_regions(0)->mutable_code(2);
    in->mutable_k()->set_base(k);
    in->mutable_first_row()->set_base(first);
    RunResult res = runProgram(p);
    EXPECT_NE(res.status.message().find("bad sparse tile"), std::string::npos)
        << res.status.message();
    EXPECT_NE(res.status.message().find("are not inside its rows"), std::string::npos);
  }
}

TEST(Sparse, FirstRowOnlyOnASparseRecvVecmat) {
  format::Program p = recvVecmat(randomTile(4, 8, 0.3, 9), format::STORE_F32, false);
  p.mutable_wafers(0)->mutable_regions(0)->mutable_code(2)->mutable_first_row()->set_base(1);
  RunResult res = runProgram(p);
  EXPECT_NE(res.status.message().find("only a RECV_VECMAT over sparse storage takes first_row"),
            std::string::npos)
      << res.status.message();
}

TEST(Sparse, RecvVecmatChargesEachRunItsEntries) {
  // A 4 x 16 tile whose rows hold 3, 0, 2 and 1 entries; PE 0 sends x in
  // two messages of two words, the second 10 cycles later (at 12).
  Tile t{4, 16, std::vector<uint32_t>(64, 0)};
  for (auto [r, c] : {std::pair{0, 1}, {0, 4}, {0, 15}, {2, 0}, {2, 9}, {3, 7}})
    t.words[r * 16 + c] = W(0.5f + float(r + c));
  auto program = [&](format::Storage storage) {
    format::Program p = makeProgram(2, 1);
    format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
    initFloats(r, 0, 0, 0, {1, -2, 3, -4});
    initWords(r, 1, 0, stored(t, storage));
    *r->add_code() = only(send(1, 0, 2), 0, 0, 0, 0);
    *r->add_code() = only(ins(format::FILL, {64}, 40), 0, 0, 0, 0); // 10 cycles
    *r->add_code() = only(send(1, 8, 2), 0, 0, 0, 0);
    format::Instr in = ins(format::RECV_VECMAT, {1024, 0}, 4, 16);
    in.set_color(1);
    in.set_storage(storage);
    *r->add_code() = only(in, 1, 1, 0, 0);
    routeEast(p, 0, 0, 1, 1);
    addPiece(addTensor(p, true, "dst", format::I32, {16}), 1, 0, 1024, 0, 16);
    return p;
  };
  Outcome dense = outcome(program(format::STORE_F32));
  Outcome sparse = outcome(program(format::STORE_SPARSE));
  EXPECT_EQ(sparse.dst, dense.dst);
  // x0, x1 arrive at 2 and 3: their rows are done at 2 + ceil((3 + 0 + 2) /
  // 4) = 4. x2, x3 arrive at 14: done at 14 + ceil((2 + 1 + 2) / 4) = 16
  // (more than the whole product's ceil((6 + 4) / 4) = 3 after 0).
  // Dense: 2 + ceil(2 * 16 / 4) = 10, then 14 + 8 = 22.
  EXPECT_EQ(sparse.cycles, 16u);
  EXPECT_EQ(dense.cycles, 22u);
}

/// PE 1 holds `tile` at byte `at` and runs `op` (rows 4, cols 8) over it,
/// dst at 256, with the x (zeros) that PE 0 sends it. Returns the error, ""
/// if none.
std::string runOver(const std::vector<uint32_t> &tile, uint32_t at = 0,
                    format::Op op = format::MATVEC) {
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
  initWords(r, 1, at, tile);
  format::Instr in = op == format::RECV_VECMAT ? ins(op, {256, at}, 4, 8)
                                             : ins(op, {256, at, 512}, 4, 8);
  in.set_color(1);
  in.set_storage(format::STORE_SPARSE);
  *r->add_code() = only(send(1, 512, 4), 0, 0, 0, 0);
  if (op != format::RECV_VECMAT)
    *r->add_code() = only(recv(1, 512, 4), 1, 1, 0, 0);
  *r->add_code() = only(in, 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  RunResult res = runProgram(p);
  return res.status.ok() ? "" : res.status.message();
}

/// A valid 4 x 8 tile of 6 entries: rows hold 2, 0, 3 and 1.
std::vector<uint32_t> goodTile() {
  Tile t{4, 8, std::vector<uint32_t>(32, 0)};
  for (auto [r, c] : {std::pair{0, 0}, {0, 7}, {2, 1}, {2, 2}, {2, 5}, {3, 3}})
    t.words[r * 8 + c] = W(float(1 + r * 8 + c));
  std::vector<uint32_t> e = t.encoded();
  EXPECT_EQ(e[0], 6u);
  return e;
}

/// Sets 8-bit index i of the words from `base` on.
void setIndex(std::vector<uint32_t> &t, uint64_t base, uint64_t i, uint32_t v) {
  uint32_t &w = t[base + i / 4];
  int shift = 8 * int(i % 4);
  w = (w & ~(0xFFu << shift)) | v << shift;
}

/// The start of runOver's fault of `kind` at `op`.
std::string faultAt(const std::string &kind, format::Op op) {
  bool fused = op == format::RECV_VECMAT;
  return kind + ": wafer 0 PE (1,0) (kernel 'k')" + (fused ? ", color 1" : "") +
         ": instruction " + (fused ? "1" : "2") + " (" + format::Op_Name(op) + "): ";
}

const format::Op kProducts[] = {format::MATVEC, format::VECMAT, format::RECV_VECMAT};

TEST(Sparse, BadTilesFault) {
  for (format::Op op : kProducts) {
    SCOPED_TRACE(format::Op_Name(op));
    std::string at = faultAt("bad sparse tile", op);
    EXPECT_EQ(runOver(goodTile(), 0, op), "");
    std::vector<uint32_t> t = goodTile();
    setIndex(t, 1, 3, 9); // counts are at word 1, 8 bits each (m = 8)
    EXPECT_EQ(runOver(t, 0, op), at + "row 3 holds 9 entries, more than m = 8");
    t = goodTile();
    setIndex(t, 1, 1, 4);
    EXPECT_EQ(runOver(t, 0, op), at + "row counts sum to 10, nnz is 6");
    t = goodTile();
    setIndex(t, 2, 4, 12); // gaps are at word 1 + 1; row 2's third entry is now 13 on from column 2
    EXPECT_EQ(runOver(t, 0, op), at + "column 15 of entry 4 is not below m = 8");
  }
}

TEST(Sparse, TileSpanIsCheckedAgainstTheSram) {
  for (format::Op op : kProducts) {
    SCOPED_TRACE(format::Op_Name(op));
    std::string at = faultAt("SRAM overflow", op);
    // Word 0 itself, then the tile its word 0 describes, sparse and dense.
    EXPECT_EQ(runOver({}, 4096, op),
              at + "addr[1] spans bytes [4096, 4100) outside the kernel's 4096 SRAM bytes");
    std::vector<uint32_t> t = goodTile(); // 1 + 1 + 2 + 6 words
    EXPECT_EQ(runOver({t.begin(), t.begin() + 4}, 4080, op),
              at + "addr[1] spans bytes [4080, 4120) outside the kernel's 4096 SRAM bytes");
    EXPECT_EQ(runOver({format::kDenseTile}, 4000, op),
              at + "addr[1] spans bytes [4000, 4132) outside the kernel's 4096 SRAM bytes");
    EXPECT_EQ(runOver(t, 4096 - 4 * uint32_t(t.size()), op), "");
  }
}

TEST(Sparse, TileIsReadWhenItRuns) {
  // The program overwrites the row counts between two MATVECs (row 0 now
  // holds 9 entries): the second faults.
  format::Program p = makeProgram(1, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  initWords(r, 0, 0, goodTile());
  format::Instr mv = ins(format::MATVEC, {256, 0, 512}, 4, 8);
  mv.set_storage(format::STORE_SPARSE);
  format::Instr fill = ins(format::FILL, {4}, 1);
  fill.set_type(format::ELEM_I32);
  fill.set_imm(9);
  *r->add_code() = mv;
  *r->add_code() = fill;
  *r->add_code() = mv;
  RunResult res = runProgram(p);
  EXPECT_EQ(res.status.message(), "bad sparse tile: wafer 0 PE (0,0) (kernel 'k'): instruction 2 "
                                  "(MATVEC): row 0 holds 9 entries, more than m = 8");
}

TEST(Sparse, WaitsForAnAsyncReceiveIntoTheTile) {
  // PE 1 receives its tile on its async engine, then multiplies: the
  // MATVEC waits for the receive, which ends a cycle after the last word
  // arrives (at 1 + 10 for a 10-word tile).
  std::vector<uint32_t> t = goodTile();
  format::Program p = makeProgram(2, 1);
  format::Region *r = addRegion(p, "k", 0, 0, 2, 1);
  initWords(r, 0, 0, t);
  initFloats(r, 1, 0, 512, {1, 2, 3, 4, 5, 6, 7, 8});
  *r->add_code() = only(send(1, 0, int64_t(t.size())), 0, 0, 0, 0);
  format::Instr in = recv(1, 0, int64_t(t.size()));
  in.set_async(true);
  *r->add_code() = only(in, 1, 1, 0, 0);
  format::Instr mv = ins(format::MATVEC, {256, 0, 512}, 4, 8);
  mv.set_storage(format::STORE_SPARSE);
  *r->add_code() = only(mv, 1, 1, 0, 0);
  routeEast(p, 0, 0, 1, 1);
  addPiece(addTensor(p, true, "y", format::F32, {4}), 1, 0, 256, 0, 4);
  RunResult res = runProgram(p);
  ASSERT_TRUE(res.status.ok()) << res.status.message();
  EXPECT_EQ(res.out("y"), (std::vector<float>{1 * 1 + 8 * 8, 0, 18 * 2 + 19 * 3 + 22 * 6, 28 * 4}));
  EXPECT_EQ(res.report.cycles, t.size() + 2 + format::sparseTileCycles(4, 8, 6, kWords, kFmac));
}

TEST(Sparse, ColumnLimit) {
  // A constant m above 65535 is refused at load; any other m faults when a
  // tile in the sparse form meets it. The dense form has no column indices.
  format::Program p = makeProgram(1, 1);
  p.mutable_arch()->set_sram_bytes_per_pe(1 << 20);
  format::Region *r = addRegion(p, "k", 0, 0, 1, 1);
  format::Instr mv = ins(format::MATVEC, {0, 16, 400000}, 1, 65536);
  mv.set_storage(format::STORE_SPARSE);
  *r->add_code() = mv;
  EXPECT_EQ(runProgram(p).status.message(), "region 'k' (wafer 0) instruction 0 (MATVEC): m = "
                                            "65536 is more than the 65535 columns a sparse tile "
                                            "indexes");
  r->mutable_code(0)->mutable_m()->set_px(1); // 65536 + px: not a constant
  EXPECT_EQ(runProgram(p).status.message(), "bad sparse tile: wafer 0 PE (0,0) (kernel 'k'): "
                                            "instruction 0 (MATVEC): m = 65536 is more than the "
                                            "65535 columns a sparse tile indexes");
  initWords(r, 0, 16, {format::kDenseTile});
  EXPECT_EQ(runProgram(p).status.message(), "");
}

TEST(Sparse, StorageIsRefusedOnOtherOps) {
  for (format::Op op : {format::GATHER, format::ADD}) {
    format::Program p = makeProgram(1, 1);
    format::Instr in = ins(op, {0, 0, 0}, 1, 1);
    in.set_storage(format::STORE_SPARSE);
    *addRegion(p, "k", 0, 0, 1, 1)->add_code() = in;
    EXPECT_EQ(runProgram(p).status.message(),
              "region 'k' (wafer 0) instruction 0 (" + format::Op_Name(op) +
                  "): only MATVEC, VECMAT and RECV_VECMAT read sparse storage");
  }
}

} // namespace
