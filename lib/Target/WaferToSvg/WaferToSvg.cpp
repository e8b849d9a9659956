//===- WaferToSvg.cpp - a picture of a placed and routed module -----------===//
//
// --wafer-to-svg draws every wafer as one row of two panels of the same
// scale: "placement" (kernels as rectangles coloured by kind and labelled with
// their names) and "link load" (for every directed link, the number of router
// entries that send over it, cool to hot). Defects are marked on both, and a
// legend column holds the colours and the figures. Small meshes get one
// element per used link, with a tooltip; large ones (wse3) a coarse grid of
// tiles coloured by their busiest link, one path per load value, so the file
// stays small. What the picture shows is in docs/svg.md.
//
//===----------------------------------------------------------------------===//
#include "wsc/Target/WaferToSvg.h"
#include "wsc/Arch/Arch.h"

#include "wsc/Arch/Defects.h"

#include "wafer/WaferDialect.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
namespace wf = wsc::wafer;
namespace wk = wsc::wskernel;

namespace {

//===----------------------------------------------------------------------===//
// Text and colours
//===----------------------------------------------------------------------===//

/// A coordinate or size: at most two decimals, no trailing zeros.
std::string num(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.')
    s.pop_back();
  if (s == "-0")
    s = "0";
  return s;
}

std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string xmlEscape(StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&apos;";
    else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
      out += '?'; // control characters are not allowed in XML 1.0
    else
      out += c;
  }
  return out;
}

struct Rgb {
  double r = 0, g = 0, b = 0;
};

Rgb parseHex(StringRef hex) {
  unsigned v = 0;
  hex.drop_front().getAsInteger(16, v);
  return {double(v >> 16 & 255), double(v >> 8 & 255), double(v & 255)};
}

std::string toHex(Rgb c) {
  auto byte = [](double v) { return unsigned(std::lround(std::clamp(v, 0.0, 255.0))); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(c.r), byte(c.g), byte(c.b));
  return buf;
}

Rgb mix(Rgb a, Rgb b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

/// Cool to hot: pale blue, blue, teal, green, yellow, orange, red, dark red.
/// Light load stays light, so the hot links stand out.
constexpr const char *kHeatStops[] = {"#b3cde3", "#6497c8", "#3fa6a0", "#9bd16a", "#fee44f",
                                      "#fdae3d", "#f46d2b", "#d7191c", "#8b0010"};
constexpr int kNumHeatStops = sizeof(kHeatStops) / sizeof(kHeatStops[0]);

std::string heatColor(double t) {
  t = std::clamp(t, 0.0, 1.0) * (kNumHeatStops - 1);
  int i = std::min(int(t), kNumHeatStops - 2);
  return toHex(mix(parseHex(kHeatStops[i]), parseHex(kHeatStops[i + 1]), t - i));
}

/// Where load `load` sits on a scale from 1 (coolest) to `top` (hottest).
double loadScale(int64_t load, int64_t top) {
  return top <= 1 ? 1.0 : double(load - 1) / double(top - 1);
}

/// Kernel kinds in legend order, and their fills; other kinds take the
/// spare fills in alphabetical order.
constexpr std::pair<const char *, const char *> kKindFills[] = {
    {"embed", "#66c2a5"},       {"layer_norm", "#ffd92f"}, {"linear", "#8da0cb"},
    {"linear_gelu", "#e78ac3"}, {"attention", "#fc8d62"},  {"add", "#a6d854"},
    {"output", "#b3b3b3"}};
constexpr const char *kSpareFills[] = {"#e5c494", "#80b1d3", "#bc80bd", "#ccebc5",
                                       "#fb8072", "#bebada", "#d9d9d9", "#ffed6f"};

constexpr const char *kDeadLinkColor = "#d7191c";
constexpr const char *kLinkPortColor = "#7b3294";

//===----------------------------------------------------------------------===//
// What is drawn
//===----------------------------------------------------------------------===//

struct Kernel {
  std::string name, kind;
  int64_t wafer = 0, x = 0, y = 0, w = 0, h = 0;
  int64_t sramBytes = 0;
  double cycles = 0;
};

/// Directed link loads of one wafer: load[(y * W + x) * 4 + d - 1] counts the
/// router entries of (x, y) that forward in direction d (North..West).
struct WaferLoad {
  std::vector<uint16_t> load;
  int64_t max = 0, used = 0, sum = 0, entries = 0, maxColorsPerRouter = 0;
  std::set<int32_t> colors;
  std::vector<std::pair<int32_t, int32_t>> linkPes; ///< PEs using LINK, (y, x) sorted
};

class SvgWriter {
public:
  explicit SvgWriter(ModuleOp module) : module(module) {}
  /// The whole picture into `svg`.
  LogicalResult run(std::string &svg);

private:
  LogicalResult collect();
  WaferLoad computeLoad(int64_t wafer) const;
  std::string kindFill(const std::string &kind) const;

  void writeHeader();
  void writeWafer(int64_t wafer, double top);
  void writePlacement(int64_t wafer);
  void writeLinkLoad(int64_t wafer, const WaferLoad &load);
  void writeHeat(const WaferLoad &load);
  /// Returns whether the wafer has any.
  bool writeDefects(int64_t wafer);
  /// Draws the kernel's name, on a halo of its fill colour if `halo`.
  void writeKernelLabel(const Kernel &k, bool halo);
  /// Where a kernel's rectangle is drawn along one axis: [start, start+size)
  /// in pixels, widened to kMinSide around its centre.
  std::pair<double, double> visibleSpan(int64_t start, int64_t size) const;
  /// Returns the legend's height.
  double writeLegend(double left, double top);
  void text(double x, double y, double size, StringRef s, StringRef extra = "");

  ModuleOp module;
  /// The picture's body, below the <svg> element and its definitions.
  std::string out;
  wf::ArchAttr arch;
  /// Each wafer.routes op: its wafer and rows [x, y, color, in, out_mask].
  struct RouteTable {
    int64_t wafer;
    std::vector<std::array<int32_t, 5>> rows;
    Operation *op;
  };
  std::vector<RouteTable> routes;
  std::vector<std::array<int32_t, 3>> deadPes;   ///< [wafer, x, y], sorted
  std::vector<std::array<int32_t, 4>> deadLinks; ///< [wafer, x, y, dir], sorted
  std::vector<Kernel> kernels;
  std::map<std::string, std::string> fills; ///< kind -> fill
  int64_t numWafers = 1, width = 0, height = 0;
  /// Pixels per PE, and the heatmap tile (0: one element per link).
  double s = 1;
  int64_t tile = 0;
  double panelW = 0, panelH = 0;
  /// The top of the heat scale: the largest load, but at least kMinHeatTop,
  /// so that a lightly loaded wafer does not look hot.
  int64_t heatTop = 0;
  /// Figures over all wafers.
  int64_t maxLoad = 0, usedLinks = 0, sumLoad = 0, entries = 0, maxColorsPerRouter = 0;
  int64_t linkPortPes = 0;
  std::set<int32_t> colors;

  static constexpr double kMargin = 16, kHeaderH = 58, kWaferTitleH = 24, kSubtitleH = 18,
                          kRowGap = 28, kPanelGap = 36, kLegendW = 270, kMinSide = 4;
  static constexpr int64_t kMinHeatTop = 4;
};

void SvgWriter::text(double x, double y, double size, StringRef s, StringRef extra) {
  out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) + "\"";
  if (!extra.empty())
    out += " " + extra.str();
  out += ">" + xmlEscape(s) + "</text>\n";
}

