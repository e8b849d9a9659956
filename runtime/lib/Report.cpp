// JSON renderings of a run: the --report summary and a Chrome trace.
#include "wsc/runtime/Emulator.h"
#include "wsc/runtime/Generation.h"

#include "Model.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace wsc::runtime {
namespace {

/// A rate or mean that one generated token does not define: null.
nlohmann::ordered_json definedOrNull(double v, bool defined) {
  return defined ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json generationJson(const GenerationReport &g) {
  bool decodes = g.steps > 1;
  nlohmann::ordered_json sequences = nlohmann::ordered_json::array();
  for (const SequenceTiming &s : g.sequences) {
    nlohmann::ordered_json cycles = nlohmann::ordered_json::array();
    for (const StoreTime &p : s.picks)
      cycles.push_back(p.cycle);
    sequences.push_back({{"prompt", s.prompt},
                         {"tokens", s.tokens},
                         {"token_cycles", std::move(cycles)},
                         {"start_cycle", s.startCycle},
                         {"ttft_cycles", s.ttftCycles},
                         {"ttft_s", s.ttftS},
                         {"decode_cycles_per_token", definedOrNull(s.decodeCyclesPerToken, decodes)},
                         {"tokens_per_s", definedOrNull(s.tokensPerS, decodes)}});
  }
  nlohmann::ordered_json j;
  j["steps"] = g.steps;
  j["context"] = g.context;
  j["sequences"] = std::move(sequences);
  j["decode_cycles_per_token"] = definedOrNull(g.decodeCyclesPerToken, decodes);
  j["tokens_per_s"] = definedOrNull(g.tokensPerS, decodes);
  j["last_token_cycle"] = g.lastCycle;
  j["batch_tokens_per_s"] = g.batchTokensPerS;
  j["kv_cache_bytes"] =
      g.kvCacheBytes ? nlohmann::ordered_json(g.kvCacheBytes) : nlohmann::ordered_json(nullptr);
  // top_k 0: every logit (a program without top-k takes them all).
  j["sampling"] = g.sampling.size() >= 2
                      ? nlohmann::ordered_json{{"temperature", g.sampling[0]},
                                               {"seed", g.sampling[1]},
                                               {"top_k", g.sampling.size() > 2 ? g.sampling[2] : 0.0f}}
                      : nlohmann::ordered_json(nullptr);
  return j;
}

/// The CLI's decode figures of a generating run: the batch's decode
/// cycles and tokens/s per sequence (null for one token a sequence) and
/// the sequences' mean time to first token, as the summary line gives it.
nlohmann::ordered_json decodeJson(const GenerationReport &g) {
  bool decodes = g.steps > 1;
  double ttft = 0;
  for (const SequenceTiming &s : g.sequences)
    ttft += double(s.ttftCycles);
  if (!g.sequences.empty())
    ttft /= double(g.sequences.size());
  nlohmann::ordered_json j;
  j["cycles_per_token"] = definedOrNull(g.decodeCyclesPerToken, decodes);
  j["tokens_per_s"] = definedOrNull(g.tokensPerS, decodes);
  j["time_to_first_token_cycles"] = uint64_t(std::llround(ttft));
  return j;
}

} // namespace

std::string reportJson(const RunReport &r, const GenerationReport *generation) {
  nlohmann::ordered_json j;
  j["cycles"] = r.cycles;
  j["seconds"] = r.clockHz > 0 ? double(r.cycles) / r.clockHz : 0.0;
  j["clock_hz"] = r.clockHz;
  j["tokens"] = r.tokens;
  j["tokens_per_s"] = r.tokensPerS;
  j["wafers"] = r.wafers;
  j["pes_active"] = r.pesActive;
  j["wall_s"] = r.wallS;
  j["rounds"] = r.rounds;
  j["batched_trips"] = r.batchedTrips;
  j["instructions"] = r.instructions;
  j["messages"] = r.messages;
  j["wavelets"] = r.wavelets;
  j["message_log_peak_bytes"] = r.messageLogPeakBytes;
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelReport &k : r.kernels)
    kernels.push_back({{"name", k.name},
                       {"kind", k.kind},
                       {"wafer", k.wafer},
                       {"pes", k.pes},
                       {"busy_cycles", k.busyCycles},
                       {"busy_pct", k.busyPct}});
  j["kernels"] = std::move(kernels);
  j["links"] = {{"used", r.linksUsed},
                {"max_utilization", r.linkMaxUtilization},
                {"mean_utilization", r.linkMeanUtilization}};
  j["warnings"] = r.warnings;
  if (generation) {
    j["decode"] = decodeJson(*generation);
    j["generation"] = generationJson(*generation);
  }
  // Names come from the program; replace invalid UTF-8 instead of throwing.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string memoryPlanJson(const MemoryPlan &p) {
  nlohmann::ordered_json j;
  j["memory_plan"] = {{"program", p.program}, {"images_in_file", p.imagesInFile},
                      {"pes", p.pes},         {"sram", p.sram},
                      {"fabric", p.fabric},   {"tensors", p.tensors},
                      {"total", p.total()},   {"pes_in_use", p.pesInUse}};
  return j.dump(2) + "\n";
}

