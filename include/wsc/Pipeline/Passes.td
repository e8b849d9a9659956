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
