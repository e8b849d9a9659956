//===- Defects.cpp - defect maps: file format, random maps, lookups -------===//
#include "wsc/Arch/Defects.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;
using namespace wsc::wafer;

void DefectGrid::killLink(int64_t x, int64_t y, int dir) {
  if (dir == Link) {
    if (onGrid(x, y))
      cells[y * width + x] |= 1 << Link;
    return;
  }
  int64_t nx = x, ny = y;
  stepDir(nx, ny, dir);
  if (!onGrid(x, y) || !onGrid(nx, ny))
    return;
  cells[y * width + x] |= 1 << dir;
  cells[ny * width + nx] |= 1 << oppositeDir(dir);
}

DefectGrid DefectGrid::forWafer(DefectsAttr attr, int64_t width, int64_t height, int64_t index) {
  DefectGrid grid(width, height);
  if (!attr)
    return grid;
  DefectList list = readDefects(attr);
  for (auto &p : list.pes)
    if (p[0] == index && grid.onGrid(p[1], p[2]))
      grid.killPe(p[1], p[2]);
  for (auto &l : list.links)
    if (l[0] == index)
      grid.killLink(l[1], l[2], l[3]);
  return grid;
}

LogicalResult wsc::wafer::parseDefectFile(StringRef text, StringRef name, int64_t width,
                                          int64_t height, int64_t maxWafers, DefectList &out,
                                          std::string &error) {
  int64_t wafer = 0, lineNo = 0;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    ++lineNo;
    auto fail = [&](const Twine &msg) {
      error = (name + ":" + Twine(lineNo) + ": " + msg).str();
      return failure();
    };
    line = line.split('#').first.trim();
    if (line.empty())
      continue;
    SmallVector<StringRef> words;
    line.split(words, ' ', -1, /*KeepEmpty=*/false);
    // Tabs count as spaces.
    SmallVector<StringRef> tokens;
    for (StringRef w : words) {
      SmallVector<StringRef> parts;
      w.split(parts, '\t', -1, false);
      tokens.append(parts.begin(), parts.end());
    }
    auto number = [&](StringRef tok, int64_t &v) { return !tok.getAsInteger(10, v) && v >= 0; };
    StringRef kw = tokens[0];
    if (kw == "wafer") {
      if (tokens.size() != 2 || !number(tokens[1], wafer))
        return fail("expected 'wafer INDEX'");
      if (wafer >= maxWafers)
        return fail("wafer " + Twine(wafer) + " is beyond the arch's " + Twine(maxWafers) +
                    " wafers");
      continue;
    }
    int64_t x, y;
    if (kw == "pe") {
      if (tokens.size() != 3 || !number(tokens[1], x) || !number(tokens[2], y))
        return fail("expected 'pe X Y'");
      if (x >= width || y >= height)
        return fail("PE (" + Twine(x) + ", " + Twine(y) + ") is off the " + Twine(width) + "x" +
                    Twine(height) + " grid");
      out.pes.push_back({int32_t(wafer), int32_t(x), int32_t(y)});
      continue;
    }
    if (kw == "link") {
      if (tokens.size() != 4 || !number(tokens[1], x) || !number(tokens[2], y))
        return fail("expected 'link X Y DIR' with DIR one of N, E, S, W, L");
      int dir = StringSwitch<int>(tokens[3].upper())
                    .Case("N", North)
                    .Case("E", East)
                    .Case("S", South)
                    .Case("W", West)
                    .Case("L", Link)
                    .Default(-1);
      if (dir < 0)
        return fail("link direction '" + tokens[3] + "' is not one of N, E, S, W, L");
      if (dir == Link) {
        if (x >= width || y >= height)
          return fail("PE (" + Twine(x) + ", " + Twine(y) + ") is off the " + Twine(width) + "x" +
                      Twine(height) + " grid");
        if (x != 0 && y != 0 && x != width - 1 && y != height - 1)
          return fail("PE (" + Twine(x) + ", " + Twine(y) +
                      ") is not on the edge: only edge PEs have an off-wafer link");
        out.links.push_back({int32_t(wafer), int32_t(x), int32_t(y), int32_t(dir)});
        continue;
      }
      int64_t nx = x, ny = y;
      stepDir(nx, ny, dir);
      if (x >= width || y >= height || nx < 0 || ny < 0 || nx >= width || ny >= height)
        return fail("link " + Twine(x) + " " + Twine(y) + " " + tokens[3] + " leaves the " +
                    Twine(width) + "x" + Twine(height) + " grid");
      out.links.push_back({int32_t(wafer), int32_t(x), int32_t(y), int32_t(dir)});
      continue;
    }
    return fail("expected 'pe X Y', 'link X Y DIR' or 'wafer INDEX', got '" + kw + "'");
  }
  return success();
}


