// wsc-run: runs a compiled .wafer program on the emulator.
//   wsc-run model.wafer --input NAME=FILE ... --output NAME=FILE ...
//           [--generate G] [--trace FILE.json] [--report FILE.json] [--threads N]
#include "wsc/runtime/Distributed.h"
#include "wsc/runtime/Emulator.h"
#include "wsc/runtime/Generation.h"
#include "wsc/runtime/HugePageHeap.h"
#include "wsc/runtime/OutputFiles.h"

#include <fmt/format.h>
#include <google/protobuf/stubs/common.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

#if WSC_MPI
#include "MpiChannel.h"
#endif

using namespace wsc::runtime;
namespace format = wsc::format;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WSC_HAS_ASAN 1
#endif
#endif
#ifndef WSC_HAS_ASAN
#define WSC_HAS_ASAN 0
#endif

namespace {

constexpr const char *kUsage =
    "usage: wsc-run MODEL.wafer [--input NAME=FILE]... [--output NAME=FILE]...\n"
    "               [--generate G] [--trace FILE.json] [--report FILE.json] [--threads N]\n"
    "               [--max-cycles N] [--temperature T] [--seed S] [--top-k K] [--plan]\n"
    "               [--ranks K] [--max-memory SIZE] [--engine E]\n"
    "Runs a compiled .wafer program on the wafer emulator.\n"
    "  --input NAME=FILE   input tensor from .npy or ONNX TensorProto .pb (dtypes below)\n"
    "  --output NAME=FILE  write output tensor NAME as .npy (dtype from the program, below)\n"
    "  --generate G        a generating program (wsc-compile --generate): G tokens after\n"
    "                      each prompt; the token input takes [B, P] prompts (P <= the\n"
    "                      context, a shorter one ending in -1s); outputs 'tokens' [B, P + G]\n"
    "                      and the logits of the G steps [B, G, V]; prints each token\n"
    "                      as the emulator picks it; times in the report\n"
    "  --temperature T     a sampling program (wsc-compile --generate --sampling): sample\n"
    "                      each token from softmax(logits / T) (default 0: the argmax)\n"
    "  --seed S            its seed, 0 to 2^24 - 1 (default 0): a seed draws the same\n"
    "                      tokens on every run\n"
    "  --top-k K           a program compiled with --top-k too: pick each token among the\n"
    "                      K largest logits only (default 0: all of them)\n"
    "  --trace FILE        Chrome trace-event JSON of the first PE of every kernel\n"
    "  --report FILE       JSON summary: cycles, tokens/s, kernel busy %, link utilization\n"
    "  --threads N         emulator threads (default: all cores; results do not depend on it)\n"
    "  --engine E          region (the default, or $WSC_RUN_ENGINE): loop nests whose\n"
    "                      words are all there run an instruction over all their\n"
    "                      trips; reference: the per-PE interpreter, an instruction\n"
    "                      at a time; both: the reference, then the region engine,\n"
    "                      and an error where their outputs, cycles or counts differ\n"
    "                      (not under mpirun); all give the same results and cycles\n"
    "  --plan              print the host memory a run takes, by part (with --report, as\n"
    "                      JSON), and do not run\n"
    "  --ranks K           with --plan: what the largest of K processes takes of its host's\n"
    "                      memory (a run under mpirun -np K)\n"
    "  --max-memory SIZE   refuse a run that takes more (bytes, or 512M, 8G; default: the\n"
    "                      host's available memory)\n"
    "  --max-cycles N      fault when a PE passes N cycles or N instructions (default:\n"
    "                      2^40 cycles, 2^32 instructions)\n"
    "File dtypes:\n"
    "  .npy in   float16/32/64, int8/16/32/64, uint8/16/32/64, bool\n"
    "  .pb in    FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8/16/32/64, UINT8/16/32/64, BOOL\n"
    "  .npy out  F32 <f4, F64 <f8, F16 <f2, BF16 <f4 (bf16-rounded), I8 |i1, I16 <i2,\n"
    "            I32 <i4, I64 <i8, U8 |u1, U16 <u2, U32 <u4, U64 <u8, BOOL |b1\n"
    "  A float input takes any float file, an integer input any integer file (values\n"
    "  must fit int32 and the input's type), a BOOL input only a bool file.\n";

/// Under mpirun, process 0 alone speaks and writes files; the others only
/// exit with the run's status.
bool quiet = false;
/// The processes of a run under mpirun, until they have agreed to start it.
Channel *unagreed = nullptr;

int fail(const std::string &msg) {
  std::string shown = msg;
  if (Channel *c = unagreed) {
    unagreed = nullptr;
    shown = agreeToStart(*c, msg);
  }
  if (!quiet)
    std::fprintf(stderr, "error: %s\n", shown.c_str());
  return 1;
}

struct Args {
  std::string model, trace, report;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  unsigned threads = 0;
  uint64_t maxCycles = 0;
  int64_t generate = 0; ///< tokens after each prompt; 0: not a --generate run
  std::optional<float> temperature, seed, topK; ///< a sampling program's parameters
  bool plan = false;                      ///< --plan: print the memory plan, do not run
  uint64_t maxMemory = 0;                 ///< bytes a run may take; 0: what the host has
  unsigned ranks = 0;                     ///< --plan for a run of this many processes
  /// --engine, else $WSC_RUN_ENGINE, else the region engine; `both`: the
  /// reference first, then the region engine, which must agree with it.
  std::string engine;
};

/// Bytes with an optional K, M or G (powers of 1024), or an error message.
std::string parseBytes(const std::string &value, uint64_t &out) {
  char *end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  std::string unit = end ? end : "";
  double scale = unit.empty() ? 1 : unit == "K" ? 1024.0 : unit == "M" ? 1048576.0
               : unit == "G" ? 1073741824.0 : 0;
  if (value.empty() || !scale || !(v > 0) || v * scale >= 1.8e19)
    return fmt::format("--max-memory wants bytes, e.g. 512M or 8G, got '{}'", value);
  out = uint64_t(v * scale);
  return "";
}

/// A number from `lo` to `hi` for `flag`, or an error message.
std::string parseNumber(const std::string &flag, const std::string &value, double lo, double hi,
                        std::optional<float> &out) {
  char *end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || !(v >= lo && v <= hi))
    return fmt::format("{} wants a number from {} to {}, got '{}'", flag, lo, hi, value);
  out = float(v);
  return "";
}

