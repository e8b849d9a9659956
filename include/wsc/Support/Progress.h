//===- Progress.h - what a long compile is doing, on stderr -----*- C++ -*-===//
//
// A compile that runs past a couple of seconds says on stderr which stage,
// which try of the search and which routing round it is in: rewritten in
// place with a bar when stderr is a terminal, else a line per stage (rounds
// at most once a second). Silent until a tool enables it, so library users
// and tests see nothing.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_PROGRESS_H
#define WSC_SUPPORT_PROGRESS_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

#include <cstdint>

namespace wsc::progress {

/// Starts the clock and shows progress from `afterSeconds` on.
void enable(double afterSeconds = 2.0);
/// The search's try `index` of `count` (0 of 0: no search), and what it is.
void setTry(int64_t index, int64_t count, llvm::StringRef what);
/// The stage now running (lower, place, route, ...).
void setStage(llvm::StringRef stage);
/// A round of the stage (routing's rip-up rounds).
void setRound(int64_t round);
/// Clears the line of a terminal display.
void finish();
/// Clears it before each diagnostic the context prints, so that a message
/// never lands on the progress line.
void clearBeforeDiagnostics(mlir::MLIRContext *context);
/// Names each pass as the stage when it starts.
std::unique_ptr<mlir::PassInstrumentation> createStageInstrumentation();

} // namespace wsc::progress

#endif // WSC_SUPPORT_PROGRESS_H
