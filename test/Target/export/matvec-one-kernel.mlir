// One kernel that receives nothing: y = W x from two constants, on one PE,
// read back by the host. Exported, run on the emulator, and decoded.
// RUN: rm -rf %t && mkdir -p %t
// RUN: wsc-translate --export-wafer %s -o %t/mv.wafer
// RUN: wsc-run %t/mv.wafer --output y=%t/y.npy --report %t/report.json | FileCheck %s --check-prefix=SUMMARY
// RUN: %python -c "import numpy; y = numpy.load('%t/y.npy'); print(y.dtype, y.shape, y.tolist())" | FileCheck %s --check-prefix=OUT
// RUN: %python -c "import json; r = json.load(open('%t/report.json')); print(r['tokens'], r['pes_active'])" | FileCheck %s --check-prefix=REPORT
// RUN: %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto < %t/mv.wafer | FileCheck %s

// SUMMARY: wsc-run: 2 cycles ({{.*}}), {{.*}} tokens/s, 1 PEs on 1 wafer
// OUT: float32 (3,) [210.0, 430.0, 650.0]
// REPORT: 1 1

// CHECK:      format_version: 2
// CHECK-NEXT: arch {
// CHECK-NEXT:   name: "mesh:4x4"
// CHECK-NEXT:   width: 4
// CHECK-NEXT:   height: 4
// CHECK-NEXT:   sram_bytes_per_pe: 4096
// CHECK-NEXT:   colors: 8
// CHECK-NEXT:   clock_hz: 1000000000
// CHECK-NEXT:   hop_cycles: 1
// CHECK-NEXT:   simd_fp32: 4
// CHECK-NEXT:   fmac_per_cycle_fp32: 4
// CHECK-NEXT:   transcendental_cycles: 8
// CHECK-NEXT:   ext_mem_bytes_per_cycle: 16
// CHECK-NEXT:   link_bytes_per_cycle: 4
// CHECK-NEXT:   link_latency_cycles: 10
// CHECK-NEXT: }
// CHECK-NEXT: wafers {
// CHECK-NEXT:   regions {
// CHECK-NEXT:     name: "mv"
// CHECK-NEXT:     kind: "matvec"
// CHECK-NEXT:     x: 1
// CHECK-NEXT:     y: 2
// CHECK-NEXT:     w: 1
// CHECK-NEXT:     h: 1
// CHECK-NEXT:     code {
// CHECK-NEXT:       op: MATVEC
// CHECK-NEXT:       addr {
// CHECK-NEXT:         base: 32
// CHECK-NEXT:       }
// CHECK-NEXT:       addr {
// CHECK-NEXT:       }
// CHECK-NEXT:       addr {
// CHECK-NEXT:         base: 24
// CHECK-NEXT:       }
// CHECK-NEXT:       n {
// CHECK-NEXT:         base: 3
// CHECK-NEXT:       }
// CHECK-NEXT:       m {
// CHECK-NEXT:         base: 2
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     sram_bytes_per_pe: 48
// The matrix, then the vector; the all-zero third tile is not written.
// CHECK-NEXT:     init {
// CHECK-NEXT:       data: "\000\000\200?\000\000\000@\000\000@@\000\000\200@\000\000\240@\000\000\300@"
// CHECK-NEXT:     }
// CHECK-NEXT:     init {
// CHECK-NEXT:       offset: 24
// CHECK-NEXT:       data: "\000\000 A\000\000\310B"
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: outputs {
// CHECK-NEXT:   name: "y"
// CHECK-NEXT:   shape: 3
// CHECK-NEXT:   pieces {
// CHECK-NEXT:     x: 1
// CHECK-NEXT:     y: 2
// CHECK-NEXT:     offset: 32
// CHECK-NEXT:     count: 3
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: tokens: 1
// CHECK-NEXT: digests {
// CHECK-NEXT:   code: {{[0-9]+}}
// CHECK-NEXT:   routes: {{[0-9]+}}
// CHECK-NEXT:   sram_init: {{[0-9]+}}
// CHECK-NEXT:   external: {{[0-9]+}}
// CHECK-NEXT:   host: {{[0-9]+}}
// CHECK-NEXT: }
// One token through the kernel's 2 cycles, then a crossing of the 4x4 wafer
// (8 hops of 1 cycle) and a link (10): the runtime's default cycle limit follows it.
// CHECK-NEXT: estimated_cycles: 20
// CHECK-EMPTY:

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() -> (tensor<3xf32> {wsgraph.name = "y"}) {
    %w = wsgraph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %x = wsgraph.constant dense<[10.0, 100.0]> : tensor<2xf32>
    %z = wsgraph.constant dense<0.0> : tensor<4xf32>
    %y = wskernel.kernel "mv" kind "matvec" grid [1, 1] sram 48 cycles 2.0 channels {}
        (%w, %x, %z) {wafer.origin = array<i64: 0, 1, 2>}
        : (tensor<3x2xf32>, tensor<2xf32>, tensor<4xf32>) -> tensor<3xf32> {
      wskernel.init_tile 0 at 0 rows 3 cols 2
      wskernel.init_tile 1 at 24 rows 1 cols 2
      wskernel.init_tile 2 at 32 rows 1 cols 4
      wskernel.host_output 0 at 32 rows 1 cols 3
      wskernel.matvec <base = 32> = <base = 0> x <base = 24> rows <base = 3> cols <base = 2>
    }
    return %y : tensor<3xf32>
  }
}
