// RUN: wsc-opt %s --wsc-defects="file=%S/Inputs/links.defects" | FileCheck %s --check-prefix=FILE
// RUN: not wsc-opt %s --wsc-defects="file=%S/Inputs/bad-link.defects" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: wsc-opt %s --wsc-defects="link-rate=1" --mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s --check-prefix=ALL

// Dead off-wafer links (docs/defects.md): `link X Y L` is the link of edge
// PE (X, Y), stored with dir 5 (LINK).
// FILE: links = dense<{{\[\[}}0, 7, 3, 5], [1, 0, 5, 5]]> : tensor<2x4xi32>
// BAD: bad-link.defects:1: PE (3, 3) is not on the edge: only edge PEs have an off-wafer link

// A random map kills the off-wafer link of each east edge PE of every wafer
// but the last (here wafer 1, the highest wafer.stage): with link-rate 1,
// all eight of wafer 0 and none of wafer 1.
// ALL: [0, 7, 0, 5],
// ALL-SAME: [0, 7, 7, 5],
// ALL-NOT: , 5]
module attributes {wafer.arch = #wafer.arch<name = "mesh:8x8", width = 8, height = 8,
    sram_bytes = 49152, colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1,
    fmac_fp32 = 1, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64,
    link_bytes_per_cycle = 136, link_latency_cycles = 2000, ext_mem_bytes = 1000000000000,
    ext_mem_bytes_per_cycle = 136>} {
  func.func private @stage1() attributes {wafer.stage = 1 : i64}
}
