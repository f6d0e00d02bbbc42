// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.rope becomes a [T, D] cos/sin table generic (two outputs; the
// input is a compile-time f64 inv_freq constant indexed by j; the angle
// pos * inv_freq is reduced to [-pi, pi] in f64 with roundeven, then cos/sin
// are f32; the rotation sign is folded into sin), then one elementwise generic
//   out = x[j] * cos[t, j] + x[partner(j)] * sin[t, j]
// whose partner element is read through an affine map: (j + R/2) mod R for
// rotate_half, j xor 1 (written j - (j mod 2) * 2 + 1) for interleaved.

// rotate_half over the whole head (R = D = 16), no offset, theta = 1e4.
// CHECK-LABEL: func.func @rope_rotate_half
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x2x16xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// inv_freq = 1e4^(-2i/16) for i = j mod 8, as a constant indexed by j.
// CHECK-DAG: %[[INV:.+]] = arith.constant dense<[1.000000e+00, 0.31622776601683789, {{.*}}, 3.1622776601683783E-4, 1.000000e+00, 0.31622776601683789, {{.*}}, 3.1622776601683783E-4]> : tensor<16xf64>
// CHECK: %[[COS_INIT:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[SIN_INIT:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[INV]] : tensor<16xf64>) outs(%[[COS_INIT]], %[[SIN_INIT]] : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: ^bb0(%[[FREQ:.+]]: f64, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: %[[T:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[POS:.+]] = arith.addi %[[T]], %[[C0]] : index
// CHECK: %[[POS_I64:.+]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[POS_F:.+]] = arith.sitofp %[[POS_I64]] : i64 to f64
// CHECK: %[[ANGLE:.+]] = arith.mulf %[[POS_F]], %[[FREQ]] : f64
// CHECK: %[[TURNS:.+]] = arith.mulf %[[ANGLE]], %{{.+}} : f64
// CHECK: %[[K:.+]] = math.roundeven %[[TURNS]] : f64
// CHECK: %[[R32:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[COS:.+]] = math.cos %[[R32]] : f32
// CHECK: %[[SIN:.+]] = math.sin %[[R32]] : f32
// CHECK-DAG: %[[HALF:.+]] = arith.constant 8 : index
// CHECK: %[[NEG:.+]] = arith.cmpi ult, %[[J]], %[[HALF]] : index
// CHECK: %[[NSIN:.+]] = arith.negf %[[SIN]] : f32
// CHECK: %[[SSIN:.+]] = arith.select %[[NEG]], %[[NSIN]], %[[SIN]] : f32
// CHECK: %[[COS_SEL:.+]] = arith.select %{{[^ ]+}}, %[[COS]], %{{[^ ]+}} : f32
// CHECK: %[[SIN_SEL:.+]] = arith.select %{{[^ ]+}}, %[[SSIN]], %{{[^ ]+}} : f32
// CHECK: linalg.yield %[[COS_SEL]], %[[SIN_SEL]] : f32, f32
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4x2x16xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 8) mod 16)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[X]], %[[TABLES]]#0, %[[TABLES]]#1 : tensor<2x4x2x16xf32>, tensor<2x4x2x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%[[INIT]] : tensor<2x4x2x16xf32>)
// CHECK: ^bb0(%[[XJ:.+]]: f32, %[[XP:.+]]: f32, %[[CJ:.+]]: f32, %[[SJ:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[A:.+]] = arith.mulf %[[XJ]], %[[CJ]] : f32
// CHECK: %[[B:.+]] = arith.mulf %[[XP]], %[[SJ]] : f32
// CHECK: %[[OUT:.+]] = arith.addf %[[A]], %[[B]] : f32
// The whole head is rotated: no pass-through select.
// CHECK-NOT: arith.select
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK: return %[[R]]
func.func @rope_rotate_half(%x: tensor<2x4x2x16xf32>) -> tensor<2x4x2x16xf32> {
  %0 = transformer.rope %x : tensor<2x4x2x16xf32>
  return %0 : tensor<2x4x2x16xf32>
}

// -----

