// RUN: wsc-opt %s -canonicalize -split-input-file | FileCheck %s --check-prefixes=CHECK,NOFILE
// RUN: %python -c "import struct; open(r'%t.bin', 'wb').write(bytes(8) + struct.pack('<16f', *[float(i) for i in range(16)]))"
// RUN: sed "s|WEIGHTFILE|%t.bin|" %s | wsc-opt -canonicalize -split-input-file | FileCheck %s --check-prefixes=CHECK,WEIGHT

// The folders of WsgraphFolds.cpp. The first RUN line reads no weight file
// (WEIGHTFILE does not exist); the second one substitutes a file holding
// 8 bytes of padding then the f32 values 0..15.

//===----------------------------------------------------------------------===//
// Binary ops on constants, with broadcasting
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_int_broadcast
// CHECK-NEXT: %[[C:.*]] = wsgraph.constant dense<{{\[}}[11, 21, 31], [12, 22, 32]]> : tensor<2x3xi64>
// CHECK-NEXT: return %[[C]]
func.func @add_int_broadcast() -> tensor<2x3xi64> {
  %a = wsgraph.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %b = wsgraph.constant dense<[10, 20, 30]> : tensor<3xi64>
  %0 = wsgraph.add %a, %b : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @add_float_scalar
// CHECK-NEXT: %[[C:.*]] = wsgraph.constant dense<[1.500000e+00, 2.500000e+00, -5.000000e-01]> : tensor<3xf32>
// CHECK-NEXT: return %[[C]]
func.func @add_float_scalar() -> tensor<3xf32> {
  %a = wsgraph.constant dense<[1.0, 2.0, -1.0]> : tensor<3xf32>
  %b = wsgraph.constant dense<0.5> : tensor<f32>
  %0 = wsgraph.add %b, %a : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @sub_mul_int
// CHECK-DAG: %[[SUB:.*]] = wsgraph.constant dense<{{\[}}[-9, -19], [-8, -18]]> : tensor<2x2xi64>
// CHECK-DAG: %[[MUL:.*]] = wsgraph.constant dense<{{\[}}[10, 20], [20, 40]]> : tensor<2x2xi64>
// CHECK: return %[[SUB]], %[[MUL]]
func.func @sub_mul_int() -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %a = wsgraph.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %b = wsgraph.constant dense<[10, 20]> : tensor<2xi64>
  %0 = wsgraph.sub %a, %b : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %1 = wsgraph.mul %a, %b : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<2x2xi64>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @mul_float_broadcast
// CHECK-NEXT: %[[C:.*]] = wsgraph.constant dense<{{\[}}[3.750000e-01, -1.500000e+00], [5.000000e-01, -2.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @mul_float_broadcast() -> tensor<2x2xf32> {
  %a = wsgraph.constant dense<[[1.5], [2.0]]> : tensor<2x1xf32>
  %b = wsgraph.constant dense<[0.25, -1.0]> : tensor<2xf32>
  %0 = wsgraph.mul %a, %b : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Integer division truncates toward zero; float division by zero gives inf.
// CHECK-LABEL: func.func @div
// CHECK-DAG: %[[I:.*]] = wsgraph.constant dense<[-3, 3, 4]> : tensor<3xi64>
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<[2.500000e-01, 0x7F800000, 0xFF800000]> : tensor<3xf32>
// CHECK: return %[[I]], %[[F]]
func.func @div() -> (tensor<3xi64>, tensor<3xf32>) {
  %n = wsgraph.constant dense<[-7, 7, 9]> : tensor<3xi64>
  %d = wsgraph.constant dense<2> : tensor<i64>
  %0 = wsgraph.div %n, %d : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %z = wsgraph.constant dense<[4.0, 0.0, -0.0]> : tensor<3xf32>
  %1 = wsgraph.div %one, %z : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xi64>, tensor<3xf32>
}

// -----

// Integer division by zero is left for the runtime to report.
// CHECK-LABEL: func.func @div_int_by_zero
// CHECK-DAG: %[[N:.*]] = wsgraph.constant dense<[4, 6]> : tensor<2xi64>
// CHECK-DAG: %[[D:.*]] = wsgraph.constant dense<[2, 0]> : tensor<2xi64>
// CHECK: %[[R:.*]] = wsgraph.div %[[N]], %[[D]]
// CHECK-NEXT: return %[[R]]
func.func @div_int_by_zero() -> tensor<2xi64> {
  %n = wsgraph.constant dense<[4, 6]> : tensor<2xi64>
  %d = wsgraph.constant dense<[2, 0]> : tensor<2xi64>
  %0 = wsgraph.div %n, %d : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// A float base with an integer exponent is computed in floating point, and
// an integer base with a float exponent too (then truncated).
// CHECK-LABEL: func.func @pow
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<[6.250000e+00, 9.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[I:.*]] = wsgraph.constant dense<[2, 3, 1]> : tensor<3xi64>
// CHECK-DAG: %[[FF:.*]] = wsgraph.constant dense<[1.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK: return %[[F]], %[[I]], %[[FF]]
func.func @pow() -> (tensor<2xf32>, tensor<3xi64>, tensor<2xf32>) {
  %base = wsgraph.constant dense<[2.5, -3.0]> : tensor<2xf32>
  %two = wsgraph.constant dense<2> : tensor<i64>
  %0 = wsgraph.pow %base, %two : (tensor<2xf32>, tensor<i64>) -> tensor<2xf32>
  %ibase = wsgraph.constant dense<[4, 9, 2]> : tensor<3xi64>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %1 = wsgraph.pow %ibase, %half : (tensor<3xi64>, tensor<f32>) -> tensor<3xi64>
  %fb = wsgraph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %fe = wsgraph.constant dense<3.0> : tensor<f32>
  %2 = wsgraph.pow %fb, %fe : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<3xi64>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @equal
// CHECK-DAG: %[[I:.*]] = wsgraph.constant dense<{{\[}}[true, false, false], [false, true, false]]> : tensor<2x3xi1>
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[I]], %[[F]]
func.func @equal() -> (tensor<2x3xi1>, tensor<2xi1>) {
  %a = wsgraph.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %b = wsgraph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %0 = wsgraph.equal %a, %b : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi1>
  %f = wsgraph.constant dense<[0.5, -0.0]> : tensor<2xf32>
  %g = wsgraph.constant dense<0.0> : tensor<f32>
  %1 = wsgraph.equal %f, %g : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  return %0, %1 : tensor<2x3xi1>, tensor<2xi1>
}

// -----

// A NaN operand gives NaN (0x7FC00000).
// CHECK-LABEL: func.func @max_min
// CHECK-DAG: %[[MAX:.*]] = wsgraph.constant dense<[1.000000e+00, 0x7FC00000, 5.000000e-01]> : tensor<3xf32>
// CHECK-DAG: %[[MIN:.*]] = wsgraph.constant dense<[5.000000e-01, 0x7FC00000, -2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[IMAX:.*]] = wsgraph.constant dense<{{\[}}[3, 5], [7, 7]]> : tensor<2x2xi64>
// CHECK: return %[[MAX]], %[[MIN]], %[[IMAX]]
func.func @max_min() -> (tensor<3xf32>, tensor<3xf32>, tensor<2x2xi64>) {
  %a = wsgraph.constant dense<[1.0, 0x7FC00000, -2.0]> : tensor<3xf32>
  %b = wsgraph.constant dense<0.5> : tensor<f32>
  %0 = wsgraph.max %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = wsgraph.min %b, %a : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %i = wsgraph.constant dense<[[1], [7]]> : tensor<2x1xi64>
  %j = wsgraph.constant dense<[3, 5]> : tensor<2xi64>
  %2 = wsgraph.max %i, %j : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<2x2xi64>
}

// -----

// Without fmod the remainder takes the divisor's sign (Python's %); with it,
// the dividend's (C's fmod).
// CHECK-LABEL: func.func @mod
// CHECK-DAG: %[[PY:.*]] = wsgraph.constant dense<[2, -2, -1, 1]> : tensor<4xi64>
// CHECK-DAG: %[[C:.*]] = wsgraph.constant dense<[-1, 1, -1, 1]> : tensor<4xi64>
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<[1.500000e+00, -1.500000e+00]> : tensor<2xf32>
// CHECK: return %[[PY]], %[[C]], %[[F]]
func.func @mod() -> (tensor<4xi64>, tensor<4xi64>, tensor<2xf32>) {
  %a = wsgraph.constant dense<[-7, 7, -7, 7]> : tensor<4xi64>
  %b = wsgraph.constant dense<[3, -3, -3, 3]> : tensor<4xi64>
  %0 = wsgraph.mod %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = wsgraph.mod %a, %b {fmod = true} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %x = wsgraph.constant dense<[5.5, -5.5]> : tensor<2xf32>
  %y = wsgraph.constant dense<2.0> : tensor<f32>
  %2 = wsgraph.mod %x, %y {fmod = true} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<4xi64>, tensor<4xi64>, tensor<2xf32>
}

// -----

// An integer remainder by zero is left for the runtime, as division.
// CHECK-LABEL: func.func @mod_by_zero
// CHECK: %[[R:.*]] = wsgraph.mod
// CHECK-NEXT: return %[[R]]
func.func @mod_by_zero() -> tensor<2xi64> {
  %a = wsgraph.constant dense<[5, 6]> : tensor<2xi64>
  %b = wsgraph.constant dense<[2, 0]> : tensor<2xi64>
  %0 = wsgraph.mod %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @compare
// CHECK-DAG: %[[LT:.*]] = wsgraph.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[LE:.*]] = wsgraph.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[GT:.*]] = wsgraph.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[GE:.*]] = wsgraph.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK-DAG: %[[NAN:.*]] = wsgraph.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[LT]], %[[LE]], %[[GT]], %[[GE]], %[[NAN]]
func.func @compare() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<2xi1>) {
  %a = wsgraph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = wsgraph.constant dense<2> : tensor<i64>
  %0 = wsgraph.less %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %1 = wsgraph.less_equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %2 = wsgraph.greater %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %3 = wsgraph.greater_equal %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  // A comparison with NaN is false.
  %x = wsgraph.constant dense<[0x7FC00000, 0.5]> : tensor<2xf32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %4 = wsgraph.less %x, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  return %0, %1, %2, %3, %4 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @logical
// CHECK-DAG: %[[AND:.*]] = wsgraph.constant dense<{{\[}}[true, false], [false, false]]> : tensor<2x2xi1>
// CHECK-DAG: %[[OR:.*]] = wsgraph.constant dense<{{\[}}[true, true], [true, false]]> : tensor<2x2xi1>
// CHECK-DAG: %[[XOR:.*]] = wsgraph.constant dense<{{\[}}[false, true], [true, false]]> : tensor<2x2xi1>
// CHECK: return %[[AND]], %[[OR]], %[[XOR]]
func.func @logical() -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>) {
  %p = wsgraph.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %q = wsgraph.constant dense<[true, false]> : tensor<2xi1>
  %0 = wsgraph.and %p, %q : (tensor<2x1xi1>, tensor<2xi1>) -> tensor<2x2xi1>
  %1 = wsgraph.or %p, %q : (tensor<2x1xi1>, tensor<2xi1>) -> tensor<2x2xi1>
  %2 = wsgraph.xor %p, %q : (tensor<2x1xi1>, tensor<2xi1>) -> tensor<2x2xi1>
  return %0, %1, %2 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>
}

// -----

// Folding never leaves C++'s defined range: a float cast to an integer
// saturates (NaN gives 0, as the wafer's TO_INT), and integer arithmetic
// wraps (INT64_MIN / -1 and -INT64_MIN are INT64_MIN).
// CHECK-LABEL: func.func @overflow
// CHECK-DAG: %[[CAST:.*]] = wsgraph.constant dense<[9223372036854775807, -9223372036854775808, 0, 3]> : tensor<4xi64>
// CHECK-DAG: %[[WRAP:.*]] = wsgraph.constant dense<[9223372036854775807, -9223372036854775808, -2]> : tensor<3xi64>
// CHECK-DAG: %[[NEG:.*]] = wsgraph.constant dense<-9223372036854775808> : tensor<2xi64>
// CHECK: return %[[CAST]], %[[WRAP]], %[[NEG]], %[[NEG]]
func.func @overflow() -> (tensor<4xi64>, tensor<3xi64>, tensor<2xi64>, tensor<2xi64>) {
  %f = wsgraph.constant dense<[3.0e+20, -1.0e+30, 0x7FC00000, 3.5]> : tensor<4xf32>
  %0 = wsgraph.cast %f : tensor<4xf32> -> tensor<4xi64>
  %a = wsgraph.constant dense<[9223372036854775807, -9223372036854775808, 9223372036854775807]> : tensor<3xi64>
  %b = wsgraph.constant dense<[1, -1, 2]> : tensor<3xi64>
  %sum = wsgraph.add %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %dif = wsgraph.sub %sum, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = wsgraph.mul %dif, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %min = wsgraph.constant dense<-9223372036854775808> : tensor<2xi64>
  %m1 = wsgraph.constant dense<-1> : tensor<2xi64>
  %2 = wsgraph.div %min, %m1 : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %3 = wsgraph.neg %min : tensor<2xi64>
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<3xi64>, tensor<2xi64>, tensor<2xi64>
}

// -----

// Bitwise ops fold in the element type: ui8's xor of all ones is 255 - x.
// CHECK-LABEL: func.func @bitwise
// CHECK-DAG: %[[AND:.*]] = wsgraph.constant dense<[12, 1]> : tensor<2xi32>
// CHECK-DAG: %[[OR:.*]] = wsgraph.constant dense<[-3, 7]> : tensor<2xi32>
// CHECK-DAG: %[[XOR:.*]] = wsgraph.constant dense<[250, 0]> : tensor<2xui8>
// CHECK-DAG: %[[NOT:.*]] = wsgraph.constant dense<[-13, 0]> : tensor<2xi8>
// CHECK: return %[[AND]], %[[OR]], %[[XOR]], %[[NOT]]
func.func @bitwise() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xui8>, tensor<2xi8>) {
  %a = wsgraph.constant dense<[12, 7]> : tensor<2xi32>
  %b = wsgraph.constant dense<[-3, 1]> : tensor<2xi32>
  %u = wsgraph.constant dense<[5, 255]> : tensor<2xui8>
  %ones = wsgraph.constant dense<255> : tensor<ui8>
  %s = wsgraph.constant dense<[12, -1]> : tensor<2xi8>
  %0 = wsgraph.bitwise_and %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %1 = wsgraph.bitwise_or %b, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %2 = wsgraph.bitwise_xor %u, %ones : (tensor<2xui8>, tensor<ui8>) -> tensor<2xui8>
  %3 = wsgraph.bitwise_not %s : tensor<2xi8>
  return %0, %1, %2, %3 : tensor<2xi32>, tensor<2xi32>, tensor<2xui8>, tensor<2xi8>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<{{\[}}[0xFF800000, 2.000000e+00], [0xFF800000, 0xFF800000]]> : tensor<2x2xf32>
// CHECK-DAG: %[[I:.*]] = wsgraph.constant dense<[7, 2]> : tensor<2xi64>
// CHECK: return %[[F]], %[[I]]
func.func @where() -> (tensor<2x2xf32>, tensor<2xi64>) {
  %m = wsgraph.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %s = wsgraph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = wsgraph.where %m, %ninf, %s : (tensor<2x2xi1>, tensor<f32>, tensor<2xf32>) -> tensor<2x2xf32>
  %c = wsgraph.constant dense<[true, false]> : tensor<2xi1>
  %t = wsgraph.constant dense<7> : tensor<i64>
  %e = wsgraph.constant dense<[1, 2]> : tensor<2xi64>
  %1 = wsgraph.where %c, %t, %e : (tensor<2xi1>, tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
  return %0, %1 : tensor<2x2xf32>, tensor<2xi64>
}

// -----

// where(c, x, x) is x, even for an unknown condition.
// CHECK-LABEL: func.func @where_same_branches
// CHECK-SAME: %{{.*}}: tensor<4xi1>, %[[X:.*]]: tensor<4xf32>
// CHECK-NEXT: return %[[X]]
func.func @where_same_branches(%c: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = wsgraph.where %c, %x, %x : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ... but not when the condition broadcasts x to a larger shape.
// CHECK-LABEL: func.func @where_same_branches_broadcast
// CHECK-NEXT: %[[R:.*]] = wsgraph.where
// CHECK-NEXT: return %[[R]]
func.func @where_same_branches_broadcast(%c: tensor<2x4xi1>, %x: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = wsgraph.where %c, %x, %x : (tensor<2x4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A splat condition picks one operand whole when it has the result's shape
// (a cache written everywhere); not when the operand broadcasts.
// CHECK-LABEL: func.func @where_splat
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>, %[[Y:[^:]*]]: tensor<2x4xf32>, %[[S:[^:]*]]: tensor<4xf32>
// CHECK-NEXT: wsgraph.constant dense<true>
// CHECK-NEXT: %[[B:.*]] = wsgraph.where %{{.*}}, %[[S]], %[[Y]]
// CHECK-NEXT: return %[[X]], %[[Y]], %[[B]]
func.func @where_splat(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>, %s: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %t = wsgraph.constant dense<true> : tensor<1x4xi1>
  %f = wsgraph.constant dense<false> : tensor<2x1xi1>
  %0 = wsgraph.where %t, %x, %y : (tensor<1x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = wsgraph.where %f, %x, %y : (tensor<2x1xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = wsgraph.where %t, %s, %y : (tensor<1x4xi1>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A gather whose indices name each element's own position is its data; one
// that moves an element is not.
// CHECK-LABEL: func.func @gather_elements_identity
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x2xf32>
// CHECK-NEXT: %[[I:.*]] = wsgraph.constant
// CHECK-NEXT: %[[G:.*]] = wsgraph.gather_elements %[[X]], %[[I]]
// CHECK-NEXT: return %[[X]], %[[G]]
func.func @gather_elements_identity(%x: tensor<2x3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>) {
  %i = wsgraph.constant dense<[[[0, 0], [1, 1], [2, 2]], [[0, 0], [1, 1], [2, 2]]]> : tensor<2x3x2xi64>
  %0 = wsgraph.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2xf32>
  %j = wsgraph.constant dense<[[[0, 0], [1, 1], [2, 2]], [[0, 0], [1, 2], [2, 2]]]> : tensor<2x3x2xi64>
  %1 = wsgraph.gather_elements %x, %j {axis = 1 : i64} : (tensor<2x3x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2xf32>
  return %0, %1 : tensor<2x3x2xf32>, tensor<2x3x2xf32>
}

//===----------------------------------------------------------------------===//
// Identities
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[I:.*]]: tensor<3xi64>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[I]]
func.func @identities(%x: tensor<2x4xf32>, %i: tensor<3xi64>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>,
        tensor<2x4xf32>, tensor<2x4xf32>, tensor<3xi64>, tensor<3xi64>) {
  %zero = wsgraph.constant dense<0.0> : tensor<4xf32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %izero = wsgraph.constant dense<0> : tensor<1xi64>
  %ione = wsgraph.constant dense<1> : tensor<i64>
  %0 = wsgraph.add %x, %zero : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = wsgraph.add %zero, %x : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = wsgraph.sub %x, %zero : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %3 = wsgraph.mul %x, %one : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %4 = wsgraph.mul %one, %x : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = wsgraph.div %x, %one : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %6 = wsgraph.pow %x, %ione : (tensor<2x4xf32>, tensor<i64>) -> tensor<2x4xf32>
  %7 = wsgraph.add %i, %izero : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  %8 = wsgraph.mul %i, %ione : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<3xi64>, tensor<3xi64>
}

// -----

// Not identities: 0 - x, 1 / x, x + 0 where the zero broadcasts x, x * 2,
// x + a non-splat constant.
// CHECK-LABEL: func.func @not_identities
// CHECK: wsgraph.sub
// CHECK: wsgraph.div
// CHECK: wsgraph.add
// CHECK: wsgraph.mul
// CHECK: wsgraph.add
// CHECK: return
func.func @not_identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = wsgraph.constant dense<0.0> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %zeros = wsgraph.constant dense<0.0> : tensor<2x4xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %nonsplat = wsgraph.constant dense<[0.0, 0.0, 0.0, 1.0]> : tensor<4xf32>
  %0 = wsgraph.sub %zero, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = wsgraph.div %one, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = wsgraph.add %x, %zeros : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = wsgraph.mul %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = wsgraph.add %x, %nonsplat : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Unary ops and cast
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @unary
// CHECK-DAG: %[[SQRT:.*]] = wsgraph.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[ERF:.*]] = wsgraph.constant dense<[0.000000e+00, 0.842700779]> : tensor<2xf32>
// CHECK-DAG: %[[TANH:.*]] = wsgraph.constant dense<[0.000000e+00, 0.761594176]> : tensor<2xf32>
// CHECK-DAG: %[[EXP:.*]] = wsgraph.constant dense<[1.000000e+00, 2.71828175]> : tensor<2xf32>
// CHECK-DAG: %[[NEG:.*]] = wsgraph.constant dense<[-0.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[GELU:.*]] = wsgraph.constant dense<[0.000000e+00, 0.841344773]> : tensor<2xf32>
// CHECK-DAG: %[[HALF:.*]] = wsgraph.constant dense<[1.000000e+00, 2.718750e+00]> : tensor<2xf16>
// CHECK: return %[[SQRT]], %[[ERF]], %[[TANH]], %[[EXP]], %[[NEG]], %[[GELU]], %[[HALF]]
func.func @unary() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf16>) {
  %sq = wsgraph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %x = wsgraph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %h = wsgraph.constant dense<[0.0, 1.0]> : tensor<2xf16>
  %0 = wsgraph.sqrt %sq : tensor<2xf32>
  %1 = wsgraph.erf %x : tensor<2xf32>
  %2 = wsgraph.tanh %x : tensor<2xf32>
  %3 = wsgraph.exp %x : tensor<2xf32>
  %4 = wsgraph.neg %x : tensor<2xf32>
  %5 = wsgraph.gelu %x : tensor<2xf32>
  %6 = wsgraph.exp %h : tensor<2xf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf16>
}

// -----

// The tanh GELU folds with its own formula.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = wsgraph.constant dense<[0.000000e+00, 8.411920e-01, -0.0454023071]> : tensor<3xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh() -> tensor<3xf32> {
  %x = wsgraph.constant dense<[0.0, 1.0, -2.0]> : tensor<3xf32>
  %0 = wsgraph.gelu %x {approximate = "tanh"} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @unary_more
// CHECK-DAG: %[[SIG:.*]] = wsgraph.constant dense<[0.182425529, 5.000000e-01, 0.880797088]> : tensor<3xf32>
// CHECK-DAG: %[[RELU:.*]] = wsgraph.constant dense<[0.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[ABS:.*]] = wsgraph.constant dense<[1.500000e+00, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[LOG:.*]] = wsgraph.constant dense<[0.000000e+00, 1.38629436]> : tensor<2xf32>
// CHECK-DAG: %[[SIN:.*]] = wsgraph.constant dense<[-0.997494995, 0.000000e+00, 0.909297406]> : tensor<3xf32>
// CHECK-DAG: %[[COS:.*]] = wsgraph.constant dense<[7.073720e-02, 1.000000e+00, -0.416146845]> : tensor<3xf32>
// CHECK-DAG: %[[REC:.*]] = wsgraph.constant dense<[-0.666666686, 0x7F800000, 5.000000e-01]> : tensor<3xf32>
// CHECK-DAG: %[[FLOOR:.*]] = wsgraph.constant dense<[-2.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[CEIL:.*]] = wsgraph.constant dense<[-1.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK: return %[[SIG]], %[[RELU]], %[[ABS]], %[[LOG]], %[[SIN]], %[[COS]], %[[REC]], %[[FLOOR]], %[[CEIL]]
func.func @unary_more() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %x = wsgraph.constant dense<[-1.5, 0.0, 2.0]> : tensor<3xf32>
  %p = wsgraph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = wsgraph.sigmoid %x : tensor<3xf32>
  %1 = wsgraph.relu %x : tensor<3xf32>
  %2 = wsgraph.abs %x : tensor<3xf32>
  %3 = wsgraph.log %p : tensor<2xf32>
  %4 = wsgraph.sin %x : tensor<3xf32>
  %5 = wsgraph.cos %x : tensor<3xf32>
  %6 = wsgraph.reciprocal %x : tensor<3xf32>
  %7 = wsgraph.floor %x : tensor<3xf32>
  %8 = wsgraph.ceil %x : tensor<3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// neg, abs and relu on integers compute on integers; not on booleans.
// CHECK-LABEL: func.func @unary_integer
// CHECK-DAG: %[[NEG:.*]] = wsgraph.constant dense<[3, 0, -5]> : tensor<3xi64>
// CHECK-DAG: %[[ABS:.*]] = wsgraph.constant dense<[3, 0, 5]> : tensor<3xi64>
// CHECK-DAG: %[[RELU:.*]] = wsgraph.constant dense<[0, 0, 5]> : tensor<3xi64>
// CHECK-DAG: %[[NOT:.*]] = wsgraph.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[NEG]], %[[ABS]], %[[RELU]], %[[NOT]]
func.func @unary_integer() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xi1>) {
  %i = wsgraph.constant dense<[-3, 0, 5]> : tensor<3xi64>
  %b = wsgraph.constant dense<[true, false]> : tensor<2xi1>
  %0 = wsgraph.neg %i : tensor<3xi64>
  %1 = wsgraph.abs %i : tensor<3xi64>
  %2 = wsgraph.relu %i : tensor<3xi64>
  %3 = wsgraph.not %b : tensor<2xi1>
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xi1>
}

// -----

// Unary ops of a non-constant stay.
// CHECK-LABEL: func.func @unary_not_constant
// CHECK-NEXT: %[[R:.*]] = wsgraph.erf
// CHECK-NEXT: return %[[R]]
func.func @unary_not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = wsgraph.erf %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[TOF:.*]] = wsgraph.constant dense<[1.000000e+00, -2.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[TOI:.*]] = wsgraph.constant dense<[2, -2, 0, 0]> : tensor<4xi64>
// CHECK-DAG: %[[TOB:.*]] = wsgraph.constant dense<[true, false, true, true]> : tensor<4xi1>
// CHECK-DAG: %[[ITOB:.*]] = wsgraph.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[BTOI:.*]] = wsgraph.constant dense<[1, 0]> : tensor<2xi32>
// CHECK-DAG: %[[TOH:.*]] = wsgraph.constant dense<[1.000000e+00, 3.332520e-01]> : tensor<2xf16>
// CHECK: return %[[X]], %[[TOF]], %[[TOI]], %[[TOB]], %[[ITOB]], %[[BTOI]], %[[TOH]]
func.func @cast(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<3xf32>, tensor<4xi64>, tensor<4xi1>, tensor<3xi1>, tensor<2xi32>, tensor<2xf16>) {
  %0 = wsgraph.cast %x : tensor<4xf32> -> tensor<4xf32>
  %i = wsgraph.constant dense<[1, -2, 0]> : tensor<3xi64>
  %1 = wsgraph.cast %i : tensor<3xi64> -> tensor<3xf32>
  %f = wsgraph.constant dense<[2.7, -2.7, 0.5, 0.0]> : tensor<4xf32>
  %2 = wsgraph.cast %f : tensor<4xf32> -> tensor<4xi64>
  // Any nonzero is true, 0.5 included.
  %g = wsgraph.constant dense<[0.5, 0.0, -2.0, 0.25]> : tensor<4xf32>
  %3 = wsgraph.cast %g : tensor<4xf32> -> tensor<4xi1>
  %4 = wsgraph.cast %i : tensor<3xi64> -> tensor<3xi1>
  %b = wsgraph.constant dense<[true, false]> : tensor<2xi1>
  %5 = wsgraph.cast %b : tensor<2xi1> -> tensor<2xi32>
  %d = wsgraph.constant dense<[1.0, 0.333333333]> : tensor<2xf32>
  %6 = wsgraph.cast %d : tensor<2xf32> -> tensor<2xf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<3xf32>, tensor<4xi64>, tensor<4xi1>, tensor<3xi1>, tensor<2xi32>, tensor<2xf16>
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = wsgraph.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// transpose(transpose(x, p), q) is transpose(x, [p[q[0]], p[q[1]], ...]).
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = wsgraph.transpose %[[X]] {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = wsgraph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = wsgraph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<3x4x2xf32>) -> tensor<3x2x4xf32>
  return %1 : tensor<3x2x4xf32>
}

// -----

// Inverse permutations cancel out.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = wsgraph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = wsgraph.transpose %0 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_constant
// CHECK-DAG: %[[T2:.*]] = wsgraph.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
// CHECK-DAG: %[[T3:.*]] = wsgraph.constant dense<{{\[}}{{\[}}[0.000000e+00, 3.000000e+00], [1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00]]]> : tensor<1x3x2xf32>
// CHECK: return %[[T2]], %[[T3]]
func.func @transpose_constant() -> (tensor<3x2xi64>, tensor<1x3x2xf32>) {
  %c = wsgraph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = wsgraph.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xi64>) -> tensor<3x2xi64>
  %f = wsgraph.constant dense<[[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]> : tensor<2x1x3xf32>
  %1 = wsgraph.transpose %f {perm = array<i64: 1, 2, 0>} : (tensor<2x1x3xf32>) -> tensor<1x3x2xf32>
  return %0, %1 : tensor<3x2xi64>, tensor<1x3x2xf32>
}

//===----------------------------------------------------------------------===//
// Reshape, unsqueeze, squeeze, expand
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = wsgraph.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = wsgraph.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = wsgraph.reshape %0 : (tensor<24xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// A reshape back to the original shape disappears.
// CHECK-LABEL: func.func @reshape_roundtrip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = wsgraph.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = wsgraph.reshape %0 : (tensor<6xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_like_constants
// CHECK-DAG: %[[R:.*]] = wsgraph.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
// CHECK-DAG: %[[U:.*]] = wsgraph.constant dense<{{\[}}[1, 2, 3, 4, 5, 6]]> : tensor<1x6xi64>
// CHECK-DAG: %[[S:.*]] = wsgraph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: return %[[R]], %[[U]], %[[S]]
func.func @reshape_like_constants() -> (tensor<3x2xi64>, tensor<1x6xi64>, tensor<2xf32>) {
  %c = wsgraph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = wsgraph.reshape %c : (tensor<2x3xi64>) -> tensor<3x2xi64>
  %v = wsgraph.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %1 = wsgraph.unsqueeze %v {axes = array<i64: 0>} : (tensor<6xi64>) -> tensor<1x6xi64>
  %f = wsgraph.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %2 = wsgraph.squeeze %f {axes = array<i64: 1, 2>} : (tensor<2x1x1xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<3x2xi64>, tensor<1x6xi64>, tensor<2xf32>
}

// -----

// Squeeze and unsqueeze with no axes are identities.
// CHECK-LABEL: func.func @squeeze_unsqueeze_identity
// CHECK-SAME: (%[[X:.*]]: tensor<1x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @squeeze_unsqueeze_identity(%x: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %0 = wsgraph.squeeze %x {axes = array<i64>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %1 = wsgraph.unsqueeze %x {axes = array<i64>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %0, %1 : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// A splat expands to any size, even beyond the fold limit: it stays a splat.
// CHECK-LABEL: func.func @expand_splat
// CHECK-DAG: %[[S:.*]] = wsgraph.constant dense<true> : tensor<1x1x1024x1024xi1>
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<2.500000e+00> : tensor<3x4xf32>
// CHECK: return %[[S]], %[[F]]
func.func @expand_splat() -> (tensor<1x1x1024x1024xi1>, tensor<3x4xf32>) {
  %t = wsgraph.constant dense<true> : tensor<1x1xi1>
  %0 = wsgraph.expand %t : (tensor<1x1xi1>) -> tensor<1x1x1024x1024xi1>
  %f = wsgraph.constant dense<2.5> : tensor<f32>
  %1 = wsgraph.expand %f : (tensor<f32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<1x1x1024x1024xi1>, tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @expand_constant
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi64>)
// CHECK-DAG: %[[E:.*]] = wsgraph.constant dense<{{\[}}[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi64>
// CHECK-DAG: %[[C:.*]] = wsgraph.constant dense<{{\[}}{{\[}}[1, 1], [2, 2]]]> : tensor<1x2x2xi64>
// CHECK: return %[[E]], %[[C]], %[[X]]
func.func @expand_constant(%x: tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<1x2x2xi64>, tensor<2x3xi64>) {
  %r = wsgraph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %0 = wsgraph.expand %r : (tensor<3xi64>) -> tensor<2x3xi64>
  %c = wsgraph.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %1 = wsgraph.expand %c : (tensor<2x1xi64>) -> tensor<1x2x2xi64>
  %2 = wsgraph.expand %x : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0, %1, %2 : tensor<2x3xi64>, tensor<1x2x2xi64>, tensor<2x3xi64>
}

//===----------------------------------------------------------------------===//
// Gather, concat, slice
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @gather
// CHECK-DAG: %[[ROWS:.*]] = wsgraph.constant dense<{{\[}}{{\[}}[5, 6], [1, 2]], {{\[}}[3, 4], [5, 6]]]> : tensor<2x2x2xi64>
// CHECK-DAG: %[[COLS:.*]] = wsgraph.constant dense<{{\[}}[2.000000e+00, 1.000000e+00], [4.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[ONE:.*]] = wsgraph.constant dense<[3, 4]> : tensor<2xi64>
// CHECK: return %[[ROWS]], %[[COLS]], %[[ONE]]
func.func @gather() -> (tensor<2x2x2xi64>, tensor<2x2xf32>, tensor<2xi64>) {
  %d = wsgraph.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  // -1 is the last row.
  %i = wsgraph.constant dense<[[-1, 0], [1, 2]]> : tensor<2x2xi64>
  %0 = wsgraph.gather %d, %i {axis = 0 : i64} : (tensor<3x2xi64>, tensor<2x2xi64>) -> tensor<2x2x2xi64>
  %f = wsgraph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %j = wsgraph.constant dense<[1, -2]> : tensor<2xi32>
  %1 = wsgraph.gather %f, %j {axis = -1 : i64} : (tensor<2x2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  %s = wsgraph.constant dense<1> : tensor<i64>
  %2 = wsgraph.gather %d, %s : (tensor<3x2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<2x2x2xi64>, tensor<2x2xf32>, tensor<2xi64>
}

// -----

// An out-of-range constant index is not folded.
// CHECK-LABEL: func.func @gather_out_of_range
// CHECK: %[[R:.*]] = wsgraph.gather
// CHECK-NEXT: return %[[R]]
func.func @gather_out_of_range() -> tensor<1x2xi64> {
  %d = wsgraph.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %i = wsgraph.constant dense<[3]> : tensor<1xi64>
  %0 = wsgraph.gather %d, %i : (tensor<3x2xi64>, tensor<1xi64>) -> tensor<1x2xi64>
  return %0 : tensor<1x2xi64>
}

// -----

// The examples of the ONNX GatherElements reference; -1 is the last element.
// CHECK-LABEL: func.func @gather_elements
// CHECK-DAG: %[[A1:.*]] = wsgraph.constant dense<{{\[}}[1, 1], [4, 3]]> : tensor<2x2xi64>
// CHECK-DAG: %[[A0:.*]] = wsgraph.constant dense<{{\[}}[4.000000e+00, 8.000000e+00, 3.000000e+00], [7.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: %[[NEG:.*]] = wsgraph.constant dense<{{\[}}[2, 1]]> : tensor<1x2xi64>
// CHECK: return %[[A1]], %[[A0]], %[[NEG]]
func.func @gather_elements() -> (tensor<2x2xi64>, tensor<2x3xf32>, tensor<1x2xi64>) {
  %d = wsgraph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %i = wsgraph.constant dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>
  %0 = wsgraph.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %f = wsgraph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<3x3xf32>
  %j = wsgraph.constant dense<[[1, 2, 0], [2, 0, 0]]> : tensor<2x3xi32>
  %1 = wsgraph.gather_elements %f, %j {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  %k = wsgraph.constant dense<[[-1, 0]]> : tensor<1x2xi64>
  %2 = wsgraph.gather_elements %d, %k {axis = -1 : i64} : (tensor<2x2xi64>, tensor<1x2xi64>) -> tensor<1x2xi64>
  return %0, %1, %2 : tensor<2x2xi64>, tensor<2x3xf32>, tensor<1x2xi64>
}

// -----

// An out-of-range constant index is not folded.
// CHECK-LABEL: func.func @gather_elements_out_of_range
// CHECK: %[[R:.*]] = wsgraph.gather_elements
// CHECK-NEXT: return %[[R]]
func.func @gather_elements_out_of_range() -> tensor<1x2xi64> {
  %d = wsgraph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %i = wsgraph.constant dense<[[0, 2]]> : tensor<1x2xi64>
  %0 = wsgraph.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x2xi64>, tensor<1x2xi64>) -> tensor<1x2xi64>
  return %0 : tensor<1x2xi64>
}

// -----

// CHECK-LABEL: func.func @tile
// CHECK-DAG: %[[COLS:.*]] = wsgraph.constant dense<{{\[}}[1, 2, 1, 2], [3, 4, 3, 4]]> : tensor<2x4xi64>
// CHECK-DAG: %[[ROWS:.*]] = wsgraph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<4x2xf32>
// CHECK: return %[[COLS]], %[[ROWS]], %arg0
func.func @tile(%x: tensor<2x3xf32>) -> (tensor<2x4xi64>, tensor<4x2xf32>, tensor<2x3xf32>) {
  %i = wsgraph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %0 = wsgraph.tile %i {repeats = array<i64: 1, 2>} : (tensor<2x2xi64>) -> tensor<2x4xi64>
  %f = wsgraph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = wsgraph.tile %f {repeats = array<i64: 2, 1>} : (tensor<2x2xf32>) -> tensor<4x2xf32>
  // Repeating once is the input itself.
  %2 = wsgraph.tile %x {repeats = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x4xi64>, tensor<4x2xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[V:.*]] = wsgraph.constant dense<[1, 8, 2, 16]> : tensor<4xi64>
// CHECK-DAG: %[[M:.*]] = wsgraph.constant dense<{{\[}}[1, 2, 9], [3, 4, 8]]> : tensor<2x3xi64>
// CHECK: return %[[V]], %[[M]], %[[X]]
func.func @concat(%x: tensor<2x3xf32>) -> (tensor<4xi64>, tensor<2x3xi64>, tensor<2x3xf32>) {
  %a = wsgraph.constant dense<[1, 8]> : tensor<2xi64>
  %b = wsgraph.constant dense<2> : tensor<1xi64>
  %c = wsgraph.constant dense<16> : tensor<1xi64>
  %0 = wsgraph.concat %a, %b, %c {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %m = wsgraph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %n = wsgraph.constant dense<[[9], [8]]> : tensor<2x1xi64>
  %1 = wsgraph.concat %m, %n {axis = -1 : i64} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  %2 = wsgraph.concat %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<4xi64>, tensor<2x3xi64>, tensor<2x3xf32>
}

// -----

// Empty inputs add nothing: a decoder's past keys of length 0 before its new
// keys is the new keys; with two others left the concat keeps those.
// CHECK-LABEL: func.func @concat_empty
// CHECK-SAME: (%[[K:.*]]: tensor<2x4x3x8xf32>, %[[J:.*]]: tensor<2x4x1x8xf32>)
// CHECK: %[[KJ:.*]] = wsgraph.concat %[[K]], %[[J]] {axis = -2 : i64} : (tensor<2x4x3x8xf32>, tensor<2x4x1x8xf32>) -> tensor<2x4x4x8xf32>
// CHECK: return %[[K]], %[[KJ]]
func.func @concat_empty(%k: tensor<2x4x3x8xf32>, %j: tensor<2x4x1x8xf32>) -> (tensor<2x4x3x8xf32>, tensor<2x4x4x8xf32>) {
  %past = wsgraph.constant dense<> : tensor<2x4x0x8xf32>
  %0 = wsgraph.concat %past, %k {axis = 2 : i64} : (tensor<2x4x0x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  %1 = wsgraph.concat %k, %past, %j {axis = -2 : i64} : (tensor<2x4x3x8xf32>, tensor<2x4x0x8xf32>, tensor<2x4x1x8xf32>) -> tensor<2x4x4x8xf32>
  return %0, %1 : tensor<2x4x3x8xf32>, tensor<2x4x4x8xf32>
}

// -----

// A concat with a non-constant input stays.
// CHECK-LABEL: func.func @concat_not_constant
// CHECK: %[[R:.*]] = wsgraph.concat
// CHECK-NEXT: return %[[R]]
func.func @concat_not_constant(%x: tensor<1xi64>) -> tensor<3xi64> {
  %a = wsgraph.constant dense<[1, 8]> : tensor<2xi64>
  %0 = wsgraph.concat %a, %x {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @slice_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[R:.*]] = wsgraph.slice %[[X]] {offsets = array<i64: 3, 0>, sizes = array<i64: 4, 4>, strides = array<i64: -1, 1>}
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @slice_identity(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = wsgraph.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 4>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // Same type but reversed: not an identity.
  %1 = wsgraph.slice %x {offsets = array<i64: 3, 0>, sizes = array<i64: 4, 4>, strides = array<i64: -1, 1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @slice_constant
// CHECK-DAG: %[[A:.*]] = wsgraph.constant dense<{{\[}}[5, 7], [9, 11]]> : tensor<2x2xi64>
// CHECK-DAG: %[[B:.*]] = wsgraph.constant dense<{{\[}}[15, 13], [7, 5]]> : tensor<2x2xi64>
// CHECK-DAG: %[[C:.*]] = wsgraph.constant dense<> : tensor<0x4xi64>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @slice_constant() -> (tensor<2x2xi64>, tensor<2x2xi64>, tensor<0x4xi64>) {
  %c = wsgraph.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]> : tensor<4x4xi64>
  %0 = wsgraph.slice %c {offsets = array<i64: 1, 1>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 2>} : (tensor<4x4xi64>) -> tensor<2x2xi64>
  // Negative strides walk backwards from the offset.
  %1 = wsgraph.slice %c {offsets = array<i64: 3, 3>, sizes = array<i64: 2, 2>, strides = array<i64: -2, -2>} : (tensor<4x4xi64>) -> tensor<2x2xi64>
  %2 = wsgraph.slice %c {offsets = array<i64: 0, 0>, sizes = array<i64: 0, 4>, strides = array<i64: 1, 1>} : (tensor<4x4xi64>) -> tensor<0x4xi64>
  return %0, %1, %2 : tensor<2x2xi64>, tensor<2x2xi64>, tensor<0x4xi64>
}

// -----

// A split of a constant is its pieces (torch's repeat_interleave computes
// its Expand shapes from one).
// CHECK-LABEL: func.func @split_constant
// CHECK-DAG: %[[A:.*]] = wsgraph.constant dense<{{\[}}[0], [3]]> : tensor<2x1xi64>
// CHECK-DAG: %[[B:.*]] = wsgraph.constant dense<{{\[}}[1, 2], [4, 5]]> : tensor<2x2xi64>
// CHECK: return %[[A]], %[[B]]
func.func @split_constant() -> (tensor<2x1xi64>, tensor<2x2xi64>) {
  %c = wsgraph.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi64>
  %0:2 = wsgraph.split %c {axis = -1 : i64, sizes = array<i64: 1, 2>} : (tensor<2x3xi64>) -> (tensor<2x1xi64>, tensor<2x2xi64>)
  return %0#0, %0#1 : tensor<2x1xi64>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @split_input
// CHECK-NEXT: wsgraph.split %arg0
func.func @split_input(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>) {
  %0:2 = wsgraph.split %x {axis = 1 : i64, sizes = array<i64: 1, 2>} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x1xf32>, tensor<2x2xf32>
}

// -----

// A slice of a weight reads the weight file: rows 2..3 reversed, columns 1
// and 3 of [[0, 1, 2, 3], ..., [12, 13, 14, 15]] at byte 8. Without the file
// the slice stays.
// CHECK-LABEL: func.func @slice_weight
// WEIGHT-NEXT: %[[C:.*]] = wsgraph.constant dense<{{\[}}[1.300000e+01, 1.500000e+01], [9.000000e+00, 1.100000e+01]]> : tensor<2x2xf32>
// WEIGHT-NEXT: return %[[C]]
// NOFILE-NEXT: %[[W:.*]] = wsgraph.weight "w" from "WEIGHTFILE" at 8 : tensor<4x4xf32>
// NOFILE-NEXT: %[[S:.*]] = wsgraph.slice %[[W]]
// NOFILE-NEXT: return %[[S]]
func.func @slice_weight() -> tensor<2x2xf32> {
  %w = wsgraph.weight "w" from "WEIGHTFILE" at 8 : tensor<4x4xf32>
  %0 = wsgraph.slice %w {offsets = array<i64: 3, 1>, sizes = array<i64: 2, 2>, strides = array<i64: -1, 2>} : (tensor<4x4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// A weight file too short for the weight is not read.
// CHECK-LABEL: func.func @slice_weight_past_end
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "w" from
// CHECK-NEXT: %[[S:.*]] = wsgraph.slice %[[W]]
// CHECK-NEXT: return %[[S]]
func.func @slice_weight_past_end() -> tensor<1x1xf32> {
  %w = wsgraph.weight "w" from "WEIGHTFILE" at 12 : tensor<4x4xf32>
  %0 = wsgraph.slice %w {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// An elided weight has no bytes to read.
// CHECK-LABEL: func.func @slice_elided_weight
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "w" elided
// CHECK-NEXT: %[[S:.*]] = wsgraph.slice %[[W]]
// CHECK-NEXT: return %[[S]]
func.func @slice_elided_weight() -> tensor<1x1xf32> {
  %w = wsgraph.weight "w" elided : tensor<4x4xf32>
  %0 = wsgraph.slice %w {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

//===----------------------------------------------------------------------===//
// Trilu, range, shape
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @trilu
// CHECK-DAG: %[[L0:.*]] = wsgraph.constant dense<{{\[}}[1, 0, 0], [1, 1, 0], [1, 1, 1]]> : tensor<3x3xi64>
// CHECK-DAG: %[[U0:.*]] = wsgraph.constant dense<{{\[}}[1, 1, 1], [0, 1, 1], [0, 0, 1]]> : tensor<3x3xi64>
// CHECK-DAG: %[[U1:.*]] = wsgraph.constant dense<{{\[}}[0, 1, 1], [0, 0, 1], [0, 0, 0]]> : tensor<3x3xi64>
// CHECK-DAG: %[[LM1:.*]] = wsgraph.constant dense<{{\[}}[0, 0, 0], [1, 0, 0], [1, 1, 0]]> : tensor<3x3xi64>
// CHECK-DAG: %[[B:.*]] = wsgraph.constant dense<{{\[}}{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00, 0.000000e+00]], {{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00, 0.000000e+00]]]> : tensor<2x2x3xf32>
// CHECK: return %[[L0]], %[[U0]], %[[U1]], %[[LM1]], %[[B]]
func.func @trilu() -> (tensor<3x3xi64>, tensor<3x3xi64>, tensor<3x3xi64>, tensor<3x3xi64>, tensor<2x2x3xf32>) {
  %ones = wsgraph.constant dense<1> : tensor<3x3xi64>
  %0 = wsgraph.trilu %ones {upper = false} : tensor<3x3xi64>
  %1 = wsgraph.trilu %ones : tensor<3x3xi64>
  %2 = wsgraph.trilu %ones {upper = true, k = 1 : i64} : tensor<3x3xi64>
  %3 = wsgraph.trilu %ones {upper = false, k = -1 : i64} : tensor<3x3xi64>
  // Batched: each 2x3 matrix is masked the same way.
  %f = wsgraph.constant dense<1.0> : tensor<2x2x3xf32>
  %4 = wsgraph.trilu %f {upper = false} : tensor<2x2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<3x3xi64>, tensor<3x3xi64>, tensor<3x3xi64>, tensor<3x3xi64>, tensor<2x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @range
// CHECK-DAG: %[[I:.*]] = wsgraph.constant dense<[2, 5, 8]> : tensor<3xi64>
// CHECK-DAG: %[[D:.*]] = wsgraph.constant dense<[4, 3, 2, 1]> : tensor<4xi64>
// CHECK-DAG: %[[F:.*]] = wsgraph.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00]> : tensor<3xf32>
// CHECK: return %[[I]], %[[D]], %[[F]]
func.func @range() -> (tensor<3xi64>, tensor<4xi64>, tensor<3xf32>) {
  %s = wsgraph.constant dense<2> : tensor<i64>
  %l = wsgraph.constant dense<10> : tensor<i64>
  %d = wsgraph.constant dense<3> : tensor<i64>
  %0 = wsgraph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %four = wsgraph.constant dense<4> : tensor<i64>
  %zero = wsgraph.constant dense<0> : tensor<i64>
  %m1 = wsgraph.constant dense<-1> : tensor<i64>
  %1 = wsgraph.range %four, %zero, %m1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %fs = wsgraph.constant dense<0.0> : tensor<f32>
  %fl = wsgraph.constant dense<1.5> : tensor<f32>
  %fd = wsgraph.constant dense<0.5> : tensor<f32>
  %2 = wsgraph.range %fs, %fl, %fd : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xi64>, tensor<4xi64>, tensor<3xf32>
}

// -----

// A range with a non-constant bound or a dynamic result stays.
// CHECK-LABEL: func.func @range_not_folded
// CHECK: wsgraph.range
// CHECK: wsgraph.range
// CHECK: return
func.func @range_not_folded(%l: tensor<i64>) -> (tensor<8xi64>, tensor<?xi64>) {
  %s = wsgraph.constant dense<0> : tensor<i64>
  %d = wsgraph.constant dense<1> : tensor<i64>
  %0 = wsgraph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
  %e = wsgraph.constant dense<8> : tensor<i64>
  %1 = wsgraph.range %s, %e, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0, %1 : tensor<8xi64>, tensor<?xi64>
}

// -----

// A range larger than the fold limit (1 << 18 elements) stays.
// CHECK-LABEL: func.func @range_too_large
// CHECK: %[[R:.*]] = wsgraph.range
// CHECK-NEXT: return %[[R]]
func.func @range_too_large() -> tensor<262145xi64> {
  %s = wsgraph.constant dense<0> : tensor<i64>
  %l = wsgraph.constant dense<262145> : tensor<i64>
  %d = wsgraph.constant dense<1> : tensor<i64>
  %0 = wsgraph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<262145xi64>
  return %0 : tensor<262145xi64>
}

// -----

// CHECK-LABEL: func.func @shape_static
// CHECK-DAG: %[[ALL:.*]] = wsgraph.constant dense<[1, 8, 32]> : tensor<3xi64>
// CHECK-DAG: %[[MID:.*]] = wsgraph.constant dense<8> : tensor<1xi64>
// CHECK-DAG: %[[NONE:.*]] = wsgraph.constant dense<> : tensor<0xi64>
// CHECK: return %[[ALL]], %[[MID]], %[[NONE]]
func.func @shape_static(%x: tensor<1x8x32xf32>) -> (tensor<3xi64>, tensor<1xi64>, tensor<0xi64>) {
  %0 = wsgraph.shape %x : (tensor<1x8x32xf32>) -> tensor<3xi64>
  %1 = wsgraph.shape %x {start = 1 : i64, end = -1 : i64} : (tensor<1x8x32xf32>) -> tensor<1xi64>
  %2 = wsgraph.shape %x {start = 3 : i64} : (tensor<1x8x32xf32>) -> tensor<0xi64>
  return %0, %1, %2 : tensor<3xi64>, tensor<1xi64>, tensor<0xi64>
}

// -----

// Only the selected dimensions need to be static.
// CHECK-LABEL: func.func @shape_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<1x?x32xf32>)
// CHECK-DAG: %[[LAST:.*]] = wsgraph.constant dense<32> : tensor<1xi64>
// CHECK-DAG: %[[ALL:.*]] = wsgraph.shape %[[X]] : (tensor<1x?x32xf32>) -> tensor<3xi64>
// CHECK-DAG: %[[MID:.*]] = wsgraph.shape %[[X]] {end = 2 : i64, start = 1 : i64} : (tensor<1x?x32xf32>) -> tensor<1xi64>
// CHECK: return %[[ALL]], %[[MID]], %[[LAST]]
func.func @shape_dynamic(%x: tensor<1x?x32xf32>) -> (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) {
  %0 = wsgraph.shape %x : (tensor<1x?x32xf32>) -> tensor<3xi64>
  %1 = wsgraph.shape %x {start = 1 : i64, end = 2 : i64} : (tensor<1x?x32xf32>) -> tensor<1xi64>
  %2 = wsgraph.shape %x {start = -1 : i64} : (tensor<1x?x32xf32>) -> tensor<1xi64>
  return %0, %1, %2 : tensor<3xi64>, tensor<1xi64>, tensor<1xi64>
}

//===----------------------------------------------------------------------===//
// The fold limit
//===----------------------------------------------------------------------===//

// -----

// Elementwise folds stop at 1 << 18 result elements, splats included: an add
// of two splats of 1x512x512 (exactly the limit) folds, 1x512x513 and
// 1x1024x1024 do not.
// CHECK-LABEL: func.func @fold_limit
// CHECK-DAG: %[[AT:.*]] = wsgraph.constant dense<3.000000e+00> : tensor<1x512x512xf32>
// CHECK-DAG: %[[OVER:.*]] = wsgraph.add %{{.*}}, %{{.*}} : (tensor<1x512x513xf32>, tensor<1x512x513xf32>) -> tensor<1x512x513xf32>
// CHECK-DAG: %[[BIG:.*]] = wsgraph.add %{{.*}}, %{{.*}} : (tensor<1x1024x1024xf32>, tensor<1x1024x1024xf32>) -> tensor<1x1024x1024xf32>
// CHECK: return %[[AT]], %[[OVER]], %[[BIG]]
func.func @fold_limit() -> (tensor<1x512x512xf32>, tensor<1x512x513xf32>, tensor<1x1024x1024xf32>) {
  %a = wsgraph.constant dense<1.0> : tensor<1x512x512xf32>
  %b = wsgraph.constant dense<2.0> : tensor<1x512x512xf32>
  %0 = wsgraph.add %a, %b : (tensor<1x512x512xf32>, tensor<1x512x512xf32>) -> tensor<1x512x512xf32>
  %c = wsgraph.constant dense<1.0> : tensor<1x512x513xf32>
  %d = wsgraph.constant dense<2.0> : tensor<1x512x513xf32>
  %1 = wsgraph.add %c, %d : (tensor<1x512x513xf32>, tensor<1x512x513xf32>) -> tensor<1x512x513xf32>
  %e = wsgraph.constant dense<1.0> : tensor<1x1024x1024xf32>
  %f = wsgraph.constant dense<2.0> : tensor<1x1024x1024xf32>
  %2 = wsgraph.add %e, %f : (tensor<1x1024x1024xf32>, tensor<1x1024x1024xf32>) -> tensor<1x1024x1024xf32>
  return %0, %1, %2 : tensor<1x512x512xf32>, tensor<1x512x513xf32>, tensor<1x1024x1024xf32>
}

// -----

// Products of constants fold, summed in f32 in K's order: a CumSum of a
// mask bound to ones (its triangle product) becomes the positions 1..4;
// the batch dimension broadcasts; a linear adds its bias.
// CHECK-LABEL: func.func @product_fold
// CHECK-DAG: wsgraph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<2x4xf32>
// CHECK-DAG: wsgraph.constant dense<{{\[\[\[}}5.000000e+00], [1.100000e+01]]]> : tensor<1x2x1xf32>
// CHECK-DAG: wsgraph.constant dense<{{\[\[}}1.500000e+00, 2.500000e+00, 3.500000e+00, 4.500000e+00], [1.500000e+00, 2.500000e+00, 3.500000e+00, 4.500000e+00]]> : tensor<2x4xf32>
// CHECK-NOT: wsgraph.matmul
// CHECK-NOT: wsgraph.linear
func.func @product_fold() -> (tensor<2x4xf32>, tensor<1x2x1xf32>, tensor<2x4xf32>) {
  %ones = wsgraph.constant dense<1.0> : tensor<2x4xf32>
  %tri = wsgraph.constant dense<[[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]]> : tensor<4x4xf32>
  %0 = wsgraph.matmul %ones, %tri : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a = wsgraph.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %b = wsgraph.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %1 = wsgraph.matmul %a, %b : (tensor<1x2x2xf32>, tensor<2x1xf32>) -> tensor<1x2x1xf32>
  %half = wsgraph.constant dense<0.5> : tensor<4xf32>
  %2 = wsgraph.linear %ones, %tri, %half : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<1x2x1xf32>, tensor<2x4xf32>
}

// -----

// A product with a computed operand stays.
// CHECK-LABEL: func.func @product_not_constant
// CHECK: wsgraph.matmul %arg0
func.func @product_not_constant(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %tri = wsgraph.constant dense<1.0> : tensor<4x4xf32>
  %0 = wsgraph.matmul %x, %tri : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Reductions of constants fold (BLOOM's causal mask takes a ReduceMax of a
// constant): per axis or all, kept dimensions or not, ints and floats, the
// mean in f32; a NaN wins max and min.
// CHECK-LABEL: func.func @reduce_fold
// CHECK-DAG: wsgraph.constant dense<{{\[\[}}3], [6]]> : tensor<2x1xi64>
// CHECK-DAG: wsgraph.constant dense<[1, 4]> : tensor<2xi64>
// CHECK-DAG: wsgraph.constant dense<2.100000e+01> : tensor<f32>
// CHECK-DAG: wsgraph.constant dense<[2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<3xf32>
// CHECK-DAG: wsgraph.constant dense<[0x7FC00000, 5.000000e+00]> : tensor<2xf32>
// CHECK-NOT: wsgraph.reduce
func.func @reduce_fold() -> (tensor<2x1xi64>, tensor<2xi64>, tensor<f32>, tensor<3xf32>, tensor<2xf32>) {
  %i = wsgraph.constant dense<[[1, 3, 2], [6, 4, 5]]> : tensor<2x3xi64>
  %f = wsgraph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %n = wsgraph.constant dense<[[1.0, 0x7FC00000], [5.0, 7.0]]> : tensor<2x2xf32>
  %0 = wsgraph.reduce_max %i {axes = array<i64: -1>} : (tensor<2x3xi64>) -> tensor<2x1xi64>
  %1 = wsgraph.reduce_min %i {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xi64>) -> tensor<2xi64>
  %2 = wsgraph.reduce_sum %f {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  %3 = wsgraph.reduce_mean %f {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  %4 = wsgraph.reduce_min %n {axes = array<i64: 1>, keepdims = false} : (tensor<2x2xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<2x1xi64>, tensor<2xi64>, tensor<f32>, tensor<3xf32>, tensor<2xf32>
}
