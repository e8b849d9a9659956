// 10 columns cannot be 3 groups of 2-column units.
module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() {
    %b = wsgraph.constant dense<1> : tensor<10xi32>
    wskernel.kernel "qkv" kind "test" grid [1, 2] sram 64 cycles 0.0 channels {}
        (%b) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<10xi32>) -> () {
      wskernel.init_tile 0 at 0 rows 1 cols 6 col_origin [0, 6] {col_interleave = array<i64: 3, 2>}
    }
    return
  }
}
