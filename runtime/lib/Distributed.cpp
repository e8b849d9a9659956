#include "Distributed.h"
#include "Machine.h"

#include <fmt/format.h>

#include <cstring>

namespace wsc::runtime::detail {

Partition partitionRows(const Model &m, unsigned ranks) {
  Partition p;
  p.ranks = ranks;
  size_t rows = size_t(m.wafers) * m.height;
  p.rankOfRow.assign(rows, 0);
  if (m.wafers >= ranks) {
    for (size_t row = 0; row < rows; ++row)
      p.rankOfRow[row] = uint16_t(row / m.height * ranks / m.wafers);
    return p;
  }
  // Bands of rows of about equal PEs in use: a row goes to the rank its
  // middle PE falls in.
  std::vector<uint64_t> weight(rows, 0);
  uint64_t total = 0;
  for (const Region &r : m.regions)
    for (uint32_t y = r.y; y < r.y + r.h; ++y)
      weight[size_t(r.wafer) * m.height + y] += r.w, total += r.w;
  uint64_t before = 0;
  for (size_t row = 0; row < rows; ++row) {
    uint64_t middle = total ? (2 * before + weight[row]) * ranks / (2 * total) : row * ranks / rows;
    p.rankOfRow[row] = uint16_t(std::min<uint64_t>(middle, ranks - 1));
    before += weight[row];
  }
  return p;
}

bool ownsPe(const Model &m, const Partition &p, unsigned rank, uint64_t pe) {
  uint32_t x, y;
  m.peXY(pe, x, y);
  return p.rankOfRow[size_t(m.regions[m.peRegion[pe]].wafer) * m.height + y] == rank;
}

namespace {

/// Word `i` of a control message's payload (after its kind byte); 0 when
/// the message is shorter.
uint64_t word(const std::vector<uint8_t> &in, size_t i) {
  return in.size() >= 1 + 8 * (i + 1) ? ByteReader{in.data() + 1 + 8 * i}.get<uint64_t>() : 0;
}

} // namespace

Distributed::Distributed(Channel &channel, Partition partition)
    : channel_(channel), partition_(std::move(partition)), finished_(channel.size()),
      hasFinished_(channel.size(), false) {
  carriedOver_.swap(channel_.nextRun);
}

bool Distributed::receive(unsigned &from, std::vector<uint8_t> &bytes) {
  if (!carriedOver_.empty()) {
    from = carriedOver_.front().first;
    bytes = std::move(carriedOver_.front().second);
    carriedOver_.pop_front();
    return true;
  }
  while (channel_.receive(from, bytes)) {
    // A process sends nothing more in a run after its Finished.
    if (!hasFinished_[from])
      return true;
    channel_.nextRun.emplace_back(from, std::move(bytes));
  }
  return false;
}

void Distributed::post(unsigned to, Kind kind, const std::vector<uint8_t> &payload) {
  std::vector<uint8_t> bytes;
  bytes.reserve(1 + payload.size());
  bytes.push_back(kind);
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  channel_.send(to, std::move(bytes));
}

void Distributed::send(unsigned to, std::vector<uint8_t> bytes) {
  bytes.insert(bytes.begin(), Walk);
  ++sent_;
  channel_.send(to, std::move(bytes));
}

void Distributed::take(unsigned from, const std::vector<uint8_t> &bytes, const Walks &walks) {
  if (bytes.empty())
    return;
  switch (Kind(bytes[0])) {
  case Walk:
    ++received_;
    if (state_ == State::Running)
      if (Status s = walks(bytes.data() + 1, bytes.size() - 1); !s)
        fail(s.message());
    return;
  case Probe:
    askedWave_ = word(bytes, 0);
    return;
  case Answer:
    if (waveOpen_ && word(bytes, 0) == wave_ && from < answers_.size()) {
      answers_[from] = {word(bytes, 1), word(bytes, 2)};
      answered_[from] = true;
    }
    return;
  case End:
    if (state_ == State::Running)
      state_ = State::Done;
    return;
  case Fault:
    if (state_ == State::Running) {
      state_ = State::Failed;
      failure_.assign(bytes.begin() + 1, bytes.end());
    }
    return;
  case Finished:
    finished_[from].assign(bytes.begin() + 1, bytes.end());
    hasFinished_[from] = true;
    return;
  case Halt:
    if (state_ == State::Running)
      state_ = State::Done, halted_ = true;
    return;
  }
}

void Distributed::probe() {
  if (!waveOpen_) {
    ++wave_;
    answers_.assign(size(), {0, 0});
    answered_.assign(size(), false);
    answers_[0] = {sent_, received_};
    answered_[0] = true;
    std::vector<uint8_t> payload;
    ByteWriter{payload}.put(wave_);
    for (unsigned r = 1; r < size(); ++r)
      post(r, Probe, payload);
    waveOpen_ = true;
    return;
  }
  for (bool a : answered_)
    if (!a)
      return;
  waveOpen_ = false;
  // Counts that did not move between two waves: no process ran in
  // between, since only a received walk starts one.
  bool still = answers_ == lastAnswers_ && answers_[0] == std::make_pair(sent_, received_);
  uint64_t sent = 0, received = 0;
  for (const auto &[s, r] : answers_)
    sent += s, received += r;
  lastAnswers_ = answers_;
  if (!still || sent != received)
    return;
  state_ = State::Done;
  for (unsigned r = 1; r < size(); ++r)
    post(r, End, {});
}

Distributed::State Distributed::poll(const Walks &walks) {
  unsigned from;
  std::vector<uint8_t> bytes;
  while (receive(from, bytes))
    take(from, bytes, walks);
  return state_;
}

Distributed::State Distributed::idle() {
  if (state_ != State::Running)
    return state_;
  if (askedWave_) {
    std::vector<uint8_t> payload;
    ByteWriter w{payload};
    w.put(askedWave_), w.put(sent_), w.put(received_);
    post(0, Answer, payload);
    askedWave_ = 0;
  }
  if (rank() == 0)
    probe();
  if (state_ == State::Running)
    channel_.pause();
  return state_;
}

void Distributed::fail(const std::string &message) {
  if (state_ == State::Failed)
    return;
  state_ = State::Failed;
  failure_ = message;
  ownFailure_ = true;
  std::vector<uint8_t> payload(message.begin(), message.end());
  for (unsigned r = 0; r < size(); ++r)
    if (r != rank())
      post(r, Fault, payload);
}

void Distributed::halt() {
  if (state_ != State::Running)
    return;
  state_ = State::Done;
  halted_ = true;
  for (unsigned r = 0; r < size(); ++r)
    if (r != rank())
      post(r, Halt, {});
}

std::vector<std::vector<uint8_t>> Distributed::finish(std::vector<uint8_t> mine) {
  // Every process hears from every other before it ends, so no walk is
  // left unreceived (MPI would wait for it at the end).
  if (rank() != 0) {
    post(0, Finished, mine);
    for (unsigned r = 1; r < size(); ++r)
      if (r != rank())
        post(r, Finished, {});
  }
  auto heardAll = [&] {
    for (unsigned r = 0; r < size(); ++r)
      if (r != rank() && !hasFinished_[r])
        return false;
    return true;
  };
  Walks ignore = [](const uint8_t *, size_t) { return Status::success(); };
  if (state_ == State::Running)
    state_ = State::Done;
  for (unsigned from; !heardAll();) {
    std::vector<uint8_t> bytes;
    if (receive(from, bytes))
      take(from, bytes, ignore);
    else
      channel_.pause();
  }
  if (rank() != 0)
    return {finished_[0]};
  finished_[0] = std::move(mine);
  return finished_;
}

void Distributed::conclude(const std::vector<uint8_t> &outcome) {
  for (unsigned r = 1; r < size(); ++r)
    post(r, Finished, outcome);
}

namespace {

enum Ending : uint8_t { Ran, Failed, Stopped };

/// The output words of `rank`'s PEs, in the outputs' and pieces' order.
template <typename Visit>
void ownedPieces(const Model &m, const Partition &p, unsigned rank, Visit visit) {
  for (const TensorRef &t : m.outputs)
    for (const PieceRef &piece : t.pieces)
      if (ownsPe(m, p, rank, piece.pe))
        visit(piece);
}

} // namespace

namespace {

std::vector<uint8_t> packResult(const Model &m, const PeStates &pes, const Distributed &d,
                                const Status &run, const RunReport &r) {
  std::vector<uint8_t> out;
  ByteWriter w{out};
  w.put(uint8_t(run ? Ran : d.stoppedByAnother() ? Stopped : Failed));
  w.text(run ? std::string() : run.message());
  if (!run)
    return out;
  w.put(r.cycles), w.put(r.instructions), w.put(r.messages), w.put(r.rounds);
  w.put(r.batchedTrips);
  w.put(d.linkLoad);
  for (const Region &reg : m.regions) {
    uint64_t busy = 0;
    for (uint64_t i = 0; i < uint64_t(reg.w) * reg.h; ++i)
      busy += pes[reg.firstPe + i].busy;
    w.put(busy);
  }
  w.put(uint64_t(r.warnings.size()));
  for (const std::string &warning : r.warnings)
    w.text(warning);
  // The traces of the kernels whose first PE is here; the next-token
  // words written here.
  for (const Region &reg : m.regions) {
    const std::vector<TraceEvent> *trace =
        d.owns(m, reg.firstPe) ? pes[reg.firstPe].trace.get() : nullptr;
    w.put(uint64_t(trace ? trace->size() : 0));
    if (trace)
      for (const TraceEvent &e : *trace)
        w.put(e);
  }
  uint64_t stores = 0;
  for (const StoreTime &t : r.nextTokenStores)
    stores += t.stored;
  w.put(stores);
  for (size_t i = 0; i < r.nextTokenStores.size(); ++i)
    if (r.nextTokenStores[i].stored)
      w.put(uint64_t(i)), w.put(r.nextTokenStores[i]);
  ownedPieces(m, d.partition(), d.rank(), [&](const PieceRef &p) {
    w.words(pes[p.pe].sram + p.offset / 4, size_t(p.rows) * p.count);
  });
  return out;
}

Status mergeResults(const Model &m, PeStates &pes, const Distributed &d,
                    const std::vector<std::vector<uint8_t>> &results, RunReport &r) {
  // The first process's own failure is the run's; one stopped by it says less.
  std::string stopped;
  for (const std::vector<uint8_t> &result : results) {
    ByteReader in{result.data()};
    uint8_t ending = in.get<uint8_t>();
    if (ending == Failed)
      return Status::failure(in.text());
    if (ending == Stopped && stopped.empty())
      stopped = in.text();
  }
  if (!stopped.empty())
    return Status::failure(stopped);
  LinkLoad load = d.linkLoad;
  for (unsigned rank = 1; rank < results.size(); ++rank) {
    ByteReader in{results[rank].data()};
    in.get<uint8_t>(), in.text();
    r.cycles = std::max(r.cycles, in.get<uint64_t>());
    r.instructions += in.get<uint64_t>(), r.messages += in.get<uint64_t>();
    r.rounds += in.get<uint64_t>();
    r.batchedTrips += in.get<uint64_t>();
    load.add(in.get<LinkLoad>());
    // A region's busy cycles are a sum over its PEs: its first PE here
    // takes what the other process's PEs of it were busy.
    for (const Region &reg : m.regions)
      pes[reg.firstPe].busy += in.get<uint64_t>();
    for (uint64_t i = 0, n = in.get<uint64_t>(); i < n; ++i)
      r.warnings.push_back(in.text());
    for (const Region &reg : m.regions)
      for (uint64_t i = 0, n = in.get<uint64_t>(); i < n; ++i)
        pes[reg.firstPe].trace->push_back(in.get<TraceEvent>());
    for (uint64_t i = 0, n = in.get<uint64_t>(); i < n; ++i) {
      uint64_t element = in.get<uint64_t>();
      r.nextTokenStores.at(element) = in.get<StoreTime>();
    }
    ownedPieces(m, d.partition(), rank, [&](const PieceRef &p) {
      in.words(pes[p.pe].sram + p.offset / 4, size_t(p.rows) * p.count);
    });
  }
  load.report(r.cycles, r);
  return Status::success();
}

} // namespace

Status gatherResults(const Model &m, PeStates &pes, Distributed &d, const Status &run,
                     RunReport &r) {
  std::vector<std::vector<uint8_t>> results = d.finish(packResult(m, pes, d, run, r));
  if (d.rank() != 0) {
    ByteReader in{results[0].data()};
    bool ran = in.get<uint8_t>();
    std::string failure = in.text();
    return ran ? Status::success() : Status::failure(failure);
  }
  Status s = mergeResults(m, pes, d, results, r);
  std::vector<uint8_t> outcome;
  ByteWriter w{outcome};
  w.put(uint8_t(bool(s)));
  w.text(s ? std::string() : s.message());
  d.conclude(outcome);
  return s;
}

} // namespace wsc::runtime::detail

