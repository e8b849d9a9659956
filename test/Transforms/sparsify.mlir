// RUN: wsc-opt %s --wsgraph-sparsify -split-input-file | FileCheck %s
// RUN: wsc-opt %s --wsgraph-sparsify="sparsity=0.5" -split-input-file | FileCheck %s --check-prefix=PRUNE
// RUN: not wsc-opt %s --wsgraph-sparsify="sparsity=1.5" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --wsgraph-sparsify: sparsity must be in [0, 1) and max-density in [0, 1]

// A linear weight with 6 zeros of 8 is held sparse: its density is marked.
// With sparsity=0.5 it is pruned too: half its elements read as zero, which
// its own zeros already are, so its density stays.
// CHECK-LABEL: func.func @own_zeros
// CHECK: wsgraph.constant {{.*}} {wsgraph.density = 2.500000e-01 : f64}
// PRUNE-LABEL: func.func @own_zeros
// PRUNE: wsgraph.constant {{.*}} {wsgraph.density = 2.500000e-01 : f64, wsgraph.prune = 5.000000e-01 : f64}
func.func @own_zeros(%x: tensor<1x8x2xf32>) -> tensor<1x8x4xf32> {
  %w = wsgraph.constant dense<[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, -2.0, 0.0]]> : tensor<2x4xf32>
  %y = wsgraph.linear %x, %w : (tensor<1x8x2xf32>, tensor<2x4xf32>) -> tensor<1x8x4xf32>
  %z = wsgraph.add %y, %y : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %z : tensor<1x8x4xf32>
}

// -----

// One zero of 8 is not worth the sparse layout (max-density 0.6); pruned
// by half, it is.
// CHECK-LABEL: func.func @dense_stays
// CHECK: wsgraph.constant dense<{{.*}}> : tensor<2x4xf32>{{$}}
// PRUNE-LABEL: func.func @dense_stays
// PRUNE: wsgraph.constant {{.*}} {wsgraph.density = 5.000000e-01 : f64, wsgraph.prune = 5.000000e-01 : f64}
func.func @dense_stays(%x: tensor<1x8x2xf32>) -> tensor<1x8x4xf32> {
  %w = wsgraph.constant dense<[[1.0, -5.0, 2.0, 0.5], [3.0, -4.0, 0.0, 6.0]]> : tensor<2x4xf32>
  %y = wsgraph.linear %x, %w : (tensor<1x8x2xf32>, tensor<2x4xf32>) -> tensor<1x8x4xf32>
  %z = wsgraph.add %y, %y : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %z : tensor<1x8x4xf32>
}

// -----

// A weight that another op reads too (an embedding tied to the LM head)
// is neither pruned nor held sparse.
// CHECK-LABEL: func.func @read_elsewhere
// CHECK-NOT: wsgraph.density
// PRUNE-LABEL: func.func @read_elsewhere
// PRUNE-NOT: wsgraph.prune
func.func @read_elsewhere(%x: tensor<1x8x2xf32>) -> (tensor<1x8x4xf32>, tensor<2x4xf32>) {
  %w = wsgraph.constant dense<[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, -2.0, 0.0]]> : tensor<2x4xf32>
  %y = wsgraph.linear %x, %w : (tensor<1x8x2xf32>, tensor<2x4xf32>) -> tensor<1x8x4xf32>
  %z = wsgraph.add %y, %y : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %v = wsgraph.add %w, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %z, %v : tensor<1x8x4xf32>, tensor<2x4xf32>
}

// -----

// The LM head (a linear the function returns) is not pruned; its own
// zeros still make it sparse.
// CHECK-LABEL: func.func @head
// CHECK: wsgraph.constant {{.*}} {wsgraph.density = 2.500000e-01 : f64}
// PRUNE-LABEL: func.func @head
// PRUNE: wsgraph.constant {{.*}} {wsgraph.density = 2.500000e-01 : f64}
// PRUNE-NOT: wsgraph.prune
func.func @head(%x: tensor<1x8x2xf32>) -> tensor<1x8x4xf32> {
  %w = wsgraph.constant dense<[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, -2.0, 0.0]]> : tensor<2x4xf32>
  %y = wsgraph.linear %x, %w : (tensor<1x8x2xf32>, tensor<2x4xf32>) -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// An elided weight has no values: pruned, its density is taken as
// 1 - sparsity; unpruned, it is dense.
// CHECK-LABEL: func.func @elided
// CHECK: wsgraph.weight "w" elided : tensor<64x64xf32>{{$}}
// PRUNE-LABEL: func.func @elided
// PRUNE: wsgraph.weight "w" elided {wsgraph.density = 5.000000e-01 : f64, wsgraph.prune = 5.000000e-01 : f64}
func.func @elided(%x: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %w = wsgraph.weight "w" elided : tensor<64x64xf32>
  %y = wsgraph.linear %x, %w : (tensor<1x8x64xf32>, tensor<64x64xf32>) -> tensor<1x8x64xf32>
  %z = wsgraph.add %y, %y : (tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %z : tensor<1x8x64xf32>
}