/// Parses the command line; returns an error message or "".
std::string parseArgs(int argc, char **argv, Args &a, bool &help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") {
      help = true;
      return "";
    }
    if (arg == "--plan") {
      a.plan = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!a.model.empty())
        return fmt::format("more than one program given ('{}' and '{}')", a.model, arg);
      a.model = arg;
      continue;
    }
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    if (flag != "--input" && flag != "--output" && flag != "--trace" && flag != "--report" &&
        flag != "--threads" && flag != "--max-cycles" && flag != "--generate" &&
        flag != "--temperature" && flag != "--seed" && flag != "--top-k" &&
        flag != "--max-memory" && flag != "--ranks" && flag != "--engine")
      return fmt::format("unknown option '{}'", arg);
    if (eq != std::string::npos)
      value = arg.substr(eq + 1);
    else if (i + 1 < argc)
      value = argv[++i];
    else
      return fmt::format("{} needs a value", flag);
    if (flag == "--input" || flag == "--output") {
      size_t sep = value.find('=');
      if (sep == std::string::npos || sep == 0 || sep + 1 == value.size())
        return fmt::format("{} wants NAME=FILE, got '{}'", flag, value);
      (flag == "--input" ? a.inputs : a.outputs).emplace_back(value.substr(0, sep),
                                                              value.substr(sep + 1));
    } else if (flag == "--trace") {
      a.trace = value;
    } else if (flag == "--report") {
      a.report = value;
    } else if (flag == "--max-cycles") {
      char *end = nullptr;
      unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end || value[0] == '-' || n == 0)
        return fmt::format("--max-cycles wants a positive number, got '{}'", value);
      a.maxCycles = n;
    } else if (flag == "--max-memory") {
      if (std::string err = parseBytes(value, a.maxMemory); !err.empty())
        return err;
    } else if (flag == "--temperature" || flag == "--seed" || flag == "--top-k") {
      bool whole = flag != "--temperature";
      std::optional<float> &to = flag == "--seed" ? a.seed : whole ? a.topK : a.temperature;
      if (std::string err = parseNumber(flag, value, 0, whole ? 16777215 : 1e6, to);
          !err.empty())
        return err;
      if (whole && *to != std::floor(*to))
        return fmt::format("{} wants a whole number, got '{}'", flag, value);
    } else if (flag == "--engine") {
      a.engine = value;
    } else if (flag == "--ranks") {
      char *end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1 || n > 65535)
        return fmt::format("--ranks wants a number of processes from 1 to 65535, got '{}'", value);
      a.ranks = unsigned(n);
    } else if (flag == "--generate") {
      char *end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1 || n > (1LL << 32))
        return fmt::format("--generate wants a number of tokens from 1 to 2^32, got '{}'", value);
      a.generate = n;
    } else {
      char *end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1 || n > 1024)
        return fmt::format("--threads wants a number from 1 to 1024, got '{}'", value);
      a.threads = unsigned(n);
    }
  }
  if (a.model.empty())
    return "no program given";
  if (a.ranks && !a.plan)
    return "--ranks goes with --plan (under mpirun, its -np gives the processes)";
  if (a.engine.empty()) {
    const char *env = std::getenv("WSC_RUN_ENGINE");
    a.engine = env && *env ? env : "region";
  }
  if (a.engine != "region" && a.engine != "reference" && a.engine != "both")
    return fmt::format("--engine: unknown engine '{}' (this wsc-run has: region, reference, both)",
                       a.engine);
  return "";
}

