// Modules that cannot be drawn: each error names the kernel or the op, and
// no output file is left behind.
// RUN: wsc-translate --wafer-to-svg %s -split-input-file -verify-diagnostics -o /dev/null
// RUN: rm -f %t.svg
// RUN: not wsc-translate --wafer-to-svg %s -split-input-file -o %t.svg 2>&1 | FileCheck %s
// RUN: test ! -e %t.svg
// CHECK: error: the module has no 'wafer.arch' attribute

// expected-error @below {{the module has no 'wafer.arch' attribute}}
module {
  func.func @main() {
    return
  }
}

// -----

#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  func.func @main() {
    wskernel.kernel "placed" kind "add" grid [1, 1] sram 16 cycles 0.0 channels {} () {wafer.origin = array<i64: 0, 0, 0>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    // expected-error @below {{cannot draw: the kernel is not placed (no 'wafer.origin' = array<i64: wafer, x, y>); run --wsc-place first (kernel 'l2.qkv')}}
    wskernel.kernel "l2.qkv" kind "linear" grid [1, 1] sram 16 cycles 0.0 channels {} () : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    return
  }
}

// -----

#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  func.func @main() {
    // expected-error @below {{cannot draw: 2x3 PEs at (3, 1) on wafer 0 do not fit arch 'mesh:4x4' (4x4 PEs, 2 wafers) (kernel 'wide')}}
    wskernel.kernel "wide" kind "linear" grid [3, 2] sram 16 cycles 0.0 channels {} () {wafer.origin = array<i64: 0, 3, 1>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    return
  }
}

// -----

#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  func.func @main() {
    // expected-error @below {{cannot draw: 1x1 PEs at (0, 0) on wafer 2 do not fit arch 'mesh:4x4' (4x4 PEs, 2 wafers) (kernel 'far')}}
    wskernel.kernel "far" kind "linear" grid [1, 1] sram 16 cycles 0.0 channels {} () {wafer.origin = array<i64: 2, 0, 0>} : () -> () {
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 4>
    }
    return
  }
}

// -----

#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  func.func @main() {
    return
  }
  // expected-error @below {{cannot draw: router entry [4, 0, 1, 0, 4] of wafer 0 is not an entry of a 4x4 grid}}
  wafer.routes 0 dense<[[4, 0, 1, 0, 4]]> : tensor<1x5xi32>
}
