// The public Emulator: loading, inputs into SRAM, a run, outputs out of SRAM.
#include "wsc/runtime/Emulator.h"

#include "Distributed.h"
#include "FileIO.h"
#include "KernelSram.h"
#include "Machine.h"
#include "SramImages.h"
#include "wsc/format/Digest.h"

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <new>
#include <optional>

#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wsc::runtime {

using detail::Model;
using detail::PeState;
using detail::PeStates;

namespace {

/// A parsed program (`parsed`: whether its bytes parsed), once its version
/// and section digests are checked.
Expected<format::Program> checkParsed(format::Program p, bool parsed, const std::string &name,
                                      const uint64_t *sramInit = nullptr) {
  if (!parsed)
    return Status::failure(
        fmt::format("{}: not a .wafer program (truncated or not a Program protobuf)", name));
  if (p.format_version() == 0)
    return Status::failure(fmt::format("{}: not a .wafer program (no format_version)", name));
  if (p.format_version() != kFormatVersion)
    return Status::failure(fmt::format("{}: .wafer format version {}, this runtime reads version {}",
                                       name, p.format_version(), kFormatVersion));
  // Absent digests (hand-written programs) are not checked.
  if (std::string bad = format::mismatchedSection(p, sramInit); !bad.empty())
    return Status::failure(
        bad == "digests"
            ? fmt::format("{}: corrupt .wafer: its section digests are incomplete", name)
            : fmt::format("{}: corrupt .wafer: the {} section does not match its digest", name,
                          bad));
  return p;
}

Expected<format::Program> parseBytes(const char *bytes, size_t size, const std::string &name) {
  if (size == 0)
    return Status::failure(fmt::format("{}: not a .wafer program (empty file)", name));
  if (size > size_t(INT_MAX))
    return Status::failure(fmt::format("{}: not a .wafer program (larger than 2 GiB)", name));
  format::Program p;
  bool parsed = p.ParseFromArray(bytes, int(size));
  return checkParsed(std::move(p), parsed, name);
}

} // namespace

Expected<format::Program> parseProgram(const std::string &bytes, const std::string &name) {
  return parseBytes(bytes.data(), bytes.size(), name);
}

namespace {

Status cannotRead(const std::string &path, int error) {
  return Status::failure(fmt::format("{}: cannot read: {}", path, std::strerror(error)));
}

/// loadProgramFile's parse of `fd` (openForReading's, with its fstat `st`),
/// which it closes.
Expected<format::Program> loadOpenedProgram(const std::string &path, int fd,
                                            const struct stat &st) {
  // A regular file is parsed as it is read, a block at a time: neither a
  // copy of the file (GPT-2-small's 0.7 GB of fresh memory) nor a mapping
  // of it (as many resident pages, on top of the parsed program) is held.
  // A pipe on standard input (/dev/stdin) is read whole, at most 2 GiB
  // (Protobuf's limit).
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    if (uint64_t(st.st_size) > uint64_t(INT_MAX)) {
      ::close(fd);
      return Status::failure(fmt::format("{}: not a .wafer program (larger than 2 GiB)", path));
    }
    google::protobuf::io::FileInputStream in(fd, 1 << 20);
    in.SetCloseOnDelete(true);
    format::Program p;
    bool parsed = p.ParseFromZeroCopyStream(&in);
    if (in.GetErrno())
      return cannotRead(path, in.GetErrno());
    return checkParsed(std::move(p), parsed, path);
  }
  // Pipes and empty files: read them whole.
  Expected<std::string> bytes = detail::readWhole(path, fd, st, uint64_t(INT_MAX));
  if (!bytes)
    return bytes.error().find("larger than") != std::string::npos
               ? Status::failure(
                     fmt::format("{}: not a .wafer program (larger than 2 GiB)", path))
               : bytes.status();
  return parseProgram(*bytes, path);
}

} // namespace

Expected<format::Program> loadProgramFile(const std::string &path) {
  // Directories, devices and named FIFOs are refused unopened.
  int fd;
  struct stat st;
  if (Status s = detail::openForReading(path, fd, st); !s)
    return s;
  return loadOpenedProgram(path, fd, st);
}

