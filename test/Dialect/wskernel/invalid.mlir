// RUN: wsc-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of the wskernel ops (WskernelDialect.cpp) and
// per ODS trait they rely on.

//===----------------------------------------------------------------------===//
// Kernel: grid, channels, SRAM against the arch
//===----------------------------------------------------------------------===//

func.func @grid_rank() {
  // expected-error @+1 {{'wskernel.kernel' op grid must be [h, w] with positive sizes}}
  wskernel.kernel "k" kind "x" grid [4] sram 64 cycles 1.0 channels {} () : () -> () {
  }
  return
}

// -----

func.func @grid_three() {
  // expected-error @+1 {{'wskernel.kernel' op grid must be [h, w] with positive sizes}}
  wskernel.kernel "k" kind "x" grid [1, 2, 3] sram 64 cycles 1.0 channels {} () : () -> () {
  }
  return
}

// -----

func.func @grid_zero_height() {
  // expected-error @+1 {{'wskernel.kernel' op grid must be [h, w] with positive sizes}}
  wskernel.kernel "k" kind "x" grid [0, 4] sram 64 cycles 1.0 channels {} () : () -> () {
  }
  return
}

// -----

func.func @grid_negative_width() {
  // expected-error @+1 {{'wskernel.kernel' op grid must be [h, w] with positive sizes}}
  wskernel.kernel "k" kind "x" grid [2, -1] sram 64 cycles 1.0 channels {} () : () -> () {
  }
  return
}

// -----

func.func @channel_shape() {
  // expected-error @+1 {{'wskernel.kernel' op channel 'ring' must be "col_chain", "col_chain_north", "row_chain" or "row_chain_west"}}
  wskernel.kernel "k" kind "x" grid [2, 2] sram 64 cycles 1.0 channels {col = "col_chain", ring = "ring"} () : () -> () {
  }
  return
}

// -----

func.func @channel_not_string() {
  // expected-error @+1 {{'wskernel.kernel' op channel 'col' must be "col_chain", "col_chain_north", "row_chain" or "row_chain_west"}}
  wskernel.kernel "k" kind "x" grid [2, 2] sram 64 cycles 1.0 channels {col = 1 : i64} () : () -> () {
  }
  return
}

// -----

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 4, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>} {
  func.func @sram_over_arch() {
    // expected-error @+1 {{'wskernel.kernel' op kernel 'big' needs 49156 bytes of SRAM per PE, but a PE of arch 'mesh:4x4' has 49152}}
    wskernel.kernel "big" kind "x" grid [1, 1] sram 49156 cycles 1.0 channels {} () : () -> () {
    }
    return
  }
}

//===----------------------------------------------------------------------===//
// Kernel: feedback
//===----------------------------------------------------------------------===//

// -----

func.func @feedback_bad_port() {
  // expected-error @+1 {{'wskernel.kernel' op feedback entries must map a port 'fb<i>' to a kernel name, not 'in0'}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {in0 = "k"}} : () -> () {
  }
  return
}

// -----

func.func @feedback_bare_fb() {
  // "fb" is the sending port, not a receiving one.
  // expected-error @+1 {{'wskernel.kernel' op feedback entries must map a port 'fb<i>' to a kernel name, not 'fb'}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {fb = "k"}} : () -> () {
  }
  return
}

// -----

func.func @feedback_not_a_name() {
  // expected-error @+1 {{'wskernel.kernel' op feedback entries must map a port 'fb<i>' to a kernel name, not 'fb0'}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {fb0 = 3 : i64}} : () -> () {
  }
  return
}

// -----

func.func @feedback_unknown_kernel() {
  wskernel.kernel "l0.proj" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
  }
  // expected-error @+1 {{'wskernel.kernel' op feedback port 'fb0' names kernel 'l1.proj', which is not a kernel of the same function}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {fb0 = "l1.proj"}} : () -> () {
  }
  return
}

// -----

func.func @feedback_other_function() {
  // expected-error @+1 {{'wskernel.kernel' op feedback port 'fb1' names kernel 'src', which is not a kernel of the same function}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {fb1 = "src"}} : () -> () {
  }
  return
}
func.func @other() {
  wskernel.kernel "src" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
  }
  return
}

// -----

func.func @send_fb_without_reader() {
  // expected-error @+2 {{'wskernel.send' op port 'fb' is not an input, output or channel of 'l0.proj'}}
  wskernel.kernel "l0.proj" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    wskernel.send "fb" from <base = 0> n <base = 4>
  }
  // This kernel reads the feedback of another kernel, not of "l0.proj".
  wskernel.kernel "l0.fc" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {fb0 = "l0.fc"}} : () -> () {
  }
  return
}

//===----------------------------------------------------------------------===//
// Kernel: ports, operands and results named by the body
//===----------------------------------------------------------------------===//

