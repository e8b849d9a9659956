//===- OnnxGridSample.cpp - GridSample, RoiAlign and AffineGrid -----------===//
//
// GridSample reads X where a runtime grid points, so every output point's
// source coordinate, its taps (nearest: one, bilinear: 2 per axis, bicubic:
// 4) and their weights are computed elementwise from the grid. The taps are
// then read with a gather_elements of X flattened to [N, C, H*W] by the taps'
// flat indices (the same for every channel), and the weighted reads summed
// pairwise. As ONNX's reference: a coordinate outside the image is first
// clamped (border) or reflected (reflection); then a tap outside reads zero
// (zeros: its index clamped and its weight zeroed), the border pixel
// (border) or the pixel reflected into the image (reflection).
// RoiAlign samples its bins the same way, by gathers at computed pixels;
// AffineGrid makes a grid for GridSample.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isGridSampleOp(StringRef op) {
  return op == "GridSample" || op == "AffineGrid" || op == "RoiAlign" || op == "DeformConv";
}

namespace {
/// How one spatial axis maps the grid: its length and the extent [lo, hi]
/// its normalized [-1, 1] covers (pixel centres with align_corners, else
/// pixel edges).
struct GridAxis {
  int64_t length;
  double lo, hi;
};

/// One tap of an output point along an axis: the index it reads (in the
/// image, f32-integral) and its weight.
struct GridTap {
  Value index, weight;
};
} // namespace

/// `x` reflected off lo and hi until it lies in [lo, hi] (x inside: itself).
static Value reflect(Composer &c, function_ref<Value(double)> k, Value x,
                     const GridAxis &a) {
  double range = a.hi - a.lo;
  Value below = c.less(x, k(a.lo)), above = c.greater(x, k(a.hi));
  if (range <= 0) // one pixel with aligned corners: every point is on it
    return c.where(below, k(a.lo), c.where(above, k(a.lo), x));
  // dx past the near border is n whole ranges and a rest r; after an even
  // number of reflections x sits r inside the near border, else the far one.
  Value dx = c.where(below, c.sub(k(a.lo), x), c.sub(x, k(a.hi)));
  Value n = c.unary(wg::FloorOp::getOperationName(), c.div(dx, k(range)));
  Value r = c.sub(dx, c.mul(n, k(range)));
  Value half = c.unary(wg::FloorOp::getOperationName(), c.mul(n, k(0.5)));
  Value odd = c.greater(c.sub(n, c.mul(half, k(2))), k(0.5));
  Value nearSide = c.where(below, c.add(k(a.lo), r), c.sub(k(a.hi), r));
  Value farSide = c.where(below, c.sub(k(a.hi), r), c.add(k(a.lo), r));
  Value inside = c.where(odd, farSide, nearSide);
  return c.where(below, inside, c.where(above, inside, x));
}

/// The weights of the cubic convolution's taps at floor(x) - 1 .. + 2, for
/// t = x - floor(x) (Keys, a = -0.75, as ONNX's reference).
static SmallVector<Value> cubicWeights(Composer &c,
                                       function_ref<Value(double)> k, Value t) {
  const double a = -0.75;
  auto nearTap = [&](Value d) { // |d| <= 1
    return c.add(c.mul(c.mul(c.sub(c.mul(k(a + 2), d), k(a + 3)), d), d), k(1));
  };
  auto farTap = [&](Value d) { // 1 < |d| < 2
    Value p = c.add(c.mul(c.sub(c.mul(k(a), d), k(5 * a)), d), k(8 * a));
    return c.sub(c.mul(p, d), k(4 * a));
  };
  Value u = c.sub(k(1), t);
  return {farTap(c.add(t, k(1))), nearTap(t), nearTap(u),
          farTap(c.add(u, k(1)))};
}

