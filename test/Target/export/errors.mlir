// Modules the exporter refuses: each error names the kernel and the op, and
// no output file is left behind.
// RUN: wsc-translate --export-wafer %s -split-input-file -verify-diagnostics -o /dev/null

// An elided weight has a shape but no bytes: the model compiles, but cannot run.
// RUN: rm -f %t.wafer
// RUN: not wsc-translate --export-wafer %S/Inputs/elided.mlir -o %t.wafer 2>&1 | FileCheck %s --check-prefix=ELIDED
// RUN: test ! -e %t.wafer
// ELIDED: elided.mlir:10:{{[0-9]+}}: error: cannot export: weight 'wte' is elided (kernel 'embed', 'wskernel.init_tile')

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
    // expected-error @below {{cannot export: the kernel is not placed (no 'wafer.origin' = array<i64: wafer, x, y>); run --wsc-place first (kernel 'k')}}
    wskernel.kernel "k" kind "x" grid [1, 1] sram 16 cycles 0.0 channels {} () : () -> () {
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
    // expected-error @below {{cannot export: 2x4 PEs at (3, 0) of wafer 0 do not fit arch 'mesh:4x4' (4x4 PEs, 2 wafers) (kernel 'big')}}
    wskernel.kernel "big" kind "x" grid [4, 2] sram 16 cycles 0.0 channels {} ()
        {wafer.origin = array<i64: 0, 3, 0>} : () -> () {
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
    wskernel.kernel "k" kind "x" grid [2, 1] sram 16 cycles 0.0 channels {col = "col_chain"} ()
        {wafer.origin = array<i64: 0, 0, 0>, wafer.colors = {in0 = 1 : i64}} : () -> () {
      // expected-error @below {{cannot export: port 'col' has no color in 'wafer.colors' (kernel 'k', 'wskernel.send')}}
      wskernel.send "col" from <base = 0> n <base = 4>
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
    wskernel.kernel "k" kind "x" grid [2, 1] sram 16 cycles 0.0 channels {col = "col_chain"} ()
        {wafer.origin = array<i64: 0, 0, 0>, wafer.colors = {col = 8 : i64}} : () -> () {
      // expected-error @below {{cannot export: port 'col' has color 8, but arch 'mesh:4x4' has 8 colors (kernel 'k', 'wskernel.recv')}}
      wskernel.recv "col" to <base = 0> n <base = 4>
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
    wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 0.0 channels {} ()
        {wafer.origin = array<i64: 0, 0, 0>} : () -> () {
      wskernel.loop 2 {
        // expected-error @below {{cannot export: n #wskernel.aff<base = 4, loop = [0, 1]> has 2 loop strides but the op is inside 1 wskernel.loop (kernel 'k', 'wskernel.unary')}}
        wskernel.unary "neg" <base = 0, loop = [4, 0]> = <base = 0> n <base = 4, loop = [0, 1]>
      }
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
  func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @below {{cannot export: 'wsgraph.add' is not a wskernel.kernel; lower the model first (--wsc-pipeline)}}
    %c = wsgraph.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  // expected-error @below {{cannot export: result 0 ('logits') is not written by any wskernel.host_output}}
  func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32> {wsgraph.name = "logits"}) {
    %y = wskernel.kernel "k" kind "x" grid [1, 1] sram 16 cycles 0.0 channels {} (%a)
        {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32> {
      wskernel.host_input 0 at 0
    }
    return %y : tensor<4xf32>
  }
}

// -----

#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  func.func @main() {
    %c = wsgraph.constant dense<1.0> : tensor<4xf32>
    wskernel.kernel "k" kind "x" grid [1, 1] sram 16 cycles 0.0 channels {} (%c)
        {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> () {
      // expected-error @below {{cannot export: host_input operand 0 is not an argument of the function (kernel 'k', 'wskernel.host_input')}}
      wskernel.host_input 0 at 0
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
    %w = wsgraph.weight "w" from "/nonexistent/w.bin" at 0 : tensor<4xf32>
    wskernel.kernel "k" kind "x" grid [1, 1] sram 16 cycles 0.0 channels {} (%w)
        {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> () {
      // expected-error @below {{cannot export: weight 'w': cannot read '/nonexistent/w.bin': No such file or directory (kernel 'k', 'wskernel.init_tile')}}
      wskernel.init_tile 0 at 0 rows 1 cols 4
    }
    return
  }
}

// -----

// A sparse tile with more nonzeros than its storage is sized for.
#arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 4096, colors = 8,
    clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4, fmac_fp32 = 4, fmac_fp16 = 8,
    transcendental_cycles = 8, max_wafers = 2, link_bytes_per_cycle = 4,
    link_latency_cycles = 10, ext_mem_bytes = 0, ext_mem_bytes_per_cycle = 16>
module attributes {wafer.arch = #arch} {
  func.func @main() -> (tensor<2xf32> {wsgraph.name = "y"}) {
    %w = wsgraph.constant dense<[[0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                                 [1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
    %x = wsgraph.constant dense<[10.0, 100.0, 20.0, 40.0]> : tensor<4xf32>
    %y = wskernel.kernel "mv" kind "matvec" grid [2, 1] sram 128 cycles 1.0 channels {}
        (%w, %x) {wafer.origin = array<i64: 0, 1, 1>}
        : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<2xf32> {
      // expected-error @below {{cannot export: the tile of PE (0, 1) holds 2 entries, more than the 1 its storage is sized for (kernel 'mv'}}
      wskernel.init_tile 0 at 64 rows 2 cols 4 row_origin [2, 0] {storage = "sparse:1"}
      wskernel.init_tile 1 at 0 rows 1 cols 4
      wskernel.host_output 0 at 32 rows 2 cols 1 row_origin [1, 0]
      wskernel.matvec <base = 32> = <base = 64> x <base = 0> rows <base = 2> cols <base = 4> {storage = "sparse:1"}
    }
    return %y : tensor<2xf32>
  }
}