std::string traceJson(const RunReport &r, const GenerationReport *generation) {
  nlohmann::json events = nlohmann::json::array();
  // Trace timestamps are microseconds.
  double usPerCycle = r.clockHz > 0 ? 1e6 / r.clockHz : 1.0;
  for (uint32_t w = 0; w < r.wafers; ++w)
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", w},
                      {"args", {{"name", "wafer " + std::to_string(w)}}}});
  for (size_t k = 0; k < r.kernels.size(); ++k)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", r.kernels[k].wafer},
                      {"tid", k},
                      {"args", {{"name", r.kernels[k].name + " (first PE)"}}}});
  // Async ops overlap the core's: they get a track of their own per kernel.
  std::vector<bool> asyncTrack(r.kernels.size());
  for (const TraceEvent &e : r.trace)
    if (e.async && !asyncTrack[e.kernel]) {
      asyncTrack[e.kernel] = true;
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", e.wafer},
                        {"tid", r.kernels.size() + e.kernel},
                        {"args", {{"name", r.kernels[e.kernel].name + " (first PE, async)"}}}});
    }
  for (const TraceEvent &e : r.trace) {
    nlohmann::json ev = {{"name", detail::opName(e.op)},
                         {"ph", "X"},
                         {"pid", e.wafer},
                         {"tid", e.async ? r.kernels.size() + e.kernel : e.kernel},
                         {"ts", double(e.start) * usPerCycle},
                         {"dur", double(e.duration) * usPerCycle},
                         {"args", {{"cycle", e.start}, {"cycles", e.duration}}}};
    if (detail::usesColor(e.op)) {
      ev["args"]["color"] = e.color;
      ev["args"]["wait_cycles"] = e.wait;
    }
    events.push_back(std::move(ev));
  }
  // Each generated token, an instant on the track of the kernel that picked it.
  for (size_t b = 0; generation && b < generation->sequences.size(); ++b) {
    const SequenceTiming &s = generation->sequences[b];
    for (size_t i = 0; i < s.picks.size(); ++i) {
      const StoreTime &p = s.picks[i];
      uint32_t wafer = p.kernel < r.kernels.size() ? r.kernels[p.kernel].wafer : 0;
      events.push_back({{"name", fmt::format("sequence {} token {}: {}", b, i, s.tokens[i])},
                        {"ph", "i"},
                        {"s", "t"},
                        {"pid", wafer},
                        {"tid", p.kernel},
                        {"ts", double(p.cycle) * usPerCycle},
                        {"args",
                         {{"sequence", b},
                          {"step", i},
                          {"position", s.prompt + int64_t(i)},
                          {"token", s.tokens[i]},
                          {"cycle", p.cycle}}}});
    }
  }
  nlohmann::json j;
  j["traceEvents"] = std::move(events);
  j["displayTimeUnit"] = "ns";
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace wsc::runtime