/// The taps along one axis of the points whose normalized coordinate is `g`.
static SmallVector<GridTap> gridTaps(Composer &c, function_ref<Value(double)> k,
                                     Value g, const GridAxis &a, bool align,
                                     StringRef mode, StringRef padding,
                                     function_ref<Value(Value)> roundHalfEven) {
  double d = double(a.length);
  Value x = align ? c.mul(c.add(g, k(1)), k((d - 1) / 2))
                  : c.div(c.sub(c.mul(c.add(g, k(1)), k(d)), k(1)), k(2));
  if (mode == "nearest") // as the reference (and PyTorch's nearbyint)
    x = roundHalfEven(x);
  // The coordinate itself first: clamped or reflected when it is outside.
  if (padding == "border")
    x = c.where(c.less(x, k(a.lo)), k(0),
                c.where(c.greater(x, k(a.hi)), k(d - 1), x));
  else if (padding == "reflection")
    x = reflect(c, k, x, a);
  SmallVector<GridTap> taps;
  if (mode == "nearest") {
    taps.push_back({x, k(1)});
  } else {
    Value base = c.unary(wg::FloorOp::getOperationName(), x);
    Value t = c.sub(x, base);
    SmallVector<Value> w = mode == "bilinear"
                               ? SmallVector<Value>{c.sub(k(1), t), t}
                               : cubicWeights(c, k, t);
    int64_t first = mode == "bilinear" ? 0 : -1;
    for (auto [i, wi] : llvm::enumerate(w))
      taps.push_back({c.add(base, k(double(first + int64_t(i)))), wi});
  }
  // Then each tap: zero outside, the border pixel, or the reflected one.
  for (GridTap &tap : taps) {
    if (padding == "zeros")
      tap.weight =
          c.where(c.less(tap.index, k(0)), k(0),
                  c.where(c.greater(tap.index, k(d - 1)), k(0), tap.weight));
    else if (padding == "reflection")
      tap.index = reflect(c, k, tap.index, a);
    tap.index = c.min(c.max(tap.index, k(0)), k(d - 1));
  }
  return taps;
}

/// AffineGrid: theta [N, 2, 3] (or [N, 3, 4]) times each output point's
/// normalized (x, y[, z], 1), pixel centres spanning [-1, 1] (with
/// align_corners, the corner pixels' centres at -1 and 1); the product of
/// theta and a constant [3, H * W] (or [4, D * H * W]) table.
LogicalResult Importer::convertAffineGrid(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto size = in.size() > 1 && in[1] ? constInts(in[1], "size")
                                     : FailureOr<SmallVector<int64_t>>(failure());
  if (::failed(size))
    return nodeError("size is not a compile-time constant (bind it with --bind)"), failure();
  if (!staticInputs(in[0]))
    return failure();
  auto theta = typeOf(in[0]);
  int64_t dims = int64_t(size->size()) - 2;
  if ((dims != 2 && dims != 3) || theta.getRank() != 3 || theta.getDimSize(0) != (*size)[0] ||
      theta.getDimSize(1) != dims || theta.getDimSize(2) != dims + 1 ||
      llvm::any_of(*size, [](int64_t n) { return n <= 0; }))
    return nodeError("expects theta [N, 2, 3] with size [N, C, H, W], or [N, 3, 4] with [N, C, "
                     "D, H, W]"),
           failure();
  bool align = intAttr(node, "align_corners", 0);
  ArrayRef<int64_t> spatial = ArrayRef<int64_t>(*size).drop_front(2);
  auto coordinate = [&](int64_t i, int64_t n) {
    return align ? (n == 1 ? -1.0 : -1.0 + 2.0 * double(i) / double(n - 1))
                 : (2.0 * double(i) + 1.0) / double(n) - 1.0;
  };
  int64_t points = boundedProduct(spatial, kMaxImportTable / (dims + 1));
  if (points < 0)
    return nodeError("a grid of more than " + std::to_string(kMaxImportTable / (dims + 1)) +
                     " points is not supported"),
           failure();
  // Row j of the table: the points' j-th coordinate (x first: the last axis).
  SmallVector<float> table((dims + 1) * points);
  for (int64_t p = 0; p < points; ++p)
    for (int64_t j = 0, rest = p; j < dims; ++j) {
      int64_t axis = dims - 1 - j;
      table[j * points + p] = float(coordinate(rest % spatial[axis], spatial[axis]));
      rest /= spatial[axis];
    }
  std::fill(table.begin() + dims * points, table.end(), 1.0f);
  Type element = theta.getElementType();
  Value base = constant(DenseElementsAttr::get(
      RankedTensorType::get({dims + 1, points}, builder.getF32Type()), ArrayRef<float>(table)));
  if (!element.isF32())
    base = c.op(wg::CastOp::getOperationName(), {base}, {},
                RankedTensorType::get({dims + 1, points}, element));
  Value grid = c.transpose(c.op(wg::MatmulOp::getOperationName(), {in[0], base}), {0, 2, 1});
  SmallVector<int64_t> shape = {(*size)[0]};
  shape.append(spatial.begin(), spatial.end());
  shape.push_back(dims);
  return c.finish(results, {c.reshape(grid, shape)});
}

