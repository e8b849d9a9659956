// A run split over processes (MPI ranks): each process emulates the PEs of
// its part of the program, and a message that leaves its part travels to
// the process that owns the next hop. docs/runtime.md, "Distributed runs".
#ifndef WSC_RUNTIME_DISTRIBUTED_H
#define WSC_RUNTIME_DISTRIBUTED_H

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace wsc::runtime {

/// Byte messages between the processes of a run. Messages from one process
/// to another arrive in the order they were sent. wsc-run implements it
/// over MPI; the unit tests over queues between threads.
class Channel {
public:
  virtual ~Channel() = default;
  virtual unsigned rank() const = 0;
  virtual unsigned size() const = 0;
  /// Sends without waiting for the receiver.
  virtual void send(unsigned to, std::vector<uint8_t> bytes) = 0;
  /// A message that has arrived, without waiting: false when none has.
  virtual bool receive(unsigned &from, std::vector<uint8_t> &bytes) = 0;
  /// Waits a little for a message (an idle process should not spin).
  virtual void pause() = 0;

  /// Messages a run took that belong to the next run over this channel
  /// (their sender had ended the run before it sent them; messages from
  /// several senders may come in any order): that run takes them first.
  std::deque<std::pair<unsigned, std::vector<uint8_t>>> nextRun;
};

/// Every process's verdict on what came before a run ("" when all went
/// well): the first failure by rank is everyone's, so that no process starts
/// a run that another has given up (it would wait for it for ever). Process
/// 0 gathers the failures and sends the verdict; a process starts as soon as
/// it has it, so one still waiting may first get the walks of one that has
/// started: those are kept for the run in `nextRun`.
std::string agreeToStart(Channel &channel, const std::string &error);

/// Which process emulates which PEs: the rows of every wafer in order
/// (wafer 0's rows, then wafer 1's, ...) cut into `ranks` runs of about
/// equal PEs in use. When there are at least as many wafers as ranks the
/// cuts fall between wafers, else a wafer is cut into bands of rows.
struct Partition {
  unsigned ranks = 1;
  /// Per row of the grid (wafer * height + y): the rank that owns it.
  std::vector<uint16_t> rankOfRow;
};

} // namespace wsc::runtime

#endif
