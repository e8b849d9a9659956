//===- OnnxSpectral.cpp - DFT, STFT, MelWeightMatrix and Det --------------===//
//
// The transforms are products with constant tables: a DFT of length L along
// an axis is x @ C and x @ S with C[n][k] = cos(2 pi k n / L) and S the
// sines, the real and imaginary parts kept apart ([..., 2] at the ends, as
// ONNX lays them out). STFT takes its frames as slices of the signal.
// MelWeightMatrix's inputs must be compile-time constants: it is a table.
// Det expands by cofactors, up to 4 x 4.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isSpectralOp(StringRef op) {
  return llvm::is_contained({"DFT", "STFT", "MelWeightMatrix", "Det"}, op);
}

/// A compile-time scalar input as a double.
FailureOr<double> Importer::constScalar(Value v, const char *what) {
  auto dense = v ? wg::getConstantElements(v) : DenseElementsAttr();
  if (!dense || dense.getNumElements() != 1)
    return nodeError(std::string("the ") + what + " input is not a compile-time scalar"), failure();
  if (isa<FloatType>(dense.getElementType()))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  return double((*dense.getValues<APInt>().begin()).getSExtValue());
}

/// The DFT of length `length` of the last axis of (re, im), `bins` of its
/// outputs, from the first min(n, length) inputs (the rest are zeros).
/// `im` may be null (a real signal). Inverse: the conjugate tables and 1/L.
std::pair<Value, Value> Importer::dftLastAxis(Composer &c, Value re, Value im, int64_t length,
                                              int64_t bins, bool inverse) {
  int64_t n = std::min(typeOf(re).getShape().back(), length);
  int64_t last = typeOf(re).getRank() - 1;
  re = c.sliceAlong(re, last, 0, n);
  im = im ? c.sliceAlong(im, last, 0, n) : Value();
  SmallVector<float> cosines, sines;
  double scale = inverse ? 1.0 / double(length) : 1.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < bins; ++k) {
      // k * i reduced mod L first keeps the angle exact for long transforms.
      double angle = 2.0 * M_PI * double((k * i) % length) / double(length);
      cosines.push_back(float(std::cos(angle) * scale));
      sines.push_back(float(std::sin(angle) * scale * (inverse ? -1.0 : 1.0)));
    }
  auto table = RankedTensorType::get({n, bins}, builder.getF32Type());
  Value cosT = constant(DenseElementsAttr::get(table, ArrayRef<float>(cosines)));
  Value sinT = constant(DenseElementsAttr::get(table, ArrayRef<float>(sines)));
  auto product = [&](Value x, Value t) { return c.op(wg::MatmulOp::getOperationName(), {x, t}); };
  // (re + i im)(cos - i sin): re cos + im sin, im cos - re sin (sin negated
  // for the inverse).
  Value outRe = product(re, cosT), outIm = c.neg(product(re, sinT));
  if (im) {
    outRe = c.add(outRe, product(im, sinT));
    outIm = c.add(outIm, product(im, cosT));
  }
  return {outRe, outIm};
}

/// (re, im) side by side in a new last axis of 2.
static Value complexPairs(Composer &c, Value re, Value im) {
  int64_t rank = typeOf(re).getRank();
  return c.concat({c.unsqueeze(re, {rank}), c.unsqueeze(im, {rank})}, rank);
}