Expected<LoadedProgram> loadProgramLeavingImages(const std::string &path) {
  int fd;
  struct stat st;
  if (Status s = detail::openForReading(path, fd, st); !s)
    return s;
  // A descriptor named /dev/stdin or /dev/fd/N is read once, as a pipe is.
  if (!S_ISREG(st.st_mode) || st.st_size == 0 || uint64_t(st.st_size) > uint64_t(INT_MAX) ||
      detail::namedDescriptor(path) >= 0) {
    Expected<format::Program> p = loadOpenedProgram(path, fd, st);
    if (!p)
      return p.status();
    return LoadedProgram{p.take(), nullptr};
  }
  format::Program p;
  std::unique_ptr<detail::SramImageFile> images;
  uint64_t sramInit = 0;
  int readErrno;
  bool parsed = detail::SramImageFile::parse(fd, path, p, images, sramInit, readErrno);
  ::close(fd);
  if (readErrno)
    return cannotRead(path, readErrno);
  Expected<format::Program> checked = checkParsed(std::move(p), parsed, path, &sramInit);
  if (!checked)
    return checked.status();
  return LoadedProgram{checked.take(), std::move(images)};
}

Emulator::Emulator() = default;
Emulator::~Emulator() = default;

Expected<std::unique_ptr<Emulator>> Emulator::create(format::Program program) {
  return create(LoadedProgram{std::move(program), nullptr});
}

Expected<std::unique_ptr<Emulator>> Emulator::create(LoadedProgram loaded) {
  format::Program &program = loaded.program;
  if (program.format_version() != kFormatVersion)
    return Status::failure(fmt::format(".wafer format version {}, this runtime reads version {}",
                                       program.format_version(), kFormatVersion));
  std::unique_ptr<Emulator> e(new Emulator());
  // The model points into program_, so it is built only once program_ has its final address.
  e->program_ = std::move(program);
  e->images_ = std::move(loaded.images);
  Expected<Model> model = detail::buildModel(e->program_, e->images_.get());
  if (!model)
    return model.status();
  e->model_ = std::make_unique<Model>(model.take());
  return e;
}

const format::Program &Emulator::program() const { return program_; }

MemoryPlan Emulator::memoryPlan(unsigned ranks, unsigned rank) const {
  MemoryPlan p = detail::planMemory(*model_, ranks, rank);
  if (images_) {
    p.program += images_->bytes();
    p.imagesInFile = images_->imageBytes();
  }
  return p;
}

namespace {

const detail::TensorRef *findTensor(const std::vector<detail::TensorRef> &list,
                                    const std::string &name) {
  for (const detail::TensorRef &t : list)
    if (t.name == name)
      return &t;
  return nullptr;
}

/// A generating program's next_token output; null for other programs.
const detail::TensorRef *nextTokenTensor(const Model &m) {
  return m.program->has_generation()
             ? findTensor(m.outputs, m.program->generation().next_token_output())
             : nullptr;
}

DType hostType(format::DType t) {
  switch (t) {
  case format::I64:
    return DType::I64;
  case format::I32:
    return DType::I32;
  case format::BOOL:
    return DType::Bool;
  case format::F64:
    return DType::F64;
  case format::F16:
    return DType::F16;
  case format::BF16:
    return DType::BF16;
  case format::I8:
    return DType::I8;
  case format::I16:
    return DType::I16;
  case format::U8:
    return DType::U8;
  case format::U16:
    return DType::U16;
  case format::U32:
    return DType::U32;
  case format::U64:
    return DType::U64;
  default:
    return DType::F32;
  }
}

/// The words of an output, read from SRAM, become host values: F16 and BF16
/// are rounded to their type (nearest even), F64 is widened when written; an
/// integer word outside the output's type is an error (the compiler keeps
/// narrow results in range: a word out of it is a bug, never wrapped).
Status convertOutput(const std::string &name, HostArray &a) {
  if (a.dtype == DType::F16 || a.dtype == DType::BF16)
    for (float &v : a.f32)
      v = roundToFloatType(a.dtype, v);
  return checkIntegerRange(a, fmt::format("output '{}'", name));
}

} // namespace

