// host_output reads a result back from tiles chosen by the PE coordinate,
// skipping padding. Loading a matrix with init_tile and reading it back with
// the same tiling must give the matrix: 3x5 in 2x2 tiles on 2x3 PEs clips
// both the last tile row and the last tile column.
// RUN: rm -rf %t && mkdir -p %t
// RUN: wsc-translate --export-wafer %s -o %t/tiles.wafer
// RUN: wsc-run %t/tiles.wafer --output y=%t/y.npy --output t=%t/t.npy
// RUN: %python -c "import numpy; print(numpy.load('%t/y.npy').tolist()); print(numpy.load('%t/t.npy').tolist())" | FileCheck %s --check-prefix=OUT
// RUN: %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto < %t/tiles.wafer | FileCheck %s

// OUT: {{\[}}[1.0, 2.0, 3.0, 4.0, 5.0], [11.0, 12.0, 13.0, 14.0, 15.0], [21.0, 22.0, 23.0, 24.0, 25.0]]
// OUT-NEXT: {{\[}}[1.0, 2.0, 3.0, 4.0, 5.0], [11.0, 12.0, 13.0, 14.0, 15.0]]

// Full tiles are one piece of 2 rows; the clipped column is one piece per
// row; the clipped row is a single row.
// CHECK-LABEL: outputs {
// CHECK-NEXT:    name: "y"
// CHECK-NEXT:    shape: 3
// CHECK-NEXT:    shape: 5
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 1
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      count: 2
// CHECK-NEXT:      rows: 2
// CHECK-NEXT:      row_stride: 5
// CHECK-NEXT:    }
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 2
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      tensor_offset: 2
// CHECK-NEXT:      count: 2
// CHECK-NEXT:      rows: 2
// CHECK-NEXT:      row_stride: 5
// CHECK-NEXT:    }
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 3
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      tensor_offset: 4
// CHECK-NEXT:      count: 1
// CHECK-NEXT:    }
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 3
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      offset: 8
// CHECK-NEXT:      tensor_offset: 9
// CHECK-NEXT:      count: 1
// CHECK-NEXT:    }
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 1
// CHECK-NEXT:      y: 2
// CHECK-NEXT:      tensor_offset: 10
// CHECK-NEXT:      count: 2
// CHECK-NEXT:    }
// Whole rows (2 x 5 from the first PE row, `when`) are one run of words.
// CHECK:         name: "t"
// CHECK-NEXT:    shape: 2
// CHECK-NEXT:    shape: 5
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 1
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      offset: 32
// CHECK-NEXT:      count: 10
// CHECK-NEXT:    }
// CHECK-NEXT:  }

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() -> (tensor<3x5xf32> {wsgraph.name = "y"}, tensor<2x5xf32> {wsgraph.name = "t"}) {
    %m = wsgraph.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [11.0, 12.0, 13.0, 14.0, 15.0],
                                 [21.0, 22.0, 23.0, 24.0, 25.0]]> : tensor<3x5xf32>
    %y, %t = wskernel.kernel "tiles" kind "test" grid [2, 3] sram 80 cycles 0.0 channels {}
        (%m, %m) {wafer.origin = array<i64: 0, 1, 1>}
        : (tensor<3x5xf32>, tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<2x5xf32>) {
      wskernel.init_tile 0 at 0 rows 2 cols 2 row_origin [2, 0] col_origin [0, 2]
      wskernel.host_output 0 at 0 rows 2 cols 2 row_origin [2, 0] col_origin [0, 2]
      wskernel.init_tile 1 at 32 rows 2 cols 5
      wskernel.host_output 1 at 32 rows 2 cols 5 {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
    }
    return %y, %t : tensor<3x5xf32>, tensor<2x5xf32>
  }
}
