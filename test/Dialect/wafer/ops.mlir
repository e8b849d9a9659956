// RUN: wsc-opt %s | FileCheck %s
// RUN: wsc-opt %s | wsc-opt | FileCheck %s

// CHECK: module attributes {wafer.defects = #wafer.defects<pes = dense<{{\[\[}}0, 3, 4]]> : tensor<1x3xi32>, links = dense<{{\[\[}}0, 1, 1, 2], [0, 5, 0, 3]]> : tensor<2x4xi32>>}
// CHECK: wafer.routes 0 dense<{{\[\[}}0, 0, 1, 0, 4], [1, 0, 1, 4, 1]]> : tensor<2x5xi32>
// CHECK: wafer.routes 1 dense<> : tensor<0x5xi32>
// CHECK: wafer.links dense<{{\[\[}}0, 7, 2, 1, 1, 0, 2, 3], [0, 7, 2, 2, 1, 0, 2, 1]]> : tensor<2x8xi32>
module attributes {wafer.defects = #wafer.defects<pes = dense<[[0, 3, 4]]> : tensor<1x3xi32>,
    links = dense<[[0, 1, 1, 2], [0, 5, 0, 3]]> : tensor<2x4xi32>>} {
  wafer.routes 0 dense<[[0, 0, 1, 0, 4], [1, 0, 1, 4, 1]]> : tensor<2x5xi32>
  wafer.routes 1 dense<> : tensor<0x5xi32>
  wafer.links dense<[[0, 7, 2, 1, 1, 0, 2, 3], [0, 7, 2, 2, 1, 0, 2, 1]]> : tensor<2x8xi32>
}