// -----

func.func @port_input_out_of_range(%x: !wskernel.stream<4, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<4, f32>) -> () {
    // expected-error @+1 {{'wskernel.recv' op port 'in1' is not an input, output or channel of 'k'}}
    wskernel.recv "in1" to <base = 0> n <base = 4>
  }
  return
}

// -----

func.func @port_output_out_of_range() -> !wskernel.stream<4, f32> {
  %0 = wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> !wskernel.stream<4, f32> {
    wskernel.send "out0" from <base = 0> n <base = 4>
    // expected-error @+1 {{'wskernel.send' op port 'out1' is not an input, output or channel of 'k'}}
    wskernel.send "out1" from <base = 0> n <base = 4>
  }
  return %0 : !wskernel.stream<4, f32>
}

// -----

func.func @forward_unknown_port() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op forward port 'out0' is not an input, output or channel of 'k'}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "add", forward = "out0"}
  }
  return
}

// -----

func.func @forward_after_max() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op only a copy, an add or a discard forwards, not 'max'}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "max", forward = "col"}
  }
  return
}

// -----

func.func @async_max() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op only a copy, an add or a discard runs async, not 'max'}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "max", async}
  }
  return
}

// -----

func.func @interleave_four_numbers(%w: tensor<4x12xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w) : (tensor<4x12xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op col_interleave must be [groups, unit], both positive}}
    wskernel.init_tile 0 at 0 rows 4 cols 12 {col_interleave = array<i64: 3, 2, 2, 1>}
  }
  return
}

// -----

func.func @perm_not_a_permutation(%w: tensor<4x12xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w) : (tensor<4x12xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op col_perm must be a permutation of 0..3}}
    wskernel.init_tile 0 at 0 rows 4 cols 12 {col_perm = array<i64: 0, 2, 2, 3>}
  }
  return
}

// -----

func.func @row_perm_not_a_permutation(%w: tensor<4x12xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w) : (tensor<4x12xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op row_perm must be a permutation of 0..1}}
    wskernel.init_tile 0 at 0 rows 4 cols 12 {row_perm = array<i64: 1, 2>}
  }
  return
}

// -----

func.func @perm_and_interleave(%w: tensor<4x12xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w) : (tensor<4x12xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op col_perm combines with neither col_interleave nor col_window}}
    wskernel.init_tile 0 at 0 rows 4 cols 12 {col_perm = array<i64: 1, 0>, col_interleave = array<i64: 3, 2>}
  }
  return
}

// -----

func.func @interleave_and_window(%w: tensor<4x12xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w) : (tensor<4x12xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op col_interleave and col_window do not combine}}
    wskernel.init_tile 0 at 0 rows 4 cols 6 {col_interleave = array<i64: 3, 2>, col_window = array<i64: 0, 6>}
  }
  return
}

// -----

func.func @product_without_matrix() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op a product needs a matrix and cols}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "vecmat", cols = #wskernel.aff<base = 4>}
  }
  return
}

// -----

func.func @product_storage() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 4096 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op storage 'f16' is not f32 or, on a product, sparse[4]:N[:f16|:bf16]}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "vecmat", matrix = #wskernel.aff<base = 64>, cols = #wskernel.aff<base = 4>, storage = "f16"}
  }
  return
}

// -----

func.func @sparse_storage_on_a_copy() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 4096 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op storage 'sparse:8' is not f32 or, on a product, sparse[4]:N[:f16|:bf16]}}
    wskernel.recv "col" to <base = 0> n <base = 4> {storage = "sparse:8", tile_rows = 4}
  }
  return
}

// -----

func.func @sparse_product_without_tile_rows() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 4096 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op tile_rows and first_row go with a sparse storage, which needs tile_rows}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "vecmat", matrix = #wskernel.aff<base = 64>, cols = #wskernel.aff<base = 4>, storage = "sparse:8"}
  }
  return
}

// -----

func.func @first_row_on_a_dense_product() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 4096 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op tile_rows and first_row go with a sparse storage, which needs tile_rows}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "vecmat", matrix = #wskernel.aff<base = 64>, cols = #wskernel.aff<base = 4>, first_row = 2}
  }
  return
}

// -----

func.func @sparse_rows_past_the_tile() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 4096 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op rows [2, 2 + n) are not inside its 4 tile rows}}
    wskernel.recv "col" to <base = 0> n <base = 3> {combine = "vecmat_add", matrix = #wskernel.aff<base = 64>, cols = #wskernel.aff<base = 4>, storage = "sparse:8", tile_rows = 4, first_row = 2}
  }
  return
}

// -----

func.func @matrix_without_product() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    // expected-error @+1 {{'wskernel.recv' op only a product (vecmat) takes a matrix and cols}}
    wskernel.recv "col" to <base = 0> n <base = 4> {combine = "add", matrix = #wskernel.aff<base = 16>, cols = #wskernel.aff<base = 4>}
  }
  return
}

