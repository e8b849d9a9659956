//===- OnnxImages.cpp - ONNX's [N, C, spatial...] ops from wsgraph ops ----===//
//
// The ops over images and feature maps, built from data movement and the
// arithmetic the generic kernels run: DepthToSpace and SpaceToDepth
// (reshape, transpose, reshape), the normalizations at inference, and the
// windowed ops. A window op takes one strided slice of the padded input per
// kernel tap; a pool reduces the taps, a convolution multiplies them (as
// columns, im2col) by the weights. Resize gathers each axis's taps.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

bool wsc::onnx_import::isImageOp(StringRef op) {
  return llvm::is_contained({"DepthToSpace", "SpaceToDepth", "BatchNormalization",
                             "InstanceNormalization", "MeanVarianceNormalization", "MaxPool",
                             "AveragePool", "Conv", "Resize", "ConvTranspose", "LRN", "Upsample",
                             "GroupNormalization", "LpPool", "Col2Im"},
                            op);
}

LogicalResult Importer::convertImageOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                       SmallVectorImpl<Value> &results) {
  StringRef op = node.op_type();
  auto type = typeOf(in[0]);
  if (op == "Resize" && type.hasStaticShape())
    return convertResize(node, in, results);
  if (op == "Upsample" && type.hasStaticShape())
    return convertUpsample(node, in, results);
  if (!type.hasStaticShape() || type.getRank() < 3)
    return nodeError("the input must be static and [N, C, spatial...]"), failure();
  if (op == "DepthToSpace" || op == "SpaceToDepth")
    return convertDepthSpace(node, in, results);
  if (op == "MaxPool" || op == "AveragePool" || op == "Conv" || op == "LpPool")
    return convertWindowOp(node, in, results);
  if (op == "GroupNormalization")
    return convertGroupNorm(node, in, results);
  if (op == "Col2Im")
    return convertCol2Im(node, in, results);
  if (op == "LRN")
    return convertLrn(node, in, results);
  if (op == "ConvTranspose")
    return isa<FloatType>(type.getElementType()) ? convertConvTranspose(node, in, results)
                                                 : (nodeError("takes a float input"), failure());
  return convertImageNorm(node, in, results);
}

/// DepthToSpace moves blocks of channels into b x b squares of the image
/// (DCR: the block index outermost; CRD: the channel outermost);
/// SpaceToDepth moves them back, DCR-ordered.
LogicalResult Importer::convertDepthSpace(const onnx::NodeProto &node, ArrayRef<Value> in,
                                          SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  int64_t b = intAttr(node, "blocksize", 0);
  if (type.getRank() != 4 || b <= 0)
    return nodeError("needs a 4-D input and a positive blocksize"), failure();
  int64_t n = type.getDimSize(0), ch = type.getDimSize(1), h = type.getDimSize(2),
          w = type.getDimSize(3);
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) { return c.reshape(v, shape); };
  auto transpose = [&](Value v, ArrayRef<int64_t> perm) { return c.transpose(v, perm); };
  Value y;
  if (node.op_type() == "DepthToSpace") {
    if (ch % (b * b))
      return nodeError("the channels are not a multiple of blocksize^2"), failure();
    const onnx::AttributeProto *m = findAttr(node, "mode");
    bool crd = m && m->s() == "CRD";
    Value split = crd ? reshape(in[0], {n, ch / (b * b), b, b, h, w})
                      : reshape(in[0], {n, b, b, ch / (b * b), h, w});
    Value moved = crd ? transpose(split, {0, 1, 4, 2, 5, 3}) : transpose(split, {0, 3, 4, 1, 5, 2});
    y = reshape(moved, {n, ch / (b * b), h * b, w * b});
  } else {
    if (h % b || w % b)
      return nodeError("the height and width are not multiples of blocksize"), failure();
    Value split = reshape(in[0], {n, ch, h / b, b, w / b, b});
    y = reshape(transpose(split, {0, 3, 5, 1, 2, 4}), {n, ch * b * b, h / b, w / b});
  }
  return c.finish(results, {y});
}

/// LRN: x over (bias + alpha / size * the sum of squares of the `size`
/// channels around each)^beta; the sum as slices of the zero-padded
/// squares, added pairwise.
LogicalResult Importer::convertLrn(const onnx::NodeProto &node, ArrayRef<Value> in,
                                   SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  Type element = type.getElementType();
  int64_t size = intAttr(node, "size", 0), channels = type.getDimSize(1);
  if (size <= 0 || !isa<FloatType>(element))
    return nodeError("needs a float input and a positive size"), failure();
  double alpha = floatAttr(node, "alpha", 1e-4f), beta = floatAttr(node, "beta", 0.75f),
         bias = floatAttr(node, "bias", 1.0f);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  SmallVector<Value> parts;
  auto zeros = [&](int64_t n) {
    SmallVector<int64_t> shape(type.getShape());
    shape[1] = n;
    return constant(DenseElementsAttr::get(RankedTensorType::get(shape, element),
                                           builder.getZeroAttr(element)));
  };
  if (before)
    parts.push_back(zeros(before));
  parts.push_back(c.mul(x, x));
  if (after)
    parts.push_back(zeros(after));
  Value squares = c.concat(parts, 1);
  SmallVector<Value> level;
  for (int64_t k = 0; k < size; ++k)
    level.push_back(c.sliceAlong(squares, 1, k, channels));
  Value sum = c.pairwise(level, [&](Value l, Value r) { return c.add(l, r); });
  auto k = [&](double v) { return scalarConstant(element, v); };
  Value scale = c.op(wg::PowOp::getOperationName(),
                     {c.add(k(bias), c.mul(k(alpha / double(size)), sum)), k(beta)});
  Value y = c.div(x, scale);
  return c.finish(results, {y});
}

