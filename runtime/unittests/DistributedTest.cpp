// A run split over processes (Distributed.h), with the processes as threads
// joined by queues: the same outputs and cycles as one process, by wafers
// and by bands of rows, and faults and deadlocks that stop every process.
#include "Distributed.h"
#include "TestPrograms.h"

#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <thread>

using namespace wsc::runtime;
using namespace wsc::runtime::test;
namespace format = wsc::format;

namespace {

/// The mailboxes of K processes that are threads of this one.
struct Hub {
  std::mutex mu;
  std::vector<std::deque<std::pair<unsigned, std::vector<uint8_t>>>> inbox;
};

class QueueChannel : public Channel {
public:
  /// `latestFirst`: a receive takes the message of the highest sender with
  /// one, as MPI may (it keeps the order of each sender's messages only).
  QueueChannel(Hub &hub, unsigned rank, bool latestFirst = false)
      : hub_(hub), rank_(rank), latestFirst_(latestFirst) {}
  unsigned rank() const override { return rank_; }
  unsigned size() const override { return unsigned(hub_.inbox.size()); }
  void send(unsigned to, std::vector<uint8_t> bytes) override {
    std::lock_guard<std::mutex> lock(hub_.mu);
    hub_.inbox[to].emplace_back(rank_, std::move(bytes));
  }
  bool receive(unsigned &from, std::vector<uint8_t> &bytes) override {
    std::lock_guard<std::mutex> lock(hub_.mu);
    auto &box = hub_.inbox[rank_];
    if (box.empty())
      return false;
    auto next = box.begin();
    if (latestFirst_)
      for (auto it = box.begin(); it != box.end(); ++it)
        if (it->first > next->first)
          next = it;
    from = next->first;
    bytes = std::move(next->second);
    box.erase(next);
    return true;
  }
  void pause() override { std::this_thread::yield(); }

private:
  Hub &hub_;
  unsigned rank_;
  bool latestFirst_;
};

/// Runs `p` split over `ranks` processes, `runs` times in a row: process
/// 0's last result, and every process's last status in `statuses`.
RunResult runSplit(const format::Program &p, const std::map<std::string, HostArray> &inputs,
                   unsigned ranks, std::vector<Status> *statuses = nullptr, RunOptions options = {},
                   unsigned runs = 1, bool latestFirst = false) {
  Hub hub;
  hub.inbox.resize(ranks);
  std::vector<std::unique_ptr<QueueChannel>> channels;
  std::vector<std::unique_ptr<Emulator>> emulators;
  for (unsigned r = 0; r < ranks; ++r) {
    channels.push_back(std::make_unique<QueueChannel>(hub, r, latestFirst));
    Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
    if (!e)
      return RunResult{e.status(), {}, {}};
    emulators.push_back(e.take());
    for (const auto &[name, value] : inputs)
      if (Status s = emulators.back()->setInput(name, value); !s)
        return RunResult{s, {}, {}};
  }
  std::vector<Status> status(ranks, Status::success());
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < ranks; ++r)
    threads.emplace_back([&, r, options]() mutable {
      options.channel = channels[r].get();
      for (unsigned run = 0; run < runs; ++run)
        status[r] = emulators[r]->run(options);
    });
  for (std::thread &t : threads)
    t.join();
  if (statuses)
    *statuses = status;
  RunResult res{status[0], {}, emulators[0]->report()};
  if (status[0])
    for (const format::HostTensor &t : p.outputs())
      res.outputs[t.name()] = *emulators[0]->output(t.name());
  return res;
}

HostArray vec(std::vector<float> v) {
  int64_t n = int64_t(v.size());
  return HostArray::floats({n}, std::move(v));
}

/// A column of `h` PEs that passes a running sum south: PE y adds its
/// input word to the sum from the north and sends it on; the last PE holds
/// it. Every row is a band of its own once split.
format::Program southChain(uint32_t h) {
  format::Program p = makeProgram(2, h);
  format::Region *r = addRegion(p, "chain", 0, 0, 1, h);
  *r->add_code() = only(recv(1, 4, 1), 0, 0, 1, h - 1);
  *r->add_code() = only(ins(format::ADD, {0, 0, 4}, 1), 0, 0, 1, h - 1);
  *r->add_code() = only(send(1, 0, 1), 0, 0, 0, h - 2);
  for (uint32_t y = 0; y < h; ++y) {
    if (y + 1 < h)
      addRoute(p, 0, y, 1, format::RAMP, {format::SOUTH});
    if (y > 0)
      addRoute(p, 0, y, 1, format::NORTH, {format::RAMP});
  }
  format::HostTensor *x = addTensor(p, false, "x", format::F32, {int64_t(h)});
  for (uint32_t y = 0; y < h; ++y)
    addPiece(x, 0, y, 0, y, 1);
  addPiece(addTensor(p, true, "sum", format::F32, {1}), 0, h - 1, 0, 0, 1);
  return p;
}

