//===- OnnxEinsum.cpp - ONNX Einsum to wsgraph ops ------------------------===//
//
// An einsum is built from ops that wsgraph has: each operand's repeated
// labels become a diagonal (a strided slice of the merged dimensions), labels
// that only one operand has and the output lacks are summed at once, and two
// operands contract either as a batched matmul (when some labels are summed
// over, in a float type) or as a broadcast product, summed over the labels the
// output lacks. More than two operands contract left to right.
//
//===----------------------------------------------------------------------===//
#include "OnnxImporter.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cctype>
#include <map>

using namespace mlir;
using namespace wsc;
using namespace wsc::onnx_import;

namespace {
/// One einsum operand: a value and one label per dimension. Letters are their
/// character codes; the dimensions an ellipsis stands for are 0, 1, ...
/// (right-aligned across operands), so they sort before every letter.
struct EinsumTerm {
  Value value;
  SmallVector<int> labels;
};

std::string einsumLabelName(int label) {
  return label >= 'A' ? std::string(1, char(label)) : "... dimension " + std::to_string(label);
}
} // namespace

LogicalResult Importer::convertEinsum(const onnx::NodeProto &node, ArrayRef<Value> in,
                                      SmallVectorImpl<Value> &results) {
  auto *eqAttr = findAttr(node, "equation");
  if (!eqAttr || eqAttr->s().empty()) {
    nodeError("has no equation");
    return failure();
  }
  std::string eq;
  for (char c : eqAttr->s())
    if (!std::isspace(static_cast<unsigned char>(c)))
      eq += c;
  auto bad = [&](const std::string &why) {
    nodeError("equation '" + eqAttr->s() + "': " + why);
    return failure();
  };

  // Split "lhs->rhs" and the lhs into one term per operand.
  size_t arrow = eq.find("->");
  bool explicitOutput = arrow != std::string::npos;
  std::string lhs = eq.substr(0, arrow);
  std::optional<std::string> rhs;
  if (explicitOutput)
    rhs = eq.substr(arrow + 2);
  SmallVector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != in.size())
    return bad("names " + std::to_string(terms.size()) + " operands, the node has " +
               std::to_string(in.size()));

  /// A term's letters, with -1 where its ellipsis is.
  auto parse = [&](const std::string &s, SmallVectorImpl<int> &out) -> LogicalResult {
    bool ellipsis = false;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 3, "...") == 0) {
        if (ellipsis)
          return bad("a term has more than one ellipsis");
        ellipsis = true;
        out.push_back(-1);
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
        out.push_back(s[i]);
      } else {
        return bad(std::string("unexpected character '") + s[i] + "'");
      }
    }
    return success();
  };

  // Operands: static shapes of one element type.
  Type element = typeOf(in[0]).getElementType();
  SmallVector<SmallVector<int>> parsed(in.size());
  int64_t ellipsisRank = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    auto type = typeOf(in[k]);
    if (!type.hasStaticShape()) {
      nodeError("operand " + std::to_string(k) +
                " has a dynamic shape; bind it with --input-shape");
      return failure();
    }
    if (type.getElementType() != element) {
      nodeError("operands have different element types");
      return failure();
    }
    if (::failed(parse(terms[k], parsed[k])))
      return failure();
    int64_t letters = llvm::count_if(parsed[k], [](int l) { return l >= 0; });
    bool hasEllipsis = letters != int64_t(parsed[k].size());
    if (hasEllipsis ? letters > type.getRank() : letters != type.getRank())
      return bad("term '" + terms[k] + "' does not match operand " + std::to_string(k) +
                 " of rank " + std::to_string(type.getRank()));
    if (hasEllipsis)
      ellipsisRank = std::max(ellipsisRank, type.getRank() - letters);
  }

  // Labels per dimension, and each label's size (1 broadcasts, as in numpy).
  SmallVector<EinsumTerm> operands;
  std::map<int, int64_t> size;
  std::map<int, int> count;
  for (size_t k = 0; k < in.size(); ++k) {
    auto type = typeOf(in[k]);
    EinsumTerm t{in[k], {}};
    int64_t letters = llvm::count_if(parsed[k], [](int l) { return l >= 0; });
    for (int l : parsed[k]) {
      if (l >= 0) {
        t.labels.push_back(l);
        continue;
      }
      for (int64_t d = type.getRank() - letters; d > 0; --d)
        t.labels.push_back(int(ellipsisRank - d));
    }
    for (auto [d, l] : llvm::enumerate(t.labels)) {
      int64_t n = type.getDimSize(d);
      ++count[l];
      auto [it, inserted] = size.try_emplace(l, n);
      if (inserted || it->second == n || n == 1)
        continue;
      if (it->second != 1)
        return bad("label " + einsumLabelName(l) + " has sizes " + std::to_string(it->second) +
                   " and " + std::to_string(n));
      it->second = n;
    }
    operands.push_back(std::move(t));
  }

  // The output's labels.
  SmallVector<int> output;
  if (explicitOutput) {
    SmallVector<int> out;
    if (::failed(parse(*rhs, out)))
      return failure();
    bool hasEllipsis = false;
    for (int l : out) {
      if (l < 0) {
        hasEllipsis = true;
        for (int e = 0; e < ellipsisRank; ++e)
          output.push_back(e);
        continue;
      }
      if (!size.count(l))
        return bad(std::string("output label '") + char(l) + "' is in no operand");
      if (llvm::is_contained(output, l))
        return bad(std::string("output label '") + char(l) + "' is repeated");
      output.push_back(l);
    }
    if (ellipsisRank > 0 && !hasEllipsis)
      return bad("the operands have '...' dimensions but the output has no '...'");
  } else {
    for (int e = 0; e < ellipsisRank; ++e)
      output.push_back(e);
    for (auto [l, n] : count)
      if (l >= 'A' && n == 1)
        output.push_back(l);
  }

  // Builders; each leaves trivial steps out.
  auto transposeTo = [&](EinsumTerm &t, ArrayRef<int> order) -> LogicalResult {
    if (ArrayRef<int>(t.labels) == order)
      return success();
    SmallVector<int64_t> perm;
    for (int l : order)
      perm.push_back(llvm::find(t.labels, l) - t.labels.begin());
    auto v = build(wg::TransposeOp::getOperationName(), {t.value},
                   {attr("perm", builder.getDenseI64ArrayAttr(perm))});
    if (::failed(v))
      return failure();
    t.value = *v;
    t.labels.assign(order.begin(), order.end());
    return success();
  };
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) -> FailureOr<Value> {
    if (typeOf(v).getShape() == shape)
      return v;
    return build(wg::ReshapeOp::getOperationName(), {v}, {},
                 RankedTensorType::get(shape, element));
  };
  auto sum = [&](EinsumTerm &t, ArrayRef<int> labels) -> LogicalResult {
    SmallVector<int64_t> axes;
    SmallVector<int> kept;
    for (auto [d, l] : llvm::enumerate(t.labels)) {
      if (llvm::is_contained(labels, l))
        axes.push_back(d);
      else
        kept.push_back(l);
    }
    if (axes.empty())
      return success();
    auto v = build(wg::ReduceSumOp::getOperationName(), {t.value},
                   {attr("axes", builder.getDenseI64ArrayAttr(axes)),
                    attr("keepdims", builder.getBoolAttr(false))});
    if (::failed(v))
      return failure();
    t.value = *v;
    t.labels = kept;
    return success();
  };
  // A label repeated in one term takes the diagonal: its two dimensions move
  // to the end, merge into n * n elements and are sliced with stride n + 1.
  auto diagonals = [&](EinsumTerm &t) -> LogicalResult {
    for (;;) {
      int repeated = -1;
      for (int l : t.labels)
        if (llvm::count(t.labels, l) > 1) {
          repeated = l;
          break;
        }
      if (repeated < 0)
        return success();
      auto type = typeOf(t.value);
      SmallVector<int64_t> at;
      for (auto [d, l] : llvm::enumerate(t.labels))
        if (l == repeated)
          at.push_back(d);
      int64_t n = type.getDimSize(at[0]);
      if (type.getDimSize(at[1]) != n)
        return bad("the diagonal of label " + einsumLabelName(repeated) + " has sizes " +
                   std::to_string(n) + " and " + std::to_string(type.getDimSize(at[1])));
      SmallVector<int64_t> perm;
      SmallVector<int> labels;
      SmallVector<int64_t> shape;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (d != at[0] && d != at[1]) {
          perm.push_back(d);
          labels.push_back(t.labels[d]);
          shape.push_back(type.getDimSize(d));
        }
      perm.push_back(at[0]);
      perm.push_back(at[1]);
      Value v = t.value;
      if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
        auto moved = build(wg::TransposeOp::getOperationName(), {v},
                           {attr("perm", builder.getDenseI64ArrayAttr(perm))});
        if (::failed(moved))
          return failure();
        v = *moved;
      }
      shape.push_back(n * n);
      auto merged = reshape(v, shape);
      if (::failed(merged))
        return failure();
      SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape), strides(shape.size(), 1);
      sizes.back() = n;
      strides.back() = n + 1;
      auto diag = build(wg::SliceOp::getOperationName(), {*merged},
                        {attr("offsets", builder.getDenseI64ArrayAttr(offsets)),
                         attr("sizes", builder.getDenseI64ArrayAttr(sizes)),
                         attr("strides", builder.getDenseI64ArrayAttr(strides))});
      if (::failed(diag))
        return failure();
      labels.push_back(repeated);
      t.value = *diag;
      t.labels = labels;
    }
  };

  // Two terms into one with the labels `order` (those of either that are
  // still needed); the labels they share and `order` lacks are summed.
  auto contract = [&](EinsumTerm a, EinsumTerm b, ArrayRef<int> order) -> FailureOr<EinsumTerm> {
    auto has = [](const EinsumTerm &t, int l) { return llvm::is_contained(t.labels, l); };
    auto keep = [&](int l) { return llvm::is_contained(order, l); };
    // Labels of one side only that the result lacks: summed first.
    SmallVector<int> aAlone, bAlone;
    for (int l : a.labels)
      if (!has(b, l) && !keep(l))
        aAlone.push_back(l);
    for (int l : b.labels)
      if (!has(a, l) && !keep(l))
        bAlone.push_back(l);
    if (::failed(sum(a, aAlone)) || ::failed(sum(b, bAlone)))
      return failure();
    SmallVector<int> summed;
    for (int l : a.labels)
      if (has(b, l) && !keep(l))
        summed.push_back(l);
    auto dim = [](const EinsumTerm &t, int l) {
      return typeOf(t.value).getDimSize(llvm::find(t.labels, l) - t.labels.begin());
    };
    bool asMatmul = !summed.empty() && isa<FloatType>(element) &&
                    llvm::all_of(summed, [&](int l) { return dim(a, l) == dim(b, l); });
    if (asMatmul) {
      // [batch..., M, K] x [batch..., K, N], M and N the merged labels of one
      // side, K the merged summed ones.
      SmallVector<int> batch, aOnly, bOnly;
      for (int l : order)
        (has(a, l) && has(b, l) ? batch : has(a, l) ? aOnly : bOnly).push_back(l);
      auto side = [&](EinsumTerm &t, ArrayRef<int> rows, bool summedFirst) -> FailureOr<Value> {
        SmallVector<int> perm(batch);
        ArrayRef<int> first = summedFirst ? ArrayRef<int>(summed) : rows;
        ArrayRef<int> second = summedFirst ? rows : ArrayRef<int>(summed);
        perm.append(first.begin(), first.end());
        perm.append(second.begin(), second.end());
        if (::failed(transposeTo(t, perm)))
          return failure();
        SmallVector<int64_t> shape;
        for (int l : batch)
          shape.push_back(dim(t, l));
        int64_t m = 1, k = 1;
        for (int l : rows)
          m *= dim(t, l);
        for (int l : summed)
          k *= dim(t, l);
        shape.push_back(summedFirst ? k : m);
        shape.push_back(summedFirst ? m : k);
        return reshape(t.value, shape);
      };
      auto lhs = side(a, aOnly, false);
      if (::failed(lhs))
        return failure();
      auto rhsValue = side(b, bOnly, true);
      if (::failed(rhsValue))
        return failure();
      auto product = build(wg::MatmulOp::getOperationName(), {*lhs, *rhsValue}, {});
      if (::failed(product))
        return failure();
      SmallVector<int64_t> shape;
      SmallVector<int> labels;
      for (int l : batch)
        shape.push_back(std::max(dim(a, l), dim(b, l)));
      for (int l : aOnly)
        shape.push_back(dim(a, l));
      for (int l : bOnly)
        shape.push_back(dim(b, l));
      labels.append(batch);
      labels.append(aOnly);
      labels.append(bOnly);
      auto split = reshape(*product, shape);
      if (::failed(split))
        return failure();
      EinsumTerm r{*split, labels};
      if (::failed(transposeTo(r, order)))
        return failure();
      return r;
    }
    // The broadcast product over `order` then the summed labels, summed.
    SmallVector<int> all(order.begin(), order.end());
    all.append(summed);
    auto align = [&](EinsumTerm &t) -> FailureOr<Value> {
      SmallVector<int> mine;
      SmallVector<int64_t> missing;
      for (auto [d, l] : llvm::enumerate(all)) {
        if (has(t, l))
          mine.push_back(l);
        else
          missing.push_back(d);
      }
      if (::failed(transposeTo(t, mine)))
        return failure();
      if (missing.empty())
        return t.value;
      return build(wg::UnsqueezeOp::getOperationName(), {t.value},
                   {attr("axes", builder.getDenseI64ArrayAttr(missing))});
    };
    auto x = align(a);
    if (::failed(x))
      return failure();
    auto y = align(b);
    if (::failed(y))
      return failure();
    auto product = build(wg::MulOp::getOperationName(), {*x, *y}, {});
    if (::failed(product))
      return failure();
    EinsumTerm r{*product, all};
    if (::failed(sum(r, summed)))
      return failure();
    return r;
  };

  for (auto &t : operands)
    if (::failed(diagonals(t)))
      return failure();
  EinsumTerm acc = operands[0];
  for (size_t k = 1; k < operands.size(); ++k) {
    // Keep what the output or a later operand uses, in output order when
    // this is the last step.
    SmallVector<int> order;
    auto needed = [&](int l) {
      if (llvm::is_contained(output, l))
        return true;
      for (size_t j = k + 1; j < operands.size(); ++j)
        if (llvm::is_contained(operands[j].labels, l))
          return true;
      return false;
    };
    if (k + 1 == operands.size()) {
      order = output;
    } else {
      for (const EinsumTerm *t : {&acc, &operands[k]})
        for (int l : t->labels)
          if (needed(l) && !llvm::is_contained(order, l))
            order.push_back(l);
    }
    auto r = contract(acc, operands[k], order);
    if (::failed(r))
      return failure();
    acc = *r;
  }
  // One operand (or the last product): sum what the output lacks, then order.
  SmallVector<int> extra;
  for (int l : acc.labels)
    if (!llvm::is_contained(output, l))
      extra.push_back(l);
  if (::failed(sum(acc, extra)) || ::failed(transposeTo(acc, output)))
    return failure();
  results.push_back(acc.value);
  return success();
}