/// BatchNormalization (at inference with the running mean and variance; in
/// training mode with the batch's, and the running ones updated), and
/// InstanceNormalization and MeanVarianceNormalization (their own).
LogicalResult Importer::convertImageNorm(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  Composer c = composer();
  StringRef op = node.op_type();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  auto k = [&](double v) { return scalarConstant(element, v); };
  // A [C] operand against [N, C, spatial...].
  SmallVector<int64_t> perChannel(rank - 1, 1);
  perChannel[0] = type.getDimSize(1);
  auto channels = [&](Value v) {
    return c.op(wg::ReshapeOp::getOperationName(), {v}, {},
                RankedTensorType::get(perChannel, element));
  };
  auto mean = [&](Value v, ArrayRef<int64_t> axes) {
    return c.op(wg::ReduceMeanOp::getOperationName(), {v},
                {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                 attr("keepdims", builder.getBoolAttr(true))});
  };
  double epsilon = floatAttr(node, "epsilon", 1e-5f);
  Value y;
  if (op == "BatchNormalization") {
    if (in.size() < 5 || llvm::any_of(in.take_front(5), [](Value v) { return !v; }))
      return nodeError("expects X, scale, B, mean and var"), failure();
    Value mu = channels(in[3]), var = channels(in[4]);
    bool training = intAttr(node, "training_mode", 0);
    if (training) { // the batch's statistics, over all axes but the channels
      SmallVector<int64_t> axes = {0};
      for (int64_t i = 2; i < rank; ++i)
        axes.push_back(i);
      Value batchMean = c.op(wg::ReshapeOp::getOperationName(), {mean(x, axes)}, {},
                             RankedTensorType::get(perChannel, element));
      Value centred = c.sub(x, batchMean);
      Value batchVar =
          c.op(wg::ReshapeOp::getOperationName(), {mean(c.mul(centred, centred), axes)}, {},
               RankedTensorType::get(perChannel, element));
      // The running statistics' update: momentum of the old, the rest of the batch's.
      double momentum = floatAttr(node, "momentum", 0.9f);
      auto running = [&](Value old, Value now) {
        return c.op(wg::ReshapeOp::getOperationName(),
                    {c.add(c.mul(old, k(momentum)), c.mul(now, k(1.0 - momentum)))}, {},
                    typeOf(in[3]));
      };
      Value runningMean = running(mu, batchMean), runningVar = running(var, batchVar);
      mu = batchMean, var = batchVar;
      Value scale = c.div(channels(in[1]), c.sqrt(c.add(var, k(epsilon))));
      y = c.add(c.mul(c.sub(x, mu), scale), channels(in[2]));
      if (!c.ok)
        return failure();
      results.append({y, runningMean, runningVar});
      return success();
    }
    Value scale = c.div(channels(in[1]), c.sqrt(c.add(var, k(epsilon))));
    y = c.add(c.mul(c.sub(x, mu), scale), channels(in[2]));
  } else {
    SmallVector<int64_t> axes;
    if (op == "InstanceNormalization") {
      for (int64_t i = 2; i < rank; ++i)
        axes.push_back(i);
    } else if (auto given = intsAttr(node, "axes")) {
      axes = *given;
    } else {
      axes = {0, 2, 3};
    }
    Value centred = c.sub(x, mean(x, axes));
    Value deviation = c.sqrt(mean(c.mul(centred, centred), axes));
    if (op == "InstanceNormalization") {
      if (in.size() < 3 || !in[1] || !in[2])
        return nodeError("expects input, scale and B"), failure();
      Value scale = c.div(channels(in[1]), c.sqrt(c.add(c.mul(deviation, deviation), k(epsilon))));
      y = c.add(c.mul(centred, scale), channels(in[2]));
    } else {
      y = c.div(centred, c.add(deviation, k(1e-9))); // as ONNX's reference
    }
  }
  return c.finish(results, {y});
}

/// GroupNormalization: the channels in `num_groups` groups, each normalized
/// over its channels and the spatial axes; then scaled and shifted per
/// channel (opset 21 on: scale and bias [C]) or per group (opset 18: [G]).
LogicalResult Importer::convertGroupNorm(const onnx::NodeProto &node, ArrayRef<Value> in,
                                         SmallVectorImpl<Value> &results) {
  Composer c = composer();
  auto type = typeOf(in[0]);
  Type element = type.getElementType();
  int64_t groups = intAttr(node, "num_groups", 0), n = type.getDimSize(0), ch = type.getDimSize(1);
  if (in.size() < 3 || !in[1] || !in[2])
    return nodeError("expects X, scale and bias"), failure();
  if (groups <= 0 || ch % groups)
    return nodeError("num_groups = " + std::to_string(groups) + " must divide the " +
                     std::to_string(ch) + " channels"),
           failure();
  int64_t perGroup = type.getNumElements() / (n * groups);
  auto mean = [&](Value v) {
    return c.op(wg::ReduceMeanOp::getOperationName(), {v},
                {attr("axes", builder.getDenseI64ArrayAttr({2})),
                 attr("keepdims", builder.getBoolAttr(true))});
  };
  Value x = c.reshape(in[0], {n, groups, perGroup});
  Value centred = c.sub(x, mean(x));
  Value variance = mean(c.mul(centred, centred));
  double epsilon = floatAttr(node, "epsilon", 1e-5f);
  Value y = c.div(centred, c.sqrt(c.add(variance, scalarConstant(element, epsilon))));
  bool perChannel = opset >= 21;
  int64_t affine = perChannel ? ch : groups;
  if (typeOf(in[1]).getNumElements() != affine || typeOf(in[2]).getNumElements() != affine)
    return nodeError(std::string("scale and bias must hold one value per ") +
                     (perChannel ? "channel" : "group") + " at opset " + std::to_string(opset)),
           failure();
  SmallVector<int64_t> along(type.getRank() - 1, 1);
  along[0] = affine;
  if (!perChannel) {
    along = {groups, 1};
    y = c.add(c.mul(y, c.reshape(in[1], along)), c.reshape(in[2], along));
    return c.finish(results, {c.reshape(y, type.getShape())});
  }
  y = c.reshape(y, type.getShape());
  y = c.add(c.mul(y, c.reshape(in[1], along)), c.reshape(in[2], along));
  return c.finish(results, {y});
}

