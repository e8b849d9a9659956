// The functional wafer emulator: loads a .wafer Program, runs it PE by PE
// through the router tables, and reports numbers, cycles and faults.
#ifndef WSC_RUNTIME_EMULATOR_H
#define WSC_RUNTIME_EMULATOR_H

#include "wsc/runtime/HostArray.h"
#include "wsc/runtime/Status.h"
#include "wafer.pb.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace wsc::runtime {

/// The only .wafer format version this runtime reads.
constexpr uint32_t kFormatVersion = 2;

/// Parses a .wafer file. Errors are "FILE: not a .wafer program (...)" or
/// "FILE: .wafer format version N, this runtime reads version 2".
Expected<format::Program> loadProgramFile(const std::string &path);

namespace detail {
class SramImageFile;
}
/// A program, and where its SRAM images are when they stayed in its file
/// (null: in `program`).
struct LoadedProgram {
  format::Program program;
  std::shared_ptr<const detail::SramImageFile> images;
};
/// As loadProgramFile, but a regular file's SRAM images (the weights) stay
/// in it: each SramInit's `data` is left empty, and `images` says where it
/// lies, for a run to read as each kernel starts. So the host never holds
/// all the weights at once. The file is checked as loadProgramFile checks
/// it, images and digests included.
Expected<LoadedProgram> loadProgramLeavingImages(const std::string &path);
/// The same for bytes already in memory; `name` stands for FILE.
Expected<format::Program> parseProgram(const std::string &bytes, const std::string &name);

class Channel; // Distributed.h

struct RunOptions {
  /// Worker threads; 0 = all cores. Results do not depend on it.
  unsigned threads = 0;
  /// Record trace events (first PE of every kernel).
  bool trace = false;
  /// Bound on recorded trace events per kernel.
  uint32_t traceEventsPerKernel = 20000;
  /// A PE whose clock, or whose count of executed instructions (LOOP and END
  /// included), passes this faults with "cycle limit". 0 = the defaults:
  /// kEstimateFactor times the program's estimated cycles (at least
  /// kMinEstimatedLimit; kDefaultMaxCycles for a program without an
  /// estimate) and kDefaultMaxInstructions instructions.
  uint64_t maxCycles = 0;
  /// Called as the run writes each word of a generating program's
  /// next_token output: its row-major [B, T] element, the token id and the
  /// cycle the write ended. Calls come from the emulator's threads, possibly
  /// at once; a sequence's tokens come in order.
  std::function<void(uint64_t element, int32_t id, uint64_t cycle)> onNextToken;
  /// With a generating program: the run ends once the next_token output's
  /// element `stopAfterToken` (row-major [B, T]) is written and the PE that
  /// wrote it next waits or yields; the others stop where they are. The
  /// outputs hold what was written by then, the report's cycles end at that
  /// write (its instructions and messages count what ran by then, which can
  /// vary with the threads). -1 runs the program to its end.
  int64_t stopAfterToken = -1;
  /// The bytes the message logs (the words sent and not yet read) may hold
  /// at once; a run that needs more fails with "out of host memory". 0: no
  /// bound. They follow the traffic, so a MemoryPlan does not count them.
  uint64_t messageLogBytes = 0;
  /// The processes of a run split over several (Distributed.h): each
  /// emulates the PEs of its rows on one thread; process 0 gets the
  /// outputs and the report, the others the run's status alone. Null or a
  /// channel of one process: the whole run here. Not with `trace`,
  /// `onNextToken` or `stopAfterToken`.
  Channel *channel = nullptr;
  /// How PEs run. Reference: the interpreter, one instruction at a time.
  /// Region: a PE that enters a loop nest with every word it will receive
  /// there runs each instruction over all the trips (docs/runtime.md,
  /// "The region engine"). Results, cycles and counts are the same.
  enum class Engine { Reference, Region };
  Engine engine = Engine::Region;
};

