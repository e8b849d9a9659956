//===- Passes.td - the driver passes of the pipeline --------*- tablegen -*-===//
#ifndef WSC_PIPELINE_PASSES_TD
#define WSC_PIPELINE_PASSES_TD

include "mlir/Pass/PassBase.td"

def WscSetArch : Pass<"wsc-set-arch", "mlir::ModuleOp"> {
  let summary = "Attach the machine description to the module";
  let description = [{
    Resolves `arch=` (wse2, wse3, mesh:WxH or a JSON file, see docs/arch.md)
    into a `#wafer.arch` attribute on the module, which every later pass reads.
  }];
  let options = [Option<"arch", "arch", "std::string", "\"wse3\"", "wse2 | wse3 | mesh:WxH | FILE">];
  let dependentDialects = ["wsc::wafer::WaferDialect"];
}

def WscLowerPlaceRoute : Pass<"wsc-lower-place-route", "mlir::ModuleOp"> {
  let summary = "Lower to kernels, place, route and check routes; fewer result blocks when routing fails";
  let description = [{
    Runs wsc-lower-to-kernels, wsc-defects (with `defects` or `defect-rate`),
    wsc-place, wsc-route and wsc-verify-routes. Kernels hand their results
    on as up to `max-blocks` streams each: more blocks make kernels faster,
    but the streams converging on their readers need colors. When any of
    these passes fails and a kernel has more blocks than the next entry of
    `max-blocks`, the module is restored and lowered again with that many;
    the errors of the last attempt are the ones reported. The count that
    routed is kept on the function as `wskernel.max_blocks`.

    `try-utilization` lists larger PE budgets to try first on a pipeline
    that fits one wafer (`wafers` auto or 1): each of them and
    `utilization`, with a block per color and each `max-blocks` count,
    strictly: placement reshapes no kernel into one slower than the slowest
    as lowered (wsc-place reshape-slower=false) and the links carry the
    streams within a fixed budget (wsc-route grow-budget=false). They go in
    the order of their lowering's slowest kernel, fastest first (each is
    lowered alone first), and the first that succeeds is kept; else the
    tries above run at `utilization`. Equally fast tries go smaller share
    first, then fewer blocks. A try's links carry at most its slowest
    kernel's cycles; when they cannot, it is routed again within the next
    try's when that is slower (within it, the try still beats every later
    one; the report then says the links bound it). Strict tries route for
    12 rounds and up to 28 more while few links are over and improving
    (wsc-route extra-rounds).

    `try-bands` adds strict tries whose kernels are no taller than the
    wafer's height / N for each N (wsc-lower-to-kernels max-rows): short
    kernels pack in row bands where tall ones need free-rectangle packing,
    and bands keep the pipeline's streams short. A banded try whose kernels
    come out as an earlier try's is dropped; at the same pace and share,
    banded tries go first, in the listed order.
  }];
  let options = [
    ListOption<"maxBlocks", "max-blocks", "int64_t",
               "Result blocks per kernel to try, in order (0: half the arch's colors)">,
    Option<"wafers", "wafers", "std::string", "\"auto\"", "auto | N (wsc-lower-to-kernels)">,
    Option<"precision", "precision", "std::string", "\"fp32\"", "fp32 | fp16 | bf16 (wsc-lower-to-kernels)">,
    Option<"weightStreaming", "weight-streaming", "bool", "false", "wsc-lower-to-kernels' option">,
    Option<"residentLayers", "resident-layers", "bool", "false", "wsc-lower-to-kernels' option">,
    Option<"utilization", "utilization", "double", "0.6", "wsc-lower-to-kernels' option">,
    ListOption<"tryUtilization", "try-utilization", "double",
               "Larger PE budgets tried first, strictly, on one wafer (see above)">,
    ListOption<"tryBands", "try-bands", "int64_t",
               "Strict tries also with kernels no taller than the wafer's height / N, for each N">,
    Option<"defects", "defects", "std::string", "\"\"", "Defect map file (wsc-defects)">,
    Option<"defectRate", "defect-rate", "double", "0.0", "Random defect map (wsc-defects, and the lowering's sizes)">,
    Option<"seed", "seed", "int64_t", "1", "Seed of placement and of the random defect map">
  ];
  let dependentDialects = ["wsc::wskernel::WskernelDialect", "wsc::wafer::WaferDialect"];
}

def WscWriteReport : Pass<"wsc-write-report", "mlir::ModuleOp"> {
  let summary = "Write the compile report (CLI.md's fields) as JSON";
  let description = [{
    Reads the kernels, their placement and the routing figures from the IR
    and writes arch, mode, precision, per-wafer kernels with rectangles, SRAM
    and cycles per token, inter-wafer bytes per token and the throughput
    estimate (slowest kernel) to `file`.
  }];
  let options = [
    Option<"file", "file", "std::string", "\"\"", "Where to write the JSON report">,
    Option<"mode", "mode", "std::string", "\"pipelined\"", "Execution mode, for the report">,
    Option<"precision", "precision", "std::string", "\"fp32\"", "Weight storage precision, for the report">
  ];
}

#endif // WSC_PIPELINE_PASSES_TD
