// At wse3 scale (762 x 1172 PEs, 1 pixel per PE) the link load is drawn as
// 8x8-PE tiles coloured by their busiest link, one path per load, never one
// element per link or per PE; no PE cells; names that cannot fit are left
// to the tooltip, and kernels one PE thick are widened to 4 pixels.
// RUN: wsc-translate --wafer-to-svg %s -o %t.svg
// RUN: FileCheck %s < %t.svg
// RUN: FileCheck %s --check-prefix=NOT < %t.svg
// RUN: %python -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1]); print('well-formed')" %t.svg | FileCheck %s --check-prefix=XML

// XML: well-formed
// NOT-NOT: <line x1
// NOT-NOT: pe-cells
// NOT-NOT: >l0.ln</text>

#arch = #wafer.arch<name = "wse3", width = 762, height = 1172, sram_bytes = 49152, colors = 24,
    clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1, fmac_fp16 = 4,
    transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch, wafer.defects = #wafer.defects<
    pes = dense<[[0, 500, 600]]> : tensor<1x3xi32>,
    links = dense<[[0, 10, 700, 2]]> : tensor<1x4xi32>>} {
  func.func @main() {
    wskernel.kernel "l0.mlp_fc" kind "linear_gelu" grid [100, 300] sram 16 cycles 1.0 channels {} () {wafer.origin = array<i64: 0, 10, 20>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    wskernel.kernel "l0.ln" kind "layer_norm" grid [1, 4] sram 16 cycles 1.0 channels {} () {wafer.origin = array<i64: 0, 400, 400>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    return
  }
  // Three colors east from (0, 0), one of them on to (2, 0): load 3 in the
  // first tile. One color north in the last, clipped tile (2 x 4 PEs).
  wafer.routes 0 dense<[[0, 0, 1, 0, 4], [0, 0, 2, 0, 4], [0, 0, 3, 0, 4], [1, 0, 1, 4, 1],
                        [1, 0, 2, 4, 4], [1, 0, 3, 4, 1], [2, 0, 2, 4, 1],
                        [761, 1170, 1, 3, 1], [761, 1171, 1, 0, 2]]> : tensor<9x5xi32>
}

// CHECK:      wafer 0: 2 kernels, 30004 PEs used (3.4%), max link load 3
// CHECK:      link load: busiest link of every 8x8 PEs
// CHECK:      <g class="placement"
// CHECK:      <title>l0.mlp_fc (linear_gelu): 300x100 PEs at (10, 20) {{.*}}</title><rect x="10" y="20" width="300" height="100" {{.*}}/></g>
// CHECK-NEXT: <g class="kernel"><title>l0.ln (layer_norm): 4x1 PEs at (400, 400) {{.*}}</title><rect x="400" y="398.5" width="4" height="4" {{.*}}/></g>
// Defect marks keep a visible size: 1.5-pixel squares and 2.5-pixel bars.
// CHECK-NEXT: <path class="dead-pes" fill="#000000" d="M499.75 599.75h1.5v1.5h-1.5z">
// CHECK-NEXT: <path class="dead-links" {{.*}} d="M11 699.25v2.5">
// CHECK-NEXT: <g class="labels"
// CHECK:      class="label" fill="#111111">l0.mlp_fc</text>
// CHECK-NEXT: </g>
// CHECK:      <g class="link-load"
// CHECK:      <path class="tiles" fill="#b3cde3" d="M760 1168h2v4h-2z"><title>busiest link: load 1</title></path>
// CHECK-NEXT: <path class="tiles" fill="#{{[0-9a-f]+}}" d="M0 0h8v8h-8z"><title>busiest link: load 3</title></path>
// Defects are not repeated over the tiles.
// CHECK-NEXT: <path class="kernel-outlines"
// CHECK-NEXT: </g>
// CHECK:      busiest link of its 8x8 PEs
// CHECK:      marked on the placement panel only
// CHECK:      PEs used: 30004 of 893064 (3.4%)
// CHECK:      scale: 1 px per PE
