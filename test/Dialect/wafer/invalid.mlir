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

// expected-error @+1 {{a dead link's direction must be 2 (EAST) or 3 (SOUTH), got 1}}
module attributes {wafer.defects = #wafer.defects<pes = dense<> : tensor<0x3xi32>,
    links = dense<[[0, 1, 1, 1]]> : tensor<1x4xi32>>} {}

// -----

// expected-error @+1 {{'wafer.origin' must be array<i64: wafer, x, y> with non-negative values}}
module attributes {wafer.origin = array<i64: 0, 1>} {}

// -----

// expected-error @+1 {{'wafer.colors' entry 'in0' must be a non-negative integer color}}
module attributes {wafer.colors = {in0 = -1 : i64}} {}
