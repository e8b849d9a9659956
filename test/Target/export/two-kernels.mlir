// Two kernels joined by a stream, two tokens. "lin" (2x1 PEs at (0,0)) holds
// W (4x3, read from a weight file at a byte offset) in row tiles chosen by
// the PE coordinate, computes its half of W x_t for every token, sums the
// halves down its "col" channel and streams the result to "act" (1 PE at
// (2,1)), which adds 1 and keeps both tokens for the host. The routes carry
// "col" one hop south and "out0"/"in0" two hops east; one PE is dead.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy; open('%t/w.bin', 'wb').write(b'\xff' * 8 + numpy.arange(1, 13, dtype='<f4').tobytes())"
// RUN: %python -c "import numpy; numpy.save('%t/x.npy', numpy.array([[1, 0, 2], [0.5, 1, 2]], dtype=numpy.float32))"
// RUN: cd %t && wsc-translate --export-wafer %s -o %t/two.wafer
// RUN: wsc-run %t/two.wafer --input x=%t/x.npy --output y=%t/y.npy --report %t/report.json | FileCheck %s --check-prefix=SUMMARY
// RUN: %python -c "import numpy; y = numpy.load('%t/y.npy'); print(y.dtype, y.shape, y.tolist())" | FileCheck %s --check-prefix=OUT
// RUN: %python -c "import json; r = json.load(open('%t/report.json')); print(r['tokens'], r['pes_active'], [k['name'] for k in r['kernels']])" | FileCheck %s --check-prefix=REPORT
// RUN: %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto < %t/two.wafer | FileCheck %s

// Deterministic: the same module exports to the same bytes.
// RUN: cd %t && wsc-translate --export-wafer %s -o %t/again.wafer
// RUN: cmp %t/two.wafer %t/again.wafer

// W = [[1,2,3],[4,5,6],[7,8,9],[10,11,12]]; y_t = W x_t + 1.
// SUMMARY: wsc-run: {{[0-9]+}} cycles ({{.*}}), {{.*}} tokens/s, 3 PEs on 1 wafer
// OUT: float32 (2, 4) {{\[}}[8.0, 17.0, 26.0, 35.0], [9.5, 20.0, 30.5, 41.0]]
// REPORT: 2 3 ['lin', 'act']

