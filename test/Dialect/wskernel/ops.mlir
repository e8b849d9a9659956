// RUN: wsc-opt %s | FileCheck %s
// RUN: wsc-opt %s | wsc-opt | FileCheck %s
// RUN: wsc-opt %s --mlir-print-op-generic | wsc-opt | FileCheck %s
// RUN: wsc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every wskernel op, type and attribute through the custom and
// the generic form. Defaulted attributes (combine "copy", storage "f32",
// transposed/accumulate false, [0, 0] origins) are elided by the custom
// printer and spelled out by the generic one.

//===----------------------------------------------------------------------===//
// Kernel: streams, channels, tensor operands, init_tile
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @kernel_streams
// CHECK-SAME: (%[[X:.*]]: !wskernel.stream<32, f32>, %[[W:.*]]: tensor<32x16xf32>, %[[B:.*]]: tensor<16xf32>) -> (!wskernel.stream<16, f32>, !wskernel.stream<16, bf16>)
// CHECK-NEXT: %[[Y:.*]]:2 = wskernel.kernel "l0.fc" kind "linear" grid [2, 4] sram 8192 cycles 1.250000e+02
// CHECK-SAME: channels {col = "col_chain", row = "row_chain"}(%[[X]], %[[W]], %[[B]]) {note = "kept"}
// CHECK-SAME: : (!wskernel.stream<32, f32>, tensor<32x16xf32>, tensor<16xf32>) -> (!wskernel.stream<16, f32>, !wskernel.stream<16, bf16>) {
// CHECK-NEXT: wskernel.init_tile 1 at 1024 rows 16 cols 4 row_origin [16, 0] col_origin [0, 4]{{$}}
// CHECK-NEXT: wskernel.init_tile 1 at 1280 rows 16 cols 4 col_origin [0, 4] {storage = "f16"}
// CHECK-NEXT: wskernel.init_tile 1 at 1408 rows 16 cols 4 row_origin [16, 0] {storage = "bf16"}
// CHECK-NEXT: wskernel.init_tile 2 at 1536 rows 1 cols 4{{$}}
// CHECK-NEXT: wskernel.init_tile 1 at 1600 rows 16 cols 4 col_origin [0, 4] {col_interleave = array<i64: 2, 2>}
// CHECK-NEXT: wskernel.init_tile 1 at 1664 rows 16 cols 4 col_origin [0, 4] {col_perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: wskernel.init_tile 1 at 1728 rows 16 cols 4 row_origin [16, 0] col_origin [0, 4] {row_perm = array<i64: 0, 4, 1, 5, 2, 6, 3, 7>}
// CHECK-NEXT: wskernel.loop 2 {
// CHECK-NEXT: wskernel.loop 8 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 16, py = 16>{{$}}
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 16> {combine = "discard"}
// CHECK-NEXT: wskernel.recv "in0" to <base = 64> n <base = 16> {cols = #wskernel.aff<base = 4>, combine = "vecmat", matrix = #wskernel.aff<base = 1024>}
// CHECK-NEXT: wskernel.recv "in0" to <base = 64> n <base = 4, py = -4> {cols = #wskernel.aff<base = 4>, combine = "vecmat_add", matrix = #wskernel.aff<base = 1024, py = 64>}
// CHECK-NEXT: wskernel.recv "in0" to <base = 64> n <base = 8> {cols = #wskernel.aff<base = 4>, combine = "vecmat_add", first_row = 8 : i64, matrix = #wskernel.aff<base = 1024>, storage = "sparse4:20", tile_rows = 16 : i64}
// CHECK-NEXT: wskernel.matvec <base = 64> = <base = 1024> x <base = 0> rows <base = 16> cols <base = 4> {transposed = true}
// CHECK-NEXT: wskernel.matvec <base = 64> = <base = 1280> x <base = 0> rows <base = 16> cols <base = 4> {accumulate = true, storage = "f16", transposed = true}
// CHECK-NEXT: wskernel.matvec <base = 80> = <base = 1408> x <base = 0> rows <base = 4> cols <base = 4> {storage = "bf16"}
// CHECK-NEXT: wskernel.recv "col" to <base = 64> n <base = 4> {combine = "add", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "col" to <base = 80> n <base = 4> {combine = "max", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "row" to <base = 96> n <base = 4> {when = [#wskernel.pes<x0 = 1, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "col" to <base = 64> n <base = 4> {combine = "add", forward = "col", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "row" to <base = 96> n <base = 4> {forward = "out0", when = [#wskernel.pes<x0 = 3, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.send "col" from <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "col" from <base = 64> n <base = 4> {async, when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "col" to <base = 80> n <base = 4> {async, combine = "add", forward = "col"}
// CHECK-NEXT: wskernel.recv "row" to <base = 0> n <base = 4, px = 4> {async, combine = "discard", forward = "out0", when = [#wskernel.pes<x0 = 1, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.send "row" from <base = 64> n <base = 4> {guard = [#wskernel.aff<base = -1, loop = [-1], px = 1>], when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 1, y1 = 1>, #wskernel.pes<x0 = 3, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.vector "add" <base = 64> = <base = 64>, <base = 1536> n <base = 4>
// CHECK-NEXT: wskernel.vector "sub" <base = 64> = <base = 64>, <base = 80> n <base = 4>
// CHECK-NEXT: wskernel.vector "mul" <base = 64> = <base = 64>, <base = 80> n <base = 4>
// CHECK-NEXT: wskernel.vector "div" <base = 64> = <base = 64>, <base = 80> n <base = 4>
// CHECK-NEXT: wskernel.vector "max" <base = 64> = <base = 64>, <base = 80> n <base = 4>
// CHECK-NEXT: wskernel.vector "bit_and" <base = 64> = <base = 64>, <base = 80> n <base = 4>
// CHECK-NEXT: wskernel.unary "bit_not" <base = 64> = <base = 64> n <base = 4>
// CHECK-NEXT: wskernel.send "out0" from <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.send "out1" from <base = 128, loop = [16, 128], px = 4, py = -4> n <base = 4, loop = [0, 0]> {guard = [#wskernel.aff<base = 0, py = 1>, #wskernel.aff<base = 7, loop = [-1]>]}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]#0, %[[Y]]#1 : !wskernel.stream<16, f32>, !wskernel.stream<16, bf16>
// GENERIC-LABEL: sym_name = "kernel_streams"
// GENERIC: "wskernel.kernel"(%{{.*}}) <{channels = {col = "col_chain", row = "row_chain"}, cycles_per_token = 1.250000e+02 : f64, grid = array<i64: 2, 4>, kind = "linear", name = "l0.fc", sram_bytes_per_pe = 8192 : i64}> ({
// GENERIC-NEXT: "wskernel.init_tile"() <{col_interleave = array<i64>, col_origin = array<i64: 0, 4>, col_perm = array<i64>, col_window = array<i64>, cols = 4 : i64, offset = 1024 : i64, row_origin = array<i64: 16, 0>, row_perm = array<i64>, rows = 16 : i64, source = 1 : i64, storage = "f32"}> : () -> ()
// GENERIC: "wskernel.init_tile"() <{col_interleave = array<i64>, col_origin = array<i64: 0, 0>, col_perm = array<i64>, col_window = array<i64>, cols = 4 : i64, offset = 1536 : i64, row_origin = array<i64: 0, 0>, row_perm = array<i64>, rows = 1 : i64, source = 2 : i64, storage = "f32"}> : () -> ()
// GENERIC: "wskernel.loop"() <{count = 2 : i64}> ({
// GENERIC: "wskernel.recv"() <{combine = "copy", dst = #wskernel.aff<base = 0>, n = #wskernel.aff<base = 16, py = 16>, port = "in0", storage = "f32"}> : () -> ()
// GENERIC: "wskernel.recv"() <{cols = #wskernel.aff<base = 4>, combine = "vecmat", dst = #wskernel.aff<base = 64>, matrix = #wskernel.aff<base = 1024>, n = #wskernel.aff<base = 16>, port = "in0", storage = "f32"}> : () -> ()
// GENERIC: "wskernel.recv"() <{cols = #wskernel.aff<base = 4>, combine = "vecmat_add", dst = #wskernel.aff<base = 64>, first_row = 8 : i64, matrix = #wskernel.aff<base = 1024>, n = #wskernel.aff<base = 8>, port = "in0", storage = "sparse4:20", tile_rows = 16 : i64}> : () -> ()
// GENERIC: "wskernel.matvec"() <{accumulate = false, cols = #wskernel.aff<base = 4>, dst = #wskernel.aff<base = 64>, matrix = #wskernel.aff<base = 1024>, rows = #wskernel.aff<base = 16>, storage = "f32", transposed = true, vector = #wskernel.aff<base = 0>}>
// GENERIC: "wskernel.send"() <{async, n = #wskernel.aff<base = 4>, port = "col", src = #wskernel.aff<base = 64>, when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}>
// GENERIC: "wskernel.recv"() <{async, combine = "add", dst = #wskernel.aff<base = 80>, forward = "col", n = #wskernel.aff<base = 4>, port = "col", storage = "f32"}>
// GENERIC: "wskernel.send"() <{guard = [#wskernel.aff<base = -1, loop = [-1], px = 1>], n = #wskernel.aff<base = 4>, port = "row", src = #wskernel.aff<base = 64>, when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 1, y1 = 1>, #wskernel.pes<x0 = 3, x1 = 3, y0 = 0, y1 = 0>]}>
// GENERIC: }) {note = "kept"} : (!wskernel.stream<32, f32>, tensor<32x16xf32>, tensor<16xf32>) -> (!wskernel.stream<16, f32>, !wskernel.stream<16, bf16>)
func.func @kernel_streams(%x: !wskernel.stream<32, f32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>)
    -> (!wskernel.stream<16, f32>, !wskernel.stream<16, bf16>) {
  // Channel order in the dictionary does not matter: it prints sorted.
  %y:2 = wskernel.kernel "l0.fc" kind "linear" grid [2, 4] sram 8192 cycles 125.0
      channels {row = "row_chain", col = "col_chain"} (%x, %w, %b) {note = "kept"}
      : (!wskernel.stream<32, f32>, tensor<32x16xf32>, tensor<16xf32>)
      -> (!wskernel.stream<16, f32>, !wskernel.stream<16, bf16>) {
    wskernel.init_tile 1 at 1024 rows 16 cols 4 row_origin [16, 0] col_origin [0, 4]
    wskernel.init_tile 1 at 1280 rows 16 cols 4 col_origin [0, 4] {storage = "f16"}
    wskernel.init_tile 1 at 1408 rows 16 cols 4 row_origin [16, 0] {storage = "bf16"}
    // Explicit default origins and storage are elided when printed.
    wskernel.init_tile 2 at 1536 rows 1 cols 4 row_origin [0, 0] col_origin [0, 0] {storage = "f32"}
    // The weight's 16 columns as 2 groups of 2-column units, interleaved.
    wskernel.init_tile 1 at 1600 rows 16 cols 4 col_origin [0, 4] {col_interleave = array<i64: 2, 2>}
    // The same within each run of 8 columns (a head's two rotary halves).
    wskernel.init_tile 1 at 1664 rows 16 cols 4 col_origin [0, 4] {col_perm = array<i64: 0, 2, 1, 3>}
    // Rows in another order within each run of 8 (x from grouped-query attention).
    wskernel.init_tile 1 at 1728 rows 16 cols 4 row_origin [16, 0] col_origin [0, 4] {row_perm = array<i64: 0, 4, 1, 5, 2, 6, 3, 7>}
    wskernel.loop 2 {
      wskernel.loop 8 {
        wskernel.recv "in0" to <base = 0> n <base = 16, py = 16>
        wskernel.recv "in0" to <base = 0> n <base = 16> {combine = "discard"}
        // A receive that multiplies: x's words meet the rows of the matrix.
        wskernel.recv "in0" to <base = 64> n <base = 16> {combine = "vecmat", matrix = #wskernel.aff<base = 1024>, cols = #wskernel.aff<base = 4>}
        wskernel.recv "in0" to <base = 64> n <base = 4, py = -4> {combine = "vecmat_add", matrix = #wskernel.aff<base = 1024, py = 64>, cols = #wskernel.aff<base = 4>}
        // From a sparse tile of 16 rows: the words meet rows 8 to 15.
        wskernel.recv "in0" to <base = 64> n <base = 8> {combine = "vecmat_add", matrix = #wskernel.aff<base = 1024>, cols = #wskernel.aff<base = 4>, storage = "sparse4:20", tile_rows = 16, first_row = 8}
        wskernel.matvec <base = 64> = <base = 1024> x <base = 0> rows <base = 16> cols <base = 4> {transposed = true}
        wskernel.matvec <base = 64> = <base = 1280> x <base = 0> rows <base = 16> cols <base = 4> {transposed = true, accumulate = true, storage = "f16"}
        wskernel.matvec <base = 80> = <base = 1408> x <base = 0> rows <base = 4> cols <base = 4> {transposed = false, accumulate = false, storage = "bf16"}
        wskernel.recv "col" to <base = 64> n <base = 4> {combine = "add", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
        wskernel.recv "col" to <base = 80> n <base = 4> {combine = "max", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
        // An explicit "copy" is the default and is elided; PE range keys come in any order.
        wskernel.recv "row" to <base = 96> n <base = 4> {combine = "copy", when = [#wskernel.pes<y1 = 1, y0 = 1, x1 = 3, x0 = 1>]}
        wskernel.recv "col" to <base = 64> n <base = 4> {combine = "add", forward = "col", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
        wskernel.recv "row" to <base = 96> n <base = 4> {forward = "out0", when = [#wskernel.pes<x0 = 3, x1 = 3, y0 = 1, y1 = 1>]}
        wskernel.send "col" from <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
        // On the async engine, beside the core.
        wskernel.send "col" from <base = 64> n <base = 4> {async, when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
        wskernel.recv "col" to <base = 80> n <base = 4> {combine = "add", forward = "col", async}
        // Words that only pass through: n = 4 px of them, none stored.
        wskernel.recv "row" to <base = 0> n <base = 4, px = 4> {combine = "discard", forward = "out0", async, when = [#wskernel.pes<x0 = 1, x1 = 3, y0 = 1, y1 = 1>]}
        wskernel.send "row" from <base = 64> n <base = 4> {guard = [#wskernel.aff<base = -1, loop = [-1], px = 1>], when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 1, y1 = 1>, #wskernel.pes<x0 = 3, x1 = 3, y0 = 0, y1 = 0>]}
        wskernel.vector "add" <base = 64> = <base = 64>, <base = 1536> n <base = 4>
        wskernel.vector "sub" <base = 64> = <base = 64>, <base = 80> n <base = 4>
        wskernel.vector "mul" <base = 64> = <base = 64>, <base = 80> n <base = 4>
        wskernel.vector "div" <base = 64> = <base = 64>, <base = 80> n <base = 4>
        wskernel.vector "max" <base = 64> = <base = 64>, <base = 80> n <base = 4>
        wskernel.vector "bit_and" <base = 64> = <base = 64>, <base = 80> n <base = 4>
        wskernel.unary "bit_not" <base = 64> = <base = 64> n <base = 4>
        wskernel.send "out0" from <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
        // Keys of an aff come in any order after base; zero px/py are elided,
        // a loop list is kept even when all zero.
        wskernel.send "out1" from <base = 128, py = -4, px = 4, loop = [16, 128]> n <base = 4, px = 0, loop = [0, 0], py = 0> {guard = [#wskernel.aff<base = 0, py = 1>, #wskernel.aff<base = 7, loop = [-1]>]}
      }
    }
  }
  return %y#0, %y#1 : !wskernel.stream<16, f32>, !wskernel.stream<16, bf16>
}

//===----------------------------------------------------------------------===//
// Instructions: scalar, imm, unary, reduce, gather
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @instructions
// CHECK-NEXT: %[[O:.*]] = wskernel.kernel "l0.ln" kind "layer_norm" grid [1, 2] sram 2048 cycles 8.000000e+01 channels {row = "row_chain"}(%{{.*}}) : (!wskernel.stream<32, f32>) -> !wskernel.stream<32, f32> {
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.reduce "sum" <base = 128> = <base = 0, px = 64> n <base = 16>
// CHECK-NEXT: wskernel.reduce "max" <base = 132> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.scalar "add" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
// CHECK-NEXT: wskernel.scalar "sub" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
// CHECK-NEXT: wskernel.scalar "mul" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
// CHECK-NEXT: wskernel.scalar "div" <base = 0> = <base = 0>, scalar <base = 132> n <base = 32>
// CHECK-NEXT: wskernel.scalar "random" <base = 0> = <base = 0>, scalar <base = 132> n <base = 32>
// CHECK-NEXT: wskernel.imm "add" <base = 128> = <base = 128>, 9.99999974E-6 n <base = 1>
// CHECK-NEXT: wskernel.imm "mul" <base = 0> = <base = 0>, 2.500000e-01 n <base = 32>
// CHECK-NEXT: wskernel.imm "fill" <base = 256> = <base = 0>, -1.000000e+00 n <base = 8>
// CHECK-NEXT: wskernel.unary "exp" <base = 0> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.unary "erf" <base = 0> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.unary "tanh" <base = 0> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.unary "sqrt" <base = 128> = <base = 128> n <base = 1>
// CHECK-NEXT: wskernel.unary "rsqrt" <base = 128> = <base = 128> n <base = 1>
// CHECK-NEXT: wskernel.unary "neg" <base = 0> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.unary "gelu" <base = 0> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.unary "copy" <base = 512, loop = [128]> = <base = 0> n <base = 32>
// CHECK-NEXT: wskernel.gather <base = 0> = <base = 1024>[<base = 512, loop = [4]>] rows <base = 16> cols <base = 8> from <base = 0, px = 16>{{$}}
// CHECK-NEXT: wskernel.gather <base = 0> = <base = 1024>[<base = 512>] rows <base = 16> cols <base = 8> from <base = 0, px = 16> {storage = "f16"}
// CHECK-NEXT: wskernel.gather <base = 0> = <base = 1024>[<base = 512>] rows <base = 16> cols <base = 8> from <base = 0, px = 16> {storage = "bf16", when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "out0" from <base = 0> n <base = 32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// GENERIC-LABEL: sym_name = "instructions"
// GENERIC: "wskernel.imm"() <{dst = #wskernel.aff<base = 256>, elem = "f32", kind = "fill", n = #wskernel.aff<base = 8>, src = #wskernel.aff<base = 0>, value = -1.000000e+00 : f32}>
// GENERIC: "wskernel.gather"() <{cols = #wskernel.aff<base = 8>, dst = #wskernel.aff<base = 0>, index = #wskernel.aff<base = 512, loop = [4]>, row_lo = #wskernel.aff<base = 0, px = 16>, rows = #wskernel.aff<base = 16>, storage = "f32", table = #wskernel.aff<base = 1024>}>
func.func @instructions(%x: !wskernel.stream<32, f32>) -> !wskernel.stream<32, f32> {
  %0 = wskernel.kernel "l0.ln" kind "layer_norm" grid [1, 2] sram 2048 cycles 80.0
      channels {row = "row_chain"} (%x) : (!wskernel.stream<32, f32>) -> !wskernel.stream<32, f32> {
    wskernel.loop 4 {
      wskernel.recv "in0" to <base = 0> n <base = 32>
      wskernel.reduce "sum" <base = 128> = <base = 0, px = 64> n <base = 16>
      wskernel.reduce "max" <base = 132> = <base = 0> n <base = 32>
      wskernel.scalar "add" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
      wskernel.scalar "sub" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
      wskernel.scalar "mul" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
      wskernel.scalar "div" <base = 0> = <base = 0>, scalar <base = 132> n <base = 32>
      wskernel.scalar "random" <base = 0> = <base = 0>, scalar <base = 132> n <base = 32>
      wskernel.imm "add" <base = 128> = <base = 128>, 1.0e-5 n <base = 1>
      wskernel.imm "mul" <base = 0> = <base = 0>, 0.25 n <base = 32>
      // fill does not read src.
      wskernel.imm "fill" <base = 256> = <base = 0>, -1.0 n <base = 8>
      wskernel.unary "exp" <base = 0> = <base = 0> n <base = 32>
      wskernel.unary "erf" <base = 0> = <base = 0> n <base = 32>
      wskernel.unary "tanh" <base = 0> = <base = 0> n <base = 32>
      wskernel.unary "sqrt" <base = 128> = <base = 128> n <base = 1>
      wskernel.unary "rsqrt" <base = 128> = <base = 128> n <base = 1>
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 32>
      wskernel.unary "gelu" <base = 0> = <base = 0> n <base = 32>
      wskernel.unary "copy" <base = 512, loop = [128]> = <base = 0> n <base = 32>
      wskernel.gather <base = 0> = <base = 1024>[<base = 512, loop = [4]>] rows <base = 16> cols <base = 8> from <base = 0, px = 16>
      wskernel.gather <base = 0> = <base = 1024>[<base = 512>] rows <base = 16> cols <base = 8> from <base = 0, px = 16> {storage = "f16"}
      wskernel.gather <base = 0> = <base = 1024>[<base = 512>] rows <base = 16> cols <base = 8> from <base = 0, px = 16> {storage = "bf16", when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 32>
    }
  }
  return %0 : !wskernel.stream<32, f32>
}

//===----------------------------------------------------------------------===//
// Host I/O: tensor operands and a host result
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @host_io
// CHECK-SAME: (%[[IDX:.*]]: tensor<1x4xi64>, %[[TAB:.*]]: tensor<16x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = wskernel.kernel "embed" kind "embed" grid [2, 1] sram 1024 cycles 2.400000e+01 channels {}(%[[IDX]], %[[TAB]]) : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32> {
// CHECK-NEXT: wskernel.host_input 0 at 0{{$}}
// CHECK-NEXT: wskernel.host_input 0 at 16 {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.init_tile 1 at 32 rows 8 cols 8 row_origin [8, 0]{{$}}
// CHECK-NEXT: wskernel.host_output 0 at 288 rows 4 cols 8 {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.host_output 0 at 288 rows 2 cols 4 row_origin [2, 0] col_origin [0, 4]{{$}}
// CHECK-NEXT: wskernel.loop 1 {
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.gather <base = 288, loop = [32]> = <base = 32>[<base = 0, loop = [8]>] rows <base = 8> cols <base = 8> from <base = 0, py = 8>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<1x4x8xf32>
// GENERIC-LABEL: sym_name = "host_io"
// GENERIC: "wskernel.host_input"() <{offset = 0 : i64, source = 0 : i64}> : () -> ()
// GENERIC: "wskernel.host_output"() <{col_origin = array<i64: 0, 0>, col_window = array<i64>, cols = 8 : i64, offset = 288 : i64, result = 0 : i64, row_origin = array<i64: 0, 0>, rows = 4 : i64, when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}> : () -> ()
func.func @host_io(%idx: tensor<1x4xi64>, %table: tensor<16x8xf32>) -> tensor<1x4x8xf32> {
  %r = wskernel.kernel "embed" kind "embed" grid [2, 1] sram 1024 cycles 24.0 channels {} (%idx, %table)
      : (tensor<1x4xi64>, tensor<16x8xf32>) -> tensor<1x4x8xf32> {
    wskernel.host_input 0 at 0
    wskernel.host_input 0 at 16 {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
    wskernel.init_tile 1 at 32 rows 8 cols 8 row_origin [8, 0]
    wskernel.host_output 0 at 288 rows 4 cols 8 {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
    wskernel.host_output 0 at 288 rows 2 cols 4 row_origin [2, 0] col_origin [0, 4]
    wskernel.loop 1 {
      wskernel.loop 4 {
        wskernel.gather <base = 288, loop = [32]> = <base = 32>[<base = 0, loop = [8]>] rows <base = 8> cols <base = 8> from <base = 0, py = 8>
      }
    }
  }
  return %r : tensor<1x4x8xf32>
}

//===----------------------------------------------------------------------===//
// Weight streaming: load_tile and feedback
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @weight_streaming
// CHECK-SAME: (%[[X:.*]]: !wskernel.stream<16, f32>, %[[W0:.*]]: tensor<16x16xf32>, %[[B0:.*]]: tensor<16xf32>, %[[W1:.*]]: tensor<16x16xf32>, %[[B1:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[H:.*]] = wskernel.kernel "layers.fc" kind "linear" grid [1, 2] sram 4096 cycles 3.000000e+01 channels {}(%[[X]], %[[W0]], %[[B0]], %[[W1]], %[[B1]]) {feedback = {fb0 = "layers.proj"}, wskernel.streamed_layers = 2 : i64} : (!wskernel.stream<16, f32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> !wskernel.stream<16, f32> {
// CHECK-NEXT: wskernel.loop 2 {
// CHECK-NEXT: wskernel.load_tile 1 stride 2 at 256 rows 16 cols 8 col_origin [0, 8]{{$}}
// CHECK-NEXT: wskernel.load_tile 2 stride 2 at 768 rows 1 cols 8 col_origin [0, 8] {storage = "f16"}
// CHECK-NEXT: wskernel.load_tile 1 stride 2 at 800 rows 16 cols 8 row_origin [16, 0] {storage = "bf16"}
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 16> {guard = [#wskernel.aff<base = 0, loop = [0, -1]>]}
// CHECK-NEXT: wskernel.recv "fb0" to <base = 0> n <base = 16> {guard = [#wskernel.aff<base = -1, loop = [0, 1]>]}
// CHECK-NEXT: wskernel.matvec <base = 64> = <base = 256> x <base = 0> rows <base = 16> cols <base = 8> {transposed = true}
// CHECK-NEXT: wskernel.send "out0" from <base = 64> n <base = 8>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:.*]] = wskernel.kernel "layers.proj" kind "linear" grid [1, 1] sram 256 cycles 1.600000e+01 channels {}(%[[H]]) : (!wskernel.stream<16, f32>) -> !wskernel.stream<16, f32> {
// CHECK-NEXT: wskernel.loop 2 {
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 16>
// CHECK-NEXT: wskernel.send "fb" from <base = 0> n <base = 16> {guard = [#wskernel.aff<base = 0, loop = [0, -1]>]}
// CHECK-NEXT: wskernel.send "out0" from <base = 0> n <base = 16> {guard = [#wskernel.aff<base = -1, loop = [0, 1]>]}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return %[[P]] : !wskernel.stream<16, f32>
// GENERIC-LABEL: sym_name = "weight_streaming"
// GENERIC: "wskernel.kernel"(%{{.*}}) <{channels = {}, cycles_per_token = 3.000000e+01 : f64, feedback = {fb0 = "layers.proj"}, grid = array<i64: 1, 2>, kind = "linear", name = "layers.fc", sram_bytes_per_pe = 4096 : i64}> ({
// GENERIC: "wskernel.load_tile"() <{col_origin = array<i64: 0, 8>, cols = 8 : i64, offset = 256 : i64, row_origin = array<i64: 0, 0>, rows = 16 : i64, source = 1 : i64, storage = "f32", stride = 2 : i64}> : () -> ()
// GENERIC: }) {wskernel.streamed_layers = 2 : i64} : (!wskernel.stream<16, f32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> !wskernel.stream<16, f32>
func.func @weight_streaming(%x: !wskernel.stream<16, f32>, %w0: tensor<16x16xf32>, %b0: tensor<16xf32>,
                            %w1: tensor<16x16xf32>, %b1: tensor<16xf32>) -> !wskernel.stream<16, f32> {
  // Layer 0 reads the model input, layer 1 what "layers.proj" sends on "fb".
  %h = wskernel.kernel "layers.fc" kind "linear" grid [1, 2] sram 4096 cycles 30.0 channels {}
      (%x, %w0, %b0, %w1, %b1) {feedback = {fb0 = "layers.proj"}, wskernel.streamed_layers = 2 : i64}
      : (!wskernel.stream<16, f32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>)
      -> !wskernel.stream<16, f32> {
    wskernel.loop 2 {
      wskernel.load_tile 1 stride 2 at 256 rows 16 cols 8 col_origin [0, 8]
      // An explicit [0, 0] row_origin is the default and is elided.
      wskernel.load_tile 2 stride 2 at 768 rows 1 cols 8 row_origin [0, 0] col_origin [0, 8] {storage = "f16"}
      wskernel.load_tile 1 stride 2 at 800 rows 16 cols 8 row_origin [16, 0] {storage = "bf16"}
      wskernel.loop 4 {
        wskernel.recv "in0" to <base = 0> n <base = 16> {guard = [#wskernel.aff<base = 0, loop = [0, -1]>]}
        wskernel.recv "fb0" to <base = 0> n <base = 16> {guard = [#wskernel.aff<base = -1, loop = [0, 1]>]}
        wskernel.matvec <base = 64> = <base = 256> x <base = 0> rows <base = 16> cols <base = 8> {transposed = true}
        wskernel.send "out0" from <base = 64> n <base = 8>
      }
    }
  }
  %p = wskernel.kernel "layers.proj" kind "linear" grid [1, 1] sram 256 cycles 16.0 channels {} (%h)
      : (!wskernel.stream<16, f32>) -> !wskernel.stream<16, f32> {
    wskernel.loop 2 {
      wskernel.loop 4 {
        wskernel.recv "in0" to <base = 0> n <base = 16>
        wskernel.send "fb" from <base = 0> n <base = 16> {guard = [#wskernel.aff<base = 0, loop = [0, -1]>]}
        wskernel.send "out0" from <base = 0> n <base = 16> {guard = [#wskernel.aff<base = -1, loop = [0, 1]>]}
      }
    }
  }
  return %p : !wskernel.stream<16, f32>
}

//===----------------------------------------------------------------------===//
// Edge cases of the verifier that must be accepted
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @accepted_edges
// An empty kernel with no operands and no results.
// CHECK-NEXT: wskernel.kernel "idle" kind "none" grid [1, 1] sram 0 cycles 0.000000e+00 channels {}() : () -> () {
// CHECK-NEXT: }
// Exactly sram_bytes_per_pe bytes: [60, 64) is the last word.
// CHECK-NEXT: wskernel.kernel "exact" kind "copy" grid [1, 1] sram 64 cycles 1.000000e+00 channels {}() : () -> () {
// CHECK-NEXT: wskernel.imm "fill" <base = 0> = <base = 0>, 0.000000e+00 n <base = 16>
// CHECK-NEXT: }
// A when that selects no PE of the rectangle, a discarding recv and a guard
// that never holds skip the SRAM check.
// CHECK-NEXT: wskernel.kernel "skipped" kind "copy" grid [2, 2] sram 16 cycles 1.000000e+00 channels {col = "col_chain"}() : () -> () {
// CHECK-NEXT: wskernel.unary "copy" <base = 100000> = <base = 0> n <base = 4> {when = [#wskernel.pes<x0 = 5, x1 = 6, y0 = 0, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "col" to <base = 100000> n <base = 4> {combine = "discard"}
// CHECK-NEXT: wskernel.loop 3 {
// CHECK-NEXT: wskernel.send "col" from <base = 0, loop = [100000]> n <base = 4> {guard = [#wskernel.aff<base = 0, loop = [-1]>, #wskernel.aff<base = -1, px = 1>]}
// CHECK-NEXT: wskernel.send "col" from <base = 0, px = 100000> n <base = 4> {guard = [#wskernel.aff<base = 0, px = -1>]}
// CHECK-NEXT: }
// CHECK-NEXT: }
// The guard lets the address through only where it is in range.
// CHECK-NEXT: wskernel.kernel "guarded" kind "copy" grid [1, 4] sram 16 cycles 1.000000e+00 channels {row = "row_chain"}() : () -> () {
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.send "row" from <base = 0, loop = [-4], px = 4> n <base = 1> {guard = [#wskernel.aff<base = 0, loop = [-1], px = 1>, #wskernel.aff<base = 0, loop = [1], px = -1>]}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @accepted_edges() {
  wskernel.kernel "idle" kind "none" grid [1, 1] sram 0 cycles 0.0 channels {} () : () -> () {
  }
  wskernel.kernel "exact" kind "copy" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    wskernel.imm "fill" <base = 0> = <base = 0>, 0.0 n <base = 16>
  }
  wskernel.kernel "skipped" kind "copy" grid [2, 2] sram 16 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    wskernel.unary "copy" <base = 100000> = <base = 0> n <base = 4> {when = [#wskernel.pes<x0 = 5, x1 = 6, y0 = 0, y1 = 1>]}
    wskernel.recv "col" to <base = 100000> n <base = 4> {combine = "discard"}
    wskernel.loop 3 {
      // i <= 0 and px >= 1: only iteration 0, where the address is 0.
      wskernel.send "col" from <base = 0, loop = [100000]> n <base = 4> {guard = [#wskernel.aff<base = 0, loop = [-1]>, #wskernel.aff<base = -1, px = 1>]}
      // px <= 0: only column 0.
      wskernel.send "col" from <base = 0, px = 100000> n <base = 4> {guard = [#wskernel.aff<base = 0, px = -1>]}
    }
  }
  // Runs only where px == i: address 4 * (px - i) = 0.
  wskernel.kernel "guarded" kind "copy" grid [1, 4] sram 16 cycles 1.0 channels {row = "row_chain"} () : () -> () {
    wskernel.loop 4 {
      wskernel.send "row" from <base = 0, loop = [-4], px = 4> n <base = 1> {guard = [#wskernel.aff<base = 0, loop = [-1], px = 1>, #wskernel.aff<base = 0, loop = [1], px = -1>]}
    }
  }
  return
}

// A host result written by two kernels, each into its columns.
// CHECK-LABEL: func.func @column_pieces
// CHECK: wskernel.init_tile 1 at 0 rows 4 cols 4 {col_window = array<i64: 0, 4>}
// CHECK: %[[B:.*]] = wskernel.kernel "b" {{.*}}(%{{.*}}, %{{.*}}, %[[A:.*]]) {wskernel.writes_into = 2 : i64}
// CHECK: wskernel.host_output 0 at 64 rows 2 cols 4 {col_window = array<i64: 4, 8>}
func.func @column_pieces(%x: !wskernel.stream<4, f32>, %w: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %a = wskernel.kernel "a" kind "linear" grid [1, 1] sram 256 cycles 1.0 channels {} (%x, %w) : (!wskernel.stream<4, f32>, tensor<4x8xf32>) -> tensor<2x8xf32> {
    wskernel.init_tile 1 at 0 rows 4 cols 4 {col_window = array<i64: 0, 4>}
    wskernel.host_output 0 at 64 rows 2 cols 4 {col_window = array<i64: 0, 4>}
  }
  %b = wskernel.kernel "b" kind "linear" grid [1, 1] sram 256 cycles 1.0 channels {} (%x, %w, %a) {wskernel.writes_into = 2 : i64} : (!wskernel.stream<4, f32>, tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
    wskernel.init_tile 1 at 0 rows 4 cols 4 {col_window = array<i64: 4, 8>}
    wskernel.host_output 0 at 64 rows 2 cols 4 {col_window = array<i64: 4, 8>}
  }
  return %b : tensor<2x8xf32>
}

//===----------------------------------------------------------------------===//
// Router filters
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @filters
// CHECK: wskernel.filter "in0" first <base = 0, py = 8> count <base = 8> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 1>]}
// CHECK-NEXT: wskernel.filter "in0" first <base = 16> count <base = 4>{{$}}
// GENERIC-LABEL: sym_name = "filters"
// GENERIC: "wskernel.filter"() <{count = #wskernel.aff<base = 8>, first = #wskernel.aff<base = 0, py = 8>, port = "in0", when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 1>]}> : () -> ()
func.func @filters(%x: !wskernel.stream<20, f32>) {
  wskernel.kernel "fc" kind "linear" grid [3, 2] sram 1024 cycles 8.0 channels {} (%x)
      : (!wskernel.stream<20, f32>) -> () {
    wskernel.filter "in0" first <base = 0, py = 8> count <base = 8> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 1>]}
    wskernel.filter "in0" first <base = 16> count <base = 4>
    wskernel.loop 4 {
      wskernel.recv "in0" to <base = 0> n <base = 8> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 1>]}
    }
  }
  return
}

// -----

// A generic kernel's chunk: a window of a host input and of a stream's rows.
// CHECK-LABEL: func.func @chunk
// CHECK: wskernel.host_input 0 at 0 {window = array<i64: 8, 16>}
// CHECK-NEXT: wskernel.filter "in1" first <base = 8> count <base = 16> {period = 32 : i64}
func.func @chunk(%x: tensor<4x8xf32>, %s: !wskernel.stream<8, f32>) {
  wskernel.kernel "k" kind "generic" grid [1, 1] sram 128 cycles 1.0 channels {} (%x, %s) : (tensor<4x8xf32>, !wskernel.stream<8, f32>) -> () {
    wskernel.host_input 0 at 0 {window = array<i64: 8, 16>}
    wskernel.filter "in1" first <base = 8> count <base = 16> {period = 32 : i64}
    wskernel.loop 2 {
      wskernel.recv "in1" to <base = 64, loop = [32]> n <base = 8>
    }
  }
  return
}


// The general instructions: typed arithmetic, comparisons, select and the indexed copy.
// CHECK-LABEL: func.func @general
// CHECK: wskernel.vector "lt" <base = 0> = <base = 16>, <base = 32> n <base = 4> {elem = "i32"}
// CHECK-NEXT: wskernel.vector "pow" <base = 0> = <base = 16>, <base = 32> n <base = 4>{{$}}
// CHECK-NEXT: wskernel.unary "to_float" <base = 48> = <base = 0> n <base = 4>
// CHECK-NEXT: wskernel.unary "abs" <base = 48> = <base = 0> n <base = 4> {elem = "i32"}
// CHECK-NEXT: wskernel.reduce "min" <base = 64> = <base = 0> n <base = 4> {elem = "i32"}
// CHECK-NEXT: wskernel.imm "fill" <base = 0> = <base = 0>, 3.000000e+00 n <base = 4> {elem = "i32"}
// CHECK-NEXT: wskernel.select <base = 0> = <base = 16> ? <base = 32> : <base = 48> n <base = 4>
// CHECK-NEXT: wskernel.index_copy <base = 0> = <base = 16>[<base = 32>] n <base = 4> of <base = 4>
// GENERIC-LABEL: sym_name = "general"
// GENERIC: "wskernel.index_copy"() <{dst = #wskernel.aff<base = 0>, m = #wskernel.aff<base = 4>, n = #wskernel.aff<base = 4>, src = #wskernel.aff<base = 16>, table = #wskernel.aff<base = 32>}>
func.func @general() {
  wskernel.kernel "k" kind "generic" grid [1, 1] sram 128 cycles 1.0 channels {} () : () -> () {
    wskernel.vector "lt" <base = 0> = <base = 16>, <base = 32> n <base = 4> {elem = "i32"}
    wskernel.vector "pow" <base = 0> = <base = 16>, <base = 32> n <base = 4> {elem = "f32"}
    wskernel.unary "to_float" <base = 48> = <base = 0> n <base = 4>
    wskernel.unary "abs" <base = 48> = <base = 0> n <base = 4> {elem = "i32"}
    wskernel.reduce "min" <base = 64> = <base = 0> n <base = 4> {elem = "i32"}
    wskernel.imm "fill" <base = 0> = <base = 0>, 3.0 n <base = 4> {elem = "i32"}
    wskernel.select <base = 0> = <base = 16> ? <base = 32> : <base = 48> n <base = 4>
    wskernel.index_copy <base = 0> = <base = 16>[<base = 32>] n <base = 4> of <base = 4>
  }
  return
}

//===----------------------------------------------------------------------===//
// Sparse weight tiles: storage "sparse:N[:f16|:bf16]" (N entries at most per
// tile, 8-bit gaps), "sparse4:N[:f16|:bf16]" (4-bit gaps)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @sparse_tiles
// CHECK: wskernel.init_tile 0 at 0 rows 16 cols 8 row_origin [16, 0] col_origin [0, 8] {storage = "sparse:40"}
// CHECK: wskernel.load_tile 0 stride 1 at 256 rows 16 cols 8 {storage = "sparse:12"}
// CHECK: wskernel.matvec <base = 512> = <base = 0> x <base = 544> rows <base = 16> cols <base = 8> {storage = "sparse:40", transposed = true}
func.func @sparse_tiles(%w: tensor<32x16xf32>) {
  wskernel.kernel "k" kind "linear" grid [2, 2] sram 1024 cycles 1.0 channels {} (%w) : (tensor<32x16xf32>) -> () {
    wskernel.init_tile 0 at 0 rows 16 cols 8 row_origin [16, 0] col_origin [0, 8] {storage = "sparse:40"}
    wskernel.loop 1 {
      wskernel.load_tile 0 stride 1 at 256 rows 16 cols 8 {storage = "sparse:12"}
    }
    wskernel.matvec <base = 512> = <base = 0> x <base = 544> rows <base = 16> cols <base = 8> {storage = "sparse:40", transposed = true}
  }
  return
}

// 16-bit values: "sparse:N:f16", "sparse:N:bf16".
// CHECK-LABEL: func.func @sparse_tiles_half_values
// CHECK: wskernel.init_tile 0 at 0 rows 16 cols 8 {storage = "sparse:40:f16"}
// CHECK: wskernel.matvec <base = 512> = <base = 0> x <base = 544> rows <base = 16> cols <base = 8> {storage = "sparse:40:bf16"}
// CHECK: wskernel.matvec <base = 512> = <base = 0> x <base = 544> rows <base = 16> cols <base = 8> {storage = "sparse4:40:f16"}
func.func @sparse_tiles_half_values(%w: tensor<16x8xf32>) {
  wskernel.kernel "k" kind "linear" grid [1, 1] sram 1024 cycles 1.0 channels {} (%w) : (tensor<16x8xf32>) -> () {
    wskernel.init_tile 0 at 0 rows 16 cols 8 {storage = "sparse:40:f16"}
    wskernel.matvec <base = 512> = <base = 0> x <base = 544> rows <base = 16> cols <base = 8> {storage = "sparse:40:bf16"}
    wskernel.matvec <base = 512> = <base = 0> x <base = 544> rows <base = 16> cols <base = 8> {storage = "sparse4:40:f16"}
  }
  return
}