/// A number read from a /proc or /sys file, or 0.
uint64_t readNumber(const char *path, const char *key = nullptr) {
  std::FILE *f = std::fopen(path, "r");
  if (!f)
    return 0;
  char line[256];
  uint64_t value = 0;
  while (std::fgets(line, sizeof line, f)) {
    const char *at = line;
    if (key) {
      if (std::strncmp(line, key, std::strlen(key)) != 0)
        continue;
      at += std::strlen(key);
    }
    value = std::strtoull(at, nullptr, 10);
    break;
  }
  std::fclose(f);
  return value;
}

/// The bytes a run may take on this host: what the kernel says is
/// available (within the cgroup's limit) and what this process already
/// holds, the loaded program, which the plan counts. 0: unknown.
uint64_t hostMemory() {
  uint64_t available = readNumber("/proc/meminfo", "MemAvailable:") * 1024;
  if (uint64_t limit = readNumber("/sys/fs/cgroup/memory.max")) {
    uint64_t used = readNumber("/sys/fs/cgroup/memory.current");
    available = std::min(available, limit > used ? limit - used : 0);
  }
  uint64_t resident = 0;
  if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0, pages = 0;
    if (std::fscanf(f, "%llu %llu", &size, &pages) == 2)
      resident = pages * uint64_t(sysconf(_SC_PAGESIZE));
    std::fclose(f);
  }
  return available ? available + resident : 0;
}

std::string bytesText(uint64_t b) {
  return b >= (uint64_t(1) << 30) ? fmt::format("{:.2f} GiB", double(b) / (1 << 30))
                                  : fmt::format("{:.1f} MiB", double(b) / (1 << 20));
}

/// wsc-run --plan: what a run takes, by part.
void printPlan(const std::string &model, const MemoryPlan &p, unsigned ranks) {
  if (ranks > 1)
    std::printf("wsc-run: %s: the largest of %u processes (mpirun -np %u) takes %s of its host's "
                "memory for %llu PEs that run a kernel\n",
                model.c_str(), ranks, ranks, bytesText(p.total()).c_str(),
                (unsigned long long)p.pesInUse);
  else
    std::printf("wsc-run: %s: a run takes %s of host memory for %llu PEs that run a kernel\n",
                model.c_str(), bytesText(p.total()).c_str(), (unsigned long long)p.pesInUse);
  auto part = [](const char *name, uint64_t b, const char *what) {
    std::printf("  %-13s %11s  %s\n", name, bytesText(b).c_str(), what);
  };
  std::string program =
      p.imagesInFile
          ? fmt::format("the parsed program's code and its model (its SRAM images, {} more, stay "
                        "in the file until their kernel runs)",
                        bytesText(p.imagesInFile))
          : "the parsed program (code, routes, SRAM images) and its model";
  part("program", p.program, program.c_str());
  part("PE states", p.pes, "each PE's registers, queues' index, loops");
  part("SRAM", p.sram, "each PE's SRAM, at most: a kernel's while it runs");
  part("fabric", p.fabric, "router slots, their origins, receive queues");
  part("tensors", p.tensors, "inputs and outputs on the host");
  std::printf("  and the message logs, words sent and not yet read, which follow the traffic: a run "
              "may take for them what --max-memory leaves (its report's message_log_peak_bytes "
              "says what they took)\n");
}

