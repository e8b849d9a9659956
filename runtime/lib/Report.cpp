// JSON renderings of a run: the --report summary and a Chrome trace.
#include "wsc/runtime/Emulator.h"

#include "Model.h"

#include <nlohmann/json.hpp>

namespace wsc::runtime {

std::string reportJson(const RunReport &r) {
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
  j["instructions"] = r.instructions;
  j["messages"] = r.messages;
  j["wavelets"] = r.wavelets;
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
  // Names come from the program; replace invalid UTF-8 instead of throwing.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string traceJson(const RunReport &r) {
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
  nlohmann::json j;
  j["traceEvents"] = std::move(events);
  j["displayTimeUnit"] = "ns";
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace wsc::runtime
