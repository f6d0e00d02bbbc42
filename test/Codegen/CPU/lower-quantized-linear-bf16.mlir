// RUN: blockc-opt %s --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true" --blockc-cpu-lower-quantized-linear | FileCheck %s
// RUN: blockc-opt %s --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true amx-bf16=true" --blockc-cpu-lower-quantized-linear | FileCheck %s --check-prefix=TABLES
// RUN: blockc-opt %s --blockc-cpu-select-tiles="isa=avx512 avx512-bf16=true" --blockc-cpu-lower-to-linalg-pipeline="isa=avx512 features=avx512bf16" \
// RUN:   | FileCheck %s --check-prefix=PIPE

// int4 weight-only in a bf16 block (the input is widened from bf16), with
// bf16_dot from blockc-cpu-select-tiles: the decode tiles read the bf16
// input itself, as k pairs (kk + l, kk + 16 + l) of each chunk of 32; each
// chunk's 16 bytes of a weight row are zero-extended to 32-bit lanes,
// vpmaddwd with 0x1001 spreads the high nibble to bit 16, and vpermw
// looks up the exact bf16 values of q = u - 8 (a table of 32 entries: -8
// .. 7 twice); vdpbf16ps sums the products into a group sum that the
// group's scale multiplies into the accumulator once per group.
// CHECK-LABEL: func.func @int4_bf16
// CHECK: } else {
// CHECK: %[[TAB:.*]] = arith.constant dense<[-16128, -16160, {{.*}}, 16576, 16608]> : vector<32xi16>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// CHECK: %[[ROW:.*]] = vector.transfer_read %arg0[{{.*}} : tensor<2x3x64xbf16>, vector<32xbf16>
// CHECK: %[[XP:.*]] = vector.shuffle %[[ROW]], %[[ROW]] [0, 16, 1, 17, {{.*}}, 15, 31] : vector<32xbf16>, vector<32xbf16>
// CHECK: memref.prefetch
// CHECK: %[[U:.*]] = arith.extui %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK: %[[UW:.*]] = vector.bitcast %[[U]] : vector<16xi32> to vector<32xi16>
// CHECK: %[[SPREAD:.*]] = llvm.call_intrinsic "llvm.x86.avx512.pmaddw.d.512"(%[[UW]], %{{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// CHECK: %[[IDX:.*]] = vector.bitcast %[[SPREAD]] : vector<16xi32> to vector<32xi16>
// CHECK: %[[Q:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"(%[[TAB]], %[[IDX]])
// CHECK: %[[QB:.*]] = vector.bitcast %[[Q]] : vector<32xi16> to vector<32xbf16>
// CHECK: %[[SUM:.*]] = x86vector.avx512.dot %{{.*}}, %[[XP]], %[[QB]] : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[S:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK: vector.fma %[[SUM]], %[[SV]]
// CHECK-NOT: permvar.sf
// CHECK: vector.reduction <add>
// With amx_bf16 too, select-tiles leaves bf16_dot out: the f32 tables.
// TABLES-LABEL: func.func @int4_bf16
// TABLES-NOT: x86vector.avx512.dot
// TABLES: llvm.x86.avx512.permvar.sf.512
// TABLES-NOT: x86vector.avx512.dot
// TABLES: return
// Through the whole CPU pipeline the kernel keeps its dots.
// PIPE-LABEL: func.func @int4_bf16
// PIPE: x86vector.avx512.dot
func.func @int4_bf16(%x: tensor<2x3x64xbf16>, %w: tensor<40x64xbf16>) -> tensor<2x3x40xf32> {
  %xf = arith.extf %x : tensor<2x3x64xbf16> to tensor<2x3x64xf32>
  %0 = transformer.linear %xf, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x3x64xf32>, tensor<40x64xbf16> -> tensor<2x3x40xf32>
  return %0 : tensor<2x3x40xf32>
}