// Zero fields are not printed: x: 0, color: 0, in: RAMP and so on.
// CHECK-LABEL: wafers {
// CHECK-NEXT:    regions {
// CHECK-NEXT:      name: "lin"
// CHECK-NEXT:      kind: "linear"
// CHECK-NEXT:      w: 1
// CHECK-NEXT:      h: 2
// CHECK-NEXT:      code {
// CHECK-NEXT:        op: LOOP
// CHECK-NEXT:        count: 2
// CHECK-NEXT:      }
// The vector operand follows the token loop: x_t is at 12 * t.
// CHECK-NEXT:      code {
// CHECK-NEXT:        op: MATVEC
// CHECK-NEXT:        addr {
// CHECK-NEXT:          base: 48
// CHECK-NEXT:        }
// CHECK-NEXT:        addr {
// CHECK-NEXT:          base: 24
// CHECK-NEXT:        }
// CHECK-NEXT:        addr {
// CHECK-NEXT:          stride: 12
// CHECK-NEXT:        }
// CHECK-NEXT:        n {
// CHECK-NEXT:          base: 2
// CHECK-NEXT:        }
// CHECK-NEXT:        m {
// CHECK-NEXT:          base: 3
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// The "col" channel (color 0) is sent by PE row 0 only, on its async
// engine (the next token's matvec into 48 waits for it).
// CHECK-NEXT:      code {
// CHECK-NEXT:        op: SEND
// CHECK-NEXT:        pred {
// CHECK-NEXT:        }
// CHECK-NEXT:        addr {
// CHECK-NEXT:          base: 48
// CHECK-NEXT:        }
// CHECK-NEXT:        n {
// CHECK-NEXT:          base: 2
// CHECK-NEXT:        }
// CHECK-NEXT:        async: true
// CHECK-NEXT:      }
// Every PE receives n = 2 * py words: none on row 0.
// CHECK-NEXT:      code {
// CHECK-NEXT:        op: RECV
// CHECK-NEXT:        addr {
// CHECK-NEXT:          base: 56
// CHECK-NEXT:        }
// CHECK-NEXT:        n {
// CHECK-NEXT:          py: 2
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      code {
// CHECK-NEXT:        op: COPY
// CHECK-NEXT:        addr {
// CHECK-NEXT:          base: 56
// CHECK-NEXT:          py: 8
// CHECK-NEXT:        }
// CHECK:             op: SEND
// CHECK-NEXT:        pred {
// CHECK-NEXT:          y0: 1
// CHECK-NEXT:          y1: 1
// CHECK-NEXT:        }
// CHECK:             color: 1
// CHECK-NEXT:      }
// CHECK-NEXT:      code {
// CHECK-NEXT:        op: END
// CHECK-NEXT:      }
// CHECK-NEXT:      sram_bytes_per_pe: 72
// Row tiles: PE py holds rows 2 py and 2 py + 1 of W.
// CHECK-NEXT:      init {
// CHECK-NEXT:        offset: 24
// CHECK-NEXT:        data: "\000\000\200?\000\000\000@\000\000@@\000\000\200@\000\000\240@\000\000\300@"
// CHECK-NEXT:      }
// CHECK-NEXT:      init {
// CHECK-NEXT:        py: 1
// CHECK-NEXT:        offset: 24
// CHECK-NEXT:        data: "\000\000\340@\000\000\000A\000\000\020A\000\000 A\000\0000A\000\000@A"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    regions {
// CHECK-NEXT:      name: "act"
// CHECK-NEXT:      kind: "add"
// CHECK-NEXT:      x: 2
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      w: 1
// CHECK-NEXT:      h: 1
// CHECK:             op: RECV
// CHECK:             color: 1
// CHECK:             op: ADD_I
// CHECK:             imm: 1
// CHECK:             op: END
// CHECK-NEXT:      }
// CHECK-NEXT:      sram_bytes_per_pe: 32
// CHECK-NEXT:    }
// CHECK-NEXT:    routes {
// CHECK-NEXT:      out_mask: 8
// CHECK-NEXT:    }
// CHECK-NEXT:    routes {
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      in: NORTH
// CHECK-NEXT:      out_mask: 1
// CHECK-NEXT:    }
// CHECK-NEXT:    routes {
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      color: 1
// CHECK-NEXT:      out_mask: 4
// CHECK-NEXT:    }
// CHECK-NEXT:    routes {
// CHECK-NEXT:      x: 1
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      color: 1
// CHECK-NEXT:      in: WEST
// CHECK-NEXT:      out_mask: 4
// CHECK-NEXT:    }
// CHECK-NEXT:    routes {
// CHECK-NEXT:      x: 2
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      color: 1
// CHECK-NEXT:      in: WEST
// CHECK-NEXT:      out_mask: 1
// CHECK-NEXT:    }
// CHECK-NEXT:    dead_pes {
// CHECK-NEXT:      x: 3
// CHECK-NEXT:      y: 3
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// The input goes to both PEs of "lin"; the output is read from "act".
// CHECK-NEXT:  inputs {
// CHECK-NEXT:    name: "x"
// CHECK-NEXT:    shape: 2
// CHECK-NEXT:    shape: 3
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      count: 6
// CHECK-NEXT:    }
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      count: 6
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  outputs {
// CHECK-NEXT:    name: "y"
// CHECK-NEXT:    shape: 2
// CHECK-NEXT:    shape: 4
// CHECK-NEXT:    pieces {
// CHECK-NEXT:      x: 2
// CHECK-NEXT:      y: 1
// CHECK-NEXT:      count: 8
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  tokens: 2

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>,
    wafer.defects = #wafer.defects<pes = dense<[[0, 3, 3]]> : tensor<1x3xi32>,
                                   links = dense<[[0, 0, 3, 2]]> : tensor<1x4xi32>>} {
  func.func @main(%x: tensor<2x3xf32> {wsgraph.name = "x"}) -> (tensor<2x4xf32> {wsgraph.name = "y"}) {
    %w = wsgraph.weight "w" from "w.bin" at 8 : tensor<4x3xf32>
    %s = wskernel.kernel "lin" kind "linear" grid [2, 1] sram 72 cycles 10.0
        channels {col = "col_chain"} (%x, %w)
        {wafer.origin = array<i64: 0, 0, 0>, wafer.colors = {col = 0 : i64, out0 = 1 : i64}}
        : (tensor<2x3xf32>, tensor<4x3xf32>) -> !wskernel.stream<4, f32> {
      wskernel.host_input 0 at 0
      wskernel.init_tile 1 at 24 rows 2 cols 3 row_origin [2, 0]
      wskernel.loop 2 {
        wskernel.matvec <base = 48> = <base = 24> x <base = 0, loop = [12]> rows <base = 2> cols <base = 3>
        wskernel.send "col" from <base = 48> n <base = 2> {async, when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
        wskernel.recv "col" to <base = 56> n <base = 0, py = 2>
        wskernel.unary "copy" <base = 56, py = 8> = <base = 48> n <base = 2>
        wskernel.send "out0" from <base = 56> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
      }
    }
    %y = wskernel.kernel "act" kind "add" grid [1, 1] sram 32 cycles 4.0 channels {} (%s)
        {wafer.origin = array<i64: 0, 2, 1>, wafer.colors = {in0 = 1 : i64}}
        : (!wskernel.stream<4, f32>) -> tensor<2x4xf32> {
      wskernel.host_output 0 at 0 rows 2 cols 4
      wskernel.loop 2 {
        wskernel.recv "in0" to <base = 0, loop = [16]> n <base = 4>
        wskernel.imm "add" <base = 0, loop = [16]> = <base = 0, loop = [16]>, 1.0 n <base = 4>
      }
    }
    return %y : tensor<2x4xf32>
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 8], [0, 1, 0, 1, 1], [0, 1, 1, 0, 4], [1, 1, 1, 4, 4],
                        [2, 1, 1, 4, 1]]> : tensor<5x5xi32>
}