/// A sampling program's [temperature, seed] (or [temperature, seed, top_k])
/// from --temperature, --seed and --top-k (the argmax of all logits by
/// default), unless given as an input. Returns an error message or "".
std::string setSampling(Emulator &e, const Args &args, std::set<std::string> &given,
                        std::vector<float> &params) {
  const std::string &name = e.program().generation().sampling_input();
  bool flags = args.temperature || args.seed || args.topK;
  if (name.empty())
    return flags ? fmt::format("{}: --temperature, --seed and --top-k need a program that "
                               "samples (compile it with wsc-compile --generate --sampling)",
                               args.model)
                 : "";
  int64_t words = 0;
  for (const format::HostTensor &t : e.program().inputs())
    if (t.name() == name && t.shape_size() == 1)
      words = t.shape(0);
  if (args.topK && words != 3)
    return fmt::format("{}: --top-k needs a program that takes top_k (compile it with "
                       "wsc-compile --generate --sampling --top-k)",
                       args.model);
  if (given.count(name))
    return flags ? fmt::format("input '{}' is given both as a file and by --temperature, --seed "
                               "or --top-k",
                               name)
                 : "";
  given.insert(name);
  params = {args.temperature.value_or(0.0f), args.seed.value_or(0.0f)};
  if (words == 3)
    params.push_back(args.topK.value_or(0.0f));
  Status s = e.setInput(name, HostArray::floats({int64_t(params.size())}, params));
  return s ? "" : s.message();
}

/// Reads every input into the emulator; with --generate, the token input's
/// prompts are checked and padded into `plan`, and a sampling program's
/// parameters kept there. Returns an error message or "".
std::string setInputs(Emulator &e, const Args &args, std::optional<GenerationPlan> &plan) {
  const format::Program &program = e.program();
  std::set<std::string> given;
  std::vector<float> sampling;
  for (const auto &[name, file] : args.inputs) {
    if (!given.insert(name).second)
      return fmt::format("input '{}' given twice", name);
    Expected<HostArray> value = readTensorFile(file);
    if (!value)
      return fmt::format("input '{}': {}", name, value.error());
    if (args.generate && name == program.generation().token_input()) {
      Expected<GenerationPlan> p = planGeneration(program, *value, args.generate);
      if (!p)
        return p.error();
      plan = p.take();
      *value = plan->input;
    }
    if (name == program.generation().sampling_input())
      sampling = value->f32;
    if (Status s = e.setInput(name, *value); !s)
      return s.message();
  }
  if (std::string err = setSampling(e, args, given, sampling); !err.empty())
    return err;
  if (plan)
    plan->sampling = sampling;
  for (const format::HostTensor &t : program.inputs())
    if (!given.count(t.name()))
      return fmt::format("input '{}' was not given (use --input {}=FILE)", t.name(), t.name());
  return "";
}

/// With --generate, `tokens` is the generated sequences and the logits
/// output holds the G steps' logits; every other output is the program's.
Expected<HostArray> outputFor(const Emulator &e, const std::string &name,
                              const GenerationPlan *plan) {
  if (plan && name == "tokens") {
    Expected<HostArray> next = e.output(e.program().generation().next_token_output());
    return next ? Expected<HostArray>(generatedTokens(*plan, *next)) : next;
  }
  Expected<HostArray> value = e.output(name);
  if (plan && value && name == plan->logitsOutput)
    return stepLogits(*plan, *value);
  return value;
}