/// Col2Im: input [N, C * K, L] holds, for each of the L block positions,
/// the K = prod(block_shape) pixels of each channel's block; they are summed
/// into the image [N, C, image_shape...] where they fall (blocks overlap
/// where strides are smaller than them; pads fall off). The sum is a
/// product with a constant 0/1 [K * L, pixels] table.
LogicalResult Importer::convertCol2Im(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results) {
  Composer c = composer();
  if (in.size() < 3 || !in[1] || !in[2])
    return nodeError("expects input, image_shape and block_shape"), failure();
  if (!staticInputs(in[0]))
    return failure();
  auto image = constInts(in[1], "image_shape");
  auto block = ::failed(image) ? image : constInts(in[2], "block_shape");
  if (::failed(block))
    return nodeError("image_shape and block_shape must be compile-time constants (bind them "
                     "with --bind)"),
           failure();
  size_t dims = image->size();
  auto ints = [&](StringRef name, int64_t dflt, size_t n) {
    return intsAttr(node, name).value_or(SmallVector<int64_t>(n, dflt));
  };
  SmallVector<int64_t> dilations = ints("dilations", 1, dims), strides = ints("strides", 1, dims),
                       pads = ints("pads", 0, 2 * dims);
  auto type = typeOf(in[0]);
  if (block->size() != dims || dilations.size() != dims || strides.size() != dims ||
      pads.size() != 2 * dims || !sizesInRange(*image, 1) || !sizesInRange(*block, 1) ||
      !sizesInRange(dilations, 1) || !sizesInRange(strides, 1) || !sizesInRange(pads, 0))
    return nodeError("block_shape, dilations, strides and pads must fit image_shape's " +
                     std::to_string(dims) + " axes, each in range"),
           failure();
  SmallVector<int64_t> positions;
  for (size_t i = 0; i < dims; ++i) {
    int64_t span = ((*block)[i] - 1) * dilations[i] + 1;
    positions.push_back((((*image)[i] + pads[i] + pads[i + dims]) - span) / strides[i] + 1);
  }
  int64_t k = boundedProduct(*block, kMaxImportTable),
          pixels = boundedProduct(*image, kMaxImportTable);
  int64_t l = llvm::all_of(positions, [](int64_t p) { return p > 0; })
                  ? boundedProduct(positions, kMaxImportTable)
                  : 0;
  if (l == 0 || type.getDimSize(2) != l || k < 0 || (k > 0 && type.getDimSize(1) % k))
    return nodeError("input " + std::to_string(type.getDimSize(1)) + " x " +
                     std::to_string(type.getDimSize(2)) +
                     " is not [C * blocks' pixels, block positions] of these shapes"),
           failure();
  if (pixels < 0)
    return nodeError("an image of more than " + std::to_string(kMaxImportTable) +
                     " pixels is not supported"),
           failure();
  // The table grows as blocks times pixels: large images would take gigabytes.
  if (k * l > kMaxImportTable / pixels)
    return nodeError("its block-to-pixel table would hold " + std::to_string(k * l) + " x " +
                     std::to_string(pixels) + " entries, more than the " +
                     std::to_string(kMaxImportTable) + " the importer builds"),
           failure();
  // table[(kk * L + ll) * pixels + pixel] = 1 where block pixel kk at position ll lands.
  SmallVector<float> table(k * l * pixels, 0.0f);
  SmallVector<int64_t> kAt(dims), lAt(dims);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t ll = 0; ll < l; ++ll) {
      int64_t pixel = 0;
      bool inside = true;
      for (int64_t i = int64_t(dims) - 1, kr = kk, lr = ll; i >= 0; --i) {
        kAt[i] = kr % (*block)[i], kr /= (*block)[i];
        lAt[i] = lr % positions[i], lr /= positions[i];
      }
      for (size_t i = 0; i < dims; ++i) {
        int64_t at = lAt[i] * strides[i] - pads[i] + kAt[i] * dilations[i];
        inside &= at >= 0 && at < (*image)[i];
        pixel = pixel * (*image)[i] + at;
      }
      if (inside)
        table[(kk * l + ll) * pixels + pixel] = 1.0f;
    }
  Type element = type.getElementType();
  int64_t n = type.getDimSize(0), ch = type.getDimSize(1) / k;
  Value sums = constant(DenseElementsAttr::get(
      RankedTensorType::get({k * l, pixels}, builder.getF32Type()), ArrayRef<float>(table)));
  if (!element.isF32())
    sums = c.op(wg::CastOp::getOperationName(), {sums}, {},
                RankedTensorType::get({k * l, pixels}, element));
  Value y = c.op(wg::MatmulOp::getOperationName(), {c.reshape(in[0], {n, ch, k * l}), sums});
  SmallVector<int64_t> shape = {n, ch};
  shape.append(image->begin(), image->end());
  return c.finish(results, {c.reshape(y, shape)});
}

