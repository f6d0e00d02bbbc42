// RUN: blockc-opt %s -split-input-file --convert-transformer-to-linalg --mlir-print-local-scope \
// RUN:   | FileCheck %s --implicit-check-not=transformer.

// transformer.rope becomes a [T, D] cos/sin table generic (two outputs, no
// inputs, angles computed in f64 from linalg.index, the rotation sign folded
// into sin, truncated to f32), then one elementwise generic
//   out = x[j] * cos[t, j] + x[partner(j)] * sin[t, j]
// whose partner element is read through an affine map: (j + R/2) mod R for
// rotate_half, j xor 1 (written j - (j mod 2) * 2 + 1) for interleaved.

// rotate_half over the whole head (R = D = 16), no offset, theta = 1e4.
// CHECK-LABEL: func.func @rope_rotate_half
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x2x16xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[COS_INIT:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[SIN_INIT:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: outs(%[[COS_INIT]], %[[SIN_INIT]] : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: %[[T:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// Position = t + offset (0 without the offset operand), as f64.
// CHECK: %[[POS:.+]] = arith.addi %[[T]], %[[C0]] : index
// CHECK: %[[POS_I64:.+]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[POS_F:.+]] = arith.sitofp %[[POS_I64]] : i64 to f64
// Frequency index j mod R/2; the first half takes -sin.
// CHECK-DAG: %[[HALF:.+]] = arith.constant 8 : index
// CHECK: %[[FREQ:.+]] = arith.remui %[[J]], %[[HALF]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi ult, %[[J]], %[[HALF]] : index
// CHECK: %[[FREQ_I64:.+]] = arith.index_cast %[[FREQ]] : index to i64
// CHECK: %[[FREQ_F:.+]] = arith.sitofp %[[FREQ_I64]] : i64 to f64
// inv_freq = exp(i * (-2 ln(theta) / R)) with -2 ln(1e4) / 16.
// CHECK-DAG: %[[LOG_STEP:.+]] = arith.constant -1.151292546497023 : f64
// CHECK: %[[EXPO:.+]] = arith.mulf %[[FREQ_F]], %[[LOG_STEP]] : f64
// CHECK: %[[INV_FREQ:.+]] = math.exp %[[EXPO]] : f64
// CHECK: %[[ANGLE:.+]] = arith.mulf %[[POS_F]], %[[INV_FREQ]] : f64
// CHECK: %[[COS:.+]] = math.cos %[[ANGLE]] : f64
// CHECK: %[[SIN:.+]] = math.sin %[[ANGLE]] : f64
// CHECK: %[[NSIN:.+]] = arith.negf %[[SIN]] : f64
// CHECK: %[[SSIN:.+]] = arith.select %[[NEG]], %[[NSIN]], %[[SIN]] : f64
// CHECK: %[[COS_SEL:.+]] = arith.select %{{[^ ]+}}, %[[COS]], %{{[^ ]+}} : f64
// CHECK: %[[SIN_SEL:.+]] = arith.select %{{[^ ]+}}, %[[SSIN]], %{{[^ ]+}} : f64
// CHECK: %[[COS32:.+]] = arith.truncf %[[COS_SEL]] : f64 to f32
// CHECK: %[[SIN32:.+]] = arith.truncf %[[SIN_SEL]] : f64 to f32
// CHECK: linalg.yield %[[COS32]], %[[SIN32]] : f32, f32
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
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK-SAME: outs(%{{[^ ]+}}, %{{[^ ]+}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[T:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[POS:.+]] = arith.addi %[[T]], %[[OFF]] : index
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: %[[FREQ:.+]] = arith.divui %[[J]], %[[TWO]] : index
// CHECK: %[[PARITY:.+]] = arith.remui %[[J]], %[[TWO]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi eq, %[[PARITY]], %{{[^ ]+}} : index
// -2 ln(5e5) / 8.
// CHECK: arith.constant -3.2805908443510821 : f64
// CHECK: math.exp %{{[^ ]+}} : f64
// CHECK: math.cos %{{[^ ]+}} : f64
// CHECK: %[[SIN:.+]] = math.sin %{{[^ ]+}} : f64
// CHECK: %[[NSIN:.+]] = arith.negf %[[SIN]] : f64
// CHECK: arith.select %[[NEG]], %[[NSIN]], %[[SIN]] : f64
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
// CHECK: %[[TDIM:.+]] = tensor.dim %[[X]], %{{[^ ]+}} : tensor<?x?x2x16xf32>
// CHECK: %[[COS_INIT:.+]] = tensor.empty(%[[TDIM]]) : tensor<?x16xf32>
// CHECK: %[[TABLES:.+]]:2 = linalg.generic
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[HALF:.+]] = arith.constant 4 : index
// CHECK: arith.remui %[[J]], %[[HALF]] : index
// CHECK: arith.cmpi ult, %[[J]], %[[HALF]] : index
// -2 ln(1e4) / 8: the frequencies use R, not D.
// CHECK: arith.constant -2.3025850929940459 : f64
// CHECK: %[[COS:.+]] = math.cos
// CHECK: %[[SSIN:.+]] = arith.select %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : f64
// CHECK-DAG: %[[R_C:.+]] = arith.constant 8 : index
// CHECK: %[[IN_ROT:.+]] = arith.cmpi ult, %[[J]], %[[R_C]] : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: arith.select %[[IN_ROT]], %[[COS]], %[[ONE]] : f64
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK: arith.select %[[IN_ROT]], %[[SSIN]], %[[ZERO]] : f64
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
