// RUN: wsc-opt %s --wsgraph-generate="sampling=true top-k=true" | FileCheck %s
// RUN: not wsc-opt %s --wsgraph-generate="top-k=true" 2>&1 | FileCheck %s --check-prefix=NOSAMPLE

// With top-k too, the sampling input is [temperature, seed, top_k].
// CHECK-LABEL: func.func @lm
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x4xi64> {wsgraph.name = "input_ids"}, %[[P:.*]]: tensor<3xf32> {wsgraph.name = "sampling"}) -> (tensor<2x4x16xf32> {wsgraph.name = "logits"}, tensor<2x4xi64> {wsgraph.name = "next_token"})
// CHECK: %[[NEXT:.*]] = wsgraph.sample %[[L:.*]], %[[P]] : (tensor<2x4x16xf32>, tensor<3xf32>) -> tensor<2x4xi64>
// CHECK-NEXT: return %[[L]], %[[NEXT]]

// Top-k is a way of sampling: without sampling it is refused.
// NOSAMPLE: error: top-k needs sampling
func.func @lm(%ids: tensor<2x4xi64> {wsgraph.name = "input_ids"}) -> (tensor<2x4x16xf32> {wsgraph.name = "logits"}) {
  %e = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %w = wsgraph.constant dense<0.25> : tensor<8x16xf32>
  %x = wsgraph.gather %e, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %l = wsgraph.linear %x, %w : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  return %l : tensor<2x4x16xf32>
}