/// The geometry of a window op over `type` [N, C, spatial...]: the kernel
/// (attribute, or the weights' trailing dimensions), strides, dilations,
/// and the padding (pads, or auto_pad's), and the output's length on each
/// spatial axis (floor, or ceil with ceil_mode, as ONNX defines them).
FailureOr<WindowGeometry> Importer::windowGeometry(const onnx::NodeProto &node,
                                                   RankedTensorType type,
                                                   ArrayRef<int64_t> weightKernel) {
  size_t dims = size_t(type.getRank() - 2);
  WindowGeometry g;
  auto ints = [&](StringRef name, int64_t dflt, size_t n) {
    SmallVector<int64_t> v = intsAttr(node, name).value_or(SmallVector<int64_t>(n, dflt));
    return v;
  };
  g.kernel = intsAttr(node, "kernel_shape").value_or(SmallVector<int64_t>(weightKernel));
  g.strides = ints("strides", 1, dims);
  g.dilations = ints("dilations", 1, dims);
  SmallVector<int64_t> pads = ints("pads", 0, 2 * dims);
  if (g.kernel.size() != dims || g.strides.size() != dims || g.dilations.size() != dims ||
      pads.size() != 2 * dims)
    return nodeError("kernel_shape, strides, dilations or pads do not match the " +
                     std::to_string(dims) + " spatial axes"),
           failure();
  if (llvm::any_of(g.kernel, [](int64_t v) { return v <= 0; }) ||
      llvm::any_of(g.strides, [](int64_t v) { return v <= 0; }) ||
      llvm::any_of(g.dilations, [](int64_t v) { return v <= 0; }) ||
      llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return nodeError("a kernel, stride or dilation is not positive, or a pad is negative"),
           failure();
  const onnx::AttributeProto *autoPad = findAttr(node, "auto_pad");
  std::string mode = autoPad ? autoPad->s() : "NOTSET";
  bool ceil = intAttr(node, "ceil_mode", 0);
  for (size_t i = 0; i < dims; ++i) {
    int64_t length = type.getDimSize(int64_t(i) + 2), span = g.span(i), s = g.strides[i];
    int64_t b = pads[i], e = pads[i + dims];
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      int64_t out = (length + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + span - length);
      b = mode == "SAME_UPPER" ? total / 2 : total - total / 2, e = total - b;
    } else if (mode == "VALID") {
      b = e = 0;
    } else if (mode != "NOTSET") {
      return nodeError("auto_pad '" + mode + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID"),
             failure();
    }
    int64_t room = length + b + e - span;
    if (room < 0)
      return nodeError("the kernel is larger than the padded input"), failure();
    int64_t out = (ceil ? (room + s - 1) / s : room / s) + 1;
    if (ceil && (out - 1) * s >= length + b) // the last window would start in the end padding
      --out;
    g.begin.push_back(b), g.end.push_back(e), g.out.push_back(out);
  }
  return g;
}

/// MaxPool, AveragePool and Conv: each kernel tap is a strided slice of the
/// padded input, [N, C, out...].
LogicalResult Importer::convertWindowOp(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  Composer c = composer();
  StringRef op = node.op_type();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  bool conv = op == "Conv" || op == "ConvInteger" || op == "QLinearConv";
  if (conv && (in.size() < 2 || !in[1] || !typeOf(in[1]).hasStaticShape() ||
               typeOf(in[1]).getRank() != rank))
    return nodeError("expects static weights [M, C / group, kernel...]"), failure();
  bool indices = node.output_size() > 1 && !node.output(1).empty();
  if (indices && op != "MaxPool")
    return nodeError("has one output"), failure();
  if (!isa<FloatType>(element) && op != "MaxPool")
    return nodeError("takes a float input"), failure();
  auto geometry = windowGeometry(
      node, type, conv ? typeOf(in[1]).getShape().drop_front(2) : ArrayRef<int64_t>{});
  if (::failed(geometry))
    return failure();
  const WindowGeometry &g = *geometry;
  size_t dims = g.kernel.size();
  // LpPool sums |x|^p (a zero pad adds nothing) and takes the p-th root.
  int64_t p = intAttr(node, "p", 2);
  if (op == "LpPool") {
    if (p <= 0)
      return nodeError("p = " + std::to_string(p) + " must be positive"), failure();
    x = p == 1 ? c.abs(x)
        : p == 2
            ? c.mul(x, x)
            : c.op(wg::PowOp::getOperationName(), {c.abs(x), scalarConstant(element, double(p))});
  }
  // Pad each spatial axis with blocks of the pad value: the lowest under a max.
  Attribute fill = builder.getZeroAttr(element);
  if (op == "MaxPool")
    fill = isa<FloatType>(element)
               ? Attribute(builder.getFloatAttr(element, -INFINITY))
               : Attribute(builder.getIntegerAttr(
                     element, element.isUnsignedInteger()
                                  ? APInt::getMinValue(element.getIntOrFloatBitWidth())
                                  : APInt::getSignedMinValue(element.getIntOrFloatBitWidth())));
  Value padded = x;
  SmallVector<int64_t> shape(type.getShape());
  for (size_t i = 0; i < dims; ++i) {
    int64_t axis = int64_t(i) + 2, length = shape[axis];
    int64_t end = g.padded(i, length) - length - g.begin[i];
    SmallVector<Value> parts;
    for (int64_t n : {g.begin[i], int64_t(-1), end}) {
      if (n < 0) {
        parts.push_back(padded);
        continue;
      }
      if (n == 0)
        continue;
      SmallVector<int64_t> block(shape);
      block[axis] = n;
      parts.push_back(
          constant(DenseElementsAttr::get(RankedTensorType::get(block, element), fill)));
    }
    padded = c.concat(parts, axis);
    shape[axis] = g.padded(i, length);
  }
  SmallVector<Value> taps = tapSlices(c, padded, g);
  if (!c.ok)
    return failure();
  if (indices)
    return maxPoolIndices(c, type, taps, g, intAttr(node, "storage_order", 0), results);
  Value y = conv ? convolve(node, in, taps, g) : pool(node, x, taps, g);
  if (y && op == "LpPool" && p > 1)
    y = p == 2 ? c.sqrt(y)
               : c.op(wg::PowOp::getOperationName(), {y, scalarConstant(element, 1.0 / double(p))});
  if (!y)
    return failure();
  results.push_back(y);
  return success();
}

/// MaxPool's values and Indices: each tap's maximum with the flat input
/// index it came from (storage_order 1: the spatial axes column-major),
/// combined pairwise in tap order, so the first of equal maxima wins.
LogicalResult Importer::maxPoolIndices(Composer &c, RankedTensorType type, ArrayRef<Value> taps,
                                       const WindowGeometry &g, bool columnMajor,
                                       SmallVectorImpl<Value> &results) {
  size_t dims = g.kernel.size();
  Type i64 = builder.getI64Type();
  ArrayRef<int64_t> in = type.getShape().drop_front(2);
  int64_t image = type.getNumElements() / (type.getDimSize(0) * type.getDimSize(1)), outputs = 1;
  for (int64_t o : g.out)
    outputs *= o;
  // Each image's first flat index, [N, C, 1...].
  SmallVector<int64_t> baseShape = {type.getDimSize(0), type.getDimSize(1)}, base;
  baseShape.append(dims, 1);
  for (int64_t i = 0; i < baseShape[0] * baseShape[1]; ++i)
    base.push_back(i * image);
  auto ints = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> v) {
    return constant(DenseElementsAttr::get(RankedTensorType::get(shape, i64), v));
  };
  SmallVector<int64_t> outShape = {1, 1};
  outShape.append(g.out.begin(), g.out.end());
  SmallVector<std::pair<Value, Value>> level;
  SmallVector<int64_t> tap(dims), at(dims);
  for (size_t t = 0; t < taps.size(); ++t) {
    for (int64_t rest = int64_t(t), i = int64_t(dims) - 1; i >= 0; --i)
      tap[i] = rest % g.kernel[i], rest /= g.kernel[i];
    SmallVector<int64_t> index;
    for (int64_t f = 0; f < outputs; ++f) {
      for (int64_t rest = f, i = int64_t(dims) - 1; i >= 0; --i)
        at[i] = rest % g.out[i], rest /= g.out[i];
      int64_t flat = 0;
      for (size_t k = 0; k < dims; ++k) {
        size_t i = columnMajor ? dims - 1 - k : k;
        int64_t p = at[i] * g.strides[i] + tap[i] * g.dilations[i] - g.begin[i];
        flat = flat * in[i] + std::clamp<int64_t>(p, 0, in[i] - 1); // padding never wins
      }
      index.push_back(flat);
    }
    level.push_back({taps[t], ints(outShape, index)});
  }
  while (level.size() > 1) {
    SmallVector<std::pair<Value, Value>> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      auto [lv, li] = level[i];
      auto [rv, ri] = level[i + 1];
      Value right = c.greater(rv, lv);
      next.push_back({c.where(right, rv, lv), c.where(right, ri, li)});
    }
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  Value where = c.add(level.front().second, ints(baseShape, base));
  return c.finish(results, {level.front().first, where});
}