// -----

func.func @port_unknown_channel() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {col = "col_chain"} () : () -> () {
    wskernel.loop 2 {
      // Even a discarding recv needs a real port.
      // expected-error @+1 {{'wskernel.recv' op port 'row' is not an input, output or channel of 'k'}}
      wskernel.recv "row" to <base = 0> n <base = 4> {combine = "discard"}
    }
  }
  return
}

// -----

func.func @port_undeclared_feedback() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () {feedback = {fb0 = "k"}} : () -> () {
    // expected-error @+1 {{'wskernel.recv' op port 'fb1' is not an input, output or channel of 'k'}}
    wskernel.recv "fb1" to <base = 0> n <base = 4>
  }
  return
}

// -----

func.func @init_tile_source(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op source 1 is not an operand}}
    wskernel.init_tile 1 at 0 rows 1 cols 4
  }
  return
}

// -----

func.func @host_input_source(%ids: tensor<1x4xi64>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%ids) : (tensor<1x4xi64>) -> () {
    // expected-error @+1 {{'wskernel.host_input' op source 3 is not an operand}}
    wskernel.host_input 3 at 0 {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
  }
  return
}

// -----

func.func @host_output_result() -> tensor<4xf32> {
  %0 = wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> tensor<4xf32> {
    // expected-error @+1 {{'wskernel.host_output' op result 1 is not a result}}
    wskernel.host_output 1 at 0 rows 1 cols 4
  }
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Kernel: SRAM the body touches
//===----------------------------------------------------------------------===//

// -----

func.func @sram_init_tile(%w: tensor<16x16xf32>) {
  // 16 x 16 words at byte 64: up to byte 1088.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 1088 but declares 1024 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 1024 cycles 1.0 channels {} (%w) : (tensor<16x16xf32>) -> () {
    wskernel.init_tile 0 at 64 rows 16 cols 16
  }
  return
}

// -----

func.func @sram_init_tile_f16(%w: tensor<16x15xf32>) {
  // 240 f16 values are 120 words at byte 32: up to byte 512.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 512 but declares 508 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 508 cycles 1.0 channels {} (%w) : (tensor<16x15xf32>) -> () {
    wskernel.init_tile 0 at 32 rows 16 cols 15 {storage = "f16"}
  }
  return
}

// -----

func.func @sram_host_input(%ids: tensor<2x8xi64>) {
  // 16 words at byte 8: up to byte 72.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 72 but declares 64 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%ids) : (tensor<2x8xi64>) -> () {
    wskernel.host_input 0 at 8
  }
  return
}

// -----

func.func @sram_host_output() -> tensor<4x4xf32> {
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 80 but declares 64 bytes per PE}}
  %0 = wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> tensor<4x4xf32> {
    wskernel.host_output 0 at 16 rows 4 cols 4
  }
  return %0 : tensor<4x4xf32>
}

// -----

func.func @sram_product_matrix(%x: !wskernel.stream<8, f32>) {
  // A 6 x 4 matrix at byte 32 (its rows are the received words): up to byte
  // 128; the product itself (4 words at 0) ends before.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 128 but declares 124 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 124 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    wskernel.recv "in0" to <base = 0> n <base = 6> {combine = "vecmat", matrix = #wskernel.aff<base = 32>, cols = #wskernel.aff<base = 4>}
  }
  return
}

// -----

func.func @sram_loop_and_px(%x: !wskernel.stream<8, f32>) {
  // 8 + 16 * 7 + 128 * 1 + 32 * 3 + -8 * 0 = 344, plus 8 words: up to byte 376.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 376 but declares 372 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [2, 4] sram 372 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    wskernel.loop 2 {
      wskernel.loop 8 {
        wskernel.recv "in0" to <base = 8, loop = [16, 128], px = 32, py = -8> n <base = 8>
      }
    }
  }
  return
}

// -----

func.func @sram_when() {
  // Only PEs with px <= 1 run it: 16 * 1 + 4 words = byte 32.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 32 but declares 28 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 4] sram 28 cycles 1.0 channels {} () : () -> () {
    wskernel.imm "fill" <base = 0, px = 16> = <base = 0>, 0.0 n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
  }
  return
}

// -----

func.func @sram_matvec_f16() {
  // The matrix: 9 x 3 f16 values in 14 words at byte 64: up to byte 120.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 120 but declares 116 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 116 cycles 1.0 channels {} () : () -> () {
    wskernel.matvec <base = 0> = <base = 64> x <base = 12> rows <base = 9> cols <base = 3> {storage = "f16"}
  }
  return
}

// -----

