//===- Passes.td - passes that change level -----------------*- tablegen -*-===//
#ifndef WSC_CONVERSION_PASSES_TD
#define WSC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def WscLowerToKernels : Pass<"wsc-lower-to-kernels", "mlir::ModuleOp"> {
  let summary = "Lower fused wsgraph into per-core wskernel kernels sized for the arch";
  let description = [{
    Turns each fused op of a GPT into a kernel on a rectangle of PEs:
    embedding (token + position), layer_norm, linear (with bias, GELU and
    residual add fused into its last row), causal attention (absorbing the
    head split and merge), and the host output. Kernels are sized from the
    cost model so that their cycles per token are close, grown to use the
    wafer's PEs, and never exceed a PE's SRAM. Reads `wafer.arch`.

    When the model does not fit one wafer (or `wafers=N` asks for more),
    kernels are cut into contiguous stages, one per wafer, balancing work;
    each kernel gets `wafer.stage`. Partitioning lives here because exact
    memory needs are known only once kernels have shapes (docs/partitioning.md).

    With `weight-streaming`, the transformer blocks must lower to identical
    kernels: one wafer holds block 0's kernels, which loop over the layers,
    loading each layer's weight tiles from external memory
    (`wskernel.load_tile`) and feeding the block's output back to its first
    kernels (docs/weight-streaming.md). With `resident-layers` too, the
    block's kernels hold every layer's tiles in SRAM instead (mode=folded,
    docs/folded.md).
  }];
  let options = [
    Option<"utilization", "utilization", "double", "0.6",
           "Fraction of the wafer's PEs that kernels may take (the rest is left for routing)">,
    Option<"wafers", "wafers", "std::string", "\"auto\"",
           "auto: the fewest wafers that hold the model; N: exactly N wafers">,
    Option<"defectRate", "defect-rate", "double", "0.0",
           "Expected fraction of dead PEs: kernels stay small enough to fit between them">,
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "fp32 | fp16 | bf16: how weight matrices and embedding tables are held in SRAM (arithmetic stays fp32)">,
    Option<"weightStreaming", "weight-streaming", "bool", "false",
           "Keep one block's kernels on the wafer and stream every layer's weights from external memory">,
    Option<"residentLayers", "resident-layers", "bool", "false",
           "With weight-streaming: the block's kernels hold every layer's weights in SRAM (mode=folded)">,
    Option<"maxBlocks", "max-blocks", "int64_t", "0",
           "Most result blocks (streams) per kernel; 0: half the arch's colors">,
    Option<"maxRows", "max-rows", "int64_t", "0",
           "Most rows of a kernel (0: the wafer's): kernels no taller than a band pack in bands">,
    Option<"attentionQueries", "attention-queries", "int64_t", "0",
           "Query heads each column of a grouped-query attention scores, where it divides the group (0: the sizer picks)">
  ];
  let dependentDialects = ["wsc::wskernel::WskernelDialect", "wsc::wafer::WaferDialect"];
}

#endif // WSC_CONVERSION_PASSES_TD