/// Each sequence's generated tokens, and when each was picked.
void printGeneration(const GenerationReport &g) {
  for (size_t b = 0; b < g.sequences.size(); ++b) {
    const SequenceTiming &s = g.sequences[b];
    std::vector<uint64_t> cycles;
    for (const StoreTime &p : s.picks)
      cycles.push_back(p.cycle);
    std::printf("%s", fmt::format("sequence {}: {} (picked at cycles {})\n", b,
                                  fmt::join(s.tokens, " "), fmt::join(cycles, " "))
                          .c_str());
  }
}

/// The run's figures: one line, and one more for a generation.
void printSummary(const RunReport &r, const GenerationReport *g) {
  std::printf("wsc-run: %llu cycles (%.6g s at %.6g GHz), %.6g tokens/s, %llu PEs on %u wafer%s\n",
              (unsigned long long)r.cycles, r.clockHz > 0 ? double(r.cycles) / r.clockHz : 0.0,
              r.clockHz / 1e9, r.tokensPerS, (unsigned long long)r.pesActive, r.wafers,
              r.wafers == 1 ? "" : "s");
  if (!g)
    return;
  double ttft = 0;
  for (const SequenceTiming &s : g->sequences)
    ttft += double(s.ttftCycles);
  ttft /= double(g->sequences.size());
  std::string kv = g->kvCacheBytes ? fmt::format(", KV cache {} bytes", g->kvCacheBytes) : "";
  std::string decode =
      g->steps > 1 ? fmt::format("{:.6g} decode cycles per token ({:.6g} tokens/s per sequence), ",
                                 g->decodeCyclesPerToken, g->tokensPerS)
                   : "";
  std::printf("wsc-run: %lld tokens after each of %zu prompts: first token after %.6g cycles "
              "(%.6g s, mean), %s%.6g tokens/s for the batch%s\n",
              (long long)g->steps, g->sequences.size(), ttft,
              g->clockHz > 0 ? ttft / g->clockHz : 0.0, decode.c_str(), g->batchTokensPerS,
              kv.c_str());
}

/// Prints a generated token as the emulator picks it: the pick at position
/// t of sequence b is its token t - P_b + 2, if one of the G asked for.
void printPickedToken(const GenerationPlan &plan, uint64_t element, int32_t id, uint64_t cycle,
                      std::mutex &printing) {
  int64_t b = int64_t(element) / plan.context, t = int64_t(element) % plan.context;
  int64_t k = t - plan.promptLengths[size_t(b)] + 2;
  if (k < 1 || k > plan.steps)
    return;
  std::lock_guard<std::mutex> lock(printing);
  std::printf("token %lld of sequence %lld: %d (picked at cycle %llu)\n", (long long)k,
              (long long)b, id, (unsigned long long)cycle);
  std::fflush(stdout);
}

/// What a run gave that an engine must not change: its status, its
/// outputs and its report but for the host's times.
struct EngineRun {
  std::string status;
  std::map<std::string, std::string> outputs; ///< as .npy bytes
  std::string report;
};

EngineRun runEngine(Emulator &e, const Status &ran) {
  EngineRun r;
  r.status = ran ? "" : ran.message();
  if (!ran)
    return r;
  for (const format::HostTensor &t : e.program().outputs())
    if (Expected<HostArray> value = e.output(t.name()))
      r.outputs[t.name()] = encodeNpy(*value);
  RunReport report = e.report();
  report.wallS = 0;
  report.rounds = 0;
  report.batchedTrips = 0;
  report.messageLogPeakBytes = 0;
  report.trace.clear();
  r.report = reportJson(report);
  return r;
}

EngineRun runEngine(Emulator &e, const RunOptions &options) { return runEngine(e, e.run(options)); }

/// What differs between two runs, or "".
std::string compareEngines(const EngineRun &reference, const EngineRun &region) {
  if (reference.status != region.status)
    return fmt::format("'{}' against '{}'", region.status, reference.status);
  for (const auto &[name, bytes] : reference.outputs)
    if (region.outputs.count(name) == 0 || region.outputs.at(name) != bytes)
      return fmt::format("output '{}'", name);
  if (reference.report != region.report)
    return "its report (cycles, instructions, messages, links or kernels)";
  return "";
}

