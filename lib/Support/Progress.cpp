//===- Progress.cpp - what a long compile is doing, on stderr -------------===//
#include "wsc/Support/Progress.h"

#include "mlir/Pass/Pass.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>
#include <string>

using namespace wsc;
using Clock = std::chrono::steady_clock;

namespace {
llvm::cl::opt<double> clProgressAfter(
    "wsc-progress-after", llvm::cl::Hidden, llvm::cl::init(-1.0),
    llvm::cl::desc("Show the compile's progress on stderr after this many seconds"));

struct State {
  std::mutex mutex;
  bool enabled = false;
  bool terminal = false;
  double after = 2.0;
  Clock::time_point start, lastRound;
  int64_t tryIndex = 0, tryCount = 0, round = 0;
  std::string what, stage, lastLine;
  bool lineOpen = false; // a terminal line waits to be rewritten or ended

  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
  /// What is running, without the time.
  std::string line() const {
    std::string text;
    if (tryCount > 0) {
      if (terminal) {
        constexpr int64_t kBar = 20;
        int64_t filled = kBar * (tryIndex - 1) / tryCount;
        text += " [" + std::string(filled, '#') + std::string(kBar - filled, '.') + "]";
      }
      text += llvm::formatv(" try {0}/{1} ({2})", tryIndex, tryCount, what).str();
    }
    if (!stage.empty())
      text += ": " + stage;
    if (round > 0)
      text += llvm::formatv(", round {0}", round).str();
    return text;
  }
  void show(bool isRound) {
    if (!enabled || elapsed() < after)
      return;
    if (isRound && !terminal) {
      if (std::chrono::duration<double>(Clock::now() - lastRound).count() < 1.0)
        return;
      lastRound = Clock::now();
    }
    std::string text = line();
    if (text == lastLine && !isRound)
      return; // the same stage of the same try again (the search's lowerings)
    lastLine = text;
    text = llvm::formatv("wsc: {0,6:f1} s", elapsed()).str() + text;
    if (terminal) {
      llvm::errs() << "\r\x1b[K" << text;
      llvm::errs().flush();
      lineOpen = true;
    } else {
      llvm::errs() << text << "\n";
    }
  }
};

State &state() {
  static State s;
  return s;
}
} // namespace

void progress::enable(double afterSeconds) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.enabled = true;
  s.terminal = llvm::errs().is_displayed();
  s.after = clProgressAfter >= 0 ? double(clProgressAfter) : afterSeconds;
  s.start = Clock::now();
  s.lastRound = Clock::time_point(); // the first round shows at once
}

void progress::setTry(int64_t index, int64_t count, llvm::StringRef what) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.tryIndex = index, s.tryCount = count, s.what = what.str(), s.stage.clear(), s.round = 0;
}

void progress::setStage(llvm::StringRef stage) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stage = stage.str(), s.round = 0;
  s.show(false);
}

void progress::setRound(int64_t round) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.round = round;
  s.show(true);
}

void progress::finish() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.lineOpen) {
    llvm::errs() << "\r\x1b[K"; // the terminal's line is cleared, not left behind
    llvm::errs().flush();
  }
  s.lineOpen = false;
  s.lastLine.clear(); // shown again after what interrupted it
}

void progress::clearBeforeDiagnostics(mlir::MLIRContext *context) {
  context->getDiagEngine().registerHandler([](mlir::Diagnostic &) {
    finish();
    return mlir::failure(); // printed by the handler registered before
  });
}

namespace {
struct StageInstrumentation : mlir::PassInstrumentation {
  void runBeforePass(mlir::Pass *pass, mlir::Operation *) override {
    progress::setStage(pass->getArgument());
  }
};
} // namespace

std::unique_ptr<mlir::PassInstrumentation> progress::createStageInstrumentation() {
  return std::make_unique<StageInstrumentation>();
}