func.func @sram_matvec_transposed() {
  // Transposed, dst holds cols = 8 words: up to byte 256 + 32.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 288 but declares 256 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} () : () -> () {
    wskernel.matvec <base = 256> = <base = 0> x <base = 128> rows <base = 2> cols <base = 8> {transposed = true}
  }
  return
}

// -----

func.func @sram_gather() {
  // The bf16 table: 4 x 5 values in 10 words at byte 100: up to byte 140.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 140 but declares 136 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 136 cycles 1.0 channels {} () : () -> () {
    wskernel.gather <base = 0> = <base = 100>[<base = 96>] rows <base = 4> cols <base = 5> from <base = 0> {storage = "bf16"}
  }
  return
}

// -----

func.func @sram_reduce_scalar() {
  // A reduce writes one word: byte 200 + 4.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 204 but declares 200 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 200 cycles 1.0 channels {} () : () -> () {
    wskernel.reduce "sum" <base = 200> = <base = 0> n <base = 8>
  }
  return
}

// -----

func.func @sram_load_tile(%w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) {
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 260 but declares 256 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w0, %w1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> () {
    wskernel.loop 2 {
      wskernel.load_tile 0 stride 1 at 4 rows 8 cols 8
    }
  }
  return
}

// -----

func.func @count_negative() {
  wskernel.kernel "k" kind "x" grid [1, 2] sram 64 cycles 1.0 channels {} () : () -> () {
    // On PE px = 1 the count is 4 - 8.
    // expected-error @+1 {{'wskernel.unary' op element count can be negative}}
    wskernel.unary "copy" <base = 0> = <base = 32> n <base = 4, px = -8>
  }
  return
}

// -----

func.func @count_negative_in_loop() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    wskernel.loop 3 {
      // In iteration 2 the count is 1 - 2.
      // expected-error @+1 {{'wskernel.unary' op element count can be negative}}
      wskernel.unary "neg" <base = 0> = <base = 0> n <base = 1, loop = [-1]>
    }
  }
  return
}

// -----

func.func @count_negative_matvec() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // The matrix takes -4 words.
    // expected-error @+1 {{'wskernel.matvec' op element count can be negative}}
    wskernel.matvec <base = 0> = <base = 0> x <base = 0> rows <base = -1> cols <base = 4>
  }
  return
}

// -----

func.func @address_negative() {
  wskernel.kernel "k" kind "x" grid [1, 2] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.vector' op address #wskernel.aff<base = 4, px = -8> can be negative}}
    wskernel.vector "add" <base = 0> = <base = 0>, <base = 4, px = -8> n <base = 1>
  }
  return
}

// -----

func.func @address_negative_in_loop() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    wskernel.loop 2 {
      wskernel.loop 4 {
        // expected-error @+1 {{'wskernel.scalar' op address #wskernel.aff<base = 8, loop = [0, -16]> can be negative}}
        wskernel.scalar "mul" <base = 16> = <base = 16>, scalar <base = 8, loop = [0, -16]> n <base = 4>
      }
    }
  }
  return
}

// -----

func.func @address_negative_load_tile(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op offset must be a multiple of 4}}
      wskernel.load_tile 0 stride 1 at -4 rows 1 cols 4
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Guards: checked point by point
//===----------------------------------------------------------------------===//

// -----

func.func @guard_beyond_sram() {
  // The guard px - i >= 0 lets PE 3 run in iteration 0, at byte 4 * (3 - 0) = 12.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 16 but declares 8 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 4] sram 8 cycles 1.0 channels {row = "row_chain"} () : () -> () {
    wskernel.loop 4 {
      wskernel.send "row" from <base = 0, loop = [-4], px = 4> n <base = 1> {guard = [#wskernel.aff<base = 0, loop = [-1], px = 1>]}
    }
  }
  return
}

// -----

func.func @guard_negative_address() {
  wskernel.kernel "k" kind "x" grid [1, 4] sram 64 cycles 1.0 channels {row = "row_chain"} () : () -> () {
    wskernel.loop 4 {
      // i - px >= 0 lets PE 0 run in iteration 1, at byte -4.
      // expected-error @+1 {{'wskernel.recv' op address #wskernel.aff<base = 0, loop = [-4], px = 4> can be negative}}
      wskernel.recv "row" to <base = 0, loop = [-4], px = 4> n <base = 1> {guard = [#wskernel.aff<base = 0, loop = [1], px = -1>]}
    }
  }
  return
}

// -----

func.func @guard_negative_count() {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // The guard py >= 1 lets PE (0, 1) run, with 1 - 2 words.
    // expected-error @+1 {{'wskernel.imm' op element count can be negative}}
    wskernel.imm "mul" <base = 0> = <base = 0>, 2.0 n <base = 1, py = -2> {guard = [#wskernel.aff<base = -1, py = 1>]}
  }
  return
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

// -----

func.func @loop_zero() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.loop' op count must be positive}}
    wskernel.loop 0 {
    }
  }
  return
}

// -----

func.func @loop_negative() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    wskernel.loop 2 {
      // expected-error @+1 {{'wskernel.loop' op count must be positive}}
      wskernel.loop -3 {
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// init_tile
//===----------------------------------------------------------------------===//

// -----

func.func @init_tile_rows(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op needs positive rows and cols, and [py, px] origins}}
    wskernel.init_tile 0 at 0 rows 0 cols 4
  }
  return
}

// -----

func.func @init_tile_cols(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op needs positive rows and cols, and [py, px] origins}}
    wskernel.init_tile 0 at 0 rows 1 cols -4
  }
  return
}