/// One strided slice of `padded` per kernel tap, in row-major order of the
/// kernel: each output position's input under that tap.
SmallVector<Value> Importer::tapSlices(Composer &c, Value padded, const WindowGeometry &g) {
  size_t dims = g.kernel.size();
  auto shape = typeOf(padded).getShape();
  int64_t rank = int64_t(shape.size()), count = 1;
  for (int64_t k : g.kernel)
    count *= k;
  SmallVector<Value> taps;
  SmallVector<int64_t> tap(dims, 0);
  for (int64_t t = 0; t < count; ++t) {
    for (int64_t rest = t, i = int64_t(dims) - 1; i >= 0; --i)
      tap[i] = rest % g.kernel[i], rest /= g.kernel[i];
    SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
    for (size_t i = 0; i < dims; ++i)
      offsets[i + 2] = tap[i] * g.dilations[i], sizes[i + 2] = g.out[i],
                  strides[i + 2] = g.strides[i];
    taps.push_back(c.op(wg::SliceOp::getOperationName(), {padded},
                        {attr("offsets", builder.getDenseI64ArrayAttr(offsets)),
                         attr("sizes", builder.getDenseI64ArrayAttr(sizes)),
                         attr("strides", builder.getDenseI64ArrayAttr(strides))}));
  }
  return taps;
}

/// ConvTranspose as the convolution it is the gradient of: the input with
/// stride - 1 zeros between its elements, padded by (kernel - 1) * dilation
/// less the pads on each side (output_padding more at the end; cropped where
/// negative), convolved at stride 1 with each group's weights swapped in
/// and out and flipped.
LogicalResult Importer::convertConvTranspose(const onnx::NodeProto &node, ArrayRef<Value> in,
                                             SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  size_t dims = size_t(rank - 2);
  Type element = type.getElementType();
  if (in.size() < 2 || !in[1] || !typeOf(in[1]).hasStaticShape() || typeOf(in[1]).getRank() != rank)
    return nodeError("expects static weights [C, M / group, kernel...]"), failure();
  auto wType = typeOf(in[1]);
  int64_t groups = intAttr(node, "group", 1), channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups || wType.getDimSize(0) != channels)
    return nodeError("the channels, weights and group do not agree"), failure();
  auto ints = [&](StringRef name, int64_t dflt, size_t n) {
    return intsAttr(node, name).value_or(SmallVector<int64_t>(n, dflt));
  };
  WindowGeometry g;
  g.kernel =
      intsAttr(node, "kernel_shape").value_or(SmallVector<int64_t>(wType.getShape().drop_front(2)));
  SmallVector<int64_t> strides = ints("strides", 1, dims), pads = ints("pads", 0, 2 * dims),
                       extra = ints("output_padding", 0, dims);
  g.dilations = ints("dilations", 1, dims);
  std::optional<SmallVector<int64_t>> outputShape = intsAttr(node, "output_shape");
  const onnx::AttributeProto *autoPad = findAttr(node, "auto_pad");
  std::string mode = autoPad ? autoPad->s() : "NOTSET";
  if (g.kernel.size() != dims || strides.size() != dims || g.dilations.size() != dims ||
      pads.size() != 2 * dims || extra.size() != dims ||
      (outputShape && outputShape->size() != dims))
    return nodeError("kernel_shape, strides, dilations, pads or output_padding do not match "
                     "the spatial axes"),
           failure();
  for (size_t i = 0; i < dims; ++i) {
    int64_t length = type.getDimSize(int64_t(i) + 2), span = (g.kernel[i] - 1) * g.dilations[i] + 1;
    int64_t full = strides[i] * (length - 1) + extra[i] + span;
    if (outputShape || mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      int64_t want = outputShape ? (*outputShape)[i] : length * strides[i];
      int64_t total = full - want; // negative: the output reaches past the last tap
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2); // floor(total / 2)
      pads[i] = mode == "SAME_UPPER" ? half : total - half;
      pads[i + dims] = total - pads[i];
    } else if (mode == "VALID") {
      pads[i] = pads[i + dims] = 0;
    }
    g.begin.push_back(0), g.end.push_back(0), g.strides.push_back(1);
    g.out.push_back(full - pads[i] - pads[i + dims]);
    if (g.out.back() <= 0)
      return nodeError("the output is empty"), failure();
  }
  auto zeros = [&](SmallVector<int64_t> shape, int64_t axis, int64_t n) {
    shape[axis] = n;
    return constant(DenseElementsAttr::get(RankedTensorType::get(shape, element),
                                           builder.getZeroAttr(element)));
  };
  Value y = x;
  for (size_t i = 0; i < dims; ++i) {
    int64_t axis = int64_t(i) + 2, s = strides[i];
    SmallVector<int64_t> shape(typeOf(y).getShape());
    int64_t length = shape[axis];
    if (s > 1) { // [.., L, ..] -> [.., L, s, ..] with zeros after each -> [.., (L - 1) s + 1, ..]
      Value one = c.unsqueeze(y, {axis + 1});
      SmallVector<int64_t> spread(typeOf(one).getShape());
      Value both = c.concat({one, zeros(spread, axis + 1, s - 1)}, axis + 1);
      shape[axis] = length * s;
      y = c.sliceAlong(c.reshape(both, shape), axis, 0, (length - 1) * s + 1);
      shape[axis] = length = (length - 1) * s + 1;
    }
    int64_t reach = (g.kernel[i] - 1) * g.dilations[i];
    int64_t front = reach - pads[i], back = reach - pads[i + dims] + extra[i];
    if (front < 0 || back < 0) { // crop
      int64_t lo = std::max<int64_t>(0, -front);
      shape[axis] = length - lo - std::max<int64_t>(0, -back);
      y = c.sliceAlong(y, axis, lo, shape[axis]);
    }
    SmallVector<Value> parts;
    if (front > 0)
      parts.push_back(zeros(shape, axis, front));
    parts.push_back(y);
    if (back > 0)
      parts.push_back(zeros(shape, axis, back));
    y = c.concat(parts, axis);
  }
  // Weights [C, M/g, K...] -> [M, C/g, K...] flipped, group by group.
  int64_t perGroup = channels / groups;
  SmallVector<int64_t> swap = {1, 0};
  for (int64_t i = 2; i < rank; ++i)
    swap.push_back(i);
  SmallVector<Value> blocks;
  for (int64_t gi = 0; gi < groups; ++gi) {
    Value w = groups == 1 ? in[1] : c.sliceAlong(in[1], 0, gi * perGroup, perGroup);
    w = c.transpose(w, swap);
    for (int64_t axis = 2; axis < rank; ++axis) {
      SmallVector<int64_t> reversed;
      for (int64_t k = wType.getDimSize(axis) - 1; k >= 0; --k)
        reversed.push_back(k);
      w = c.op(
          wg::GatherOp::getOperationName(),
          {w, constant(DenseElementsAttr::get(
                  RankedTensorType::get({int64_t(reversed.size())}, builder.getIntegerType(64)),
                  ArrayRef<int64_t>(reversed)))},
          {attr("axis", builder.getI64IntegerAttr(axis))});
    }
    blocks.push_back(w);
  }
  Value weights = blocks.size() == 1 ? blocks.front()
                                     : c.op(wg::ConcatOp::getOperationName(), blocks,
                                            {attr("axis", builder.getI64IntegerAttr(0))});
  if (!c.ok)
    return failure();
  SmallVector<Value> operands = {y, weights};
  if (in.size() > 2 && in[2])
    operands.push_back(in[2]);
  SmallVector<Value> taps = tapSlices(c, y, g);
  Value out = c.ok ? convolve(node, operands, taps, g) : Value();
  if (!out)
    return failure();
  results.push_back(out);
  return success();
}