TEST(Distributed, TwoWafersOnTwoProcesses) {
  format::Program p = twoWafersOverALink();
  addPiece(addTensor(p, false, "x", format::F32, {4}), 0, 0, 0, 0, 4, 1, 0, 0);
  addPiece(addTensor(p, true, "y", format::F32, {4}), 1, 0, 0, 0, 4, 1, 0, 1);
  RunResult one = runProgram(p, {{"x", vec({1, 2, 3, 4})}});
  RunResult two = runSplit(p, {{"x", vec({1, 2, 3, 4})}}, 2);
  ASSERT_TRUE(two.status.ok()) << two.status.message();
  EXPECT_EQ(two.out("y"), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(two.report.cycles, one.report.cycles);
  EXPECT_EQ(two.report.instructions, one.report.instructions);
  EXPECT_EQ(two.report.wavelets, one.report.wavelets);
  EXPECT_EQ(two.report.linksUsed, one.report.linksUsed);
  EXPECT_DOUBLE_EQ(two.report.linkMaxUtilization, one.report.linkMaxUtilization);
  ASSERT_EQ(two.report.kernels.size(), 2u);
  EXPECT_EQ(two.report.kernels[1].busyCycles, one.report.kernels[1].busyCycles);
}

TEST(Distributed, BandsOfRowsGiveTheSameSumAndCycles) {
  format::Program p = southChain(6);
  HostArray x = vec({1, 2, 3, 4, 5, 6});
  RunResult one = runProgram(p, {{"x", x}});
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  EXPECT_EQ(one.out("sum"), (std::vector<float>{21}));
  for (unsigned ranks : {2u, 3u, 6u}) {
    RunResult split = runSplit(p, {{"x", x}}, ranks);
    ASSERT_TRUE(split.status.ok()) << ranks << ": " << split.status.message();
    EXPECT_EQ(split.out("sum"), (std::vector<float>{21})) << ranks;
    EXPECT_EQ(split.report.cycles, one.report.cycles) << ranks;
    EXPECT_EQ(split.report.instructions, one.report.instructions) << ranks;
    EXPECT_EQ(split.report.wavelets, one.report.wavelets) << ranks;
    EXPECT_EQ(split.report.kernels[0].busyCycles, one.report.kernels[0].busyCycles) << ranks;
  }
}

TEST(Distributed, RunsInARowKeepTheirMessagesApart) {
  // A process that has ended a run may send the next run's messages before
  // another has heard the end of this one from a third; taken in any order,
  // they wait for the next run.
  // Here the last process faults at once, and its Fault, sent to all, may
  // reach the second before the first's end of the run before.
  format::Program p = southChain(4);
  auto *code = p.mutable_wafers(0)->mutable_regions(0)->mutable_code();
  *code->Add() = only(ins(format::COPY, {0, 8192}, 1), 0, 0, 3, 3);
  for (int i = code->size() - 1; i > 0; --i)
    code->SwapElements(i, i - 1);
  HostArray x = vec({1, 2, 3, 4});
  RunResult one = runProgram(p, {{"x", x}});
  ASSERT_FALSE(one.status.ok());
  for (int round = 0; round < 50; ++round) {
    std::vector<Status> statuses;
    runSplit(p, {{"x", x}}, 4, &statuses, {}, 4, true);
    for (const Status &s : statuses)
      ASSERT_EQ(s.message(), one.status.message()) << round;
  }
}

TEST(Distributed, PartitionCutsBetweenWafersElseIntoBands) {
  format::Program three = makeProgram(2, 4, 8, 3);
  for (uint32_t w = 0; w < 3; ++w)
    *addRegion(three, "k" + std::to_string(w), 0, 0, 2, 4, w)->add_code() = ins(format::NOP, {});
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(three);
  ASSERT_TRUE(e.ok()) << e.error();
  Partition byWafer = detail::partitionRows(*detail::buildModel(three), 2);
  // Wafers 0 and 1's rows, then wafer 2's: whole wafers.
  EXPECT_EQ(byWafer.rankOfRow, (std::vector<uint16_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
  format::Program one = makeProgram(2, 6);
  *addRegion(one, "top", 0, 0, 2, 2)->add_code() = ins(format::NOP, {});
  *addRegion(one, "bottom", 0, 2, 1, 4)->add_code() = ins(format::NOP, {});
  Partition bands = detail::partitionRows(*detail::buildModel(one), 2);
  // Rows of 2, 2, 1, 1, 1, 1 PEs: the cut falls at the middle PE.
  EXPECT_EQ(bands.rankOfRow, (std::vector<uint16_t>{0, 0, 1, 1, 1, 1}));
}

TEST(Distributed, AFaultOnOneProcessStopsThemAll) {
  format::Program p = southChain(4);
  // The last PE reads past its SRAM once the sum arrives.
  *p.mutable_wafers(0)->mutable_regions(0)->add_code() =
      only(ins(format::COPY, {0, 8192}, 1), 0, 0, 3, 3);
  RunResult one = runProgram(p, {{"x", vec({1, 2, 3, 4})}});
  ASSERT_FALSE(one.status.ok());
  std::vector<Status> statuses;
  RunResult split = runSplit(p, {{"x", vec({1, 2, 3, 4})}}, 2, &statuses);
  ASSERT_FALSE(split.status.ok());
  EXPECT_EQ(split.status.message(), one.status.message());
  EXPECT_NE(split.status.message().find("SRAM overflow"), std::string::npos);
  for (const Status &s : statuses)
    EXPECT_EQ(s.message(), one.status.message());
}

/// Each process's verdict from agreeToStart, run on threads over `hub`.
std::vector<std::string> agreeOn(Hub &hub, std::vector<std::unique_ptr<QueueChannel>> &channels,
                                 const std::vector<std::string> &errors) {
  std::vector<std::string> verdicts(channels.size());
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < channels.size(); ++r)
    threads.emplace_back([&, r] { verdicts[r] = agreeToStart(*channels[r], errors[r]); });
  for (std::thread &t : threads)
    t.join();
  return verdicts;
}

TEST(Distributed, AProcessStillWaitingForTheVerdictKeepsWalksForTheRun) {
  Hub hub;
  hub.inbox.resize(3);
  std::vector<std::unique_ptr<QueueChannel>> channels;
  for (unsigned r = 0; r < 3; ++r)
    channels.push_back(std::make_unique<QueueChannel>(hub, r));
  // Process 1 had its verdict, started and sent process 2 a walk before
  // process 2 read its own.
  const std::vector<uint8_t> walk{0, 7, 7};
  channels[1]->send(2, walk);
  EXPECT_EQ(agreeOn(hub, channels, {"", "", ""}), std::vector<std::string>(3, ""));
  ASSERT_EQ(channels[2]->nextRun.size(), 1u);
  EXPECT_EQ(channels[2]->nextRun.front().first, 1u);
  EXPECT_EQ(channels[2]->nextRun.front().second, walk);
  EXPECT_TRUE(channels[0]->nextRun.empty());
  EXPECT_TRUE(channels[1]->nextRun.empty());
  for (auto &box : hub.inbox)
    EXPECT_TRUE(box.empty());
}

TEST(Distributed, TheFirstFailureBeforeARunIsEveryProcesss) {
  Hub hub;
  hub.inbox.resize(3);
  std::vector<std::unique_ptr<QueueChannel>> channels;
  for (unsigned r = 0; r < 3; ++r)
    channels.push_back(std::make_unique<QueueChannel>(hub, r, /*latestFirst=*/true));
  std::vector<std::string> verdicts = agreeOn(hub, channels, {"", "bad input", "worse"});
  EXPECT_EQ(verdicts, std::vector<std::string>(3, "process 1 of 3: bad input"));
}

TEST(Distributed, ADeadlockAcrossProcessesIsFound) {
  format::Program p = southChain(4);
  // PE 0 sends nothing: every PE below it waits for ever.
  p.mutable_wafers(0)->mutable_regions(0)->mutable_code()->RemoveLast();
  std::vector<Status> statuses;
  RunResult split = runSplit(p, {{"x", vec({1, 2, 3, 4})}}, 2, &statuses);
  ASSERT_FALSE(split.status.ok());
  EXPECT_EQ(split.status.message().rfind("deadlock", 0), 0u) << split.status.message();
  for (const Status &s : statuses)
    EXPECT_FALSE(s.ok());
}

TEST(Distributed, TracesComeFromEveryProcess) {
  format::Program p = southChain(4);
  // Two kernels, one a process: the trace of each kernel's first PE.
  format::Region *top = p.mutable_wafers(0)->mutable_regions(0);
  top->set_h(2);
  top->clear_code();
  *top->add_code() = only(recv(1, 4, 1), 0, 0, 1, 1);
  *top->add_code() = only(ins(format::ADD, {0, 0, 4}, 1), 0, 0, 1, 1);
  *top->add_code() = send(1, 0, 1);
  format::Region *bottom = addRegion(p, "bottom", 0, 2, 1, 2);
  *bottom->add_code() = recv(1, 4, 1);
  *bottom->add_code() = ins(format::ADD, {0, 0, 4}, 1);
  *bottom->add_code() = only(send(1, 0, 1), 0, 0, 0, 0);
  HostArray x = vec({1, 2, 3, 4});
  RunResult one = runProgram(p, {{"x", x}}, 1, /*trace=*/true);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  RunOptions options;
  options.trace = true;
  RunResult two = runSplit(p, {{"x", x}}, 2, nullptr, options);
  ASSERT_TRUE(two.status.ok()) << two.status.message();
  ASSERT_EQ(two.report.trace.size(), one.report.trace.size());
  ASSERT_TRUE(one.report.trace.back().kernel == 1); // the bottom kernel's, on process 1
  for (size_t i = 0; i < one.report.trace.size(); ++i) {
    EXPECT_EQ(two.report.trace[i].kernel, one.report.trace[i].kernel) << i;
    EXPECT_EQ(two.report.trace[i].op, one.report.trace[i].op) << i;
    EXPECT_EQ(two.report.trace[i].start, one.report.trace[i].start) << i;
    EXPECT_EQ(two.report.trace[i].duration, one.report.trace[i].duration) << i;
  }
  EXPECT_EQ(two.out("sum"), one.out("sum"));
}

TEST(Distributed, StopsAfterATokenPickedOnAnotherProcess) {
  format::Program p = relay(/*lockstep=*/true, /*south=*/true);
  HostArray ids = HostArray::integers(DType::I64, {2, 4}, {5, 6, 7, -1, 9, -1, -1, -1});
  RunResult all = runProgram(p, {{"ids", ids}});
  ASSERT_TRUE(all.status.ok()) << all.status.message();
  RunResult whole = runSplit(p, {{"ids", ids}}, 2);
  ASSERT_TRUE(whole.status.ok()) << whole.status.message();
  EXPECT_EQ(whole.report.cycles, all.report.cycles);
  ASSERT_EQ(whole.report.nextTokenStores.size(), all.report.nextTokenStores.size());
  for (size_t i = 0; i < all.report.nextTokenStores.size(); ++i) {
    EXPECT_TRUE(whole.report.nextTokenStores[i].stored) << i;
    EXPECT_EQ(whole.report.nextTokenStores[i].cycle, all.report.nextTokenStores[i].cycle) << i;
  }
  // Stopped after element 4, which process 1 writes: process 0 stops too.
  RunResult one = runProgram(p, {{"ids", ids}}, 1, false, /*stopAfterToken=*/4);
  RunOptions options;
  options.stopAfterToken = 4;
  RunResult two = runSplit(p, {{"ids", ids}}, 2, nullptr, options);
  ASSERT_TRUE(two.status.ok()) << two.status.message();
  EXPECT_EQ(two.report.cycles, one.report.cycles);
  EXPECT_EQ(two.report.cycles, all.report.nextTokenStores[4].cycle);
  EXPECT_EQ(two.report.tokens, 5u);
  for (size_t i = 0; i <= 4; ++i)
    EXPECT_EQ(two.outputs.at("next_token").ints[i], one.outputs.at("next_token").ints[i]) << i;
}

} // namespace