// -----

func.func @init_tile_row_origin(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op needs positive rows and cols, and [py, px] origins}}
    wskernel.init_tile 0 at 0 rows 1 cols 4 row_origin [1]
  }
  return
}

// -----

func.func @init_tile_col_origin(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op needs positive rows and cols, and [py, px] origins}}
    wskernel.init_tile 0 at 0 rows 1 cols 4 col_origin [0, 4, 0]
  }
  return
}

// -----

func.func @init_tile_offset(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op offset must be a multiple of 4}}
    wskernel.init_tile 0 at 6 rows 1 cols 4
  }
  return
}

// -----

func.func @init_tile_storage(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op storage 'f64' is not one of f32, f16, bf16}}
    wskernel.init_tile 0 at 0 rows 1 cols 4 {storage = "f64"}
  }
  return
}

//===----------------------------------------------------------------------===//
// load_tile
//===----------------------------------------------------------------------===//

// -----

func.func @load_tile_outside_loop(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.load_tile' op expects parent op 'wskernel.loop'}}
    wskernel.load_tile 0 stride 1 at 0 rows 1 cols 4
  }
  return
}

// -----

func.func @load_tile_stride_zero(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op stride must be positive: each layer has its own operands}}
      wskernel.load_tile 0 stride 0 at 0 rows 1 cols 4
    }
  }
  return
}

// -----

func.func @load_tile_stride_negative(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op stride must be positive: each layer has its own operands}}
      wskernel.load_tile 0 stride -1 at 0 rows 1 cols 4
    }
  }
  return
}

// -----

func.func @load_tile_last_layer(%x: !wskernel.stream<4, f32>, %w0: tensor<4xf32>, %b0: tensor<4xf32>,
                                %w1: tensor<4xf32>, %b1: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x, %w0, %b0, %w1, %b1)
      : (!wskernel.stream<4, f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> () {
    wskernel.loop 3 {
      // Layers 0, 1 and 2 read operands 2, 4 and 6.
      // expected-error @+1 {{'wskernel.load_tile' op the tile of the last layer comes from operand 6, but the kernel has 5 operands}}
      wskernel.load_tile 2 stride 2 at 16 rows 1 cols 4
    }
  }
  return
}

// -----

func.func @load_tile_rows(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op needs positive rows and cols, and [py, px] origins}}
      wskernel.load_tile 0 stride 1 at 0 rows -1 cols 4
    }
  }
  return
}

// -----

func.func @load_tile_cols(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op needs positive rows and cols, and [py, px] origins}}
      wskernel.load_tile 0 stride 1 at 0 rows 1 cols 0
    }
  }
  return
}

// -----

func.func @load_tile_origin(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op needs positive rows and cols, and [py, px] origins}}
      wskernel.load_tile 0 stride 1 at 0 rows 1 cols 4 row_origin [0, 1] col_origin [4]
    }
  }
  return
}

// -----

func.func @load_tile_offset(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // expected-error @+1 {{'wskernel.load_tile' op offset must be a multiple of 4}}
      wskernel.load_tile 0 stride 1 at 2 rows 1 cols 4
    }
  }
  return
}

// -----

func.func @load_tile_storage(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 1 {
      // Storage names are case sensitive.
      // expected-error @+1 {{'wskernel.load_tile' op storage 'BF16' is not one of f32, f16, bf16}}
      wskernel.load_tile 0 stride 1 at 0 rows 1 cols 4 {storage = "BF16"}
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Storage and kinds of the instructions
//===----------------------------------------------------------------------===//

// -----

func.func @matvec_storage() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.matvec' op storage 'i8' is not one of f32, f16, bf16}}
    wskernel.matvec <base = 0> = <base = 16> x <base = 32> rows <base = 2> cols <base = 2> {storage = "i8"}
  }
  return
}

// -----

func.func @gather_storage() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.gather' op storage '' is not one of f32, f16, bf16}}
    wskernel.gather <base = 0> = <base = 16>[<base = 8>] rows <base = 2> cols <base = 2> from <base = 0> {storage = ""}
  }
  return
}

// -----