int runMain(int argc, char **argv, Channel *channel) {
  bool split = channel && channel->size() > 1;
  quiet = split && channel->rank() != 0;
  unagreed = split ? channel : nullptr;
  Args args;
  bool help = false;
  if (std::string err = parseArgs(argc, argv, args, help); !err.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return fail(err);
  }
  if (help) {
    std::printf("%s", kUsage);
#if WSC_MPI
    std::printf("Under mpirun -np K, K processes share the run: each emulates the PEs of its\n"
                "wafers (or bands of rows), and process 0 writes the outputs and the report.\n");
#endif
    return 0;
  }

  // The weights stay in a regular file until their kernel runs.
  Expected<LoadedProgram> program = loadProgramLeavingImages(args.model);
  if (!program)
    return fail(program.error());
  Expected<std::unique_ptr<Emulator>> emu = Emulator::create(program.take());
  if (!emu)
    return fail(fmt::format("{}: invalid program: {}", args.model, emu.error()));
  Emulator &e = **emu;
  // What the emulator holds in its own form is not held twice.
  e.releaseProgramBulk();
  if (args.plan) {
    if (quiet)
      return 0;
    unsigned ranks = args.ranks ? args.ranks : split ? channel->size() : 1;
    MemoryPlan memory = e.memoryPlan(ranks, 0);
    for (unsigned r = 1; r < ranks; ++r)
      if (MemoryPlan other = e.memoryPlan(ranks, r); other.total() > memory.total())
        memory = other;
    OutputFiles files;
    if (!args.report.empty())
      if (Status s = files.stage(args.report, memoryPlanJson(memory)); !s)
        return fail(s.message());
    if (Status s = files.commit(); !s)
      return fail(s.message());
    printPlan(args.model, memory, ranks);
    return 0;
  }
  if (args.generate && !e.program().has_generation())
    return fail(fmt::format("{}: --generate needs a generating program, and this one has no "
                            "generation section (compile it with wsc-compile --generate)",
                            args.model));

  std::optional<GenerationPlan> plan;
  if (std::string err = setInputs(e, args, plan); !err.empty())
    return fail(err);
  uint64_t needed = split ? e.memoryPlan(channel->size(), channel->rank()).total()
                          : e.memoryPlan().total();
  uint64_t limit = args.maxMemory ? args.maxMemory : hostMemory();
  if (limit && needed >= limit)
    return fail(fmt::format("{}: a run takes {} of host memory (wsc-run --plan), more than the "
                            "{} {}",
                            args.model, bytesText(needed), bytesText(limit),
                            args.maxMemory ? "--max-memory allows" : "this host has available"));
  std::set<std::string> outputNames;
  for (const format::HostTensor &t : e.program().outputs())
    outputNames.insert(t.name());
  if (plan)
    outputNames.insert("tokens");
  for (const auto &[name, file] : args.outputs)
    if (!outputNames.count(name))
      return fail(fmt::format("output '{}': the program has no such output", name));

  RunOptions options;
  options.threads = args.threads;
  options.trace = !args.trace.empty();
  options.maxCycles = args.maxCycles;
  options.messageLogBytes = limit ? limit - needed : 0;
  options.channel = channel;
  std::mutex printing;
  if (plan) {
    options.onNextToken = [&](uint64_t element, int32_t id, uint64_t cycle) {
      printPickedToken(*plan, element, id, cycle, printing);
    };
    // Sequences run one after another: the run ends a position after the
    // last one's G-th token, not at the end of its context. Every PE that
    // holds a logit feeds that pick after its writes of the step before,
    // so the G steps' outputs are whole.
    options.stopAfterToken =
        (plan->batch - 1) * plan->context + plan->promptLengths.back() + plan->steps - 1;
  }
  if (unagreed) {
    unagreed = nullptr;
    if (std::string error = agreeToStart(*channel, ""); !error.empty())
      return fail(error);
  }
  options.engine =
      args.engine == "reference" ? RunOptions::Engine::Reference : RunOptions::Engine::Region;
  // Under mpirun the processes run one engine: a second run would need them all.
  bool both = args.engine == "both" && !(channel && channel->size() > 1);
  std::optional<EngineRun> reference;
  if (both) {
    RunOptions first = options;
    first.engine = RunOptions::Engine::Reference;
    if (first.onNextToken)
      first.onNextToken = [](uint64_t, int32_t, uint64_t) {};
    reference = runEngine(e, first);
  }
  Status ran = e.run(options);
  if (reference)
    if (std::string differs = compareEngines(*reference, runEngine(e, ran)); !differs.empty())
      return fail(fmt::format("{}: the region engine's run differs from the reference engine's: {}",
                              args.model, differs));
  if (Status s = ran; !s)
    return fail(s.message().rfind("cycle limit", 0) == 0
                    ? s.message() + " (--max-cycles N sets the limit)"
                : s.message().rfind("out of host memory: the message logs", 0) == 0
                    ? fmt::format("{}: {} ({} {} less the {} the plan takes)", args.model,
                                  s.message(), args.maxMemory ? "--max-memory's" : "the host's",
                                  bytesText(limit), bytesText(needed))
                    : s.message());
  if (quiet)
    return 0;
  const RunReport &r = e.report();
  for (const std::string &w : r.warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::optional<GenerationReport> generation;
  if (plan) {
    Expected<HostArray> next = e.output(e.program().generation().next_token_output());
    if (!next)
      return fail(next.error());
    Expected<GenerationReport> g = generationReport(e.program(), *plan, *next, r);
    if (!g)
      return fail(g.error());
    generation = g.take();
  }
  const GenerationReport *gen = generation ? &*generation : nullptr;

  // Files are written only after a successful run, and all together: every
  // one is staged (a regular file in a temporary file next to it) before any
  // is committed, so a failure leaves none behind.
  OutputFiles files;
  for (const auto &[name, file] : args.outputs) {
    Expected<HostArray> value = outputFor(e, name, plan ? &*plan : nullptr);
    if (!value)
      return fail(value.error());
    if (Status s = checkIntegerRange(*value, file); !s)
      return fail(s.message());
    if (Status s = files.stage(file, encodeNpy(*value)); !s)
      return fail(s.message());
  }
  if (!args.report.empty())
    if (Status s = files.stage(args.report, reportJson(r, gen)); !s)
      return fail(s.message());
  if (!args.trace.empty())
    if (Status s = files.stage(args.trace, traceJson(r, gen)); !s)
      return fail(s.message());
  if (Status s = files.commit(); !s)
    return fail(s.message());
  if (gen)
    printGeneration(*gen);
  printSummary(r, gen);
  // The process ends here: freeing the program piece by piece (GPT-2-small's
  // is 0.7 GB of protobuf) would take most of a second for nothing. Under
  // AddressSanitizer it is freed, so that LeakSanitizer reports real leaks.
#if !defined(__SANITIZE_ADDRESS__) && !WSC_HAS_ASAN
  (void)emu.take().release();
#endif
  return 0;
}

/// A large program is parsed on a heap in huge pages (HugePageHeap.h):
/// before MPI starts, which a second start must not follow.
void restartForLargeProgram(int argc, char **argv) {
  Args args;
  bool help = false;
  if (parseArgs(argc, argv, args, help).empty() && !help)
    restartWithHugePageHeap(args.model, argv);
}

} // namespace

int main(int argc, char **argv) {
#if GOOGLE_PROTOBUF_VERSION < 4022000
  // A corrupt file is reported as one "error:" line, without Protobuf's own
  // log lines (e.g. "String field ... contains invalid UTF-8") before it.
  google::protobuf::SetLogHandler(nullptr);
#endif
  // A FIFO output whose reader goes away is a write error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
#if WSC_MPI
  // Outside the try: a failure before the run is agreed over it.
  std::unique_ptr<MpiChannel> channel;
#endif
  // Host-side failures (e.g. out of memory) are errors too, never an abort.
  try {
    restartForLargeProgram(argc, argv);
#if WSC_MPI
    // Started by mpirun: this process emulates its share of the PEs.
    channel = MpiChannel::launchedByMpirun(argc, argv);
    return runMain(argc, argv, channel.get());
#else
    return runMain(argc, argv, nullptr);
#endif
  } catch (const std::exception &e) {
    return fail(e.what());
  }
}