/// `parts` concatenated along `axis`, at most 8 at a time (a concat's
/// kernel receives a stream per part, and a PE has few colors).
Value Importer::concatTree(Composer &c, ArrayRef<Value> parts, int64_t axis) {
  SmallVector<Value> level(parts.begin(), parts.end());
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i < level.size(); i += 8) {
      ArrayRef<Value> group =
          ArrayRef<Value>(level).slice(i, std::min<size_t>(8, level.size() - i));
      next.push_back(group.size() == 1 ? group.front()
                                       : c.op(wg::ConcatOp::getOperationName(), group,
                                              {attr("axis", builder.getI64IntegerAttr(axis))}));
    }
    level = std::move(next);
  }
  return level.front();
}

/// A pool: the taps combined pairwise, in a balanced tree (elementwise ops
/// split into rows however large; a reduction over stacked taps would not),
/// by max, or summed and divided by how many taps each output counts (with
/// count_include_pad, the padding; else only the input's).
Value Importer::pool(const onnx::NodeProto &node, Value x, ArrayRef<Value> taps,
                     const WindowGeometry &g) {
  Composer c = composer();
  auto type = typeOf(x);
  size_t dims = g.kernel.size();
  bool max = node.op_type() == "MaxPool";
  Value reduced =
      c.pairwise(taps, [&](Value l, Value r) { return max ? c.max(l, r) : c.add(l, r); });
  if (max || node.op_type() == "LpPool" || !c.ok)
    return c.ok ? reduced : Value();
  // The taps of each output inside the counted region, over the spatial axes.
  bool withPads = intAttr(node, "count_include_pad", 0);
  SmallVector<int64_t> outShape(g.out);
  SmallVector<float> counts;
  int64_t outputs = 1;
  for (int64_t o : g.out)
    outputs *= o;
  SmallVector<int64_t> at(dims, 0);
  for (int64_t f = 0; f < outputs; ++f) {
    for (int64_t rest = f, i = int64_t(dims) - 1; i >= 0; --i)
      at[i] = rest % g.out[i], rest /= g.out[i];
    int64_t taken = 1;
    for (size_t i = 0; i < dims; ++i) {
      int64_t length = type.getDimSize(int64_t(i) + 2), n = 0;
      int64_t lo = withPads ? -g.begin[i] : 0, hi = withPads ? length + g.end[i] : length;
      for (int64_t k = 0; k < g.kernel[i]; ++k) {
        int64_t p = at[i] * g.strides[i] + k * g.dilations[i] - g.begin[i];
        n += p >= lo && p < hi;
      }
      taken *= n;
    }
    counts.push_back(float(taken));
  }
  Value divisor = constant(DenseElementsAttr::get(
      RankedTensorType::get(outShape, type.getElementType()), ArrayRef<float>(counts)));
  Value y = c.div(reduced, divisor);
  return c.ok ? y : Value();
}

/// A convolution as columns: the taps stacked after the channels, [N, C,
/// taps, P] as [N, P, C * taps], times each group's weights [M/g, C/g *
/// taps] transposed; the groups side by side, then the bias.
Value Importer::convolve(const onnx::NodeProto &node, ArrayRef<Value> in, ArrayRef<Value> taps,
                         const WindowGeometry &g) {
  Composer c = composer();
  auto type = typeOf(in[0]), wType = typeOf(in[1]);
  Type element = type.getElementType();
  int64_t n = type.getDimSize(0), channels = type.getDimSize(1), m = wType.getDimSize(0);
  int64_t groups = intAttr(node, "group", 1), count = int64_t(taps.size()), positions = 1;
  for (int64_t o : g.out)
    positions *= o;
  if (groups <= 0 || channels % groups || m % groups || wType.getDimSize(1) != channels / groups)
    return nodeError("the channels, weights and group do not agree"), Value();
  int64_t perGroup = channels / groups, outGroup = m / groups;
  auto tensor = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, element); };
  SmallVector<Value> stacked;
  for (Value t : taps)
    stacked.push_back(c.unsqueeze(t, {2}));
  Value all = concatTree(c, stacked, 2);
  Value columns =
      c.op(wg::ReshapeOp::getOperationName(), {all}, {}, tensor({n, channels, count, positions}));
  Value weights =
      c.op(wg::ReshapeOp::getOperationName(), {in[1]}, {}, tensor({m, perGroup * count}));
  SmallVector<Value> outs;
  for (int64_t gi = 0; gi < groups; ++gi) {
    Value cols = groups == 1 ? columns : c.sliceAlong(columns, 1, gi * perGroup, perGroup);
    Value rows = c.op(wg::TransposeOp::getOperationName(),
                      {c.op(wg::ReshapeOp::getOperationName(), {cols}, {},
                            tensor({n, perGroup * count, positions}))},
                      {attr("perm", builder.getDenseI64ArrayAttr({0, 2, 1}))});
    Value w = groups == 1 ? weights : c.sliceAlong(weights, 0, gi * outGroup, outGroup);
    Value wT = c.transpose(w, {1, 0});
    Value product = c.op(wg::MatmulOp::getOperationName(), {rows, wT}); // [N, P, M/g]
    outs.push_back(c.transpose(product, {0, 2, 1}));
  }
  Value y = outs.size() == 1 ? outs.front()
                             : c.op(wg::ConcatOp::getOperationName(), outs,
                                    {attr("axis", builder.getI64IntegerAttr(1))});
  if (in.size() > 2 && in[2])
    y = c.add(y, c.op(wg::ReshapeOp::getOperationName(), {in[2]}, {}, tensor({m, 1})));
  SmallVector<int64_t> shape = {n, m};
  shape.append(g.out.begin(), g.out.end());
  y = c.op(wg::ReshapeOp::getOperationName(), {y}, {}, tensor(shape));
  return c.ok ? y : Value();
}

