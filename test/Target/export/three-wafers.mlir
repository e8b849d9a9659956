// Three kernels on three wafers of a 4x4 mesh, two tokens: "src" (wafer 0)
// streams x to "mid" (wafer 1), which adds 1 and streams on to "dst"
// (wafer 2); "dst" also reads src's stream, which passes wafer 1 on to
// wafer 2 (one stream, consumed on two later wafers). y = (x + 1) + x.
// --wsc-route chooses the links (around the dead PE (3, 1) of wafer 0 and
// the dead off-wafer link of PE (3, 2) of wafer 1), the checker follows
// them, the exporter writes them as InterWaferLinks and the emulator runs
// the program across the three wafers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -o %t/routed.mlir
// RUN: FileCheck %s --check-prefix=IR < %t/routed.mlir
// RUN: wsc-translate --export-wafer %t/routed.mlir -o %t/three.wafer
// RUN: %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto < %t/three.wafer | FileCheck %s
// RUN: %python -c "import numpy; numpy.save('%t/x.npy', numpy.array([[1, 2, 3, 4], [0.5, -1, 0, 8]], dtype=numpy.float32))"
// RUN: wsc-run %t/three.wafer --input x=%t/x.npy --output y=%t/y.npy --report %t/report.json | FileCheck %s --check-prefix=SUMMARY
// RUN: %python -c "import numpy; print(numpy.load('%t/y.npy').tolist())" | FileCheck %s --check-prefix=OUT
// RUN: %python -c "import json; r = json.load(open('%t/report.json')); print(r['wafers'], [(k['name'], k['wafer']) for k in r['kernels']])" | FileCheck %s --check-prefix=REPORT

// src's stream leaves wafer 0 at row 2 and wafer 1 at row 1; mid's leaves
// wafer 1 at row 3 and is recolored 0 -> 1 on wafer 2, where src's stream
// already has color 0 into dst.
// IR: "dst" {{.*}}wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}
// IR: wafer.links dense<{{\[\[}}0, 3, 2, 0, 1, 0, 2, 0], [1, 3, 1, 0, 2, 0, 1, 0], [1, 3, 3, 0, 2, 0, 3, 1]]> : tensor<3x8xi32>

// Zero fields are not printed (src_wafer 0, dst_x 0, color 0).
// CHECK:      links {
// CHECK-NEXT:   src_x: 3
// CHECK-NEXT:   src_y: 2
// CHECK-NEXT:   dst_wafer: 1
// CHECK-NEXT:   dst_y: 2
// CHECK-NEXT: }
// CHECK-NEXT: links {
// CHECK-NEXT:   src_wafer: 1
// CHECK-NEXT:   src_x: 3
// CHECK-NEXT:   src_y: 1
// CHECK-NEXT:   dst_wafer: 2
// CHECK-NEXT:   dst_y: 1
// CHECK-NEXT: }
// CHECK-NEXT: links {
// CHECK-NEXT:   src_wafer: 1
// CHECK-NEXT:   src_x: 3
// CHECK-NEXT:   src_y: 3
// CHECK-NEXT:   dst_wafer: 2
// CHECK-NEXT:   dst_y: 3
// CHECK-NEXT:   dst_color: 1
// CHECK-NEXT: }

// SUMMARY: wsc-run: {{[0-9]+}} cycles ({{.*}}), {{.*}} tokens/s, 3 PEs on 3 wafers
// OUT: {{\[\[}}3.0, 5.0, 7.0, 9.0], [2.0, -1.0, 1.0, 17.0]]
// REPORT: 3 [('src', 0), ('mid', 1), ('dst', 2)]

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 3,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>,
    wafer.defects = #wafer.defects<pes = dense<[[0, 3, 1]]> : tensor<1x3xi32>,
                                   links = dense<[[1, 3, 2, 5]]> : tensor<1x4xi32>>} {
  func.func @main(%x: tensor<2x4xf32> {wsgraph.name = "x"}) -> (tensor<2x4xf32> {wsgraph.name = "y"}) {
    %s = wskernel.kernel "src" kind "copy" grid [1, 1] sram 32 cycles 4.0 channels {} (%x)
        {wafer.origin = array<i64: 0, 1, 1>}
        : (tensor<2x4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.host_input 0 at 0
      wskernel.loop 2 {
        wskernel.send "out0" from <base = 0, loop = [16]> n <base = 4>
      }
    }
    %m = wskernel.kernel "mid" kind "add" grid [1, 1] sram 16 cycles 4.0 channels {} (%s)
        {wafer.origin = array<i64: 1, 2, 2>}
        : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.loop 2 {
        wskernel.recv "in0" to <base = 0> n <base = 4>
        wskernel.imm "add" <base = 0> = <base = 0>, 1.0 n <base = 4>
        wskernel.send "out0" from <base = 0> n <base = 4>
      }
    }
    %y = wskernel.kernel "dst" kind "add" grid [1, 1] sram 48 cycles 4.0 channels {} (%m, %s)
        {wafer.origin = array<i64: 2, 1, 2>}
        : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<2x4xf32> {
      wskernel.host_output 0 at 0 rows 2 cols 4
      wskernel.loop 2 {
        wskernel.recv "in0" to <base = 0, loop = [16]> n <base = 4>
        wskernel.recv "in1" to <base = 32> n <base = 4>
        wskernel.vector "add" <base = 0, loop = [16]> = <base = 0, loop = [16]>, <base = 32> n <base = 4>
      }
    }
    return %y : tensor<2x4xf32>
  }
}