func.func @recv_combine(%x: !wskernel.stream<4, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<4, f32>) -> () {
    // expected-error @+1 {{'wskernel.recv' op kind 'sum' is not one of copy, add, max, discard}}
    wskernel.recv "in0" to <base = 0> n <base = 4> {combine = "sum"}
  }
  return
}

// -----

func.func @vector_kind() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.vector' op kind 'shl' is not one of add, sub, mul, div, max, min, pow, mod, eq, lt, le, gt, ge, and, or, xor, bit_and, bit_or, bit_xor}}
    wskernel.vector "shl" <base = 0> = <base = 0>, <base = 16> n <base = 4>
  }
  return
}

// -----

func.func @scalar_kind() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // scalar has no max, unlike vector.
    // expected-error @+1 {{'wskernel.scalar' op kind 'max' is not one of add, sub, mul, div}}
    wskernel.scalar "max" <base = 0> = <base = 0>, scalar <base = 16> n <base = 4>
  }
  return
}

// -----

func.func @imm_kind() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.imm' op kind 'sub' is not one of add, mul, fill}}
    wskernel.imm "sub" <base = 0> = <base = 0>, 1.0 n <base = 4>
  }
  return
}

// -----

func.func @unary_kind() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.unary' op kind 'softsign' is not one of exp, erf, tanh, sqrt, rsqrt, neg, gelu, gelu_tanh, copy, log, abs, sin, cos, sigmoid, reciprocal, relu, floor, ceil, not, bit_not, to_int, to_float}}
    wskernel.unary "softsign" <base = 0> = <base = 0> n <base = 4>
  }
  return
}

// -----

func.func @elem_type() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.vector' op elem 'i64' is not f32 or i32}}
    wskernel.vector "add" <base = 0> = <base = 0>, <base = 16> n <base = 4> {elem = "i64"}
  }
  return
}

// -----

func.func @random_no_int_form() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.scalar' op kind 'random' has no i32 form}}
    wskernel.scalar "random" <base = 0> = <base = 0>, scalar <base = 16> n <base = 4> {elem = "i32"}
  }
  return
}

// -----

func.func @bit_op_no_elem() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.vector' op kind 'bit_xor' has no i32 form}}
    wskernel.vector "bit_xor" <base = 0> = <base = 0>, <base = 16> n <base = 4> {elem = "i32"}
  }
  return
}

// -----

func.func @elem_no_int_form() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.unary' op kind 'exp' has no i32 form}}
    wskernel.unary "exp" <base = 0> = <base = 0> n <base = 4> {elem = "i32"}
  }
  return
}

// -----

func.func @index_copy_sram() {
  // The table of 8 words at 48 runs past the kernel's 64 bytes.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 80 but declares 64 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    wskernel.index_copy <base = 0> = <base = 16>[<base = 48>] n <base = 8> of <base = 4>
  }
  return
}

// -----

func.func @reduce_kind() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.reduce' op kind 'mean' is not one of sum, max}}
    wskernel.reduce "mean" <base = 0> = <base = 0> n <base = 4>
  }
  return
}

//===----------------------------------------------------------------------===//
// ODS traits and the parser
//===----------------------------------------------------------------------===//

// -----

func.func @kernel_isolated(%t: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wsgraph.tanh' op using value defined outside the region}}
    %0 = wsgraph.tanh %t : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_two_blocks() {
  // expected-error @+1 {{'wskernel.kernel' op expects region #0 to have 0 or 1 blocks}}
  "wskernel.kernel"() <{channels = {}, cycles_per_token = 1.0 : f64, grid = array<i64: 1, 1>, kind = "x",
                        name = "k", sram_bytes_per_pe = 64 : i64}> ({
  ^bb0:
    "wskernel.loop"() <{count = 1 : i64}> ({
    }) : () -> ()
  ^bb1:
    "wskernel.loop"() <{count = 1 : i64}> ({
    }) : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @kernel_missing_grid() {
  // expected-error @+1 {{'wskernel.kernel' op requires attribute 'grid'}}
  "wskernel.kernel"() <{channels = {}, cycles_per_token = 1.0 : f64, kind = "x", name = "k",
                        sram_bytes_per_pe = 64 : i64}> ({
  }) : () -> ()
  return
}

// -----

func.func @loop_no_region() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.loop' op requires one region}}
    "wskernel.loop"() <{count = 1 : i64}> : () -> ()
  }
  return
}

// -----

func.func @aff_unknown_key() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{unknown key 'pz' in aff}}
    wskernel.send "out0" from <base = 0, pz = 1> n <base = 1>
  }
  return
}

// -----

// A negative source is not an operand (it used to index past the operands).
func.func @host_input_negative_source(%i: tensor<4xi32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%i) : (tensor<4xi32>) -> () {
    // expected-error @+1 {{'wskernel.host_input' op source 18446744073709551615 is not an operand}}
    wskernel.host_input -1 at 0
  }
  return
}