/// Upsample (deprecated by Resize) is Resize with asymmetric coordinates,
/// whose nearest neighbour is the floor; opset 7 gives the scales as an
/// attribute, later ones as an input.
LogicalResult Importer::convertUpsample(const onnx::NodeProto &node, ArrayRef<Value> in,
                                        SmallVectorImpl<Value> &results) {
  onnx::NodeProto resize = node;
  resize.set_op_type("Resize");
  resize.clear_attribute();
  auto text = [&](const char *name, const std::string &value) {
    onnx::AttributeProto *a = resize.add_attribute();
    a->set_name(name), a->set_type(onnx::AttributeProto::STRING), a->set_s(value);
  };
  const onnx::AttributeProto *mode = findAttr(node, "mode");
  text("mode", !mode || mode->s() == "nearest" ? "nearest" : "linear");
  if (mode && mode->s() != "nearest" && mode->s() != "linear" && mode->s() != "bilinear")
    return nodeError("mode must be nearest or linear"), failure();
  text("coordinate_transformation_mode", "asymmetric");
  text("nearest_mode", "floor");
  Value scales = in.size() > 1 ? in[1] : Value();
  if (const onnx::AttributeProto *a = findAttr(node, "scales")) {
    SmallVector<float> values(a->floats().begin(), a->floats().end());
    scales = constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(values.size())}, builder.getF32Type()),
        ArrayRef<float>(values)));
  }
  if (!scales)
    return nodeError("has no scales"), failure();
  return convertResize(resize, {in[0], Value(), scales}, results);
}

namespace {
/// One axis of a Resize: for each output position, the input indices it
/// reads (clamped to the axis: the edge repeats) and their weights, and
/// whether it lies outside the input (tf_crop_and_resize's extrapolation).
struct ResizeAxis {
  int64_t taps = 1;
  SmallVector<int64_t> index; // [tap][out]
  SmallVector<float> weight;  // [tap][out]
  SmallVector<bool> outside;  // [out]
};

/// The cubic convolution's weights of the taps at floor(x) - 1 .. + 2 for
/// t = x - floor(x), with coefficient a.
std::array<double, 4> cubicWeights(double t, double a) {
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };      // |d| <= 1
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; }; // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}
/// The taps of one axis of `length` resized to `out` (see ResizeAxis).
FailureOr<ResizeAxis> resizeAxis(int64_t length, int64_t out, double scale, StringRef coords,
                                 double start, double end, StringRef mode, StringRef nearest,
                                 double a, bool exclude) {
  ResizeAxis r;
  r.taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  r.index.assign(r.taps * out, 0), r.weight.assign(r.taps * out, 0.0f),
      r.outside.assign(out, false);
  // The resized length in the coordinate maps is length * scale, not
  // floored (ONNX's reference; with sizes given it is the size).
  double resized = scale * double(length);
  for (int64_t o = 0; o < out; ++o) {
    double xo;
    if (coords == "half_pixel")
      xo = (o + 0.5) / scale - 0.5;
    else if (coords == "pytorch_half_pixel")
      xo = resized > 1 ? (o + 0.5) / scale - 0.5 : 0;
    else if (coords == "align_corners")
      xo = resized != 1 ? o * double(length - 1) / (resized - 1) : 0;
    else if (coords == "asymmetric")
      xo = o / scale;
    else if (coords == "tf_half_pixel_for_nn")
      xo = (o + 0.5) / scale;
    else if (coords == "half_pixel_symmetric") // centred on the input: out <= resized
      xo = length / 2.0 * (1 - double(out) / resized) + (o + 0.5) / scale - 0.5;
    else if (coords == "tf_crop_and_resize")
      xo = resized > 1 ? start * (length - 1) + o * (end - start) * (length - 1) / (resized - 1)
                       : 0.5 * (start + end) * (length - 1);
    else
      return failure();
    r.outside[o] = coords == "tf_crop_and_resize" && (xo < 0 || xo > double(length - 1));
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, length - 1); };
    if (mode == "nearest") {
      double picked;
      if (nearest == "round_prefer_floor")
        picked = std::ceil(xo - 0.5);
      else if (nearest == "round_prefer_ceil")
        picked = std::floor(xo + 0.5);
      else if (nearest == "floor")
        picked = std::floor(xo);
      else if (nearest == "ceil")
        picked = std::ceil(xo);
      else
        return failure();
      r.index[o] = clamp(int64_t(picked)), r.weight[o] = 1.0f;
      continue;
    }
    int64_t base = int64_t(std::floor(xo));
    double t = xo - double(base);
    SmallVector<double, 4> w;
    if (mode == "linear") {
      w = {1 - t, t};
    } else {
      auto cubic = cubicWeights(t, a);
      w.assign(cubic.begin(), cubic.end());
      base -= 1;
    }
    double total = 0;
    for (int64_t k = 0; k < r.taps; ++k) {
      if (exclude && (base + k < 0 || base + k >= length))
        w[k] = 0;
      total += w[k];
    }
    for (int64_t k = 0; k < r.taps; ++k) {
      r.index[k * out + o] = clamp(base + k);
      r.weight[k * out + o] = float(exclude && total != 0 ? w[k] / total : w[k]);
    }
  }
  return r;
}
} // namespace

