// RUN: wsc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{repeats the key (x, y, color, in)}}
wafer.routes 0 dense<[[0, 0, 1, 0, 4], [0, 0, 1, 0, 2]]> : tensor<2x5xi32>

// -----

// expected-error @+1 {{is out of order: rows are sorted by (y, x, color, in)}}
wafer.routes 0 dense<[[0, 1, 1, 0, 4], [1, 0, 1, 4, 1]]> : tensor<2x5xi32>

// -----

// expected-error @+1 {{has out_mask 64, not one of 1..63}}
wafer.routes 0 dense<[[0, 0, 1, 0, 64]]> : tensor<1x5xi32>

// -----

// expected-error @+1 {{has input port 6, not one of 0..5}}
wafer.routes 0 dense<[[0, 0, 1, 6, 1]]> : tensor<1x5xi32>

// -----

// expected-error @+1 {{table must be a tensor<Nx5xi32>}}
wafer.routes 0 dense<[[0, 0, 1, 0]]> : tensor<1x4xi32>

// -----

// expected-error @+1 {{a dead link's direction must be 2 (EAST), 3 (SOUTH) or 5 (LINK), got 1}}
module attributes {wafer.defects = #wafer.defects<pes = dense<> : tensor<0x3xi32>,
    links = dense<[[0, 1, 1, 1]]> : tensor<1x4xi32>>} {}

// -----

// expected-error @+1 {{'wafer.origin' must be array<i64: wafer, x, y> with non-negative values}}
module attributes {wafer.origin = array<i64: 0, 1>} {}

// -----

// expected-error @+1 {{'wafer.colors' entry 'in0' must be a non-negative integer color}}
module attributes {wafer.colors = {in0 = -1 : i64}} {}

// -----

// expected-error @+1 {{table must be a tensor<Nx8xi32> of [src_wafer, src_x, src_y, color, dst_wafer, dst_x, dst_y, dst_color] rows}}
wafer.links dense<[[0, 7, 2, 1, 1, 0, 2]]> : tensor<1x7xi32>

// -----

// expected-error @+1 {{link 1 [0, 7, 2, 1, 1, 0, 3, 1] repeats the source (src_wafer, src_x, src_y, color) of the link before it: a link carries one stream per color}}
wafer.links dense<[[0, 7, 2, 1, 1, 0, 2, 1], [0, 7, 2, 1, 1, 0, 3, 1]]> : tensor<2x8xi32>

// -----

// expected-error @+1 {{link 1 [0, 7, 1, 1, 1, 0, 1, 1] is out of order: rows are sorted}}
wafer.links dense<[[0, 7, 2, 1, 1, 0, 2, 1], [0, 7, 1, 1, 1, 0, 1, 1]]> : tensor<2x8xi32>

// -----

// expected-error @+1 {{two links arrive at PE (0, 2) of wafer 1 on color 1}}
wafer.links dense<[[0, 7, 2, 1, 1, 0, 2, 1], [0, 7, 2, 2, 1, 0, 2, 1]]> : tensor<2x8xi32>

// -----

// expected-error @+1 {{link 0 [0, 7, 2, -1, 1, 0, 2, 1] has a negative wafer, coordinate or color}}
wafer.links dense<[[0, 7, 2, -1, 1, 0, 2, 1]]> : tensor<1x8xi32>

// -----

module {
  wafer.links dense<[[0, 7, 2, 1, 1, 0, 2, 1]]> : tensor<1x8xi32>
  // expected-error @+1 {{a module holds at most one 'wafer.links'}}
  wafer.links dense<[[0, 7, 3, 1, 1, 0, 3, 1]]> : tensor<1x8xi32>
}