// -----

func.func @init_tile_negative_offset(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op offset must be a multiple of 4}}
    wskernel.init_tile 0 at -4 rows 1 cols 4
  }
  return
}

// -----

// Declarations of initial SRAM belong to the kernel, not to a loop.
func.func @init_tile_in_loop(%w: tensor<4xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%w) : (tensor<4xf32>) -> () {
    wskernel.loop 2 {
      // expected-error @+1 {{'wskernel.init_tile' op expects parent op 'wskernel.kernel'}}
      wskernel.init_tile 0 at 4096 rows 1 cols 4
    }
  }
  return
}

// -----

// A channel whose name starts like a stream port is still a channel.
func.func @channel_named_inner(%x: !wskernel.stream<4, f32>) {
  wskernel.kernel "k" kind "x" grid [2, 1] sram 64 cycles 1.0 channels {inner = "col_chain"} (%x) : (!wskernel.stream<4, f32>) -> () {
    wskernel.send "inner" from <base = 0> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
    // expected-error @+1 {{'wskernel.send' op port 'inX' is not an input, output or channel of 'k'}}
    wskernel.send "inX" from <base = 0> n <base = 4>
  }
  return
}

// -----

func.func @col_window_bad(%w: tensor<4x8xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%w) : (tensor<4x8xf32>) -> () {
    // expected-error @+1 {{'wskernel.init_tile' op col_window must be [lo, hi] with 0 <= lo < hi}}
    wskernel.init_tile 0 at 0 rows 4 cols 4 {col_window = array<i64: 4, 4>}
  }
  return
}

// -----

func.func @writes_into_wrong_type(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{kernel 'k' writes into operand 0, which must be a tensor of its result's type}}
  %r = wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%x) {wskernel.writes_into = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x8xf32> {
    wskernel.host_output 0 at 0 rows 2 cols 4 {col_window = array<i64: 4, 8>}
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @host_output_bad_tile(%x: !wskernel.stream<4, f32>) -> tensor<2x4xf32> {
  %r = wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%x) : (!wskernel.stream<4, f32>) -> tensor<2x4xf32> {
    // expected-error @+1 {{'wskernel.host_output' op needs positive rows and cols, and [py, px] origins}}
    wskernel.host_output 0 at 0 rows 0 cols 4
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @host_output_unaligned(%x: !wskernel.stream<4, f32>) -> tensor<2x4xf32> {
  %r = wskernel.kernel "k" kind "x" grid [1, 1] sram 256 cycles 1.0 channels {} (%x) : (!wskernel.stream<4, f32>) -> tensor<2x4xf32> {
    // expected-error @+1 {{'wskernel.host_output' op offset must be a multiple of 4}}
    wskernel.host_output 0 at 6 rows 2 cols 4
  }
  return %r : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{a stream carries a positive number of words per token, not -3}}
func.func @negative_stream(%x: !wskernel.stream<-3, f32>) {
  return
}

// -----

func.func @filter_output_port() {
  %s = wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> !wskernel.stream<4, f32> {
    // expected-error @+1 {{'wskernel.filter' op filters an input port (in<i> or fb<i>), not 'out0'}}
    wskernel.filter "out0" first <base = 0> count <base = 2>
  }
  return
}

// -----

func.func @filter_loop(%x: !wskernel.stream<4, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<4, f32>) -> () {
    // expected-error @+1 {{'wskernel.filter' op window must not depend on loop indices}}
    wskernel.filter "in0" first <base = 0, loop = [1]> count <base = 2>
  }
  return
}

// -----

func.func @filter_past_the_block(%x: !wskernel.stream<8, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 2] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    // expected-error @+1 {{'wskernel.filter' op window [5, 10) of PE (1, 0) must be non-empty and inside the 8-word message}}
    wskernel.filter "in0" first <base = 0, px = 5> count <base = 5>
  }
  return
}

// -----

func.func @filter_empty(%x: !wskernel.stream<8, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    // expected-error @+1 {{'wskernel.filter' op window [3, 3) of PE (0, 0) must be non-empty and inside the 8-word message}}
    wskernel.filter "in0" first <base = 3> count <base = 0>
  }
  return
}

// -----

func.func @filter_past_the_period(%x: !wskernel.stream<8, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    // A period of the whole tensor (4 rows of 8) bounds the window, not the message.
    // expected-error @+1 {{'wskernel.filter' op window [24, 40) of PE (0, 0) must be non-empty and inside the 32-word period}}
    wskernel.filter "in0" first <base = 24> count <base = 16> {period = 32 : i64}
  }
  return
}

// -----

