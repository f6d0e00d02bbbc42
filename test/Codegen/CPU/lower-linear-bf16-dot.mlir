// RUN: blockc-opt %s -split-input-file --blockc-cpu-lower-linear | FileCheck %s

// linear_tiles bf16_dot: the kernels read the bf16 tensor that the input
// widens (the f32 widening is left unused) and multiply bf16 pairs with
// x86vector.avx512.dot (vdpbf16ps), 2V = 32 k per step.

// The dot-product kernel (T < pack_min_rows): 32 bf16 of an input row and
// of each weight row per step, one dot per accumulator, K = 64 in two
// steps.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x64xbf16>, %[[W:.*]]: tensor<40x64xbf16>)
// CHECK: scf.forall
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[XV:.*]] = vector.transfer_read %[[X]]{{.*}} : tensor<1x3x64xbf16>, vector<32xbf16>
// CHECK: %[[WV:.*]] = vector.transfer_read %[[W]]{{.*}} : tensor<40x64xbf16>, vector<32xbf16>
// CHECK-COUNT-8: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: linear_tiles<{{.*}}bf16_dot = true>
func.func @dot(%x: tensor<1x3x64xbf16>, %w: tensor<40x64xbf16>) -> tensor<1x3x40xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x3x64xbf16> to tensor<1x3x64xf32>
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 64, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x3x64xf32>, tensor<40x64xbf16> -> tensor<1x3x40xf32>
  return %y : tensor<1x3x40xf32>
}

// -----

// The packed kernel (T >= pack_min_rows), K = 50 (odd pairs past K are
// zeros): a bf16 panel of ceil(50 / 32) * 16 = 32 k pairs x 32 columns,
// row p holding the pairs of every column in turn, packed from 32-element
// weight reads (masked past K) through 16 x 16 in-register transposes of
// their 32-bit words; per pair, 2 panel vectors and 8 broadcast input
// pairs, 16 dots.
// CHECK-LABEL: func.func @packed
// CHECK-SAME: (%[[X:.*]]: tensor<1x64x50xbf16>, %[[W:.*]]: tensor<40x50xbf16>)
// CHECK: tensor.empty() : tensor<32x64xbf16>
// CHECK: %[[R:.*]] = vector.transfer_read %[[W]]{{.*}} : tensor<40x50xbf16>, vector<32xbf16>
// CHECK: vector.bitcast %[[R]] : vector<32xbf16> to vector<16xf32>
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK: vector.bitcast %{{.*}} : vector<16xf32> to vector<32xbf16>
// CHECK: vector.transfer_write %{{.*}} : vector<32xbf16>, tensor<32x64xbf16>
// CHECK: %[[PB:.*]] = vector.transfer_read %{{.*}} : tensor<32x64xbf16>, vector<32xbf16>
// CHECK: %[[PAIR:.*]] = vector.transfer_read %[[X]]{{.*}}{in_bounds = [true]} : tensor<1x64x50xbf16>, vector<2xbf16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xf32>
// CHECK: %[[B:.*]] = vector.broadcast %[[WORD]] : vector<1xf32> to vector<16xf32>
// CHECK: %[[BX:.*]] = vector.bitcast %[[B]] : vector<16xf32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[BX]], %[[PB]] : vector<32xbf16> -> vector<16xf32>
func.func @packed(%x: tensor<1x64x50xbf16>, %w: tensor<40x50xbf16>) -> tensor<1x64x40xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %xf = arith.extf %x : tensor<1x64x50xbf16> to tensor<1x64x50xf32>
  %y = transformer.linear %xf, %w {blockc_codegen.linear_tiles = #blockc_codegen.linear_tiles<rows = 4, cols = 4, block_n = 32, block_k = 64, pack_rows = 8, pack_cols = 2, panel_k = 256, panel_n = 32, pack_min_rows = 32, bf16_dot = true>} : tensor<1x64x50xf32>, tensor<40x50xbf16> -> tensor<1x64x40xf32>
  return %y : tensor<1x64x40xf32>
}