LogicalResult Importer::convertDft(const onnx::NodeProto &node, ArrayRef<Value> in,
                                   SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() || rank < 3 || type.getShape().back() > 2 ||
      !isa<FloatType>(type.getElementType()))
    return nodeError("takes a static float signal [batch, ..., 1 or 2]"), failure();
  // Opset 20 moved the axis from an attribute (default 1) to input 2
  // (default -2, the last signal axis).
  int64_t axisAttr = intAttr(node, "axis", 1);
  if (opset >= 20) {
    axisAttr = -2;
    if (in.size() > 2 && in[2]) {
      auto given = constScalar(in[2], "axis");
      if (::failed(given))
        return failure();
      axisAttr = int64_t(*given);
    }
  }
  int64_t axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
  if (axis < 1 || axis >= rank - 1)
    return nodeError("axis " + std::to_string(axisAttr) + " is not a signal axis"), failure();
  int64_t length = type.getDimSize(axis);
  if (in.size() > 1 && in[1]) {
    auto given = constScalar(in[1], "dft_length");
    if (::failed(given))
      return failure();
    length = int64_t(*given);
  }
  bool inverse = intAttr(node, "inverse", 0), onesided = intAttr(node, "onesided", 0);
  if (length <= 0 || (inverse && onesided))
    return nodeError("needs a positive dft_length, and is not both inverse and onesided"),
           failure();
  int64_t bins = onesided ? length / 2 + 1 : length;
  // The parts [..., signal], the DFT's axis last.
  SmallVector<int64_t> perm, shape(type.getShape().drop_back());
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> back(rank - 1);
  for (int64_t d = 0; d < rank - 1; ++d)
    back[perm[d]] = d;
  auto part = [&](int64_t i) {
    return c.transpose(c.reshape(c.sliceAlong(in[0], rank - 1, i, 1), shape), perm);
  };
  Value re = part(0), im = type.getShape().back() == 2 ? part(1) : Value();
  if (!c.ok)
    return failure();
  auto [outRe, outIm] = dftLastAxis(c, re, im, length, bins, inverse);
  Value y = complexPairs(c, c.transpose(outRe, back), c.transpose(outIm, back));
  return c.finish(results, {y});
}

LogicalResult Importer::convertStft(const onnx::NodeProto &node, ArrayRef<Value> in,
                                    SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  if (!type.hasStaticShape() || type.getRank() != 3 || type.getShape().back() > 2)
    return nodeError("takes a static signal [batch, length, 1 or 2]"), failure();
  auto step = constScalar(in.size() > 1 ? in[1] : Value(), "frame_step");
  if (::failed(step))
    return failure();
  Value window = in.size() > 2 ? in[2] : Value();
  int64_t frame = window ? typeOf(window).getShape().back() : 0;
  if (in.size() > 3 && in[3]) {
    auto given = constScalar(in[3], "frame_length");
    if (::failed(given))
      return failure();
    frame = int64_t(*given);
  }
  int64_t length = type.getDimSize(1), hop = int64_t(*step);
  if (frame <= 0 || frame > length || hop <= 0 ||
      (window && typeOf(window).getShape().back() != frame))
    return nodeError("needs a frame_length (or a window of that length) within the signal and "
                     "a positive frame_step"),
           failure();
  bool onesided = intAttr(node, "onesided", 1);
  int64_t frames = (length - frame) / hop + 1, bins = onesided ? frame / 2 + 1 : frame;
  // [batch, frames, frame] of each part, windowed.
  auto framed = [&](int64_t i) {
    Value x = c.reshape(c.sliceAlong(in[0], 2, i, 1), {type.getDimSize(0), length});
    SmallVector<Value> rows;
    for (int64_t f = 0; f < frames; ++f)
      rows.push_back(c.unsqueeze(c.sliceAlong(x, 1, f * hop, frame), {1}));
    Value all = c.concat(rows, 1);
    return window ? c.mul(all, window) : all;
  };
  Value re = framed(0), im = type.getShape().back() == 2 ? framed(1) : Value();
  if (!c.ok)
    return failure();
  auto [outRe, outIm] = dftLastAxis(c, re, im, frame, bins, false);
  return c.finish(results, {complexPairs(c, outRe, outIm)});
}

