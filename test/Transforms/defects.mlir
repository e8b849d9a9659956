// RUN: wsc-opt %s --wsc-defects="file=%S/Inputs/mesh8x8.defects" | FileCheck %s --check-prefix=FILE
// RUN: not wsc-opt %s --wsc-defects="file=%S/Inputs/bad.defects" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not wsc-opt %s --wsc-defects="file=%S/Inputs/missing.defects" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: wsc-opt %s --wsc-defects="rate=0.05 seed=3" -o %t.a.mlir
// RUN: wsc-opt %s --wsc-defects="rate=0.05 seed=3" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: wsc-opt %s --wsc-defects="rate=0.05 seed=4" | FileCheck %s --check-prefix=RANDOM
// RUN: wsc-opt %s --wsc-defects="rate=0.05 link-rate=0 seed=3" | FileCheck %s --check-prefix=NOLINKS
// RUN: wsc-opt %s --wsc-defects="file=%S/Inputs/mesh8x8.defects" --wsc-defects="rate=0" | FileCheck %s --check-prefix=FILE

// The file's links are canonical (EAST or SOUTH), rows sorted, wafer first.
// FILE: wafer.defects = #wafer.defects<pes = dense<{{\[\[}}0, 2, 0], [0, 5, 5], [1, 0, 0]]> : tensor<3x3xi32>, links = dense<{{\[\[}}0, 1, 3, 2], [0, 4, 3, 3]]> : tensor<2x4xi32>>

// BAD: bad.defects:2: link 7 0 E leaves the 8x8 grid
// MISSING: cannot read the defect file '{{.*}}missing.defects'

// A different seed, a different map.
// RANDOM: wafer.defects = #wafer.defects<pes = dense<{{\[\[}}0,
// NOLINKS: links = dense<> : tensor<0x4xi32>

module attributes {wafer.arch = #wafer.arch<name = "mesh:8x8", width = 8, height = 8,
    sram_bytes = 49152, colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1,
    fmac_fp32 = 1, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64,
    link_bytes_per_cycle = 136, link_latency_cycles = 2000, ext_mem_bytes = 1000000000000,
    ext_mem_bytes_per_cycle = 136>} {
}
