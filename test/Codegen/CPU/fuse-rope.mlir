// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2 prepare-weights=1" --blockc-cpu-lower-linear --blockc-cpu-fuse-rope | FileCheck %s --implicit-check-not="vector<16xf32>"
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512 prepare-weights=1" --blockc-cpu-lower-linear --blockc-cpu-fuse-rope | FileCheck %s --check-prefix=AVX512

// Half layout (Llama), D = 16, R/2 = 8 = V (AVX2): select-tiles asks for
// blocks of whole heads (block_align = D), the kernel records that it kept
// it, the cos/sin tables are built once before the kernel, and each block
// ends by rotating the vector at j0 < R/2 with its partner at j0 + R/2:
// lo' = lo * cos[j0] + hi * sin[j0], hi' = hi * cos[j0+8] + lo * sin[j0+8]
// (the sin table carries the sign). The rope is gone: its users read the
// kernel's result through the expand_shape.
// CHECK-LABEL: func.func @half
// CHECK:       linalg.generic
// CHECK:       math.cos
// CHECK:       math.sin
// CHECK:       linalg.yield
// CHECK:       %[[Y:.+]] = scf.forall
// CHECK:       scf.for %[[B:.+]] = %c0{{.*}} to
// CHECK:       scf.for %[[T:.+]] = %c0{{.*}} to
// CHECK:       scf.for %[[H:.+]] = %c0{{.*}} to %{{.+}} step %c16
// CHECK:       scf.for %[[J:.+]] = %c0{{.*}} to %c8{{.*}} step %c8
// CHECK:       %[[JH:.+]] = arith.addi %[[J]], %c8
// CHECK:       %[[LO:.+]] = vector.transfer_read %{{.+}}[%[[B]], %[[T]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x?x?xf32>, vector<8xf32>
// CHECK:       %[[HI:.+]] = vector.transfer_read %{{.+}}[%[[B]], %[[T]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x?x?xf32>, vector<8xf32>
// CHECK:       %[[C:.+]] = vector.transfer_read %{{.+}}[%[[T]], %[[J]]]
// CHECK:       %[[S:.+]] = vector.transfer_read %{{.+}}[%[[T]], %[[J]]]
// CHECK:       %[[A:.+]] = arith.mulf %[[LO]], %[[C]] : vector<8xf32>
// CHECK:       %[[P:.+]] = arith.mulf %[[HI]], %[[S]] : vector<8xf32>
// CHECK:       %[[NLO:.+]] = arith.addf %[[A]], %[[P]] : vector<8xf32>
// CHECK:       %[[C2:.+]] = vector.transfer_read %{{.+}}[%[[T]], %[[JH]]]
// CHECK:       %[[S2:.+]] = vector.transfer_read %{{.+}}[%[[T]], %[[JH]]]
// CHECK:       %[[A2:.+]] = arith.mulf %[[HI]], %[[C2]] : vector<8xf32>
// CHECK:       %[[P2:.+]] = arith.mulf %[[LO]], %[[S2]] : vector<8xf32>
// CHECK:       %[[NHI:.+]] = arith.addf %[[A2]], %[[P2]] : vector<8xf32>
// CHECK:       vector.transfer_write %[[NLO]]
// CHECK:       vector.transfer_write %[[NHI]]
// CHECK:       tensor.parallel_insert_slice
// CHECK:       block_align = 16>}
// CHECK-NOT:   transformer.rope
// CHECK:       %[[E:.+]] = tensor.expand_shape %[[Y]]
// CHECK:       return %[[E]]
// With AVX-512 (V = 16) R/2 = 8 is not a whole vector: not fused.
// AVX512-LABEL: func.func @half
// AVX512:       transformer.rope
func.func @half(%x: tensor<?x?x32xf32>, %w: tensor<32x32xf32>) -> tensor<?x?x2x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y = transformer.linear %x, %w : tensor<?x?x32xf32>, tensor<32x32xf32> -> tensor<?x?x32xf32>
  %b = tensor.dim %y, %c0 : tensor<?x?x32xf32>
  %t = tensor.dim %y, %c1 : tensor<?x?x32xf32>
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [%b, %t, 2, 16] : tensor<?x?x32xf32> into tensor<?x?x2x16xf32>
  %r = transformer.rope %h : tensor<?x?x2x16xf32>
  return %r : tensor<?x?x2x16xf32>
}

// -----