namespace wsc::runtime {

std::string agreeToStart(Channel &channel, const std::string &error) {
  // The next message from process 0 (from any when `anyone`); what others
  // send process k > 0 meanwhile is their run's.
  auto next = [&](bool anyone, unsigned &from) {
    std::vector<uint8_t> bytes;
    for (;;) {
      if (!channel.receive(from, bytes))
        channel.pause();
      else if (anyone || from == 0)
        return std::string(bytes.begin(), bytes.end());
      else
        channel.nextRun.emplace_back(from, std::move(bytes));
    }
  };
  unsigned from;
  if (channel.rank() != 0) {
    channel.send(0, std::vector<uint8_t>(error.begin(), error.end()));
    return next(false, from);
  }
  // No process starts before the verdict: until then each sends process 0
  // its failure alone.
  std::vector<std::string> errors(channel.size());
  errors[0] = error;
  for (unsigned n = 1; n < channel.size(); ++n) {
    std::string e = next(true, from);
    errors[from] = std::move(e);
  }
  std::string first;
  for (unsigned r = 0; r < errors.size() && first.empty(); ++r)
    if (!errors[r].empty())
      first = r ? fmt::format("process {} of {}: {}", r, errors.size(), errors[r]) : errors[r];
  for (unsigned r = 1; r < channel.size(); ++r)
    channel.send(r, std::vector<uint8_t>(first.begin(), first.end()));
  return first;
}

} // namespace wsc::runtime
