// init_tile: the tile of each PE is chosen by its coordinate; elements
// outside the operand are zero, trailing zero words are not written (SRAM
// starts zeroed) and an all-zero tile is no init at all. Integers become
// int32 words, fp16 is widened to fp32.
// RUN: wsc-translate --export-wafer %s -o - | %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto | FileCheck %s

// A 3x5 int32 matrix (element [r][c] = 10 r + c + 1) in 2x2 tiles: PE (px, py)
// holds rows 2 py, 2 py + 1 and columns 2 px, 2 px + 1.
// CHECK-LABEL: init {
// CHECK-NEXT:    data: "\001\000\000\000\002\000\000\000\013\000\000\000\014\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 1
// CHECK-NEXT:    data: "\003\000\000\000\004\000\000\000\r\000\000\000\016\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 2
// CHECK-NEXT:    data: "\005\000\000\000\000\000\000\000\017\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    data: "\025\000\000\000\026\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 1
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    data: "\027\000\000\000\030\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 2
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    data: "\031\000\000\000"
// CHECK-NEXT:  }
// A 1-D i64 operand is one row; column origin px: [7, -1], [-1, 9], [9, 0].
// CHECK-NEXT:  init {
// CHECK-NEXT:    offset: 16
// CHECK-NEXT:    data: "\007\000\000\000\377\377\377\377"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 1
// CHECK-NEXT:    offset: 16
// CHECK-NEXT:    data: "\377\377\377\377\t\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 2
// CHECK-NEXT:    offset: 16
// CHECK-NEXT:    data: "\t\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    offset: 16
// CHECK-NEXT:    data: "\007\000\000\000\377\377\377\377"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 1
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    offset: 16
// CHECK-NEXT:    data: "\377\377\377\377\t\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 2
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    offset: 16
// CHECK-NEXT:    data: "\t\000\000\000"
// CHECK-NEXT:  }
// fp16 [1.5, -2.0] as fp32 words, the same on every PE; the zero operand
// writes nothing.
// CHECK-NEXT:  init {
// CHECK-NEXT:    offset: 24
// CHECK-NEXT:    data: "\000\000\300?\000\000\000\300"
// CHECK-NEXT:  }
// CHECK-COUNT-5: offset: 24
// CHECK-NOT:   init {
// CHECK:       tokens: 1

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() {
    %m = wsgraph.constant dense<[[1, 2, 3, 4, 5], [11, 12, 13, 14, 15], [21, 22, 23, 24, 25]]> : tensor<3x5xi32>
    %v = wsgraph.constant dense<[7, -1, 9]> : tensor<3xi64>
    %h = wsgraph.constant dense<[1.5, -2.0]> : tensor<2xf16>
    %z = wsgraph.constant dense<0.0> : tensor<2x2xf32>
    wskernel.kernel "tiles" kind "test" grid [2, 3] sram 48 cycles 0.0 channels {}
        (%m, %v, %h, %z) {wafer.origin = array<i64: 0, 1, 1>}
        : (tensor<3x5xi32>, tensor<3xi64>, tensor<2xf16>, tensor<2x2xf32>) -> () {
      wskernel.init_tile 0 at 0 rows 2 cols 2 row_origin [2, 0] col_origin [0, 2]
      wskernel.init_tile 1 at 16 rows 1 cols 2 col_origin [0, 1]
      wskernel.init_tile 2 at 24 rows 1 cols 2
      wskernel.init_tile 3 at 32 rows 2 cols 2
    }
    return
  }
}