Status Emulator::setInput(const std::string &name, const HostArray &value) {
  const detail::TensorRef *t = findTensor(model_->inputs, name);
  if (!t)
    return Status::failure(fmt::format("input '{}': the program has no such input", name));
  DType want = hostType(t->dtype);
  // A float input takes any float array (F32, F64, F16, BF16), an integer
  // input any integer array (the values are checked below); a bool input
  // takes only a bool array, and a bool array goes only there.
  bool ok = value.dtype == want || (isFloatType(want) && value.isFloat()) ||
            (isIntegerType(want) && isIntegerType(value.dtype));
  if (!ok)
    return Status::failure(fmt::format("input '{}': dtype {} given, the program wants {}", name,
                                       dtypeName(value.dtype), dtypeName(want)));
  if (value.shape != t->shape)
    return Status::failure(fmt::format("input '{}': shape {} given, the program wants {}", name,
                                       shapeString(value.shape), shapeString(t->shape)));
  size_t have = value.isFloat() ? value.f32.size() : value.ints.size();
  if (int64_t(have) != t->numel)
    return Status::failure(
        fmt::format("input '{}': {} elements for shape {}", name, have, shapeString(t->shape)));
  if (value.dtype == DType::Bool) {
    for (size_t i = 0; i < value.ints.size(); ++i)
      if (value.ints[i] != 0 && value.ints[i] != 1)
        return Status::failure(fmt::format(
            "input '{}': element {} = {} of a bool array is not 0 or 1", name, i, value.ints[i]));
  } else if (!value.isFloat()) {
    // Every value must fit the int32 word, and the input's type: a U8
    // input's -1 or 300 is no u8 the compiled program can take.
    int64_t lo, hi;
    integerRange(want, lo, hi);
    // A generating program's token input: each sequence's prompt, then
    // negative ids where the program picks the tokens itself.
    const format::Program &prog = *model_->program;
    bool generating = prog.has_generation() && prog.generation().token_input() == name;
    int64_t positions = t->shape.empty() ? 1 : t->shape.back();
    for (size_t i = 0; i < value.ints.size(); ++i) {
      int64_t v = value.ints[i];
      if (generating && (v < 0 || (i % positions && value.ints[i - 1] < 0))) {
        if (v >= 0 || i % positions == 0)
          return Status::failure(fmt::format(
              "input '{}': sequence {} {}: a prompt is a first token and more, then negative "
              "ids only",
              name, i / positions, v >= 0 ? "has a token after a negative id" : "has no first token"));
        continue;
      }
      if (v < INT32_MIN || v > INT32_MAX)
        return Status::failure(fmt::format(
            "input '{}': element {} = {} does not fit the 32-bit SRAM word", name, i, v));
      if (v < lo || v > hi)
        return Status::failure(fmt::format("input '{}': element {} = {} does not fit {}", name, i,
                                           v, dtypeName(want)));
      // The program's own bound (token ids: the embedding's rows).
      if (t->bounded && (v < t->lo || v >= t->hi))
        return Status::failure(fmt::format("input '{}': element {} = {} is outside [{}, {})", name,
                                           i, v, t->lo, t->hi));
    }
  }
  inputs_[name] = value;
  return Status::success();
}

void Emulator::releaseProgramBulk() {
  for (format::Wafer &w : *program_.mutable_wafers()) {
    google::protobuf::RepeatedPtrField<format::Route>().Swap(w.mutable_routes());
    for (format::Region &r : *w.mutable_regions()) {
      google::protobuf::RepeatedPtrField<format::Filter>().Swap(r.mutable_filters());
      if (images_) // the images' places are in images_ too
        google::protobuf::RepeatedPtrField<format::SramInit>().Swap(r.mutable_init());
    }
  }
#ifdef __GLIBC__
  malloc_trim(0); // the freed pages go back to the host
#endif
}

