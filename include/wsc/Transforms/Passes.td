//===- Passes.td - passes inside one level ------------------*- tablegen -*-===//
#ifndef WSC_TRANSFORMS_PASSES_TD
#define WSC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WsgraphFuse : Pass<"wsgraph-fuse", "mlir::ModuleOp"> {
  let summary = "Fold, canonicalize and fuse wsgraph into layer_norm, gelu, attention and linear";
  let description = [{
    Folds every constant subgraph, then rewrites the decomposed forms that
    torch.onnx.export produces into fused ops:
    - ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul[/Add] into `layer_norm`;
    - x * 0.5 * (1 + erf(x / sqrt(2))) into `gelu`;
    - softmax(q @ k^T * scale, causal mask) @ v into `attention`;
    - matmul by a 2-D weight, plus a bias, into `linear`.
    After this pass the exports of one model at opsets 13 to 17 give the
    same ops.
  }];
  let dependentDialects = ["wsc::wsgraph::WsgraphDialect"];
}

#endif // WSC_TRANSFORMS_PASSES_TD