// interleaved over the whole head (R = D = 8) with a position offset and
// theta = 5e5: frequency index j / 2, even elements take -sin, and the
// partner map pairs 2i with 2i + 1.
// CHECK-LABEL: func.func @rope_interleaved_offset
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x2x8xf32>, %[[OFF:.+]]: index)
// Pairs (2i, 2i+1) share inv_freq = 5e5^(-2i/8).
// CHECK: arith.constant dense<[1.000000e+00, 1.000000e+00, 0.03760603093086{{[0-9]*}}, 0.03760603093086{{[0-9]*}}, 0.0014142135623730{{[0-9]*}}, 0.0014142135623730{{[0-9]*}}, 5.318295896944{{[0-9]*}}E-5, 5.318295896944{{[0-9]*}}E-5]> : tensor<8xf64>
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK-SAME: outs(%{{[^ ]+}}, %{{[^ ]+}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[T:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[POS:.+]] = arith.addi %[[T]], %[[OFF]] : index
// CHECK: math.cos %{{[^ ]+}} : f32
// CHECK: %[[SIN:.+]] = math.sin %{{[^ ]+}} : f32
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: %[[PARITY:.+]] = arith.remui %[[J]], %[[TWO]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi eq, %[[PARITY]], %{{[^ ]+}} : index
// CHECK: %[[NSIN:.+]] = arith.negf %[[SIN]] : f32
// CHECK: arith.select %[[NEG]], %[[NSIN]], %[[SIN]] : f32
// CHECK: linalg.yield
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 - (d3 mod 2) * 2 + 1)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[X]], %[[X]], %[[TABLES]]#0, %[[TABLES]]#1 :
// CHECK-NOT: arith.select
// CHECK: return %[[R]]
func.func @rope_interleaved_offset(%x: tensor<1x4x2x8xf32>, %off: index) -> tensor<1x4x2x8xf32> {
  %0 = transformer.rope %x offset %off {layout = #transformer.rope<interleaved>, theta = 5.0e5 : f64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}

// -----

// Partial rotate_half (R = 8 of D = 16) with dynamic B and T: the partner map
// works modulo R, the table is (cos, sin) = (1, 0) beyond R, and the
// elementwise op passes x[j] through for j >= R with a select on
// linalg.index 3. The table has a dynamic T.
// CHECK-LABEL: func.func @rope_partial_rotate_half
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x2x16xf32>)
// -2 ln(1e4) / 8: the frequencies use R, not D; zero beyond R.
// CHECK: arith.constant dense<[1.000000e+00, 0.099999999999999{{[0-9]*}}, 0.0099999999999999{{[0-9]*}}, 9.99999999999999{{[0-9]*}}E-4, 1.000000e+00, 0.099999999999999{{[0-9]*}}, 0.0099999999999999{{[0-9]*}}, 9.99999999999999{{[0-9]*}}E-4, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<16xf64>
// CHECK: %[[TDIM:.+]] = tensor.dim %[[X]], %{{[^ ]+}} : tensor<?x?x2x16xf32>
// CHECK: %[[COS_INIT:.+]] = tensor.empty(%[[TDIM]]) : tensor<?x16xf32>
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[COS:.+]] = math.cos
// CHECK-DAG: %[[HALF:.+]] = arith.constant 4 : index
// CHECK: arith.cmpi ult, %[[J]], %[[HALF]] : index
// CHECK: %[[SSIN:.+]] = arith.select %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : f32
// CHECK-DAG: %[[R_C:.+]] = arith.constant 8 : index
// CHECK: %[[IN_ROT:.+]] = arith.cmpi ult, %[[J]], %[[R_C]] : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: arith.select %[[IN_ROT]], %[[COS]], %[[ONE]] : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %[[IN_ROT]], %[[SSIN]], %[[ZERO]] : f32
// CHECK: linalg.yield
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 4) mod 8)>
// CHECK-SAME: ins(%[[X]], %[[X]], %[[TABLES]]#0, %[[TABLES]]#1 : tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>)
// CHECK: ^bb0(%[[XJ:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: %[[ROT:.+]] = arith.addf
// CHECK: %[[JJ:.+]] = linalg.index 3 : index
// CHECK: %[[R_C2:.+]] = arith.constant 8 : index
// CHECK: %[[IN_ROT2:.+]] = arith.cmpi ult, %[[JJ]], %[[R_C2]] : index
// CHECK: %[[SEL:.+]] = arith.select %[[IN_ROT2]], %[[ROT]], %[[XJ]] : f32
// CHECK: linalg.yield %[[SEL]] : f32
// CHECK: return %[[R]]
func.func @rope_partial_rotate_half(%x: tensor<?x?x2x16xf32>) -> tensor<?x?x2x16xf32> {
  %0 = transformer.rope %x {rotary_dim = 8 : i64} : tensor<?x?x2x16xf32>
  return %0 : tensor<?x?x2x16xf32>
}

// -----

// Partial interleaved (R = 4 of D = 8): j xor 1 stays within the head for
// even D, and the pass-through select is present.
// CHECK-LABEL: func.func @rope_partial_interleaved
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x2x8xf32>)
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 - (d3 mod 2) * 2 + 1)>
// CHECK: %[[JJ:.+]] = linalg.index 3 : index
// CHECK: %[[R_C:.+]] = arith.constant 4 : index
// CHECK: %[[IN_ROT:.+]] = arith.cmpi ult, %[[JJ]], %[[R_C]] : index
// CHECK: arith.select %[[IN_ROT]]
// CHECK: return %[[R]]
func.func @rope_partial_interleaved(%x: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %0 = transformer.rope %x {layout = #transformer.rope<interleaved>, rotary_dim = 4 : i64} : tensor<1x4x2x8xf32>
  return %0 : tensor<1x4x2x8xf32>
}
