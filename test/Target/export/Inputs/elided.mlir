module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() -> (tensor<4xf32> {wsgraph.name = "y"}) {
    %e = wsgraph.weight "wte" elided : tensor<8x4xf32>
    %y = wskernel.kernel "embed" kind "embed" grid [1, 1] sram 128 cycles 1.0 channels {} (%e)
        {wafer.origin = array<i64: 0, 0, 0>} : (tensor<8x4xf32>) -> tensor<4xf32> {
      wskernel.init_tile 0 at 0 rows 8 cols 4
      wskernel.host_output 0 at 0 rows 1 cols 4
    }
    return %y : tensor<4xf32>
  }
}
