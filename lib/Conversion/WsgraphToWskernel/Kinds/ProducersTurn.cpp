//===- ProducersTurn.cpp - rotary turned where q and k are made ------------===//
//
// Rotary attention whose q and k come from whole linears feeding it alone:
// those linears put rotate_half's pairs side by side (GPT-J's already are)
// and turn them on their finishing rows (PairTurn), and the attention reads
// plain heads. A NeoX
// qkv, each head's q, k and v together, is also reordered by attention
// column once the columns per head are chosen.
//
//===----------------------------------------------------------------------===//
#include "Kind.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {

/// One stream of q and k heads a linear turns: each run of `period`
/// columns holds a head of every source on it; rotated regions start at
/// `bases` (each R wide).
struct TurnedStream {
  KernelPlan *producer = nullptr;
  int64_t period = 0;
  SmallVector<int64_t, 2> bases;
};

/// The stream's linear, if it is whole, feeds this attention alone and
/// every source on it has `heads` runs of its period.
KernelPlan *turningProducer(std::vector<KernelPlan> &plans, const KernelPlan &attention,
                            Value stream) {
  auto from = llvm::find_if(plans, [&](const KernelPlan &q) { return q.streamed() == stream; });
  bool alone = llvm::none_of(plans, [&](const KernelPlan &other) {
    return &other != &attention && llvm::is_contained(other.inputs, stream);
  });
  if (from == plans.end() || from->kind != "linear" || !isWholeLinear(*from) ||
      !from->colInterleave.empty() || !from->colPerm.empty() || !alone)
    return nullptr;
  return &*from;
}

/// The streams of q and k as their linears would turn them, or nothing when
/// a linear cannot: regions at even offsets, inside one head's run, with
/// the same run for every source on a stream (v's columns stay in place).
std::optional<SmallVector<TurnedStream, 2>> turnedStreams(std::vector<KernelPlan> &plans,
                                                          const KernelPlan &attention) {
  const AttentionLayout &in = attention.attention;
  SmallVector<TurnedStream, 2> streams;
  int64_t r = in.rotaryDims;
  for (auto [src, heads] : {std::pair{in.q, attention.heads},
                            std::pair{in.k, attention.heads / std::max<int64_t>(1, in.group)}}) {
    Value stream = attention.inputs[size_t(src.input)];
    int64_t width = PlanContext::width(stream);
    if (src.base % 2 || src.base + r > src.stride || width != heads * src.stride)
      return std::nullopt;
    auto same = llvm::find_if(streams, [&](const TurnedStream &t) {
      return t.producer->streamed() == stream;
    });
    if (same != streams.end()) {
      if (same->period != src.stride)
        return std::nullopt;
      same->bases.push_back(src.base);
      continue;
    }
    KernelPlan *producer = turningProducer(plans, attention, stream);
    if (!producer)
      return std::nullopt;
    streams.push_back({producer, src.stride, {src.base}});
  }
  if (attention.inputs[size_t(in.v.input)] == attention.inputs[size_t(in.q.input)] ||
      attention.inputs[size_t(in.v.input)] == attention.inputs[size_t(in.k.input)]) {
    for (const TurnedStream &t : streams)
      for (int64_t base : t.bases)
        if (in.v.stride != t.period || (in.v.base < base + r && base < in.v.base + in.d))
          return std::nullopt;
  }
  return streams;
}

} // namespace

