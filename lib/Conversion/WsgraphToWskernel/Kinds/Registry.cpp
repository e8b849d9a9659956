//===- Registry.cpp - the kernel kinds by name -----------------------------===//
#include "Kind.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsc::lowering;

const KernelKind *wsc::lowering::kernelKind(llvm::StringRef name) {
  using Get = const KernelKind &(*)();
  Get get = llvm::StringSwitch<Get>(name)
                .Case("embed", embedKind)
                .Case("layer_norm", layerNormKind)
                .Case("rms_norm", rmsNormKind)
                .Cases({"linear", "linear_gelu"}, linearKind)
                .Case("linear_glu", gatedLinearKind)
                .Case("attention", attentionKind)
                .Case("add", addKind)
                .Case("argmax", argmaxKind)
                .Case("output", outputKind)
                .Case("generic", genericKind)
                .Default(nullptr);
  return get ? &get() : nullptr;
}

llvm::ArrayRef<const KernelKind *> wsc::lowering::fusedKinds() {
  // The gated MLP before the linear kind: its projections are linears.
  static const KernelKind *const kinds[] = {&embedKind(),       &layerNormKind(), &rmsNormKind(),
                                            &gatedLinearKind(), &linearKind(),    &attentionKind(),
                                            &addKind(),         &argmaxKind()};
  return kinds;
}