// Interleaved layout (GPT-J), D = R = 32: each vector is rotated with the
// vector of its pairs swapped. AVX-512 (V = 16, R = 32) fuses too. The
// position offset (decode) reaches the tables.
// CHECK-LABEL: func.func @interleaved
// CHECK-SAME:  %[[POS:[^:]+]]: index
// CHECK:       linalg.generic
// CHECK:       arith.addi %{{.+}}, %[[POS]] : index
// CHECK:       scf.forall
// CHECK:       scf.for %{{.+}} = %c0{{.*}} to %c32{{.*}} step %c8
// CHECK:       %[[X:.+]] = vector.transfer_read
// CHECK:       vector.shuffle %[[X]], %[[X]] [1, 0, 3, 2, 5, 4, 7, 6] : vector<8xf32>, vector<8xf32>
// CHECK-NOT:   transformer.rope
// AVX512-LABEL: func.func @interleaved
// AVX512:       vector.shuffle %{{.+}}, %{{.+}} [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14] : vector<16xf32>, vector<16xf32>
// AVX512-NOT:   transformer.rope
func.func @interleaved(%x: tensor<1x?x64xf32>, %w: tensor<64x64xf32>, %pos: index) -> tensor<1x?x2x32xf32> {
  %c1 = arith.constant 1 : index
  %y = transformer.linear %x, %w : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  %t = tensor.dim %y, %c1 : tensor<1x?x64xf32>
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [1, %t, 2, 32] : tensor<1x?x64xf32> into tensor<1x?x2x32xf32>
  %r = transformer.rope %h offset %pos {layout = #transformer.rope<interleaved>} : tensor<1x?x2x32xf32>
  return %r : tensor<1x?x2x32xf32>
}

// -----

// Partial rotary dim (R = 16 of D = 32, NeoX / Phi): only j0 < R/2 = 8 is
// rotated (with j0 + 8); elements from R on are left as they are.
// CHECK-LABEL: func.func @partial
// CHECK:       scf.forall
// CHECK:       scf.for %{{.+}} = %c0{{.*}} to %{{.+}} step %c32
// CHECK:       scf.for %[[J:.+]] = %c0{{.*}} to %c8{{.*}} step %c8
// CHECK:       arith.addi %[[J]], %c8
// CHECK-NOT:   transformer.rope
// AVX512-LABEL: func.func @partial
// AVX512:       transformer.rope
func.func @partial(%x: tensor<1x4x64xf32>, %w: tensor<64x64xf32>) -> tensor<1x4x2x32xf32> {
  %y = transformer.linear %x, %w : tensor<1x4x64xf32>, tensor<64x64xf32> -> tensor<1x4x64xf32>
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [1, 4, 2, 32] : tensor<1x4x64xf32> into tensor<1x4x2x32xf32>
  %r = transformer.rope %h {rotary_dim = 16 : i64} : tensor<1x4x2x32xf32>
  return %r : tensor<1x4x2x32xf32>
}

// -----

// Not fused: a weight that is not an entry argument is not prepared (no
// block alignment: blocks of the stored-weight kernels may split a head);
// a head dim whose half is not a whole vector (D = 12); a kernel result
// with another use.
// CHECK-LABEL: func.func @not_prepared
// CHECK:       transformer.rope
// CHECK-LABEL: func.func @odd_half
// CHECK:       transformer.rope
// CHECK-LABEL: func.func @other_use
// CHECK:       transformer.rope
func.func @not_prepared(%x: tensor<1x4x32xf32>) -> tensor<1x4x2x16xf32> {
  %w = arith.constant dense<1.0> : tensor<32x32xf32>
  %y = transformer.linear %x, %w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [1, 4, 2, 16] : tensor<1x4x32xf32> into tensor<1x4x2x16xf32>
  %r = transformer.rope %h : tensor<1x4x2x16xf32>
  return %r : tensor<1x4x2x16xf32>
}
func.func @odd_half(%x: tensor<1x4x32xf32>, %w: tensor<24x32xf32>) -> tensor<1x4x2x12xf32> {
  %y = transformer.linear %x, %w : tensor<1x4x32xf32>, tensor<24x32xf32> -> tensor<1x4x24xf32>
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [1, 4, 2, 12] : tensor<1x4x24xf32> into tensor<1x4x2x12xf32>
  %r = transformer.rope %h : tensor<1x4x2x12xf32>
  return %r : tensor<1x4x2x12xf32>
}
func.func @other_use(%x: tensor<1x4x32xf32>, %w: tensor<32x32xf32>) -> (tensor<1x4x2x16xf32>, tensor<1x4x32xf32>) {
  %y = transformer.linear %x, %w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
  %h = tensor.expand_shape %y [[0], [1], [2, 3]] output_shape [1, 4, 2, 16] : tensor<1x4x32xf32> into tensor<1x4x2x16xf32>
  %r = transformer.rope %h : tensor<1x4x2x16xf32>
  return %r, %y : tensor<1x4x2x16xf32>, tensor<1x4x32xf32>
}

// -----

// Q and K as one horizontal group: one kernel, both ropes fused, and the
// cos/sin tables built once for both.
// CHECK-LABEL: func.func @shared_tables
// CHECK:       math.cos
// CHECK-NOT:   math.cos
// CHECK:       scf.forall
// CHECK-NOT:   math.cos
// CHECK-NOT:   transformer.rope
// CHECK:       return
func.func @shared_tables(%x: tensor<1x?x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>) {
  %c1 = arith.constant 1 : index
  %q = transformer.linear %x, %wq {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %k = transformer.linear %x, %wk {blockc_codegen.horizontal_group = #blockc_codegen.horizontal_group<0>} : tensor<1x?x32xf32>, tensor<32x32xf32> -> tensor<1x?x32xf32>
  %t = tensor.dim %x, %c1 : tensor<1x?x32xf32>
  %qh = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, %t, 2, 16] : tensor<1x?x32xf32> into tensor<1x?x2x16xf32>
  %kh = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, %t, 2, 16] : tensor<1x?x32xf32> into tensor<1x?x2x16xf32>
  %qr = transformer.rope %qh : tensor<1x?x2x16xf32>
  %kr = transformer.rope %kh : tensor<1x?x2x16xf32>
  return %qr, %kr : tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>
}
