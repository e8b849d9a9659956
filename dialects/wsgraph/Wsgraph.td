//===- Wsgraph.td - the tensor-level graph dialect ----------*- tablegen -*-===//
//
// wsgraph holds what a model computes, one op per mathematical operation, on
// ranked tensors. It knows nothing of the hardware. Ops verify shapes, fold
// constants and infer result types.
//
//===----------------------------------------------------------------------===//
#ifndef WSGRAPH_TD
#define WSGRAPH_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Wsgraph_Dialect : Dialect {
  let name = "wsgraph";
  let cppNamespace = "::wsc::wsgraph";
  let summary = "Tensor-level graph of a model, as imported from ONNX.";
  let description = [{
    One op per mathematical operation on ranked tensors, with numpy-style
    broadcasting for elementwise ops. Shape parameters (reshape targets, slice
    bounds, axes) are attributes or result types, never runtime values: the
    importer folds every shape computation before it builds an op. Large
    weights are `wsgraph.weight` ops that refer to bytes in a file instead of
    literals, so the IR of a 175B-parameter model stays small.
  }];
  let hasConstantMaterializer = 1;
}

class Wsgraph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Wsgraph_Dialect, mnemonic, traits>;


#endif // WSGRAPH_TD