Status Emulator::copyImages(PeStates &pes, uint32_t ri,
                            const std::function<bool(uint64_t)> &owned) const {
  const detail::Region &r = model_->regions[ri];
  auto copy = [&](uint32_t px, uint32_t py, uint32_t offset, const char *bytes, size_t size) {
    uint64_t pe = r.firstPe + uint64_t(py) * r.w + px;
    if (owned(pe))
      std::memcpy(reinterpret_cast<char *>(pes[pe].sram) + offset, bytes, size);
  };
  if (images_)
    return images_->read(r.wafer, r.indexInWafer, copy);
  for (const format::SramInit &init : r.proto->init())
    copy(init.px(), init.py(), init.offset(), init.data().data(), init.data().size());
  return Status::success();
}

Status Emulator::run(const RunOptions &options) {
  // A program too big for the host must be an error, not an abort.
  try {
    Status s = runUnguarded(options);
    // Threads meet faults in no fixed order: the one reported is the one a
    // single thread meets first, whatever the thread count.
    bool split = options.channel && options.channel->size() > 1;
    if (!s && !split && detail::threadCount(options, model_->numPes) > 1) {
      RunOptions one = options;
      one.threads = 1;
      s = runUnguarded(one);
    }
    // Of a split run, process 0 alone has the outputs.
    if (!s || (split && options.channel->rank() != 0))
      return s;
    // In the program's order, so that the error is the first output's.
    for (const detail::TensorRef &t : model_->outputs)
      if (Status c = convertOutput(t.name, outputs_.at(t.name)); !c) {
        outputs_.clear();
        return c;
      }
    return s;
  } catch (const std::bad_alloc &) {
    return Status::failure("out of host memory while emulating the program");
  }
}

uint64_t detail::cycleLimit(const Model &m, uint64_t maxCyclesOption) {
  if (maxCyclesOption)
    return maxCyclesOption;
  uint64_t estimate = m.program->estimated_cycles();
  if (!estimate)
    return kDefaultMaxCycles;
  uint64_t limit;
  if (__builtin_mul_overflow(estimate, kEstimateFactor, &limit))
    return kDefaultMaxCycles;
  return std::clamp(limit, kMinEstimatedLimit, kDefaultMaxCycles);
}

std::string detail::cycleLimitReason(const Model &m, uint64_t maxCyclesOption) {
  uint64_t estimate = m.program->estimated_cycles();
  if (maxCyclesOption || !estimate)
    return "";
  return fmt::format(" ({} x the program's estimate of {} cycles{})", kEstimateFactor, estimate,
                     cycleLimit(m, 0) == kMinEstimatedLimit ? ", raised to 2^24" : "");
}