/// The default limit on a PE's clock: 2^40 cycles, about 1000 s at 1.1 GHz.
constexpr uint64_t kDefaultMaxCycles = uint64_t(1) << 40;
/// A program's estimate of its run's cycles (Program.estimated_cycles) times
/// this is the default limit on a PE's clock: a cost model is not off by
/// that much, a runaway program soon is.
constexpr uint64_t kEstimateFactor = 64;
/// The least default limit from an estimate: 2^24 cycles, under a second
/// of emulation for a small program.
constexpr uint64_t kMinEstimatedLimit = uint64_t(1) << 24;
/// The default limit on a PE's executed instructions, LOOP and END included:
/// 2^32, minutes of emulation; a real program runs far fewer.
constexpr uint64_t kDefaultMaxInstructions = uint64_t(1) << 32;

struct KernelReport {
  std::string name;
  std::string kind;
  uint32_t wafer = 0;
  uint64_t pes = 0;
  /// Sum of instruction costs over the kernel's PEs (waiting excluded).
  uint64_t busyCycles = 0;
  /// busyCycles / (pes * total cycles), in percent.
  double busyPct = 0;
};

/// One executed instruction of a traced PE, in cycles.
struct TraceEvent {
  uint32_t wafer = 0;
  uint32_t kernel = 0; ///< index into RunReport::kernels
  format::Op op = format::NOP;
  uint32_t color = 0;
  uint64_t start = 0;
  uint64_t duration = 0;
  uint64_t wait = 0; ///< part of duration spent waiting for wavelets
  bool async = false; ///< ran on the PE's async engine
};

/// When one word of a watched output was last written during the run.
struct StoreTime {
  bool stored = false; ///< false: no instruction wrote it (the host's word, if any, stayed)
  uint64_t cycle = 0;  ///< the writing PE's clock when the write ended
  uint32_t kernel = 0; ///< index into RunReport::kernels of the writing PE's kernel
};

struct RunReport {
  uint64_t cycles = 0; ///< max PE clock
  double clockHz = 0;
  uint32_t tokens = 0; ///< the positions run: all, or up to RunOptions::stopAfterToken
  double tokensPerS = 0; ///< tokens * clockHz / cycles
  uint32_t wafers = 0;
  uint64_t pesActive = 0; ///< PEs that belong to a kernel
  double wallS = 0;
  uint64_t rounds = 0;       ///< PE visits of the host's scheduler (depends on the threads)
  /// Loop trips the region engine ran batched (RunOptions::Engine): 0 for
  /// the reference engine; the rest ran an instruction at a time.
  uint64_t batchedTrips = 0;
  uint64_t instructions = 0; ///< executed (non-skipped) instructions, LOOP and END included
  uint64_t messages = 0;     ///< SENDs
  uint64_t wavelets = 0;     ///< words times links crossed
  uint64_t linksUsed = 0;    ///< directed PE-to-PE or inter-wafer links that carried data
  double linkMaxUtilization = 0;  ///< busiest link: words / total cycles (of its capacity)
  double linkMeanUtilization = 0; ///< mean over the links used
  /// The most bytes the message logs held at once: the words sent that
  /// some reader had not taken yet (depends on the threads).
  uint64_t messageLogPeakBytes = 0;
  std::vector<KernelReport> kernels;
  std::vector<std::string> warnings;
  std::vector<TraceEvent> trace;
  /// A generating program's next_token output, per element (row-major
  /// [B, T]): when its token was picked. Empty for other programs.
  std::vector<StoreTime> nextTokenStores;
};

/// The host memory a run of a program takes, in bytes, planned from the
/// program before the run (wsc-run --plan): what it holds for the PEs that
/// run a kernel and for the routers' entries, not for the wafer's size.
struct MemoryPlan {
  uint64_t program = 0;  ///< the parsed program (SRAM images, blobs) and its checked model
  /// SRAM images that stayed in the program's file (loadProgramLeavingImages),
  /// not in `program`: a run reads them as each kernel starts.
  uint64_t imagesInFile = 0;
  uint64_t pes = 0;      ///< the run state of every PE that runs a kernel
  /// Their SRAM: at most, as a kernel's words are on the host only while
  /// it runs (and an output's PEs' to the end).
  uint64_t sram = 0;
  uint64_t fabric = 0;   ///< router slots and their origins, receive queues
  uint64_t tensors = 0;  ///< the inputs and outputs on the host
  uint64_t pesInUse = 0;
  /// Not the message logs: they follow the traffic, bounded while the run
  /// goes by RunOptions::messageLogBytes.
  uint64_t total() const { return program + pes + sram + fabric + tensors; }
};