void wsc::wafer::addRandomDefects(DefectList &list, int64_t wafers, int64_t width, int64_t height,
                                  double peRate, double linkRate, uint64_t seed) {
  for (int64_t w = 0; w < wafers; ++w) {
    SplitMix rng{seed * 0x100000001b3ULL + uint64_t(w) * 0x9e3779b97f4a7c15ULL + 1};
    if (peRate > 0)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
          if (rng.uniform() < peRate)
            list.pes.push_back({int32_t(w), int32_t(x), int32_t(y)});
    if (linkRate > 0)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
          for (int dir : {East, South}) {
            bool inside = dir == East ? x + 1 < width : y + 1 < height;
            // The draw for EAST off the east edge decides the off-wafer link
            // to the next wafer (docs/placement-and-routing.md, "Between wafers").
            bool toNext = dir == East && x + 1 == width && w + 1 < wafers;
            if (rng.uniform() < linkRate && (inside || toNext))
              list.links.push_back(
                  {int32_t(w), int32_t(x), int32_t(y), int32_t(inside ? dir : Link)});
          }
  }
}

DefectsAttr wsc::wafer::buildDefects(MLIRContext *ctx, DefectList list) {
  for (auto &l : list.links) {
    if (l[3] == North)
      l[2] -= 1, l[3] = South;
    else if (l[3] == West)
      l[1] -= 1, l[3] = East;
  }
  llvm::sort(list.pes);
  list.pes.erase(std::unique(list.pes.begin(), list.pes.end()), list.pes.end());
  llvm::sort(list.links);
  list.links.erase(std::unique(list.links.begin(), list.links.end()), list.links.end());
  auto i32 = IntegerType::get(ctx, 32);
  SmallVector<int32_t> pes, links;
  for (auto &p : list.pes)
    pes.append(p.begin(), p.end());
  for (auto &l : list.links)
    links.append(l.begin(), l.end());
  auto pesType = RankedTensorType::get({int64_t(list.pes.size()), 3}, i32);
  auto linksType = RankedTensorType::get({int64_t(list.links.size()), 4}, i32);
  return DefectsAttr::get(ctx, DenseIntElementsAttr::get(pesType, ArrayRef<int32_t>(pes)),
                          DenseIntElementsAttr::get(linksType, ArrayRef<int32_t>(links)));
}

DefectList wsc::wafer::readDefects(DefectsAttr attr) {
  DefectList list;
  if (!attr)
    return list;
  auto pes = llvm::to_vector(attr.getPes().getValues<int32_t>());
  for (size_t i = 0; i + 2 < pes.size(); i += 3)
    list.pes.push_back({pes[i], pes[i + 1], pes[i + 2]});
  auto links = llvm::to_vector(attr.getLinks().getValues<int32_t>());
  for (size_t i = 0; i + 3 < links.size(); i += 4)
    list.links.push_back({links[i], links[i + 1], links[i + 2], links[i + 3]});
  return list;
}

DefectsAttr wsc::wafer::getDefects(ModuleOp module) {
  return module->getAttrOfType<DefectsAttr>(kDefectsAttrName);
}