Status Emulator::runUnguarded(const RunOptions &options) {
  auto start = std::chrono::steady_clock::now();
  const Model &m = *model_;
  outputs_.clear();
  report_ = RunReport();
  for (const detail::TensorRef &t : m.inputs)
    if (!inputs_.count(t.name))
      return Status::failure(fmt::format("input '{}' was not given", t.name));
  // A PE faults once it has passed the limit with an instruction to go: a
  // kernel whose every PE must run more than that cannot end well, however
  // long it is emulated (a LOOP of 2^32 - 1 trips would take minutes).
  uint64_t maxInstructions = options.maxCycles ? options.maxCycles : kDefaultMaxInstructions;
  for (const detail::Region &r : m.regions)
    if (r.minInstructions > maxInstructions && r.minInstructions - 1 > maxInstructions)
      return Status::failure(fmt::format(
          "cycle limit: kernel '{}' (wafer {}): every PE runs at least {} instructions (LOOP and "
          "END included), more than the limit of {}",
          r.name, r.wafer, r.minInstructions == UINT64_MAX ? "2^64" : std::to_string(r.minInstructions),
          maxInstructions));

  // Only PEs that run a kernel get SRAM; router-only PEs need none. Each
  // PE's starts on a cache line.
  std::optional<detail::Distributed> dist;
  if (options.channel && options.channel->size() > 1) {
    dist.emplace(*options.channel, detail::partitionRows(m, options.channel->size()));
  }
  // A process gives SRAM words and inputs to its own PEs only.
  auto owned = [&](uint64_t pe) { return !dist || dist->owns(m, pe); };
  PeStates pes(m.numPes);
  uint64_t frames = 0;
  for (const detail::Region &r : m.regions)
    frames += uint64_t(r.w) * r.h * r.loopDepth;
  std::vector<detail::LoopFrame, detail::HugePageAllocator<detail::LoopFrame>> loopFrames(frames);
  detail::LoopFrame *nextFrames = loopFrames.data();
  for (const detail::Region &r : m.regions) {
    for (uint64_t pe = r.firstPe; pe < r.firstPe + uint64_t(r.w) * r.h; ++pe) {
      pes[pe].loops = nextFrames;
      nextFrames += r.loopDepth;
    }
    if (options.trace)
      pes[r.firstPe].trace = std::make_unique<std::vector<TraceEvent>>();
  }
  detail::KernelSram kernelSram(m, pes, owned,
                                [&](uint32_t r) { return copyImages(pes, r, owned); });
  // Inputs go in after their kernels' images.
  for (const detail::TensorRef &t : m.inputs)
    for (const detail::PieceRef &p : t.pieces)
      if (Status s = kernelSram.enter(m.peRegion[p.pe]); !s)
        return s;
  for (const detail::TensorRef &t : m.inputs) {
    const HostArray &a = inputs_.at(t.name);
    for (const detail::PieceRef &p : t.pieces) {
      uint32_t *sram = pes[p.pe].sram;
      if (!owned(p.pe))
        continue;
      for (uint32_t row = 0; row < p.rows; ++row)
        for (uint32_t k = 0; k < p.count; ++k) {
          uint64_t e = p.tensorOffset + row * p.rowStride + k;
          uint32_t word;
          if (a.isFloat())
            std::memcpy(&word, &a.f32[e], 4);
          else
            word = uint32_t(int32_t(a.ints[e]));
          sram[p.offset / 4 + uint64_t(row) * p.count + k] = word;
        }
    }
  }

  std::vector<detail::StoreWatch> watches = watchNextToken(pes, options);
  std::atomic<bool> stopped{false};
  for (detail::StoreWatch &w : watches)
    if (options.stopAfterToken >= 0)
      w.stopped = &stopped, w.stopElement = options.stopAfterToken;
  Status s =
      detail::schedule(m, pes, kernelSram, options, report_, &stopped, dist ? &*dist : nullptr);
  recordNextTokenStores(watches);
  if (dist) {
    s = detail::gatherResults(m, pes, *dist, s, report_);
    if (s && dist->rank() != 0)
      return s;
    if (dist->halted())
      stopped = true; // by the process that holds the last token's word
  }
  if (!s)
    return s;
  // Stopped, the run ends at that pick, whatever the other PEs' clocks
  // reached by the time their threads saw it.
  if (stopped && size_t(options.stopAfterToken) < report_.nextTokenStores.size())
    report_.cycles = report_.nextTokenStores[size_t(options.stopAfterToken)].cycle;

  for (const detail::TensorRef &t : m.outputs) {
    HostArray a;
    a.dtype = hostType(t.dtype);
    a.shape = t.shape;
    if (a.isFloat())
      a.f32.assign(t.numel, 0.0f);
    else
      a.ints.assign(t.numel, 0);
    for (const detail::PieceRef &p : t.pieces) {
      const uint32_t *sram = pes[p.pe].sram;
      for (uint32_t row = 0; row < p.rows; ++row)
        for (uint32_t k = 0; k < p.count; ++k) {
          uint64_t e = p.tensorOffset + row * p.rowStride + k;
          uint32_t word = sram[p.offset / 4 + uint64_t(row) * p.count + k];
          if (a.isFloat())
            std::memcpy(&a.f32[e], &word, 4);
          else if (a.dtype == DType::Bool)
            a.ints[e] = word != 0;
          else
            a.ints[e] = int32_t(word);
        }
    }
    outputs_[t.name] = std::move(a);
  }

  report_.clockHz = m.clockHz;
  // Stopped after a token, the run went through the positions up to it.
  report_.tokens = stopped ? uint32_t(options.stopAfterToken + 1) : program_.tokens();
  report_.tokensPerS =
      report_.cycles ? double(report_.tokens) * m.clockHz / double(report_.cycles) : 0;
  report_.wafers = m.wafers;
  report_.pesActive = m.numPes;
  for (const detail::Region &r : m.regions) {
    KernelReport k;
    k.name = r.name;
    k.kind = r.kind;
    k.wafer = r.wafer;
    k.pes = uint64_t(r.w) * r.h;
    for (uint64_t i = 0; i < k.pes; ++i)
      k.busyCycles += pes[r.firstPe + i].busy;
    k.busyPct = report_.cycles ? 100.0 * double(k.busyCycles) / (double(k.pes) * report_.cycles) : 0;
    report_.kernels.push_back(std::move(k));
    if (options.trace) {
      const std::vector<TraceEvent> &ev = *pes[r.firstPe].trace;
      report_.trace.insert(report_.trace.end(), ev.begin(), ev.end());
    }
  }
  report_.wallS =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::success();
}

