"""Parses a --wafer-to-svg picture (which must be well-formed XML) and prints
what it shows, one fact a line, for FileCheck: the wafers, the kernels and
their labels, the link elements and the defect marks. Fails when a kernel
rectangle leaves its panel."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == NS + "svg" and root.get("version") == "1.1", root.tag


def cls(e, name):
    return name in (e.get("class") or "").split()


wafers = [g for g in root.iter(NS + "g") if cls(g, "wafer")]
print("wafers", len(wafers))
for wafer in wafers:
    placement = next(g for g in wafer.iter(NS + "g") if cls(g, "placement"))
    grid = next(r for r in placement.iter(NS + "rect") if cls(r, "grid"))
    pw, ph = float(grid.get("width")), float(grid.get("height"))
    kernels = [g for g in placement.iter(NS + "g") if cls(g, "kernel")]
    for k in kernels:
        r = k.find(NS + "rect")
        x, y, w, h = (float(r.get(a)) for a in ("x", "y", "width", "height"))
        assert -2 <= x and x + w <= pw + 2 and -2 <= y and y + h <= ph + 2, k.find(NS + "title").text
    labels = ["".join(t.itertext()) for t in placement.iter(NS + "text") if cls(t, "label")]
    load = next(g for g in wafer.iter(NS + "g") if cls(g, "link-load"))
    lines = len(list(load.iter(NS + "line")))
    tiles = sum(1 for p in load.iter(NS + "path") if cls(p, "tiles"))
    dead = sum(1 for p in placement.iter(NS + "path") if cls(p, "dead-pes") or cls(p, "dead-links"))
    print(wafer.get("id"), "kernels", len(kernels), "labelled", len(labels),
          "lines", "yes" if lines else "no", "tiles", "yes" if tiles else "no",
          "defect marks", dead)
    print("labels", " ".join(sorted(labels)))