namespace {
/// One axis of RoiAlign's samples (ONNX Runtime's bilinear taps): the
/// pixel each sample reads below and above it, and their weights; zero for
/// a sample more than a pixel outside the image.
struct RoiAxis {
  Value low, high, lowWeight, highWeight;
};
} // namespace

static RoiAxis roiAxis(Composer &c, function_ref<Value(double)> k, Value at, int64_t length) {
  Value valid = c.where(c.op(wg::AndOp::getOperationName(),
                             {c.op(wg::GreaterEqualOp::getOperationName(), {at, k(-1)}),
                              c.op(wg::LessEqualOp::getOperationName(), {at, k(double(length))})}),
                        k(1), k(0));
  Value v = c.max(at, k(0));
  Value low = c.unary(wg::FloorOp::getOperationName(), v);
  Value atEnd = c.op(wg::GreaterEqualOp::getOperationName(), {low, k(double(length - 1))});
  Value last = k(double(length - 1));
  low = c.where(atEnd, last, low);
  Value high = c.where(atEnd, last, c.add(low, k(1)));
  Value frac = c.sub(c.where(atEnd, low, v), low);
  return {low, high, c.mul(c.sub(k(1), frac), valid), c.mul(frac, valid)};
}

/// RoiAlign: each region of interest (x1, y1, x2, y2, scaled by
/// spatial_scale, less half a pixel with half_pixel) split into output_height
/// x output_width bins, each the average (or the max) of sampling_ratio^2
/// bilinear samples, read by gather from the roi's image in batch_indices.
LogicalResult Importer::convertRoiAlign(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  Composer c = composer();
  if (in.size() < 3 || !in[2])
    return nodeError("expects X, rois and batch_indices"), failure();
  if (!staticInputs(in))
    return failure();
  auto type = typeOf(in[0]), roiType = typeOf(in[1]);
  int64_t rois = roiType.getRank() == 2 ? roiType.getDimSize(0) : -1;
  if (!type.hasStaticShape() || type.getRank() != 4 || !isa<FloatType>(type.getElementType()) ||
      rois < 0 || roiType.getDimSize(1) != 4 || typeOf(in[2]).getNumElements() != rois)
    return nodeError("expects float X [N, C, H, W], rois [R, 4] and batch_indices [R]"), failure();
  ArrayRef<int64_t> xs = type.getShape();
  int64_t oh = intAttr(node, "output_height", 1), ow = intAttr(node, "output_width", 1),
          ratio = intAttr(node, "sampling_ratio", 0);
  if (ratio <= 0 || oh <= 0 || ow <= 0)
    return nodeError("needs a positive sampling_ratio (0, samples by each roi's size, is not "
                     "supported) and output size"),
           failure();
  if (xs[0] * xs[2] * xs[3] >= (int64_t(1) << 24) ||
      boundedProduct({xs[1], rois, oh, ratio, ow, ratio}, kMaxImportTable) < 0)
    return nodeError("the images hold 2^24 pixels or more, or the samples " +
                     std::to_string(kMaxImportTable) + " or more"),
           failure();
  std::string mode = stringAttr(node, "mode", "avg"),
              coords = stringAttr(node, "coordinate_transformation_mode",
                                  opset >= 16 ? "half_pixel" : "output_half_pixel");
  if ((mode != "avg" && mode != "max") || (coords != "half_pixel" && coords != "output_half_pixel"))
    return nodeError("mode '" + mode + "' or coordinate_transformation_mode '" + coords +
                     "' is not avg/max, half_pixel/output_half_pixel"),
           failure();
  Type f32 = builder.getF32Type();
  auto k = [&](double v) { return scalarConstant(f32, v); };
  Value boxes = castTo(c, in[1], f32);
  double scale = floatAttr(node, "spatial_scale", 1.0f), shift = coords == "half_pixel" ? 0.5 : 0;
  auto corner = [&](int64_t j) {
    return c.sub(c.mul(c.sliceAlong(boxes, 1, j, 1), k(scale)), k(shift));
  };
  // Sample positions along an axis: start + bin * (p + (i + 0.5) / ratio), [R, out * ratio].
  auto samples = [&](int64_t lo, int64_t out) {
    Value start = corner(lo), extent = c.sub(corner(lo + 2), start);
    if (coords == "output_half_pixel")
      extent = c.max(extent, k(1));
    SmallVector<float> steps;
    for (int64_t p = 0; p < out; ++p)
      for (int64_t i = 0; i < ratio; ++i)
        steps.push_back(float(double(p) + (double(i) + 0.5) / double(ratio)));
    Value table = constant(DenseElementsAttr::get(RankedTensorType::get({1, out * ratio}, f32),
                                                  ArrayRef<float>(steps)));
    return c.add(start, c.mul(c.div(extent, k(double(out))), table));
  };
  int64_t sy = oh * ratio, sx = ow * ratio;
  RoiAxis y = roiAxis(c, k, samples(1, oh), xs[2]), x = roiAxis(c, k, samples(0, ow), xs[3]);
  Value image = c.mul(c.reshape(castTo(c, in[2], f32), {rois, 1, 1}), k(double(xs[2] * xs[3])));
  Value data =
      c.reshape(c.transpose(castTo(c, in[0], f32), {1, 0, 2, 3}), {xs[1], xs[0] * xs[2] * xs[3]});
  Type i64 = builder.getIntegerType(64);
  SmallVector<Value> terms;
  for (auto [row, rowWeight] : {std::pair(y.low, y.lowWeight), std::pair(y.high, y.highWeight)})
    for (auto [col, colWeight] : {std::pair(x.low, x.lowWeight), std::pair(x.high, x.highWeight)}) {
      Value index = c.add(c.add(image, c.reshape(c.mul(row, k(double(xs[3]))), {rois, sy, 1})),
                          c.reshape(col, {rois, 1, sx}));
      Value idx = c.op(wg::ExpandOp::getOperationName(),
                       {castTo(c, c.reshape(index, {1, rois * sy * sx}), i64)}, {},
                       RankedTensorType::get({xs[1], rois * sy * sx}, i64));
      Value read = c.op(wg::GatherElementsOp::getOperationName(), {data, idx},
                        {attr("axis", builder.getI64IntegerAttr(1))});
      Value weight =
          c.mul(c.reshape(rowWeight, {1, rois, sy, 1}), c.reshape(colWeight, {1, rois, 1, sx}));
      terms.push_back(c.mul(c.reshape(read, {xs[1], rois, sy, sx}), weight));
    }
  bool avg = mode == "avg";
  Value bins = c.pairwise(terms, [&](Value a, Value b) { return avg ? c.add(a, b) : c.max(a, b); });
  Value pooled =
      c.op(avg ? wg::ReduceSumOp::getOperationName() : wg::ReduceMaxOp::getOperationName(),
           {c.reshape(bins, {xs[1], rois, oh, ratio, ow, ratio})},
           {attr("axes", builder.getDenseI64ArrayAttr({3, 5})),
            attr("keepdims", builder.getBoolAttr(false))});
  if (avg)
    pooled = c.div(pooled, k(double(ratio * ratio)));
  Value y4 = castTo(c, c.transpose(pooled, {1, 0, 2, 3}), type.getElementType());
  return c.finish(results, {y4});
}

