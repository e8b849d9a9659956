// A hand-made 8x8 wafer: four kernels (one of a kind without a fixed colour),
// two streams on two colors, one dead PE and two dead links. At 8x8 every PE
// is 32 pixels, so coordinates below are PE coordinates times 32.
// RUN: wsc-translate --wafer-to-svg %s -o %t.svg
// RUN: FileCheck %s < %t.svg
// RUN: %python -c "import sys, xml.etree.ElementTree as ET; r = ET.parse(sys.argv[1]).getroot(); print(r.tag, r.get('version'))" %t.svg | FileCheck %s --check-prefix=XML
// RUN: wsc-translate --wafer-to-svg %s -o %t.again.svg
// RUN: cmp %t.svg %t.again.svg

// XML: {http://www.w3.org/2000/svg}svg 1.1

#arch = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch, wafer.defects = #wafer.defects<
    pes = dense<[[0, 6, 5]]> : tensor<1x3xi32>,
    links = dense<[[0, 4, 4, 2], [0, 5, 0, 3]]> : tensor<2x4xi32>>} {
  func.func @main() {
    wskernel.kernel "l0.ln" kind "layer_norm" grid [1, 3] sram 16 cycles 10.0 channels {} () {wafer.origin = array<i64: 0, 0, 0>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    wskernel.kernel "l0.qkv" kind "linear" grid [2, 3] sram 64 cycles 20.5 channels {} () {wafer.origin = array<i64: 0, 0, 2>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    wskernel.kernel "l0.attention" kind "attention" grid [1, 1] sram 16 cycles 5.0 channels {} () {wafer.origin = array<i64: 0, 5, 2>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    wskernel.kernel "x<&>" kind "custom_op" grid [1, 2] sram 16 cycles 1.0 channels {} () {wafer.origin = array<i64: 0, 6, 7>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    return
  }
  // Color 1: (2, 0) south twice into (2, 2). Color 2: (2, 0) south, then west
  // into (1, 1). The link (2, 0) -> (2, 1) carries both: load 2.
  wafer.routes 0 dense<[[2, 0, 1, 0, 8], [2, 0, 2, 0, 8], [1, 1, 2, 2, 1], [2, 1, 1, 1, 8],
                        [2, 1, 2, 1, 16], [2, 2, 1, 1, 1]]> : tensor<6x5xi32>
}

// CHECK:      <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{{[0-9.]+}}" height="{{[0-9.]+}}"
// CHECK:      <title>wsc wafer map: mesh:8x8, 1 wafer, 4 kernels</title>
// CHECK:      4 kernels on 12 PEs (18.8%), max link load 2, 2 of 8 colors used
// CHECK:      <g class="wafer" id="wafer0">
// CHECK-NEXT: wafer 0: 4 kernels, 12 PEs used (18.8%), max link load 2
// CHECK:      <g class="placement"
// CHECK-NEXT: <rect class="grid" x="0" y="0" width="256" height="256"
// Faint PE cells, 32 pixels apart.
// CHECK-NEXT: <path class="pe-cells" {{.*}} d="M32 0V256M64 0V256

// Kernels: rectangles at PE coordinates times 32, coloured by kind, with a
// tooltip.
// CHECK-NEXT: <g class="kernel"><title>l0.ln (layer_norm): 3x1 PEs at (0, 0) on wafer 0, 16 bytes of SRAM per PE, 10 cycles per token</title><rect x="0" y="0" width="96" height="32" fill="#ffd92f" {{.*}}/></g>
// CHECK-NEXT: <g class="kernel"><title>l0.qkv (linear): 3x2 PEs at (0, 2) {{.*}}</title><rect x="0" y="64" width="96" height="64" fill="#8da0cb" {{.*}}/></g>
// CHECK-NEXT: <g class="kernel"><title>l0.attention (attention): 1x1 PEs at (5, 2) {{.*}}</title><rect x="160" y="64" width="32" height="32" fill="#fc8d62" {{.*}}/></g>
// Names are escaped; a kind without a fixed colour takes a spare one.
// CHECK-NEXT: <g class="kernel"><title>x&lt;&amp;&gt; (custom_op): 2x1 PEs at (6, 7) {{.*}}</title><rect x="192" y="224" width="64" height="32" fill="#e5c494" {{.*}}/></g>

// Defects: a black square on the dead PE (6, 5), red bars across the dead
// links (4, 4)-(5, 4) and (5, 0)-(5, 1), on the edges between the two PEs.
// CHECK-NEXT: <path class="dead-pes" fill="#000000" d="M196.8 164.8h22.4v22.4h-22.4z"><title>1 dead PE: (6, 5)</title></path>
// CHECK-NEXT: <path class="dead-links" fill="none" stroke="#d7191c" {{.*}} d="M160 131.2v25.6M163.2 32h25.6"><title>2 dead links: (4, 4)E (5, 0)S</title></path>

// Names over the defects, centred, as large as fits (16 pixels at most), on
// a halo of the kernel's colour since this wafer has defects. A name that
// cannot fit one PE keeps only its tooltip.
// CHECK-NEXT: <g class="labels" text-anchor="middle">
// CHECK-NEXT: <text x="48" y="21.6" font-size="16" class="halo" fill="#ffd92f" stroke="#ffd92f" {{.*}}>l0.ln</text><text x="48" y="21.6" font-size="16" class="label" fill="#111111">l0.ln</text>
// CHECK-NEXT: <text x="48" y="101.6" {{.*}} class="label" {{.*}}>l0.qkv</text>
// CHECK-NEXT: <text x="224" y="245.6" {{.*}} class="label" {{.*}}>x&lt;&amp;&gt;</text>
// CHECK-NEXT: </g>
// CHECK-NEXT: </g>

// Link load: one line per used directed link, on the right-hand side of
// travel (south-going on the west side), grouped by load, hotter is wider.
// CHECK-NEXT: <g class="link-load"
// CHECK-NEXT: <rect class="grid"
// CHECK-NEXT: <path class="kernel-areas" fill="#ececec" d="M0 0h96v32h-96zM0 64h96v64h-96zM160 64h32v32h-32zM192 224h64v32h-64z"/>
// CHECK-NEXT: <g class="links" stroke="#b3cde3" stroke-width="4.48">
// CHECK-NEXT: <line x1="73.6" y1="48.96" x2="73.6" y2="79.04"><title>(2, 1) S to (2, 2): load 1</title></line>
// CHECK-NEXT: <line x1="79.04" y1="41.6" x2="48.96" y2="41.6"><title>(2, 1) W to (1, 1): load 1</title></line>
// CHECK-NEXT: </g>
// CHECK-NEXT: <g class="links" stroke="#{{[0-9a-f]+}}" stroke-width="6.19">
// CHECK-NEXT: <line x1="73.6" y1="16.96" x2="73.6" y2="47.04"><title>(2, 0) S to (2, 1): load 2</title></line>
// CHECK-NEXT: </g>
// CHECK-NEXT: <path class="kernel-outlines" fill="none"
// CHECK-NEXT: <path class="dead-pes"
// CHECK-NEXT: <path class="dead-links"
// CHECK-NEXT: </g>
// CHECK-NEXT: </g>

// The legend: every kind with its count, the heat scale (1 to at least 4),
// the defects and the figures.
// CHECK:      <g class="legend"
// CHECK:      layer_norm (1)
// CHECK:      linear (1)
// CHECK:      linear_gelu (0)
// CHECK:      attention (1)
// CHECK:      custom_op (1)
// CHECK:      fill="url(#heat)"
// CHECK:      >1</text>
// CHECK:      >4</text>
// CHECK:      dead PE (1)
// CHECK:      dead link (2)
// CHECK:      kernels: 4 on 1 wafer
// CHECK-NEXT: PEs used: 12 of 64 (18.8%)
// CHECK-NEXT: max link load: 2 (8 colors per link)
// CHECK-NEXT: mean link load: 1.33 over 3 used links
// CHECK-NEXT: colors used: 2 of 8 (max 2 per router)
// CHECK-NEXT: router entries: 6
// CHECK:      </svg>
