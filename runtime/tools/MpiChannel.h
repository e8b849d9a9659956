// The Channel of a run that mpirun started: one process per MPI rank, messages
// over MPI_COMM_WORLD. Only wsc-run builds it (the runtime library never
// links MPI), and only the main thread calls it.
#ifndef WSC_RUNTIME_TOOLS_MPICHANNEL_H
#define WSC_RUNTIME_TOOLS_MPICHANNEL_H

#include "wsc/runtime/Distributed.h"

#include <memory>

namespace wsc::runtime {

class MpiChannel : public Channel {
public:
  /// Null when mpirun did not start this process (then MPI is never
  /// initialized, so a plain wsc-run needs no MPI at all); else initializes
  /// MPI, which may take its own arguments out of argc/argv. A run of one
  /// rank still gets a channel: the caller decides what to do with it.
  static std::unique_ptr<MpiChannel> launchedByMpirun(int &argc, char **&argv);

  /// Waits for this rank's sends to complete, then finalizes MPI.
  ~MpiChannel() override;
  MpiChannel(const MpiChannel &) = delete;
  MpiChannel &operator=(const MpiChannel &) = delete;

  unsigned rank() const override { return rank_; }
  unsigned size() const override { return size_; }
  void send(unsigned to, std::vector<uint8_t> bytes) override;
  bool receive(unsigned &from, std::vector<uint8_t> &bytes) override;
  void pause() override;

private:
  /// The sends in flight and their buffers, which MPI reads until the sends
  /// complete. Defined in the .cpp so that this header needs no mpi.h.
  struct Pending;

  MpiChannel(unsigned rank, unsigned size);
  /// Frees the sends that have completed.
  void reapSends();

  unsigned rank_, size_;
  std::unique_ptr<Pending> pending_;
};

} // namespace wsc::runtime

#endif