func.func @host_input_window(%x: tensor<4x8xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (tensor<4x8xf32>) -> () {
    // expected-error @+1 {{'wskernel.host_input' op window must be [first, count] inside the input, or [first, count, period] inside a period that divides it}}
    wskernel.host_input 0 at 0 {window = array<i64: 24, 16>}
  }
  return
}

// -----

func.func @host_input_period(%x: tensor<4x8xf32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (tensor<4x8xf32>) -> () {
    // A strided window's period must divide the input (32 elements).
    // expected-error @+1 {{'wskernel.host_input' op window must be [first, count] inside the input, or [first, count, period] inside a period that divides it}}
    wskernel.host_input 0 at 0 {window = array<i64: 1, 2, 5>}
  }
  return
}

// -----

func.func @filter_unknown_port(%x: !wskernel.stream<8, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    // expected-error @+1 {{'wskernel.filter' op port 'in3' is not an input, output or channel of 'k'}}
    wskernel.filter "in3" first <base = 0> count <base = 2>
  }
  return
}

// -----

func.func @filter_in_loop(%x: !wskernel.stream<8, f32>) {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} (%x) : (!wskernel.stream<8, f32>) -> () {
    wskernel.loop 2 {
      // expected-error @+1 {{'wskernel.filter' op expects parent op 'wskernel.kernel'}}
      wskernel.filter "in0" first <base = 0> count <base = 2>
    }
  }
  return
}

// -----

func.func @sram_init_tile_sparse(%w: tensor<16x15xf32>) {
  // At most 40 entries in 16 x 15: 1 + 4 words of 8-bit row counts, 10 of
  // 8-bit gaps and 40 values, 55 words at byte 32: up to byte 252.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 252 but declares 248 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 248 cycles 1.0 channels {} (%w) : (tensor<16x15xf32>) -> () {
    wskernel.init_tile 0 at 32 rows 16 cols 15 {storage = "sparse:40"}
  }
  return
}

// -----

func.func @sram_init_tile_sparse_nibbles(%w: tensor<16x15xf32>) {
  // With 4-bit gaps, eight to a word: 1 + 4 + 5 + 40 = 50 words at byte
  // 32: up to byte 232.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 232 but declares 228 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 228 cycles 1.0 channels {} (%w) : (tensor<16x15xf32>) -> () {
    wskernel.init_tile 0 at 32 rows 16 cols 15 {storage = "sparse4:40"}
  }
  return
}

// -----

func.func @sram_matvec_sparse_dense_fallback() {
  // 26 entries of 9 x 3 take more words sparse than dense: the tile is
  // held dense, 1 + 27 words at byte 64: up to byte 176.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 176 but declares 172 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 172 cycles 1.0 channels {} () : () -> () {
    wskernel.matvec <base = 0> = <base = 64> x <base = 12> rows <base = 9> cols <base = 3> {storage = "sparse:26"}
  }
  return
}

// -----

func.func @matvec_sparse_storage_needs_a_count() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.matvec' op storage 'sparse:x' is not one of f32, f16, bf16, sparse[4]:N[:f16|:bf16]}}
    wskernel.matvec <base = 0> = <base = 16> x <base = 32> rows <base = 2> cols <base = 2> {storage = "sparse:x"}
  }
  return
}

// -----

func.func @matvec_sparse_values_are_f32_f16_or_bf16() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.matvec' op storage 'sparse:3:f8' is not one of f32, f16, bf16, sparse[4]:N[:f16|:bf16]}}
    wskernel.matvec <base = 0> = <base = 16> x <base = 32> rows <base = 2> cols <base = 2> {storage = "sparse:3:f8"}
  }
  return
}

// -----

func.func @sram_init_tile_sparse_half_values(%w: tensor<16x15xf32>) {
  // At most 40 entries of 16-bit values in 16 x 15: 1 + 4 words of 8-bit
  // row counts, 10 of 8-bit columns and 20 of two values, 35 words at byte
  // 32: up to byte 172.
  // expected-error @+1 {{'wskernel.kernel' op kernel 'k' touches SRAM up to byte 172 but declares 168 bytes per PE}}
  wskernel.kernel "k" kind "x" grid [1, 1] sram 168 cycles 1.0 channels {} (%w) : (tensor<16x15xf32>) -> () {
    wskernel.init_tile 0 at 32 rows 16 cols 15 {storage = "sparse:40:f16"}
  }
  return
}

// -----

func.func @gather_is_never_sparse() {
  wskernel.kernel "k" kind "x" grid [1, 1] sram 64 cycles 1.0 channels {} () : () -> () {
    // expected-error @+1 {{'wskernel.gather' op storage 'sparse:3' is not one of f32, f16, bf16}}
    wskernel.gather <base = 0> = <base = 16>[<base = 8>] rows <base = 2> cols <base = 2> from <base = 0> {storage = "sparse:3"}
  }
  return
}
