// MpiChannel: Channel over MPI point-to-point messages. Every message has the
// same tag on MPI_COMM_WORLD, so MPI's non-overtaking rule keeps the messages
// from one rank to another in the order they were sent, as Channel promises.
// Errors abort the run (MPI_ERRORS_ARE_FATAL, the default on MPI_COMM_WORLD).
#include "MpiChannel.h"

// Only MPI's C API: the deprecated C++ bindings do not compile cleanly under -Wextra.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace wsc::runtime {
namespace {

constexpr int kTag = 0x57c;

// Set in every process a launcher starts: Open MPI's mpirun, PMIx launchers
// (srun --mpi=pmix) and MPICH's Hydra / PMI-1. Checked before MPI_Init, so
// that a plain run never initializes MPI (which would make it a singleton
// that spawns an orted).
bool startedByLauncher() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(var))
      return true;
  return false;
}

} // namespace

struct MpiChannel::Pending {
  // One array of requests, so that one MPI_Testsome checks them all.
  std::vector<MPI_Request> requests;
  // buffers[i] is the data of requests[i]. Moving a vector keeps its data in
  // place, so the buffers stay put while this vector grows.
  std::vector<std::vector<uint8_t>> buffers;
  // MPI_Testsome's output, kept to save an allocation per call.
  std::vector<int> completedIndices;
};

std::unique_ptr<MpiChannel> MpiChannel::launchedByMpirun(int &argc, char **&argv) {
  if (!startedByLauncher())
    return nullptr;
  // Only the main thread calls MPI; the emulator's worker threads never do.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("MPI does not support MPI_THREAD_FUNNELED");
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiChannel>(new MpiChannel(rank, size));
}

MpiChannel::MpiChannel(unsigned rank, unsigned size)
    : rank_(rank), size_(size), pending_(std::make_unique<Pending>()) {}

MpiChannel::~MpiChannel() {
  // A buffer must outlive its send, and MPI_Finalize wants none in flight.
  MPI_Waitall(static_cast<int>(pending_->requests.size()), pending_->requests.data(),
              MPI_STATUSES_IGNORE);
  pending_.reset();
  MPI_Finalize();
}

void MpiChannel::send(unsigned to, std::vector<uint8_t> bytes) {
  reapSends();
  // MPI counts are ints.
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw std::length_error("MpiChannel: message of " + std::to_string(bytes.size()) +
                            " bytes is too large");
  std::vector<uint8_t> &buffer = pending_->buffers.emplace_back(std::move(bytes));
  MPI_Request &request = pending_->requests.emplace_back(MPI_REQUEST_NULL);
  MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, static_cast<int>(to), kTag,
            MPI_COMM_WORLD, &request);
}

bool MpiChannel::receive(unsigned &from, std::vector<uint8_t> &bytes) {
  reapSends();
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &status);
  if (!flag)
    return false;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  bytes.resize(count);
  // Only this thread receives, so the receive from the probed source gets the
  // probed message (the first from that source, by non-overtaking).
  MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, kTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  from = static_cast<unsigned>(status.MPI_SOURCE);
  return true;
}

void MpiChannel::pause() {
  // Sleeping rather than spinning gives the core up to another rank when
  // mpirun runs more ranks than the host has cores.
  std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void MpiChannel::reapSends() {
  std::vector<MPI_Request> &requests = pending_->requests;
  std::vector<std::vector<uint8_t>> &buffers = pending_->buffers;
  if (requests.empty())
    return;
  // One call for all of them: every MPI_Test would run MPI's progress engine
  // once, and thousands of sends can be in flight.
  int completed = 0;
  pending_->completedIndices.resize(requests.size());
  MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &completed,
               pending_->completedIndices.data(), MPI_STATUSES_IGNORE);
  if (completed <= 0) // 0, or MPI_UNDEFINED when no request is active
    return;
  // Completed requests are now MPI_REQUEST_NULL: drop them and their buffers.
  size_t kept = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == MPI_REQUEST_NULL)
      continue;
    if (kept != i) { // a vector moved onto itself would lose its data
      requests[kept] = requests[i];
      buffers[kept] = std::move(buffers[i]);
    }
    ++kept;
  }
  requests.resize(kept);
  buffers.resize(kept);
}

} // namespace wsc::runtime