namespace detail {
struct Model;
class Machine;
struct PeState;
struct StoreWatch;
template <typename T> struct HugePageAllocator;
/// Every PE's run-time state, by PE index.
using PeStates = std::vector<PeState, HugePageAllocator<PeState>>;
} // namespace detail

/// Runs one Program; reusable for several runs.
class Emulator {
public:
  /// Validates `program`; every violation is an error naming the region/PE.
  static Expected<std::unique_ptr<Emulator>> create(format::Program program);
  /// The same for a program whose SRAM images stayed in its file: a run
  /// reads each kernel's images as the kernel starts.
  static Expected<std::unique_ptr<Emulator>> create(LoadedProgram loaded);
  ~Emulator();
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  const format::Program &program() const;
  /// Sets an input by name; the shape must match the HostTensor. Float
  /// inputs (F32, F64, F16, BF16) take any float array, stored as f32 words;
  /// integer inputs take any integer array whose values fit both int32 and
  /// the input's type, stored as int32 words; BOOL inputs take only bool arrays.
  Status setInput(const std::string &name, const HostArray &value);
  /// Runs the program: every input must have been set. A fault is an error
  /// whose message names wafer, PE, color and kernel.
  Status run(const RunOptions &options = {});
  /// An output of the last successful run, of the output's dtype: F16 and
  /// BF16 values rounded to their type, F64 the f32 words. An integer word
  /// outside its output's type makes the run an error naming the output.
  Expected<HostArray> output(const std::string &name) const;
  const RunReport &report() const { return report_; }
  /// What a run takes of the host's memory; of a run split over `ranks`
  /// processes (RunOptions::channel), what process `rank` takes of its host's.
  MemoryPlan memoryPlan(unsigned ranks = 1, unsigned rank = 0) const;
  /// Frees the bulk of program() that the emulator holds in another form,
  /// so that the host does not hold it twice: the router entries and
  /// filters (the checked model has them), and the `init` entries of images
  /// that stayed in the file (the emulator knows where they are).
  void releaseProgramBulk();

private:
  Emulator();
  Status runUnguarded(const RunOptions &options);
  /// Watches the SRAM words of a generating program's next_token output
  /// (none for other programs); the PEs that hold them point into the result.
  std::vector<detail::StoreWatch> watchNextToken(detail::PeStates &pes,
                                                 const RunOptions &options) const;
  /// Fills report_.nextTokenStores from the watches.
  void recordNextTokenStores(const std::vector<detail::StoreWatch> &watches);
  /// Copies the SRAM images of region `r`'s PEs that `owned` selects into
  /// their SRAM.
  Status copyImages(detail::PeStates &pes, uint32_t r,
                    const std::function<bool(uint64_t)> &owned) const;
  format::Program program_;
  /// Set when the images stayed in the program's file.
  std::shared_ptr<const detail::SramImageFile> images_;
  std::unique_ptr<detail::Model> model_;
  std::map<std::string, HostArray> inputs_;
  std::map<std::string, HostArray> outputs_;
  RunReport report_;
};

struct GenerationReport; // Generation.h

/// The --report JSON of a run, with a `generation` object when given one.
std::string reportJson(const RunReport &report, const GenerationReport *generation = nullptr);
/// wsc-run --plan --report: {"memory_plan": {part: bytes, ..., "total", "pes_in_use"}}.
std::string memoryPlanJson(const MemoryPlan &plan);
/// Chrome trace-event JSON ({"traceEvents": [...]}) of a traced run, with an
/// instant event per generated token when given a generation.
std::string traceJson(const RunReport &report, const GenerationReport *generation = nullptr);

} // namespace wsc::runtime

#endif