void wsc::lowering::turnInProducers(std::vector<KernelPlan> &plans) {
  for (KernelPlan &attention : plans) {
    AttentionLayout &in = attention.attention;
    // A generating program keeps the turning in the attention: there every
    // row turns q beside the others, while a projection's finishing row
    // turns its whole block on the token's path (llama3-8b decodes at 401
    // tokens/s so, 333 with the projections turning).
    if (attention.kind != "attention" || in.rotary < 0 || in.rotaryDims % 2 ||
        attention.qkvUnit || attention.tokenAtATime)
      continue;
    DenseElementsAttr table = wg::getConstantElements(attention.inputs[size_t(in.rotary)]);
    if (!table)
      continue;
    SmallVector<float> freqAmp(table.getValues<float>());
    int64_t r = in.rotaryDims, half = r / 2;
    // A pair turns by one angle: rotate_half's pairs (j, j + R/2) when the
    // halves repeat, adjacent pairs (GPT-J's) when each pair's two do.
    auto sharesAngle = [&](int64_t i) {
      return freqAmp[size_t(i)] == freqAmp[size_t(i + 1)] &&
             freqAmp[size_t(r + i)] == freqAmp[size_t(r + i + 1)];
    };
    bool pairs = in.rotaryPairs && llvm::all_of(llvm::seq<int64_t>(0, half),
                                                [&](int64_t j) { return sharesAngle(2 * j); });
    if (!in.rotaryHalves && !pairs)
      continue;
    std::optional<SmallVector<TurnedStream, 2>> streams = turnedStreams(plans, attention);
    if (!streams)
      continue;
    // Pair j of a rotated region turns its dimensions j and j + R/2 (or 2j
    // and 2j + 1, in place) by the angle of its table column; the other
    // columns pair up in place and turn by 0.
    for (TurnedStream &t : *streams) {
      SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, t.period));
      SmallVector<int64_t> angle(size_t(t.period / 2), -1); // per pair of a run
      for (int64_t base : t.bases)
        for (int64_t j = 0; j < half; ++j) {
          angle[size_t(base / 2 + j)] = pairs ? 2 * j : j;
          if (pairs)
            continue;
          perm[size_t(base + 2 * j)] = base + j;
          perm[size_t(base + 2 * j + 1)] = base + half + j;
        }
      int64_t pairs = PlanContext::width(t.producer->streamed()) / 2;
      SmallVector<float> words(size_t(2 * pairs));
      for (int64_t pair = 0; pair < pairs; ++pair) {
        int64_t j = angle[size_t(pair % (t.period / 2))];
        words[size_t(pair)] = j < 0 ? 0.0f : freqAmp[size_t(j)];
        words[size_t(pairs + pair)] = j < 0 ? 1.0f : freqAmp[size_t(r + j)];
      }
      OpBuilder b(t.producer->anchor);
      auto type = RankedTensorType::get({2, pairs}, b.getF32Type());
      t.producer->inputs.push_back(wg::ConstantOp::create(
          b, t.producer->anchor->getLoc(), DenseElementsAttr::get(type, ArrayRef(words))));
      t.producer->turns = true;
      if (!llvm::equal(perm, llvm::seq<int64_t>(0, t.period)))
        t.producer->colPerm = std::move(perm);
    }
    attention.inputs.erase(attention.inputs.begin() + in.rotary);
    in.rotary = -1, in.rotaryDims = 0, in.rotaryHalves = in.rotaryPairs = false;
  }
}

void wsc::lowering::interleaveHeadByColumn(KernelPlan &producer, int64_t d, int64_t ds) {
  int64_t run = 3 * d, parts = d / ds;
  SmallVector<int64_t> before = producer.colPerm.empty()
                                    ? llvm::to_vector(llvm::seq<int64_t>(0, run))
                                    : producer.colPerm;
  assert(int64_t(before.size()) == run && "a per-head qkv is ordered a head at a time");
  // View word (px, role, i) is the head's word role * d + px * ds + i as
  // ordered before.
  SmallVector<int64_t> from(static_cast<size_t>(run)), perm(static_cast<size_t>(run));
  for (int64_t px = 0; px < parts; ++px)
    for (int64_t role = 0; role < 3; ++role)
      for (int64_t i = 0; i < ds; ++i)
        from[size_t((px * 3 + role) * ds + i)] = role * d + px * ds + i;
  for (int64_t v = 0; v < run; ++v)
    perm[size_t(v)] = before[size_t(from[size_t(v)])];
  producer.colPerm = std::move(perm);
  if (!producer.turns)
    return;
  // The pairs' table follows its pairs.
  Value table = producer.inputs.back();
  DenseElementsAttr old = wg::getConstantElements(table);
  SmallVector<float> words(old.getValues<float>()), moved(words.size());
  int64_t pairs = int64_t(words.size()) / 2, perRun = run / 2;
  for (int64_t t = 0; t < pairs; ++t) {
    int64_t source = t - t % perRun + from[size_t(2 * (t % perRun))] / 2;
    moved[size_t(t)] = words[size_t(source)];
    moved[size_t(pairs + t)] = words[size_t(pairs + source)];
  }
  OpBuilder b(producer.anchor);
  producer.inputs.back() = wg::ConstantOp::create(
      b, producer.anchor->getLoc(), DenseElementsAttr::get(cast<ShapedType>(table.getType()),
                                                          ArrayRef(moved)));
  if (table.use_empty()) // made for this plan alone
    table.getDefiningOp()->erase();
}