std::vector<detail::StoreWatch> Emulator::watchNextToken(PeStates &pes,
                                                         const RunOptions &options) const {
  const detail::TensorRef *t = nextTokenTensor(*model_);
  if (!t)
    return {};
  // One watch per PE that holds pieces of it, over their words' span.
  std::map<uint64_t, detail::StoreWatch> byPe;
  for (const detail::PieceRef &p : t->pieces) {
    uint32_t lo = p.offset / 4, hi = lo + p.rows * p.count;
    auto [it, fresh] = byPe.try_emplace(p.pe);
    if (fresh)
      it->second.pe = p.pe, it->second.lo = lo, it->second.hi = hi;
    it->second.lo = std::min(it->second.lo, lo);
    it->second.hi = std::max(it->second.hi, hi);
  }
  std::vector<detail::StoreWatch> watches;
  watches.reserve(byPe.size()); // never moves: the PEs point into it
  for (auto &[pe, w] : byPe) {
    w.cycle.assign(w.hi - w.lo, detail::StoreWatch::kNever);
    w.element.assign(w.hi - w.lo, -1);
    w.onStore = options.onNextToken ? &options.onNextToken : nullptr;
    watches.push_back(std::move(w));
    pes[pe].watch = &watches.back();
  }
  for (const detail::PieceRef &p : t->pieces) {
    detail::StoreWatch &w = *pes[p.pe].watch;
    for (uint32_t row = 0; row < p.rows; ++row)
      for (uint32_t k = 0; k < p.count; ++k)
        w.element[p.offset / 4 + uint64_t(row) * p.count + k - w.lo] =
            int64_t(p.tensorOffset + uint64_t(row) * p.rowStride + k);
  }
  return watches;
}

void Emulator::recordNextTokenStores(const std::vector<detail::StoreWatch> &watches) {
  const detail::TensorRef *t = nextTokenTensor(*model_);
  if (!t)
    return;
  report_.nextTokenStores.assign(size_t(t->numel), StoreTime{});
  for (const detail::StoreWatch &w : watches)
    for (size_t i = 0; i < w.element.size(); ++i)
      if (w.element[i] >= 0 && w.cycle[i] != detail::StoreWatch::kNever)
        report_.nextTokenStores[size_t(w.element[i])] =
            StoreTime{true, w.cycle[i], model_->peRegion[w.pe]};
}

Expected<HostArray> Emulator::output(const std::string &name) const {
  auto it = outputs_.find(name);
  if (it != outputs_.end())
    return it->second;
  if (!findTensor(model_->outputs, name))
    return Status::failure(fmt::format("output '{}': the program has no such output", name));
  return Status::failure(fmt::format("output '{}': the program has not run successfully", name));
}

} // namespace wsc::runtime
