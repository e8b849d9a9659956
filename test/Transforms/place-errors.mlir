// RUN: wsc-opt %s --wsc-place -split-input-file -verify-diagnostics
// Hand-written kernels (no weight operands): the lowering has no other shape
// for them, so placement cannot negotiate and reports the kernel and wafer.

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @too_big(%x: tensor<4xf32>) {
    // expected-error @+1 {{kernel 'wide' (grid [2, 9]) does not fit the 8 rows x 8 columns of the wafer, and the lowering has no shape for it within them}}
    %a = wskernel.kernel "wide" kind "linear" grid [2, 9] sram 64 cycles 1.0 channels {} (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    }
    return
  }
}

// -----

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @full(%x: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "linear" grid [5, 5] sram 64 cycles 1.0 channels {} (%x) : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{cannot place kernel 'b' (grid [5, 5]) on wafer 0: no free rectangle of 5 rows x 5 columns without defects is left (39 of 64 PEs free), and the lowering has no shape for it in the free space, nor a smaller one for the other kernels of the wafer (their tiles must fit SRAM)}}
    %b = wskernel.kernel "b" kind "linear" grid [5, 5] sram 64 cycles 1.0 channels {} (%a) : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Dead PEs at (3, 3), (7, 3), (3, 7) and (7, 7): every 4x4 rectangle holds one.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<[[0, 3, 3], [0, 3, 7], [0, 7, 3], [0, 7, 7]]> : tensor<4x3xi32>,
    links = dense<> : tensor<0x4xi32>>} {
  func.func @defects(%x: tensor<4xf32>) {
    // expected-error @+1 {{cannot place kernel 'square' (grid [4, 4]) on wafer 0: no free rectangle of 4 rows x 4 columns without defects is left (60 of 64 PEs free)}}
    %a = wskernel.kernel "square" kind "linear" grid [4, 4] sram 64 cycles 1.0 channels {} (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    }
    return
  }
}

// -----

// A dead link inside a rectangle is as bad as a dead PE (channels need every
// internal link): only the bottom band of 4 rows is clean.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<> : tensor<0x3xi32>,
    links = dense<[[0, 3, 3, 2]]> : tensor<1x4xi32>>} {
  func.func @dead_link(%x: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "linear" grid [4, 8] sram 64 cycles 1.0 channels {} (%x) : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{cannot place kernel 'b' (grid [4, 8]) on wafer 0}}
    %b = wskernel.kernel "b" kind "linear" grid [4, 8] sram 64 cycles 1.0 channels {} (%a) : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @fixed_overlap(%x: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "linear" grid [2, 2] sram 64 cycles 1.0 channels {} (%x) {wafer.origin = array<i64: 0, 1, 1>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{kernel 'b' overlaps kernel 'a' at PE (2, 2)}}
    %b = wskernel.kernel "b" kind "linear" grid [2, 2] sram 64 cycles 1.0 channels {} (%a) {wafer.origin = array<i64: 0, 2, 2>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<[[0, 2, 1]]> : tensor<1x3xi32>, links = dense<> : tensor<0x4xi32>>} {
  func.func @fixed_on_dead(%x: tensor<4xf32>) {
    // expected-error @+1 {{kernel 'a' covers the dead PE (2, 1) of wafer 0}}
    %a = wskernel.kernel "a" kind "linear" grid [2, 2] sram 64 cycles 1.0 channels {} (%x) {wafer.origin = array<i64: 0, 1, 1>} : (tensor<4xf32>) -> tensor<4xf32> {
    }
    return
  }
}

// -----

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @stage(%x: tensor<4xf32>) {
    // expected-error @+1 {{kernel 'far' is on wafer 4, but the arch has 4}}
    %a = wskernel.kernel "far" kind "linear" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) {wafer.stage = 4 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
    }
    return
  }
}
