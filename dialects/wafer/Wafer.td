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
include "mlir/IR/CommonAttrConstraints.td"

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
  let hasOperationAttrVerify = 1;
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


def Wafer_DefectsAttr : AttrDef<Wafer_Dialect, "Defects"> {
  let mnemonic = "defects";
  let summary = "Dead PEs and dead links of every wafer";
  let description = [{
    The defect map of the cluster, attached to the module as `wafer.defects`
    by `--wsc-defects` and read by placement, routing and the route checker
    (and by nothing else). `pes` holds one row `[wafer, x, y]` per dead PE;
    `links` one row `[wafer, x, y, dir]` per dead link, `dir` 2 (EAST) for
    the link between (x, y) and (x+1, y), 3 (SOUTH) for the link between
    (x, y) and (x, y+1), 5 (LINK) for the off-wafer link of the edge PE
    (x, y). A dead link is dead in both directions. Rows are
    sorted and unique. The text file format is in docs/defects.md.

    ```mlir
    module attributes {wafer.defects = #wafer.defects<
        pes = dense<[[0, 3, 4]]> : tensor<1x3xi32>,
        links = dense<[[0, 1, 1, 2], [0, 5, 0, 3]]> : tensor<2x4xi32>>} {}
    ```
  }];
  let parameters = (ins "::mlir::DenseIntElementsAttr":$pes,
                        "::mlir::DenseIntElementsAttr":$links);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class Wafer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Wafer_Dialect, mnemonic, traits>;

def Wafer_RoutesOp : Wafer_Op<"routes", [HasParent<"mlir::ModuleOp">]> {
  let summary = "The router tables of one wafer, as one dense table";
  let description = [{
    Every row `[x, y, color, in, out_mask]` is one router entry of PE (x, y)
    of wafer `wafer`: a wavelet of `color` arriving on input port `in` is
    forwarded to every port whose bit is set in `out_mask` (multicast).
    Ports are RAMP = 0 (as an input: sent by this PE's core; as an output:
    delivered to it), NORTH = 1 (y - 1), EAST = 2 (x + 1), SOUTH = 3
    (y + 1), WEST = 4 (x - 1) and LINK = 5 (the off-wafer link of an edge
    PE, see `wafer.links`). A wavelet
    forwarded EAST from (x, y) arrives at (x + 1, y) on its input port
    WEST. This is the runtime's `Route` message. Rows are sorted by
    (y, x, color, in) and keys are unique. `--wsc-route` writes one op per
    wafer at the end of the module; `--wsc-verify-routes` re-derives every
    stream from these tables alone.

    ```mlir
    // PE (0, 0) sends color 1 east; PE (1, 0) takes it in.
    wafer.routes 0 dense<[[0, 0, 1, 0, 4], [1, 0, 1, 4, 1]]> : tensor<2x5xi32>
    ```
  }];
  let arguments = (ins I64Attr:$wafer, I32ElementsAttr:$table);
  let assemblyFormat = "$wafer $table attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of entries.
    int64_t getNumEntries();
    /// The table as 5 * getNumEntries() values, row-major, without copying
    /// when it can (`storage` holds them otherwise).
    llvm::ArrayRef<int32_t> getFlatTable(llvm::SmallVectorImpl<int32_t> &storage);
    /// The rows [x, y, color, in, out_mask], copied.
    std::vector<std::array<int32_t, 5>> getRows();
  }];
}

def Wafer_LinksOp : Wafer_Op<"links", [HasParent<"mlir::ModuleOp">]> {
  let summary = "The inter-wafer links in use, as one dense table";
  let description = [{
    Every row `[src_wafer, src_x, src_y, color, dst_wafer, dst_x, dst_y,
    dst_color]` says where a router's LINK port leads: a wavelet of `color`
    that PE (src_x, src_y) of wafer `src_wafer` forwards to LINK arrives at
    PE (dst_x, dst_y) of wafer `dst_wafer` on its input port LINK, with
    color `dst_color` (the color may change on the way, so that each wafer
    colors its own routes). Both PEs are on the edge of their wafer. This is
    the runtime's `InterWaferLink` message. Rows are sorted; the source key
    (src_wafer, src_x, src_y, color) and the destination key (dst_wafer,
    dst_x, dst_y, dst_color) are each unique, so two streams never share a
    link on one color. One op per module; `--wsc-route` writes it (wafer i's
    east edge joined to wafer i + 1's west edge, one link per row, see
    docs/placement-and-routing.md) when streams cross wafers, and
    `--wsc-verify-routes` follows every LINK hop through it.

    ```mlir
    // PE (7, 2) of wafer 0 sends color 1 east; PE (0, 2) of wafer 1 takes
    // it in on color 3 and delivers it to its core.
    wafer.routes 0 dense<[[7, 2, 1, 4, 32]]> : tensor<1x5xi32>
    wafer.routes 1 dense<[[0, 2, 3, 5, 1]]> : tensor<1x5xi32>
    wafer.links dense<[[0, 7, 2, 1, 1, 0, 2, 3]]> : tensor<1x8xi32>
    ```
  }];
  let arguments = (ins I32ElementsAttr:$table);
  let assemblyFormat = "$table attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The rows [src_wafer, src_x, src_y, color, dst_wafer, dst_x, dst_y, dst_color].
    std::vector<std::array<int32_t, 8>> getRows();
  }];
}

#endif // WAFER_TD
