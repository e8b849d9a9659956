// The STORE_SPARSE layout of a weight tile: written by the compiler's
// export, read by the emulator. Part of the format library (wsc_wafer_proto)
// so that both sides share one definition.
//
// A tile of `rows` x `cols` elements, in words. Row counts take 8 bits when
// cols <= 255, else 16 (cols <= 65535). An entry's column is its gap from
// the entry before it in its row (the first: from column 0), in 8 bits or
// in 4 (EIE's relative indices), whatever the tile's width. A longer run of
// zeros is bridged by filler entries (value +0.0), one every 256 (or 16)
// columns. Values are fp32 words (STORE_SPARSE) or 16-bit halves two to a
// word, the even one in the low bits (STORE_SPARSE_F16, STORE_SPARSE_BF16):
//   word 0                 the entries stored (nonzeros and fillers), with
//                          kNibbleGaps set when gaps take 4 bits; kDenseTile
//                          instead: the rows x cols values follow, row-major
//                          (a tile too dense to gain from the sparse form)
//   ceil(rows / k) words   each row's count of entries, k to a word (4 of 8
//                          bits, or 2 of 16), row r in word 1 + r / k, at
//                          bits (r % k) * 32 / k (low first)
//   gap words              the entries' gaps, row by row, 4 or 8 to a word,
//                          packed as the counts
//   entries values         the entries' values, in the same order
#ifndef WSC_FORMAT_SPARSETILE_H
#define WSC_FORMAT_SPARSETILE_H

#include <cstdint>
#include <vector>

namespace wsc::format {

/// How wide a sparse tile's values are: fp32 words, or 16-bit halves.
enum class SparseValues { Words, Halves };

/// Words that n values take.
inline uint64_t valueWords(uint64_t n, SparseValues v) {
  return v == SparseValues::Words ? n : (n + 1) / 2;
}

/// How many bits an entry's gap takes.
enum class SparseGaps { Bytes = 8, Nibbles = 4 };

/// Word 0 of a tile stored dense inside the sparse layout.
constexpr uint32_t kDenseTile = 0xFFFFFFFFu;
/// Word 0's flag of a sparse-form tile whose gaps take 4 bits.
constexpr uint32_t kNibbleGaps = 0x80000000u;
/// The most columns a sparse tile may have (16-bit row counts).
constexpr uint64_t kMaxSparseCols = 65535;
/// The most columns of a tile whose row counts take 8 bits.
constexpr uint64_t kMaxNarrowCols = 255;

/// Row counts per word in a tile of `cols` columns.
inline uint64_t countsPerWord(uint64_t cols) { return cols <= kMaxNarrowCols ? 4 : 2; }
/// Gaps per word.
inline uint64_t gapsPerWord(SparseGaps g) { return 32 / uint64_t(g); }
/// The longest gap (zeros skipped) one entry says.
inline uint64_t maxGap(SparseGaps g) { return (uint64_t(1) << uint64_t(g)) - 1; }
/// Index i of a run packed `per` to a word at `words`.
inline uint32_t packedIndex(const uint32_t *words, uint64_t i, uint64_t per) {
  uint64_t bits = 32 / per;
  return (words[i / per] >> (bits * (i % per))) & ((1u << bits) - 1);
}
/// Words of a rows x cols tile holding `entries` entries in the sparse form.
inline uint64_t sparseTileWords(uint64_t rows, uint64_t cols, uint64_t entries, SparseValues v,
                                SparseGaps g = SparseGaps::Bytes) {
  uint64_t per = countsPerWord(cols), gaps = gapsPerWord(g);
  return 1 + (rows + per - 1) / per + (entries + gaps - 1) / gaps + valueWords(entries, v);
}
/// Filler entries a row needs between stored columns `from` (one past the
/// entry before, or 0) and `to`: one for each full maxGap + 1 columns skipped.
inline uint64_t fillersBefore(uint64_t from, uint64_t to, SparseGaps g = SparseGaps::Bytes) {
  return (to - from) / (maxGap(g) + 1);
}
/// Words of a rows x cols tile stored dense inside the sparse layout.
inline uint64_t denseTileWords(uint64_t rows, uint64_t cols, SparseValues v) {
  return 1 + valueWords(rows * cols, v);
}
/// Words the layout takes for a tile with `entries` entries: the smaller form.
inline uint64_t storedTileWords(uint64_t rows, uint64_t cols, uint64_t entries, SparseValues v,
                                SparseGaps g = SparseGaps::Bytes) {
  uint64_t sparse = sparseTileWords(rows, cols, entries, v, g),
           dense = denseTileWords(rows, cols, v);
  return sparse < dense ? sparse : dense;
}

/// Cycles of a MATVEC or VECMAT over a tile in this layout at `fmac`
/// multiply-adds per cycle: one per entry (a filler too) and one per row
/// (fetching its x) in the sparse form, one per element in the dense one.
/// RECV_VECMAT charges each received run of rows the same way.
inline uint64_t sparseTileCycles(uint64_t rows, uint64_t cols, uint64_t nnz, SparseValues v,
                                 uint64_t fmac, SparseGaps g = SparseGaps::Bytes) {
  bool sparse = sparseTileWords(rows, cols, nnz, v, g) < denseTileWords(rows, cols, v);
  uint64_t work = sparse ? nnz + rows : rows * cols;
  return (work + fmac - 1) / fmac;
}

/// Encodes a row-major tile of fp32 bit patterns (`words`, rows x cols):
/// the sparse form with gaps of `g` when it is smaller, else the dense one.
/// An element is stored when its bits are not +0.0 (a -0.0 stays).
/// cols <= kMaxSparseCols.
std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols,
                                       SparseGaps g = SparseGaps::Bytes);
/// The same for a tile of 16-bit values (f16 or bf16 bit patterns), stored
/// when not 0x0000.
std::vector<uint32_t> encodeSparseTile(const uint16_t *halves, uint64_t rows, uint64_t cols,
                                       SparseGaps g = SparseGaps::Bytes);

/// The entries the sparse form of a row-major rows x cols tile of bit
/// patterns holds: its elements that are not +0.0, and the fillers.
uint64_t countEntries(const uint32_t *words, uint64_t rows, uint64_t cols,
                      SparseGaps g = SparseGaps::Bytes);
uint64_t countEntries(const uint16_t *halves, uint64_t rows, uint64_t cols,
                      SparseGaps g = SparseGaps::Bytes);

} // namespace wsc::format

#endif