std::string SvgWriter::kindFill(const std::string &kind) const {
  auto it = fills.find(kind);
  return it == fills.end() ? "#d9d9d9" : it->second;
}

LogicalResult SvgWriter::collect() {
  FailureOr<wf::ArchAttr> moduleArch = wf::getArch(module);
  if (failed(moduleArch))
    return failure();
  arch = *moduleArch;
  for (auto op : module.getOps<wf::RoutesOp>())
    routes.push_back({int64_t(op.getWafer()), op.getRows(), op});
  wf::DefectList defects = wf::readDefects(wf::getDefects(module));
  deadPes = defects.pes, deadLinks = defects.links;
  llvm::sort(deadPes);
  deadPes.erase(std::unique(deadPes.begin(), deadPes.end()), deadPes.end());
  llvm::sort(deadLinks);
  deadLinks.erase(std::unique(deadLinks.begin(), deadLinks.end()), deadLinks.end());
  wf::ArchAttr a = arch;
  width = a.getWidth();
  height = a.getHeight();
  if (width <= 0 || height <= 0)
    return module.emitError("cannot draw: arch '") << a.getName().str() << "' has no PEs";

  WalkResult walk = module.walk([&](wk::KernelOp k) {
    auto origin = k->getAttrOfType<DenseI64ArrayAttr>(wf::kOriginAttrName);
    if (!origin || origin.size() != 3) {
      k.emitError("cannot draw: the kernel is not placed (no '")
          << wf::kOriginAttrName << "' = array<i64: wafer, x, y>); run --wsc-place first (kernel '"
          << k.getName() << "')";
      return WalkResult::interrupt();
    }
    Kernel kernel;
    kernel.name = k.getName().str();
    kernel.kind = k.getKind().str();
    kernel.wafer = origin[0], kernel.x = origin[1], kernel.y = origin[2];
    kernel.w = k.getWidth(), kernel.h = k.getHeight();
    kernel.sramBytes = int64_t(k.getSramBytesPerPe());
    kernel.cycles = k.getCyclesPerToken().convertToDouble();
    if (kernel.wafer < 0 || kernel.wafer >= std::max<int64_t>(a.getMaxWafers(), 1) ||
        kernel.x < 0 || kernel.y < 0 || kernel.w <= 0 || kernel.h <= 0 ||
        kernel.x + kernel.w > width || kernel.y + kernel.h > height) {
      k.emitError("cannot draw: ")
          << kernel.w << "x" << kernel.h << " PEs at (" << kernel.x << ", " << kernel.y
          << ") on wafer " << kernel.wafer << " do not fit arch '" << a.getName().str() << "' ("
          << width << "x" << height << " PEs, " << a.getMaxWafers() << " wafers) (kernel '"
          << kernel.name << "')";
      return WalkResult::interrupt();
    }
    numWafers = std::max(numWafers, kernel.wafer + 1);
    kernels.push_back(std::move(kernel));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  for (auto &table : routes) {
    if (table.wafer < 0 || table.wafer >= std::max<int64_t>(a.getMaxWafers(), 1))
      return table.op->emitError("cannot draw: router table of wafer ")
             << table.wafer << ", but arch '" << a.getName().str() << "' has " << a.getMaxWafers()
             << " wafers";
    for (const auto &row : table.rows) {
      auto [x, y, c, in, mask] = row;
      if (x < 0 || y < 0 || x >= width || y >= height || c < 0 || in < 0 || in > wf::Link ||
          mask < 0 || mask >= (2 << wf::Link))
        return table.op->emitError("cannot draw: router entry [")
               << x << ", " << y << ", " << c << ", " << in << ", " << mask << "] of wafer "
               << table.wafer << " is not an entry of a " << width << "x" << height << " grid";
    }
    // Rows grouped by router, whatever order the table came in.
    llvm::sort(table.rows, [](const auto &l, const auto &r) {
      return std::tie(l[1], l[0], l[2], l[3], l[4]) < std::tie(r[1], r[0], r[2], r[3], r[4]);
    });
    numWafers = std::max(numWafers, table.wafer + 1);
  }

  // Fills: the known kinds first, then the others alphabetically.
  std::set<std::string> kinds;
  for (const Kernel &k : kernels)
    kinds.insert(k.kind);
  for (const auto &[kind, fill] : kKindFills)
    fills[kind] = fill;
  size_t spare = 0;
  for (const std::string &kind : kinds)
    if (!fills.count(kind))
      fills[kind] = kSpareFills[spare++ % (sizeof(kSpareFills) / sizeof(kSpareFills[0]))];

  // Scale: the longer side of a panel is about 960 pixels, at most 32 and at
  // least 1 pixel per PE. Heatmap tiles are at least 6 pixels, at most 16k
  // per wafer and 48k in all (but always 2k per wafer are allowed).
  s = std::clamp(960.0 / double(std::max(width, height)), 1.0, 32.0);
  panelW = double(width) * s;
  panelH = double(height) * s;
  tile = 0;
  if (s < 10) {
    tile = 1;
    int64_t maxTiles = std::clamp<int64_t>(49152 / numWafers, 2048, 16384);
    while (tile * s < 6 || ((width + tile - 1) / tile) * ((height + tile - 1) / tile) > maxTiles)
      tile *= 2;
  }
  return success();
}

WaferLoad SvgWriter::computeLoad(int64_t wafer) const {
  WaferLoad l;
  l.load.assign(size_t(width * height * 4), 0);
  for (const auto &table : routes) {
    if (table.wafer != wafer)
      continue;
    int64_t routerX = -1, routerY = -1;
    std::set<int32_t> routerColors;
    auto closeRouter = [&] {
      l.maxColorsPerRouter = std::max<int64_t>(l.maxColorsPerRouter, routerColors.size());
      routerColors.clear();
    };
    for (const auto &[x, y, c, in, mask] : table.rows) {
      if (x != routerX || y != routerY) {
        closeRouter();
        routerX = x, routerY = y;
      }
      routerColors.insert(c);
      l.colors.insert(c);
      ++l.entries;
      if (in == wf::Link || (mask >> wf::Link & 1))
        l.linkPes.push_back({y, x});
      for (int d = wf::North; d <= wf::West; ++d) {
        if (!(mask >> d & 1))
          continue;
        int64_t nx = x + (d == wf::East) - (d == wf::West);
        int64_t ny = y + (d == wf::South) - (d == wf::North);
        if (nx < 0 || ny < 0 || nx >= width || ny >= height)
          continue; // off the grid: no link to draw (the route checker's business)
        uint16_t &v = l.load[size_t((y * width + x) * 4 + d - 1)];
        if (v < UINT16_MAX)
          ++v;
      }
    }
    closeRouter();
  }
  for (uint16_t v : l.load)
    if (v) {
      ++l.used;
      l.sum += v;
      l.max = std::max<int64_t>(l.max, v);
    }
  llvm::sort(l.linkPes);
  l.linkPes.erase(std::unique(l.linkPes.begin(), l.linkPes.end()), l.linkPes.end());
  return l;
}

LogicalResult SvgWriter::run(std::string &svg) {
  if (failed(collect()))
    return failure();
  // Figures first: one heat scale for all wafers.
  for (int64_t w = 0; w < numWafers; ++w) {
    WaferLoad l = computeLoad(w);
    maxLoad = std::max(maxLoad, l.max);
    usedLinks += l.used;
    sumLoad += l.sum;
    entries += l.entries;
    maxColorsPerRouter = std::max(maxColorsPerRouter, l.maxColorsPerRouter);
    linkPortPes += int64_t(l.linkPes.size());
    colors.insert(l.colors.begin(), l.colors.end());
  }
  heatTop = std::max(maxLoad, kMinHeatTop);

  double rowH = kWaferTitleH + kSubtitleH + panelH + kRowGap;
  double legendLeft = kMargin + 2 * panelW + kPanelGap + 40;
  double legendTop = kHeaderH + kWaferTitleH + kSubtitleH;
  double totalW = legendLeft + kLegendW + kMargin;

  // The body first: the legend's height decides the picture's.
  writeHeader();
  for (int64_t w = 0; w < numWafers; ++w)
    writeWafer(w, kHeaderH + double(w) * rowH);
  double legendH = writeLegend(legendLeft, legendTop);
  double totalH = std::max(kHeaderH + double(numWafers) * rowH, legendTop + legendH) + kMargin;

  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(totalW) +
         "\" height=\"" + num(totalH) + "\" viewBox=\"0 0 " + num(totalW) + " " + num(totalH) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
  svg += "<title>wsc wafer map: " + xmlEscape(arch.getName()) + ", " + std::to_string(numWafers) +
         (numWafers == 1 ? " wafer, " : " wafers, ") + std::to_string(kernels.size()) +
         " kernels</title>\n";
  svg += "<defs>\n<linearGradient id=\"heat\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">\n";
  for (int i = 0; i < kNumHeatStops; ++i)
    svg += "<stop offset=\"" + num(double(i) / (kNumHeatStops - 1)) + "\" stop-color=\"" +
           kHeatStops[i] + "\"/>\n";
  svg += "</linearGradient>\n</defs>\n";
  svg += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + num(totalW) + "\" height=\"" +
         num(totalH) + "\" fill=\"#ffffff\"/>\n";
  svg += out;
  svg += "</svg>\n";
  return success();
}

void SvgWriter::writeHeader() {
  wf::ArchAttr a = arch;
  int64_t pes = 0;
  for (const Kernel &k : kernels)
    pes += k.w * k.h;
  // The model, when the importer recorded where it came from.
  std::string model;
  if (auto source = module->getAttrOfType<StringAttr>("wsgraph.source"))
    model = llvm::sys::path::filename(source.getValue()).str() + " on ";
  text(kMargin, 26, 18,
       "wsc wafer map: " + model + "arch " + a.getName().str() + " (" + std::to_string(width) +
           " x " + std::to_string(height) + " PEs per wafer), " + std::to_string(numWafers) +
           (numWafers == 1 ? " wafer" : " wafers"),
       "font-weight=\"bold\" fill=\"#111111\"");
  text(kMargin, 46, 13,
       std::to_string(kernels.size()) + " kernels on " + std::to_string(pes) + " PEs (" +
           percent(double(pes), double(numWafers * width * height)) + "), max link load " +
           std::to_string(maxLoad) + ", " + std::to_string(colors.size()) + " of " +
           std::to_string(a.getColors()) + " colors used",
       "fill=\"#333333\"");
}

void SvgWriter::writeWafer(int64_t wafer, double top) {
  WaferLoad load = computeLoad(wafer);
  int64_t count = 0, pes = 0;
  for (const Kernel &k : kernels)
    if (k.wafer == wafer)
      ++count, pes += k.w * k.h;
  out += "<g class=\"wafer\" id=\"wafer" + std::to_string(wafer) + "\">\n";
  text(kMargin, top + 17, 15,
       "wafer " + std::to_string(wafer) + ": " + std::to_string(count) + " kernels, " +
           std::to_string(pes) + " PEs used (" + percent(double(pes), double(width * height)) +
           "), max link load " + std::to_string(load.max),
       "font-weight=\"bold\" fill=\"#111111\"");
  double panelTop = top + kWaferTitleH + kSubtitleH;
  double right = kMargin + panelW + kPanelGap;
  text(kMargin, panelTop - 5, 12, "placement: kernels by kind", "fill=\"#444444\"");
  text(right, panelTop - 5, 12,
       tile ? "link load: busiest link of every " + std::to_string(tile) + "x" +
                  std::to_string(tile) + " PEs"
            : std::string("link load: router entries per directed link"),
       "fill=\"#444444\"");

  out += "<g class=\"placement\" transform=\"translate(" + num(kMargin) + " " + num(panelTop) +
         ")\">\n";
  writePlacement(wafer);
  bool defects = writeDefects(wafer);
  // Names over the defect marks, on a halo of the kernel's colour when marks
  // may lie under them.
  out += "<g class=\"labels\" text-anchor=\"middle\">\n";
  for (const Kernel &k : kernels)
    if (k.wafer == wafer)
      writeKernelLabel(k, defects);
  out += "</g>\n</g>\n";
  out +=
      "<g class=\"link-load\" transform=\"translate(" + num(right) + " " + num(panelTop) + ")\">\n";
  writeLinkLoad(wafer, load);
  // Tiles hide single PEs: at that scale the defects are on the left only.
  if (!tile)
    writeDefects(wafer);
  out += "</g>\n</g>\n";
}

std::pair<double, double> SvgWriter::visibleSpan(int64_t start, int64_t size) const {
  double lo = double(start) * s, len = double(size) * s;
  if (len >= kMinSide)
    return {lo, len};
  return {lo + len / 2 - kMinSide / 2, kMinSide};
}

void SvgWriter::writePlacement(int64_t wafer) {
  out += "<rect class=\"grid\" x=\"0\" y=\"0\" width=\"" + num(panelW) + "\" height=\"" +
         num(panelH) + "\" fill=\"#f4f4f4\" stroke=\"#222222\" stroke-width=\"1.5\"/>\n";
  // Faint PE cells where they are at least 6 pixels wide.
  if (s >= 6 && (width > 1 || height > 1)) {
    out += "<path class=\"pe-cells\" fill=\"none\" stroke=\"#dcdcdc\" stroke-width=\"0.5\" d=\"";
    for (int64_t x = 1; x < width; ++x)
      out += "M" + num(double(x) * s) + " 0V" + num(panelH);
    for (int64_t y = 1; y < height; ++y)
      out += "M0 " + num(double(y) * s) + "H" + num(panelW);
    out += "\"/>\n";
  }
  double strokeW = std::clamp(s * 0.06, 0.5, 1.5);
  for (const Kernel &k : kernels) {
    if (k.wafer != wafer)
      continue;
    std::string fill = kindFill(k.kind);
    out += "<g class=\"kernel\"><title>" + xmlEscape(k.name) + " (" + xmlEscape(k.kind) +
           "): " + std::to_string(k.w) + "x" + std::to_string(k.h) + " PEs at (" +
           std::to_string(k.x) + ", " + std::to_string(k.y) + ") on wafer " +
           std::to_string(k.wafer) + ", " + std::to_string(k.sramBytes) +
           " bytes of SRAM per PE, " + num(k.cycles) + " cycles per token</title>";
    // Kernels one or two PEs thick stay visible at wse3 scale: at least
    // kMinSide pixels, centred on the true rectangle.
    auto [rx, rw] = visibleSpan(k.x, k.w);
    auto [ry, rh] = visibleSpan(k.y, k.h);
    out += "<rect x=\"" + num(rx) + "\" y=\"" + num(ry) + "\" width=\"" + num(rw) + "\" height=\"" +
           num(rh) + "\" fill=\"" + fill + "\" stroke=\"" +
           toHex(mix(parseHex(fill), Rgb{}, 0.45)) + "\" stroke-width=\"" + num(strokeW) +
           "\"/></g>\n";
  }
}

/// The name, as large as the rectangle allows (at most 16 pixels): on one
/// line, on two (split after the layer, "l3." / "qkv") or turned upright for
/// tall narrow kernels. Labels under 7 pixels are left out; the tooltip
/// still names the kernel.
void SvgWriter::writeKernelLabel(const Kernel &k, bool halo) {
  constexpr double kCharW = 0.62, kMaxFont = 16, kMinFont = 7, kPad = 3;
  double bw = double(k.w) * s - 2 * kPad, bh = double(k.h) * s - 2 * kPad;
  if (bw <= 0 || bh <= 0)
    return;
  double n = double(k.name.size());
  double one = std::min({kMaxFont, bh / 1.2, bw / (kCharW * n)});
  double upright = std::min({kMaxFont, bw / 1.2, bh / (kCharW * n)});
  size_t dot = k.name.find('.');
  std::string first, second;
  double two = 0;
  if (dot != std::string::npos && dot + 1 < k.name.size()) {
    first = k.name.substr(0, dot + 1);
    second = k.name.substr(dot + 1);
    two = std::min(
        {kMaxFont, bh / 2.4, bw / (kCharW * double(std::max(first.size(), second.size())))});
  }
  enum { One, Two, Upright } how = One;
  double font = one;
  if (one < 10) {
    if (two > font)
      how = Two, font = two;
    if (upright > font * 1.15)
      how = Upright, font = upright;
  }
  if (font < kMinFont)
    return;
  double cx = (double(k.x) + double(k.w) / 2) * s, cy = (double(k.y) + double(k.h) / 2) * s;
  auto emit = [&](const std::string &attrs) {
    std::string pos = "x=\"" + num(cx) + "\" y=\"";
    switch (how) {
    case One:
      out += "<text " + pos + num(cy + 0.35 * font) + "\" font-size=\"" + num(font) + "\" " +
             attrs + ">" + xmlEscape(k.name) + "</text>";
      break;
    case Two:
      out += "<text " + pos + num(cy - 0.25 * font) + "\" font-size=\"" + num(font) + "\" " +
             attrs + ">" + xmlEscape(first) + "<tspan " + pos + num(cy + 0.95 * font) + "\">" +
             xmlEscape(second) + "</tspan></text>";
      break;
    case Upright:
      out += "<text " + pos + num(cy + 0.35 * font) + "\" font-size=\"" + num(font) + "\" " +
             attrs + " transform=\"rotate(-90 " + num(cx) + " " + num(cy) + ")\">" +
             xmlEscape(k.name) + "</text>";
      break;
    }
  };
  if (halo) {
    std::string fill = kindFill(k.kind);
    emit("class=\"halo\" fill=\"" + fill + "\" stroke=\"" + fill + "\" stroke-width=\"" +
         num(std::max(2.0, font * 0.3)) + "\" stroke-linejoin=\"round\"");
  }
  emit("class=\"label\" fill=\"#111111\"");
  out += "\n";
}

void SvgWriter::writeLinkLoad(int64_t wafer, const WaferLoad &load) {
  out += "<rect class=\"grid\" x=\"0\" y=\"0\" width=\"" + num(panelW) + "\" height=\"" +
         num(panelH) + "\" fill=\"#ffffff\" stroke=\"#222222\" stroke-width=\"1.5\"/>\n";
  // Kernel areas under the heat, their outlines over it, for orientation.
  std::string kernelPath;
  for (const Kernel &k : kernels)
    if (k.wafer == wafer) {
      auto [rx, rw] = visibleSpan(k.x, k.w);
      auto [ry, rh] = visibleSpan(k.y, k.h);
      kernelPath +=
          "M" + num(rx) + " " + num(ry) + "h" + num(rw) + "v" + num(rh) + "h" + num(-rw) + "z";
    }
  if (!kernelPath.empty())
    out += "<path class=\"kernel-areas\" fill=\"#ececec\" d=\"" + kernelPath + "\"/>\n";
  writeHeat(load);
  if (!kernelPath.empty())
    out += "<path class=\"kernel-outlines\" fill=\"none\" stroke=\"#555555\" stroke-width=\"" +
           num(std::clamp(s * 0.04, 0.6, 1.0)) + "\" d=\"" + kernelPath + "\"/>\n";
}

void SvgWriter::writeHeat(const WaferLoad &load) {
  if (load.max == 0)
    return;

  if (tile == 0) {
    // One line per used directed link, on the right-hand side of the link in
    // its direction of travel, grouped by load.
    std::vector<std::vector<std::pair<int64_t, int>>> byLoad(size_t(maxLoad) + 1);
    for (int64_t i = 0, e = width * height; i < e; ++i)
      for (int d = wf::North; d <= wf::West; ++d)
        if (uint16_t v = load.load[size_t(i * 4 + d - 1)])
          byLoad[v].push_back({i, d});
    double lane = s * 0.2, trim = s * 0.03;
    bool titles = load.used <= 20000;
    for (int64_t v = 1; v <= maxLoad; ++v) {
      if (byLoad[size_t(v)].empty())
        continue;
      // Hotter links are also wider.
      double t = loadScale(v, heatTop);
      out += "<g class=\"links\" stroke=\"" + heatColor(t) + "\" stroke-width=\"" +
             num(std::max(1.0, s * (0.14 + 0.16 * t))) + "\">\n";
      for (auto [i, d] : byLoad[size_t(v)]) {
        int64_t x = i % width, y = i / width;
        int dx = (d == wf::East) - (d == wf::West), dy = (d == wf::South) - (d == wf::North);
        // The right-hand side of travel: east goes on the south side and so on.
        double ox = -dy * lane, oy = dx * lane;
        double x1 = (double(x) + 0.5) * s + ox + dx * trim,
               y1 = (double(y) + 0.5) * s + oy + dy * trim;
        double x2 = (double(x + dx) + 0.5) * s + ox - dx * trim,
               y2 = (double(y + dy) + 0.5) * s + oy - dy * trim;
        out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
               num(y2) + "\"";
        if (titles)
          out += "><title>(" + std::to_string(x) + ", " + std::to_string(y) + ") " +
                 std::string(1, "RNESWL"[d]) + " to (" + std::to_string(x + dx) + ", " +
                 std::to_string(y + dy) + "): load " + std::to_string(v) + "</title></line>\n";
        else
          out += "/>\n";
      }
      out += "</g>\n";
    }
  } else {
    // Tiles coloured by their busiest link, one path per load.
    int64_t tw = (width + tile - 1) / tile, th = (height + tile - 1) / tile;
    std::vector<uint16_t> busiest(size_t(tw * th), 0);
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        uint16_t &t = busiest[size_t((y / tile) * tw + x / tile)];
        for (int d = 0; d < 4; ++d)
          t = std::max(t, load.load[size_t((y * width + x) * 4 + d)]);
      }
    std::vector<std::string> paths(size_t(maxLoad) + 1);
    for (int64_t ty = 0; ty < th; ++ty)
      for (int64_t tx = 0; tx < tw; ++tx)
        if (uint16_t v = busiest[size_t(ty * tw + tx)]) {
          double w = double(std::min(tile, width - tx * tile)) * s;
          double h = double(std::min(tile, height - ty * tile)) * s;
          paths[v] += "M" + num(double(tx * tile) * s) + " " + num(double(ty * tile) * s) + "h" +
                      num(w) + "v" + num(h) + "h" + num(-w) + "z";
        }
    for (int64_t v = 1; v <= maxLoad; ++v)
      if (!paths[size_t(v)].empty())
        out += "<path class=\"tiles\" fill=\"" + heatColor(loadScale(v, heatTop)) + "\" d=\"" +
               paths[size_t(v)] + "\"><title>busiest link: load " + std::to_string(v) +
               "</title></path>\n";
  }

  // PEs that use the off-wafer LINK port.
  if (!load.linkPes.empty()) {
    out += "<g class=\"link-ports\" fill=\"none\" stroke=\"" + std::string(kLinkPortColor) +
           "\" stroke-width=\"" + num(std::max(1.0, s * 0.12)) + "\">";
    for (auto [y, x] : load.linkPes)
      out += "<circle cx=\"" + num((x + 0.5) * s) + "\" cy=\"" + num((y + 0.5) * s) + "\" r=\"" +
             num(std::max(2.5, s * 0.4)) + "\"/>";
    out += "</g>\n";
  }
}

bool SvgWriter::writeDefects(int64_t wafer) {
  std::string pes, pesTitle, links, linksTitle;
  int64_t numPes = 0, numLinks = 0;
  double d = std::max(s * 0.7, 1.5);
  for (const auto &[w, x, y] : deadPes) {
    if (w != wafer || x < 0 || y < 0 || x >= width || y >= height)
      continue;
    pes += "M" + num((x + 0.5) * s - d / 2) + " " + num((y + 0.5) * s - d / 2) + "h" + num(d) +
           "v" + num(d) + "h" + num(-d) + "z";
    if (++numPes <= 40)
      pesTitle += " (" + std::to_string(x) + ", " + std::to_string(y) + ")";
  }
  double len = std::max(s * 0.8, 2.5);
  for (const auto &[w, x, y, dir] : deadLinks) {
    if (w != wafer || x < 0 || y < 0 || x >= width || y >= height)
      continue;
    // A bar across the link, on the edge between the two PEs.
    if (dir == wf::East)
      links += "M" + num((x + 1) * s) + " " + num((y + 0.5) * s - len / 2) + "v" + num(len);
    else if (dir == wf::South)
      links += "M" + num((x + 0.5) * s - len / 2) + " " + num((y + 1) * s) + "h" + num(len);
    else
      continue;
    if (++numLinks <= 40)
      linksTitle += std::string(" (") + std::to_string(x) + ", " + std::to_string(y) + ")" +
                    (dir == wf::East ? "E" : "S");
  }
  if (numPes)
    out += "<path class=\"dead-pes\" fill=\"#000000\" d=\"" + pes + "\"><title>" +
           std::to_string(numPes) + (numPes == 1 ? " dead PE:" : " dead PEs:") + pesTitle +
           (numPes > 40 ? " ..." : "") + "</title></path>\n";
  if (numLinks)
    out += "<path class=\"dead-links\" fill=\"none\" stroke=\"" + std::string(kDeadLinkColor) +
           "\" stroke-width=\"" + num(std::max(s * 0.2, 1.0)) + "\" d=\"" + links + "\"><title>" +
           std::to_string(numLinks) + (numLinks == 1 ? " dead link:" : " dead links:") +
           linksTitle + (numLinks > 40 ? " ..." : "") + "</title></path>\n";
  return numPes || numLinks;
}

double SvgWriter::writeLegend(double left, double top) {
  wf::ArchAttr a = arch;
  out += "<g class=\"legend\" transform=\"translate(" + num(left) + " " + num(top) + ")\">\n";
  double y = 0;
  auto heading = [&](StringRef s) {
    y += 18;
    text(0, y, 14, s, "font-weight=\"bold\" fill=\"#111111\"");
    y += 6;
  };
  auto line = [&](StringRef s) {
    y += 17;
    text(0, y, 12, s, "fill=\"#222222\"");
  };

  heading("Kernel kinds");
  std::map<std::string, int64_t> counts;
  for (const Kernel &k : kernels)
    ++counts[k.kind];
  std::vector<std::string> order;
  for (const auto &[kind, fill] : kKindFills)
    order.push_back(kind);
  for (const auto &[kind, fill] : fills)
    if (!llvm::is_contained(order, kind))
      order.push_back(kind);
  for (const std::string &kind : order) {
    y += 18;
    std::string fill = kindFill(kind);
    out += "<rect class=\"swatch\" x=\"0\" y=\"" + num(y - 12) +
           "\" width=\"22\" height=\"14\" fill=\"" + fill + "\" stroke=\"" +
           toHex(mix(parseHex(fill), Rgb{}, 0.45)) + "\"/>\n";
    text(30, y, 12, kind + " (" + std::to_string(counts[kind]) + ")", "fill=\"#222222\"");
  }

  y += 10;
  heading("Link load");
  y += 8;
  out += "<rect class=\"heat-scale\" x=\"0\" y=\"" + num(y) +
         "\" width=\"200\" height=\"14\" fill=\"url(#heat)\" stroke=\"#555555\" "
         "stroke-width=\"0.5\"/>\n";
  y += 28;
  // Ticks at every load up to 12, else at 1, the middle and the top.
  std::vector<int64_t> ticks;
  for (int64_t v = 1; v <= heatTop; ++v)
    if (heatTop <= 12 || v == 1 || v == heatTop || v == (heatTop + 1) / 2)
      ticks.push_back(v);
  for (int64_t v : ticks) {
    double x = 200 * loadScale(v, heatTop);
    out +=
        "<path class=\"tick\" stroke=\"#555555\" d=\"M" + num(x) + " " + num(y - 14) + "v4\"/>\n";
    text(x, y, 11, std::to_string(v),
         v == 1         ? "fill=\"#222222\""
         : v == heatTop ? "text-anchor=\"end\" fill=\"#222222\""
                        : "text-anchor=\"middle\" fill=\"#222222\"");
  }
  line("router entries (colors) that send over");
  if (tile) {
    line("a directed link; each tile shows the");
    line("busiest link of its " + std::to_string(tile) + "x" + std::to_string(tile) + " PEs");
  } else {
    line("a directed link; one lane per direction,");
    line("on the right-hand side of travel");
  }

  y += 10;
  heading("Defects");
  y += 18;
  out += "<rect class=\"swatch\" x=\"5\" y=\"" + num(y - 11) +
         "\" width=\"12\" height=\"12\" fill=\"#000000\"/>\n";
  auto drawn = [&](const auto &row) { return row[0] >= 0 && row[0] < numWafers; };
  text(30, y, 12, "dead PE (" + std::to_string(llvm::count_if(deadPes, drawn)) + ")",
       "fill=\"#222222\"");
  y += 18;
  out += "<path class=\"swatch\" stroke=\"" + std::string(kDeadLinkColor) +
         "\" stroke-width=\"2.5\" d=\"M11 " + num(y - 13) + "v14\"/>\n";
  text(30, y, 12, "dead link (" + std::to_string(llvm::count_if(deadLinks, drawn)) + ")",
       "fill=\"#222222\"");
  if (tile)
    line("marked on the placement panel only");
  if (linkPortPes) {
    y += 18;
    out += "<circle class=\"swatch\" cx=\"11\" cy=\"" + num(y - 5) +
           "\" r=\"5\" fill=\"none\" "
           "stroke=\"" +
           std::string(kLinkPortColor) + "\" stroke-width=\"1.5\"/>\n";
    text(30, y, 12, "uses the off-wafer LINK (" + std::to_string(linkPortPes) + ")",
         "fill=\"#222222\"");
  }

  y += 10;
  heading("Figures");
  int64_t pes = 0;
  for (const Kernel &k : kernels)
    pes += k.w * k.h;
  line("kernels: " + std::to_string(kernels.size()) + " on " + std::to_string(numWafers) +
       (numWafers == 1 ? " wafer" : " wafers"));
  line("PEs used: " + std::to_string(pes) + " of " + std::to_string(numWafers * width * height) +
       " (" + percent(double(pes), double(numWafers * width * height)) + ")");
  line("max link load: " + std::to_string(maxLoad) + " (" + std::to_string(a.getColors()) +
       " colors per link)");
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.2f", usedLinks ? double(sumLoad) / double(usedLinks) : 0.0);
  line(std::string("mean link load: ") + mean + " over " + std::to_string(usedLinks) +
       " used links");
  line("colors used: " + std::to_string(colors.size()) + " of " + std::to_string(a.getColors()) +
       " (max " + std::to_string(maxColorsPerRouter) + " per router)");
  line("router entries: " + std::to_string(entries));
  line("scale: " + num(s) + " px per PE");
  out += "</g>\n";
  return y + 8;
}

} // namespace

LogicalResult wsc::waferToSvg(ModuleOp module, std::string &svg) {
  svg.clear();
  return SvgWriter(module).run(svg);
}

LogicalResult wsc::waferToSvg(ModuleOp module, raw_ostream &os) {
  std::string svg;
  if (failed(waferToSvg(module, svg)))
    return failure();
  os << svg;
  return success();
}

void wsc::registerWaferToSvg() {
  static TranslateFromMLIRRegistration registration(
      "wafer-to-svg", "Draw a placed and routed module as an SVG picture of its wafers",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("cannot draw: expected a builtin.module");
        return waferToSvg(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<func::FuncDialect, wsc::wsgraph::WsgraphDialect,
                        wsc::wskernel::WskernelDialect, wf::WaferDialect>();
      });
}