/// DeformConv (2-D): each kernel tap reads X bilinearly (zero outside the
/// image) at its place in the window moved by the tap's offset, scaled by
/// the mask; the samples are columns [N, C * taps, positions] that the
/// weights multiply as a grouped convolution's. Offsets and masks come per
/// offset group of channels.
LogicalResult Importer::convertDeformConv(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto at = [&](size_t i) { return i < in.size() ? in[i] : Value(); };
  if (!at(1) || !at(2))
    return nodeError("expects X, W and offset"), failure();
  if (!staticInputs(in))
    return failure();
  auto xt = typeOf(in[0]), wt = typeOf(in[1]), ot = typeOf(in[2]);
  if (!xt.hasStaticShape() || xt.getRank() != 4 || wt.getRank() != 4 || ot.getRank() != 4 ||
      !isa<FloatType>(xt.getElementType()))
    return nodeError("takes a float X [N, C, H, W], W [M, C / group, kH, kW] and offset "
                     "[N, offset_group * kH * kW * 2, oH, oW] (2-D only)"),
           failure();
  ArrayRef<int64_t> xs = xt.getShape(), ws = wt.getShape(), os = ot.getShape();
  auto ints = [&](StringRef name, int64_t dflt, size_t n) {
    return intsAttr(node, name).value_or(SmallVector<int64_t>(n, dflt));
  };
  SmallVector<int64_t> kernel = ints("kernel_shape", 0, 0), pads = ints("pads", 0, 4),
                       strides = ints("strides", 1, 2), dil = ints("dilations", 1, 2);
  if (kernel.empty())
    kernel = {ws[2], ws[3]};
  int64_t group = intAttr(node, "group", 1), offsetGroup = intAttr(node, "offset_group", 1);
  if (kernel.size() != 2 || pads.size() != 4 || strides.size() != 2 || dil.size() != 2 ||
      !sizesInRange(strides, 1) || !sizesInRange(dil, 1) || !sizesInRange(pads, 0) ||
      !sizesInRange(kernel, 1) || kernel[0] != ws[2] || kernel[1] != ws[3])
    return nodeError("kernel_shape (W's), pads, strides and dilations must be 2-D and in range"),
           failure();
  int64_t taps = kernel[0] * kernel[1], n = xs[0], ch = xs[1], oh = os[2], ow = os[3];
  auto outLength = [&](int64_t i) {
    return (xs[2 + i] + pads[i] + pads[i + 2] - ((kernel[i] - 1) * dil[i] + 1)) / strides[i] + 1;
  };
  if (group <= 0 || offsetGroup <= 0 || group > ch || offsetGroup > ch || ch != ws[1] * group ||
      ws[0] % group || ch % offsetGroup || os[0] != n || os[1] != offsetGroup * taps * 2 ||
      oh != outLength(0) || ow != outLength(1))
    return nodeError("X's " + std::to_string(ch) +
                     " channels, W, offset and the attributes do not agree"),
           failure();
  if (boundedProduct({n, ch, taps, oh, ow}, kMaxImportTable) < 0)
    return nodeError("its samples would number more than " + std::to_string(kMaxImportTable)),
           failure();
  Type f32 = builder.getF32Type(), i64 = builder.getIntegerType(64);
  auto k = [&](double v) { return scalarConstant(f32, v); };
  int64_t points = oh * ow, perOffset = ch / offsetGroup;
  // Where each tap reads before its offset: [taps, points] per axis.
  auto place = [&](int64_t axis) {
    SmallVector<float> table;
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t p = 0; p < points; ++p) {
        int64_t tap = axis == 0 ? t / kernel[1] : t % kernel[1];
        int64_t out = axis == 0 ? p / ow : p % ow;
        table.push_back(float(out * strides[axis] - pads[axis] + tap * dil[axis]));
      }
    return constant(DenseElementsAttr::get(RankedTensorType::get({taps, points}, f32),
                                           ArrayRef<float>(table)));
  };
  Value offsets = c.reshape(castTo(c, in[2], f32), {n, offsetGroup, taps, 2, points});
  auto coordinate = [&](int64_t axis) { // [N, offset groups, taps, points]
    return c.add(c.reshape(c.sliceAlong(offsets, 3, axis, 1), {n, offsetGroup, taps, points}),
                 place(axis));
  };
  Value hy = coordinate(0), wx = coordinate(1);
  Value h0 = c.unary(wg::FloorOp::getOperationName(), hy);
  Value w0 = c.unary(wg::FloorOp::getOperationName(), wx);
  Value fh = c.sub(hy, h0), fw = c.sub(wx, w0);
  // Per channel of an offset group: [N, G, taps, points] to [N, C, taps * points].
  auto perChannel = [&](Value v) {
    if (!v)
      return c.ok = false, Value();
    Type e = typeOf(v).getElementType();
    Value wide = c.op(wg::ExpandOp::getOperationName(), {c.unsqueeze(v, {2})}, {},
                      RankedTensorType::get({n, offsetGroup, perOffset, taps, points}, e));
    return c.reshape(wide, {n, ch, taps * points});
  };
  Value image = c.reshape(castTo(c, in[0], f32), {n, ch, xs[2] * xs[3]});
  auto inside = [&](Value v, int64_t length) {
    return c.op(wg::AndOp::getOperationName(),
                {c.op(wg::GreaterEqualOp::getOperationName(), {v, k(0)}),
                 c.less(v, k(double(length)))});
  };
  SmallVector<Value> terms;
  for (int64_t dy : {0, 1})
    for (int64_t dx : {0, 1}) {
      Value row = c.add(h0, k(double(dy))), col = c.add(w0, k(double(dx)));
      Value weight = c.mul(dy ? fh : c.sub(k(1), fh), dx ? fw : c.sub(k(1), fw));
      Value valid = c.op(wg::AndOp::getOperationName(), {inside(row, xs[2]), inside(col, xs[3])});
      Value index = c.where(valid, c.add(c.mul(row, k(double(xs[3]))), col), k(0));
      Value read = c.op(wg::GatherElementsOp::getOperationName(),
                        {image, perChannel(castTo(c, index, i64))},
                        {attr("axis", builder.getI64IntegerAttr(2))});
      terms.push_back(c.mul(read, perChannel(c.where(valid, weight, k(0)))));
    }
  Value sampled = c.pairwise(terms, [&](Value a, Value b) { return c.add(a, b); });
  if (Value mask = at(4))
    sampled = c.mul(sampled, perChannel(c.reshape(castTo(c, mask, f32),
                                                  {n, offsetGroup, taps, points})));
  // A grouped convolution of the columns: [g, M / g, C / g * taps] x [N, g, C / g * taps, P].
  int64_t m = ws[0];
  Value weights = c.reshape(castTo(c, in[1], f32), {group, m / group, ch / group * taps});
  Value columns = c.reshape(sampled, {n, group, ch / group * taps, points});
  Value y = c.reshape(c.op(wg::MatmulOp::getOperationName(), {weights, columns}), {n, m, oh, ow});
  if (Value bias = at(3))
    y = c.add(y, c.reshape(castTo(c, bias, f32), {m, 1, 1}));
  return c.finish(results, {castTo(c, y, xt.getElementType())});
}

