//===- Wafer.td - physical facts of the wafer ---------------*- tablegen -*-===//
//
// The wafer dialect holds physical facts only: the machine (an attribute on
// the module), where kernel regions sit, and what every router does.
//
//===----------------------------------------------------------------------===//
#ifndef WAFER_TD
#define WAFER_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Wafer_Dialect : Dialect {
  let name = "wafer";
  let cppNamespace = "::wsc::wafer";
  let summary = "Physical layout: the machine, regions at coordinates, router tables.";
  let description = [{
    Everything here is a physical fact the runtime needs. The machine is one
    `#wafer.arch` attribute on the module, chosen by `arch=` and read by every
    pass. Placement writes coordinates and routing writes router tables;
    `--wsc-verify-routes` re-derives every stream from those tables alone.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def Wafer_ArchAttr : AttrDef<Wafer_Dialect, "Arch"> {
  let mnemonic = "arch";
  let summary = "The machine: mesh, per-PE resources, timing and cluster links";
  let description = [{
    One wafer is a `width` x `height` mesh of processing elements (PEs). Each
    PE has `sram_bytes` of SRAM and a router with `colors` virtual channels
    and five ports (N, E, S, W, and the ramp to its core). Messages are 32-bit
    wavelets moving one hop per `hop_cycles`. `fmac_fp32` and `fmac_fp16` are
    multiply-accumulates per cycle per PE; `simd_fp32` is the lane count of
    vector ops; `transcendental_cycles` is the per-element cost of exp, erf,
    tanh, sqrt and division. A cluster holds up to `max_wafers` wafers joined
    by links of `link_bytes_per_cycle` and `link_latency_cycles`; weights that
    do not fit may stream from an external memory of `ext_mem_bytes` at
    `ext_mem_bytes_per_cycle`. The sources of the preset numbers are in
    docs/arch.md.

    ```mlir
    module attributes {wafer.arch = #wafer.arch<name = "mesh:16x16", width = 16, height = 16,
        sram_bytes = 49152, colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1,
        fmac_fp32 = 1, fmac_fp16 = 4, transcendental_cycles = 8, max_wafers = 64,
        link_bytes_per_cycle = 136, link_latency_cycles = 2000,
        ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>} {}
    ```
  }];
  let parameters = (ins StringRefParameter<>:$name, "int64_t":$width, "int64_t":$height,
      "int64_t":$sram_bytes, "int64_t":$colors, "int64_t":$clock_hz, "int64_t":$hop_cycles,
      "int64_t":$simd_fp32, "int64_t":$fmac_fp32, "int64_t":$fmac_fp16,
      "int64_t":$transcendental_cycles, "int64_t":$max_wafers,
      "int64_t":$link_bytes_per_cycle, "int64_t":$link_latency_cycles,
      "int64_t":$ext_mem_bytes, "int64_t":$ext_mem_bytes_per_cycle);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // WAFER_TD
