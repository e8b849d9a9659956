// The protocol of a run split over processes: walks passed between them,
// the end of the run (every process idle and nothing in flight), a fault
// that stops them all, and each process's result gathered on process 0.
#ifndef WSC_RUNTIME_LIB_DISTRIBUTED_H
#define WSC_RUNTIME_LIB_DISTRIBUTED_H

#include "Machine.h"
#include "Model.h"
#include "wsc/runtime/Distributed.h"
#include "wsc/runtime/Emulator.h"

#include <cstring>
#include <deque>
#include <functional>

namespace wsc::runtime::detail {

/// Fields written as their bytes, for the messages between processes.
struct ByteWriter {
  std::vector<uint8_t> &out;
  template <typename T> void put(T v) {
    size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void words(const uint32_t *w, size_t n) {
    size_t at = out.size();
    out.resize(at + n * 4);
    std::memcpy(out.data() + at, w, n * 4);
  }
  void text(const std::string &s) {
    put(uint64_t(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
};

/// Reads what a ByteWriter wrote, in the same order.
struct ByteReader {
  const uint8_t *in;
  size_t at = 0;
  template <typename T> T get() {
    T v;
    std::memcpy(&v, in + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  void words(uint32_t *w, size_t n) {
    std::memcpy(w, in + at, n * 4);
    at += n * 4;
  }
  std::string text() {
    size_t n = size_t(get<uint64_t>());
    std::string s(reinterpret_cast<const char *>(in + at), n);
    at += n;
    return s;
  }
};

/// The partition of `m` over `ranks` processes (see Partition).
Partition partitionRows(const Model &m, unsigned ranks);

/// Whether process `rank` emulates PE `pe`.
bool ownsPe(const Model &m, const Partition &p, unsigned rank, uint64_t pe);

class Distributed {
public:
  Distributed(Channel &channel, Partition partition);
  unsigned rank() const { return channel_.rank(); }
  unsigned size() const { return channel_.size(); }
  const Partition &partition() const { return partition_; }
  bool owns(const Model &m, uint64_t pe) const { return ownsPe(m, partition_, rank(), pe); }
  /// What this process's links carried in the run.
  LinkLoad linkLoad;

  /// Walks for process `to` (Fabric::receive's input).
  void send(unsigned to, std::vector<uint8_t> bytes);
  enum class State { Running, Done, Failed };
  /// Takes what has arrived: walks go to `take` while the run goes on.
  using Walks = std::function<Status(const uint8_t *, size_t)>;
  State poll(const Walks &take);
  /// This process has nothing to run and has sent all its walks: it
  /// answers the end-of-run probes (process 0 sends them) and waits a
  /// little for messages.
  State idle();
  /// This process failed: every other stops.
  void fail(const std::string &message);
  /// The run ends here, without a failure (RunOptions::stopAfterToken):
  /// every process stops where it is.
  void halt();
  bool halted() const { return halted_; }
  /// Once poll() said Failed: the failure, and whether it was this process's.
  const std::string &failure() const { return failure_; }
  bool ownFailure() const { return ownFailure_; }
  /// Whether this process stopped for another's failure.
  bool stoppedByAnother() const { return state_ == State::Failed && !ownFailure_; }

  /// After the run, on every process: sends `mine` to process 0. There it
  /// returns every process's result by rank, and conclude() must follow;
  /// elsewhere it returns process 0's conclusion alone.
  std::vector<std::vector<uint8_t>> finish(std::vector<uint8_t> mine);
  /// Process 0: tells the others what the run concluded.
  void conclude(const std::vector<uint8_t> &outcome);

private:
  enum Kind : uint8_t { Walk, Probe, Answer, End, Fault, Finished, Halt };
  void post(unsigned to, Kind kind, const std::vector<uint8_t> &payload);
  /// The next message of this run: first those the run before took for it.
  bool receive(unsigned &from, std::vector<uint8_t> &bytes);
  void take(unsigned from, const std::vector<uint8_t> &bytes, const Walks &walks);
  void probe();

  Channel &channel_;
  Partition partition_;
  State state_ = State::Running;
  std::string failure_;
  bool ownFailure_ = false, halted_ = false;
  uint64_t sent_ = 0, received_ = 0; ///< walk messages
  uint64_t askedWave_ = 0;           ///< a probe to answer once idle (0: none)
  // Process 0's probe waves: the run has ended when two waves in a row
  // found every process idle with the same counts, and as many walk
  // messages received as sent.
  uint64_t wave_ = 0;
  bool waveOpen_ = false;
  std::vector<std::pair<uint64_t, uint64_t>> answers_, lastAnswers_;
  std::vector<bool> answered_;
  std::vector<std::vector<uint8_t>> finished_;
  std::vector<bool> hasFinished_;
  std::deque<std::pair<unsigned, std::vector<uint8_t>>> carriedOver_;
};

/// After a run's schedule on every process: gathers the processes'
/// results on process 0, which gets the run's status (the first process's
/// own failure, else success) and, on success, the others' counts added to
/// `r` and their output words and busy cycles put into their PEs there. The
/// other processes get that status alone.
Status gatherResults(const Model &m, PeStates &pes, Distributed &d, const Status &run,
                     RunReport &r);

} // namespace wsc::runtime::detail

#endif