LogicalResult Importer::convertGridSample(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  if (node.op_type() == "AffineGrid")
    return convertAffineGrid(node, in, results);
  if (node.op_type() == "DeformConv")
    return convertDeformConv(node, in, results);
  if (node.op_type() == "RoiAlign")
    return convertRoiAlign(node, in, results);
  if (in.size() < 2 || !in[1])
    return nodeError("expects X and grid"), failure();
  auto type = typeOf(in[0]), gridType = typeOf(in[1]);
  if (!type.hasStaticShape() || !gridType.hasStaticShape())
    return nodeError("an input's shape is not static"), failure();
  int64_t rank = type.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> gs = gridType.getShape();
  if (rank != 4 || gridType.getRank() != rank || gs[0] != type.getDimSize(0) ||
      gs.back() != spatial)
    return nodeError("expects X [N, C, H, W] and grid [N, H_out, W_out, 2]"),
           failure();
  Type element = type.getElementType();
  if (!isa<FloatType>(element) || !isa<FloatType>(gridType.getElementType()))
    return nodeError("samples float X at a float grid"), failure();
  auto *m = findAttr(node, "mode");
  auto *p = findAttr(node, "padding_mode");
  std::string mode = m ? m->s() : "bilinear", padding = p ? p->s() : "zeros";
  bool align = intAttr(node, "align_corners", 0);
  // Opset 20 renamed bilinear and bicubic to linear and cubic (and took N-d grids).
  bool renamed = opset >= 20;
  std::string linear = renamed ? "linear" : "bilinear", cubic = renamed ? "cubic" : "bicubic";
  if (!m && renamed)
    mode = linear;
  if (mode != linear && mode != "nearest" && mode != cubic)
    return nodeError("mode '" + mode + "' is not " + linear + ", nearest or " + cubic), failure();
  mode = mode == linear ? "bilinear" : mode == cubic ? "bicubic" : mode;
  if (!llvm::is_contained({"zeros", "border", "reflection"}, padding))
    return nodeError("padding_mode '" + padding +
                     "' is not zeros, border or reflection"),
           failure();

  Composer c = composer();
  auto k = [&](double v) { return scalarConstant(element, v); };
  int64_t n = type.getDimSize(0), channels = type.getDimSize(1);
  int64_t points = 1, pixels = 1;
  for (int64_t i = 0; i < spatial; ++i)
    points *= gs[1 + i], pixels *= type.getDimSize(2 + i);
  Value grid = c.reshape(castTo(c, in[1], element),
                         ArrayRef<int64_t>{n, points, spatial});
  // Per spatial axis (the grid lists them innermost first) its taps, with
  // indices scaled to the axis's stride in the flattened image.
  SmallVector<SmallVector<GridTap>> axes;
  int64_t stride = pixels;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t length = type.getDimSize(2 + i);
    stride /= length;
    GridAxis a{length, align ? 0.0 : -0.5,
               align ? double(length - 1) : length - 0.5};
    Value g = c.reshape(c.sliceAlong(grid, 2, spatial - 1 - i, 1),
                        ArrayRef<int64_t>{n, 1, points});
    axes.push_back(gridTaps(c, k, g, a, align, mode, padding, [&](Value x) {
      return x ? roundHalfEven(c, x) : (c.ok = false, Value());
    }));
    for (GridTap &tap : axes.back())
      tap.index = c.mul(tap.index, k(double(stride)));
  }
  // Every combination of one tap per axis reads one pixel per point.
  Type i64 = builder.getIntegerType(64);
  Value flat = c.reshape(in[0], ArrayRef<int64_t>{n, channels, pixels});
  auto readType = RankedTensorType::get({n, channels, points}, i64);
  SmallVector<Value> terms;
  SmallVector<size_t> pick(spatial, 0);
  while (c.ok) {
    Value index = axes[0][pick[0]].index, weight = axes[0][pick[0]].weight;
    for (int64_t i = 1; i < spatial; ++i) {
      index = c.add(index, axes[i][pick[i]].index);
      weight = c.mul(weight, axes[i][pick[i]].weight);
    }
    Value idx = c.op(wg::ExpandOp::getOperationName(), {castTo(c, index, i64)},
                     {}, readType);
    Value read = c.op(wg::GatherElementsOp::getOperationName(), {flat, idx},
                      {attr("axis", builder.getI64IntegerAttr(2))});
    terms.push_back(c.mul(read, weight));
    int64_t i = spatial - 1;
    for (; i >= 0 && ++pick[i] == axes[i].size(); --i)
      pick[i] = 0;
    if (i < 0)
      break;
  }
  Value y = c.pairwise(terms, [&](Value a, Value b) { return c.add(a, b); });
  SmallVector<int64_t> shape{n, channels};
  shape.append(gs.begin() + 1, gs.end() - 1);
  return c.finish(results, {c.reshape(y, shape)});
}