/// Resize, axis by axis: each output position maps back to a coordinate of
/// the input (coordinate_transformation_mode), and takes the nearest input
/// (nearest_mode), or the linear or cubic blend of its neighbours, as a
/// gather of constant indices per tap times constant weights.
LogicalResult Importer::convertResize(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results) {
  Composer c = composer();
  Value x = in[0];
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  std::string mode = stringAttr(node, "mode", "nearest"),
              coords = stringAttr(node, "coordinate_transformation_mode", "half_pixel"),
              nearest = stringAttr(node, "nearest_mode", "round_prefer_floor");
  double a = floatAttr(node, "cubic_coeff_a", -0.75f),
         extrapolation = floatAttr(node, "extrapolation_value", 0.0f);
  bool exclude = intAttr(node, "exclude_outside", 0);
  if (!isa<FloatType>(element) || (mode != "nearest" && mode != "linear" && mode != "cubic"))
    return nodeError("resizes floats by nearest, linear or cubic"), failure();
  if (intAttr(node, "antialias", 0))
    return nodeError("antialias = 1 is not supported"), failure();
  // The scales and output sizes: from sizes when given, else from scales.
  auto operand = [&](size_t i) -> std::optional<DenseElementsAttr> {
    if (in.size() <= i || !in[i] || typeOf(in[i]).getNumElements() == 0)
      return std::nullopt;
    if (auto v = wg::getConstantElements(in[i]))
      return v;
    return DenseElementsAttr();
  };
  auto roi = operand(1), scales = operand(2), sizes = operand(3);
  if ((roi && !*roi) || (scales && !*scales) || (sizes && !*sizes))
    return nodeError(
               "roi, scales and sizes must be compile-time constants (bind them with --bind)"),
           failure();
  auto doubles = [](DenseElementsAttr v) {
    SmallVector<double> out;
    if (isa<FloatType>(v.getElementType()))
      for (const APFloat &f : v.getValues<APFloat>())
        out.push_back(f.convertToDouble());
    else
      for (const APInt &i : v.getValues<APInt>())
        out.push_back(double(i.getSExtValue()));
    return out;
  };
  // Opset 18's axes: scales, sizes and roi name only those axes.
  SmallVector<int64_t> axes;
  for (int64_t i : intsAttr(node, "axes").value_or(SmallVector<int64_t>()))
    axes.push_back(i < 0 ? i + rank : i);
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  if (llvm::any_of(axes, [&](int64_t i) { return i < 0 || i >= rank; }))
    return nodeError("an axis is outside the input's " + std::to_string(rank)), failure();
  auto perAxis = [&](DenseElementsAttr v, SmallVector<double> &full,
                     const char *what) -> LogicalResult {
    SmallVector<double> given = doubles(v);
    if (given.size() != axes.size())
      return nodeError(std::string(what) + " must have one entry per resized axis"), failure();
    for (auto [i, axis] : llvm::enumerate(axes))
      full[axis] = given[i];
    return success();
  };
  SmallVector<double> scale(rank, 1.0), box;
  SmallVector<int64_t> outShape(type.getShape());
  std::string policy = stringAttr(node, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return nodeError("keep_aspect_ratio_policy '" + policy + "' is not stretch, not_larger or "
                     "not_smaller"),
           failure();
  if (sizes) {
    SmallVector<double> s(type.getShape().begin(), type.getShape().end());
    if (::failed(perAxis(*sizes, s, "sizes")))
      return failure();
    for (int64_t i = 0; i < rank; ++i)
      scale[i] = s[i] / double(type.getDimSize(i));
    // Keeping the aspect ratio: one scale for the axes, their sizes rounded half up.
    double kept = policy == "not_larger" ? INFINITY : -INFINITY;
    for (int64_t i : axes)
      kept = policy == "not_larger" ? std::min(kept, scale[i]) : std::max(kept, scale[i]);
    for (int64_t i = 0; i < rank; ++i) {
      bool resized = policy != "stretch" && llvm::is_contained(axes, i);
      scale[i] = resized ? kept : scale[i];
      double size = resized ? kept * double(type.getDimSize(i)) + 0.5 : s[i];
      if (!(size >= 0 && size < double(kMaxImportTable)))
        return nodeError("an output length of " + std::to_string(size) + " is not supported"),
               failure();
      outShape[i] = int64_t(size);
    }
  } else if (scales) {
    if (::failed(perAxis(*scales, scale, "scales")))
      return failure();
    for (int64_t i = 0; i < rank; ++i) {
      double size = std::floor(double(type.getDimSize(i)) * scale[i]);
      if (!(size >= 0 && size < double(kMaxImportTable)))
        return nodeError("an output length of " + std::to_string(size) + " is not supported"),
               failure();
      outShape[i] = int64_t(size);
    }
  } else {
    return nodeError("needs scales or sizes"), failure();
  }
  if (coords == "tf_crop_and_resize") {
    if (!roi || doubles(*roi).size() != 2 * axes.size())
      return nodeError("tf_crop_and_resize needs a roi of a start and an end per axis"), failure();
    SmallVector<double> given = doubles(*roi);
    box.assign(rank, 0.0);
    box.append(rank, 1.0);
    for (auto [i, axis] : llvm::enumerate(axes))
      box[axis] = given[i], box[axis + rank] = given[i + axes.size()];
  }
  Value y = x;
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t length = type.getDimSize(axis), out = outShape[axis];
    if (out <= 0)
      return nodeError("a zero-size output"), failure();
    if (out == length && scale[axis] == 1.0 && box.empty())
      continue;
    auto plan = resizeAxis(length, out, scale[axis], coords, box.empty() ? 0 : box[axis],
                           box.empty() ? 1 : box[axis + rank], mode, nearest, a, exclude);
    if (::failed(plan))
      return nodeError("coordinate_transformation_mode '" + coords + "' or nearest_mode '" +
                       nearest + "' is not supported"),
             failure();
    SmallVector<int64_t> along(rank - axis, 1);
    along[0] = out;
    Value sum;
    for (int64_t t = 0; t < plan->taps; ++t) {
      ArrayRef<int64_t> idx = ArrayRef<int64_t>(plan->index).slice(t * out, out);
      Value picked = c.op(wg::GatherOp::getOperationName(),
                          {y, constant(DenseElementsAttr::get(
                                  RankedTensorType::get({out}, builder.getIntegerType(64)), idx))},
                          {attr("axis", builder.getI64IntegerAttr(axis))});
      if (plan->taps > 1)
        picked = c.mul(picked, constant(DenseElementsAttr::get(
                                   RankedTensorType::get(along, element),
                                   ArrayRef<float>(plan->weight).slice(t * out, out))));
      sum = sum ? c.add(sum, picked) : picked;
    }
    if (llvm::is_contained(plan->outside, true))
      sum =
          c.where(constant(DenseElementsAttr::get(RankedTensorType::get(along, builder.getI1Type()),
                                                  ArrayRef<bool>(plan->outside))),
                  scalarConstant(element, extrapolation), sum);
    y = sum;
  }
  return c.finish(results, {y});
}