/// The triangular filters of ONNX's MelWeightMatrix: bins on the mel scale
/// evenly between the edges, mapped back to DFT bins (floored), each filter
/// rising from its lower bin to its centre and falling to its upper one.
LogicalResult Importer::convertMelWeightMatrix(const onnx::NodeProto &node, ArrayRef<Value> in,
                                               SmallVectorImpl<Value> &results) {
  double args[5];
  const char *names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                          "upper_edge_hertz"};
  for (int i = 0; i < 5; ++i) {
    auto v = constScalar(in.size() > size_t(i) ? in[i] : Value(), names[i]);
    if (::failed(v))
      return failure();
    args[i] = *v;
  }
  int64_t mels = int64_t(args[0]), dft = int64_t(args[1]), rate = int64_t(args[2]);
  if (mels <= 0 || dft <= 0 || rate <= 0 || args[3] < 0 || args[4] <= args[3])
    return nodeError("needs positive counts and rate and edges 0 <= lower < upper"), failure();
  int64_t spectrum = dft / 2 + 1;
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double low = mel(args[3]), step = (mel(args[4]) - low) / double(mels + 2);
  SmallVector<int64_t> edge;
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (double(i) * step + low) / 2595.0) - 1.0);
    edge.push_back(int64_t(std::floor(double(dft + 1) * hz / double(rate))));
  }
  SmallVector<float> table(size_t(spectrum * mels), 0.0f);
  auto set = [&](int64_t bin, int64_t m, double v) {
    if (bin >= 0 && bin < spectrum)
      table[size_t(bin * mels + m)] = float(v);
  };
  for (int64_t m = 0; m < mels; ++m) {
    int64_t lo = edge[m], mid = edge[m + 1], hi = edge[m + 2];
    if (mid == lo)
      set(mid, m, 1.0);
    for (int64_t j = lo; mid > lo && j <= mid; ++j)
      set(j, m, double(j - lo) / double(mid - lo));
    for (int64_t j = mid; hi > mid && j < hi; ++j)
      set(j, m, double(hi - j) / double(hi - mid));
  }
  auto element = elementType(intAttr(node, "output_datatype", onnx::TensorProto::FLOAT),
                             currentNode + ": output_datatype");
  if (::failed(element))
    return failure();
  Composer c = composer();
  Value t = constant(DenseElementsAttr::get(
      RankedTensorType::get({spectrum, mels}, builder.getF32Type()), ArrayRef<float>(table)));
  if (!element->isF32())
    t = c.op(wg::CastOp::getOperationName(), {t}, {},
             RankedTensorType::get({spectrum, mels}, *element));
  return c.finish(results, {t});
}

/// The determinant of rows `rows` and columns `cols` of the [..., n, n]
/// entries, expanded along the first row.
static Value cofactors(Composer &c, ArrayRef<SmallVector<Value>> entry, ArrayRef<int64_t> rows,
                       ArrayRef<int64_t> cols) {
  if (rows.size() == 1)
    return entry[rows[0]][cols[0]];
  Value sum;
  SmallVector<int64_t> rest(rows.drop_front());
  for (size_t j = 0; j < cols.size(); ++j) {
    SmallVector<int64_t> minor(cols);
    minor.erase(minor.begin() + j);
    Value term = c.mul(entry[rows[0]][cols[j]], cofactors(c, entry, rest, minor));
    sum = !sum ? term : j % 2 ? c.sub(sum, term) : c.add(sum, term);
  }
  return sum;
}

LogicalResult Importer::convertDet(const onnx::NodeProto &node, ArrayRef<Value> in,
                                   SmallVectorImpl<Value> &results) {
  auto type = typeOf(in[0]);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() || rank < 2 ||
      type.getDimSize(rank - 1) != type.getDimSize(rank - 2) ||
      !isa<FloatType>(type.getElementType()))
    return nodeError("takes static float square matrices [..., n, n]"), failure();
  int64_t n = type.getDimSize(rank - 1);
  if (n < 1 || n > 4)
    return nodeError("expands by cofactors up to 4 x 4; this is " + std::to_string(n) + " x " +
                     std::to_string(n)),
           failure();
  Composer c = composer();
  ArrayRef<int64_t> batch = type.getShape().drop_back(2);
  SmallVector<SmallVector<Value>> entry(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      entry[i].push_back(
          c.reshape(c.sliceAlong(c.sliceAlong(in[0], rank - 2, i, 1), rank - 1, j, 1), batch));
  SmallVector<int64_t> all(n);
  for (int64_t i = 0; i < n; ++i)
    all[i] = i;
  return c.finish(results, {cofactors(c, entry, all, all)});
}

LogicalResult Importer::convertSpectralOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  if (op == "MelWeightMatrix")
    return convertMelWeightMatrix(node, in, results);
  if (in.empty() || !in[0])
    return nodeError("expects an input"), failure();
  if (op == "DFT")
    return convertDft(node, in, results);
  if (op == "STFT")
    return convertStft(node, in, results);
  return convertDet(node, in, results);
}
