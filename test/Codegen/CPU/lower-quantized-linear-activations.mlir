// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-quantized-linear | FileCheck %s
// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx2 avx-vnni=true" --blockc-cpu-lower-quantized-linear | FileCheck %s --check-prefix=VNNI
// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx512 avx512-vnni=true" --blockc-cpu-lower-quantized-linear | FileCheck %s --check-prefix=VNNI
// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=sse" --blockc-cpu-lower-quantized-linear | FileCheck %s --check-prefix=SSE

// activations = int8 (#transformer.weight_quant): the input is quantised
// once per call, before the kernel (the maxima of its runs of 32 columns,
// then q_x = clamp(rint(x / s_x), -127, 127) as i8, and the runs' scales
// s_x = max / 127, divided there once: no division is left in the kernel).
// With int8 weights select-tiles writes act_panel_min_rows = 0: the kernel
// takes register tiles for any row count (no widened panel; int4 and
// @act_panels_pinned below test the row count first). On AVX2 without VNNI
// (this RUN line) it writes row_lanes: the int8 weight is prepared with 8
// rows in the 8 lanes (interleave 8: [5, 8 x (16 value words + 1 scale)]),
// q_x and |q_x| are laid out as words once per call, and per run of 32 k
// the tile reads 8 x 8 words (4 k of 8 rows each); per read and input row
// q_w takes q_x's sign (vpsignb against the q_x word broadcast),
// vpmaddubsw multiplies it by the |q_x| word broadcast, vpmaddwd with ones
// adds the pairs into each row's i32 lane; per run the exact sums are
// converted and times s_x added into the accumulators, and the rows'
// scales (one vector) multiply them once at the end. The 8 lanes are 8
// output columns: no horizontal sum.
// CHECK-LABEL: func.func @int8
// CHECK: %[[P:.*]] = linalg.generic {{.*}} attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 40, cols = 64, bits = 8, group_size = 64, interleave = 8, row_lanes = true>}
// CHECK: } -> tensor<5x136xi32>
// CHECK: tensor.expand_shape %{{.*}} : tensor<2x?x64xf32> into tensor<2x?x2x32xf32>
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x?x2x32xf32>) outs(%{{.*}} : tensor<2x?x2xf32>)
// CHECK: %[[QX:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[AMAX]] : tensor<2x?x64xf32>, tensor<2x?x2xf32>)
// CHECK: math.roundeven
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: } -> tensor<2x?x64xi8>
// CHECK: %[[SX:.*]] = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<2x?x2xf32>) outs(%{{.*}} : tensor<2x?x2xf32>)
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: %[[WORDS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x?x16xi32>)
// CHECK-NOT: math.absi
// CHECK: } -> tensor<2x?x16xi32>
// CHECK: %[[ABS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x?x16xi32>)
// CHECK-COUNT-4: math.absi %{{.*}} : i8
// CHECK: } -> tensor<2x?x16xi32>
// CHECK: scf.forall
// CHECK-NOT: arith.divf
// CHECK-NOT: scf.if
// CHECK-NOT: memref.alloca
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// CHECK: memref.prefetch
// CHECK: %[[XW:.*]] = tensor.extract %[[WORDS]]
// CHECK: %[[XB:.*]] = vector.broadcast %[[XW]] : i32 to vector<8xi32>
// CHECK: %[[X:.*]] = vector.bitcast %[[XB]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[XUW:.*]] = tensor.extract %[[ABS]]
// CHECK: %[[XUB:.*]] = vector.broadcast %[[XUW]] : i32 to vector<8xi32>
// CHECK: %[[XU:.*]] = vector.bitcast %[[XUB]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[WW:.*]] = vector.transfer_read %[[P]]{{.*}} : tensor<5x136xi32>, vector<8xi32>
// CHECK: %[[W:.*]] = vector.bitcast %[[WW]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[SW:.*]] = llvm.call_intrinsic "llvm.x86.avx2.psign.b"(%[[W]], %[[X]])
// CHECK: %[[PAIRS:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[XU]], %[[SW]]) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[PAIRS]], %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: arith.addi %{{.*}}, %[[D]] : vector<8xi32>
// CHECK-COUNT-31: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: tensor.extract %[[SX]]
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma %[[F]]
// CHECK: scf.yield
// CHECK: %[[SWB:.*]] = vector.transfer_read %[[P]][%{{.*}}, %c128{{.*}}]{{.*}} : tensor<5x136xi32>, vector<8xi32>
// CHECK: %[[SWF:.*]] = vector.bitcast %[[SWB]] : vector<8xi32> to vector<8xf32>
// CHECK: arith.mulf %{{.*}}, %[[SWF]] : vector<8xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.transfer_write
// CHECK: return
// VNNI-LABEL: func.func @int8
// VNNI: blockc_codegen.quantized_weight<rows = 40, cols = 64, bits = 8, group_size = 64>
// VNNI-NOT: pmadd
// VNNI: llvm.call_intrinsic "llvm.x86.avx2.psign.b"
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// VNNI-NOT: pmadd
// VNNI: return
// An SSE target has no byte products: the projection stays for
// convert-weight-quant-to-linalg.
// SSE-LABEL: func.func @int8
// SSE: transformer.linear {{.*}}weight_quant = #transformer.weight_quant<int8, activations = int8>
func.func @int8(%x: tensor<2x?x64xf32>, %w: tensor<40x64xf32>) -> tensor<2x?x40xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>} : tensor<2x?x64xf32>, tensor<40x64xf32> -> tensor<2x?x40xf32>
  return %0 : tensor<2x?x40xf32>
}

// -----

// int8 with the tiles given by hand without row_lanes (VNNI's and AVX-512's
// schedule): the k-in-lanes integer tiles, per run of 32 k 32 bytes of q_x
// and of each weight row (interleave 1), the exact integer dot product in 8
// i32 lanes, converted and times s_x added; |q_x| (unsigned) against q_w
// carrying q_x's sign (vpsignb), on vpmaddubsw + vpmaddwd; the row scale
// multiplies the reduced sum. The kernel prefetches the same words of the
// weight row four tiles further (through a read-only memref of the
// prepared words).
// CHECK-LABEL: func.func @int8_k_in_lanes
// CHECK: %[[P:.*]] = linalg.generic {{.*}} attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 40, cols = 64, bits = 8, group_size = 64>}
// CHECK: %[[QX:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x?x64xf32>, tensor<2x?x2xf32>)
// CHECK: %[[PBUF:.*]] = bufferization.to_buffer %[[P]] read_only : tensor<40x17xi32> to memref<40x17xi32>
// CHECK: scf.forall
// CHECK-NOT: arith.divf
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// CHECK: %[[X:.*]] = vector.transfer_read %[[QX]]{{.*}} : tensor<2x?x64xi8>, vector<32xi8>
// CHECK: %[[XU:.*]] = math.absi %[[X]] : vector<32xi8>
// The row four tiles further (at most the last row, 39) is prefetched, at
// the same word, into L2.
// CHECK: %[[AHEAD:.*]] = arith.minui %{{.*}}, %c39{{.*}} : index
// CHECK: memref.prefetch %[[PBUF]][%[[AHEAD]], %{{.*}}], read, locality<2>, data : memref<40x17xi32>
// CHECK: %[[W:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<32xi8>
// CHECK: %[[SW:.*]] = llvm.call_intrinsic "llvm.x86.avx2.psign.b"(%[[W]], %[[X]])
// CHECK: %[[PAIRS:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[XU]], %[[SW]]) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[PAIRS]], %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: %[[F:.*]] = arith.sitofp %[[D]] : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma %[[F]]
// CHECK: vector.reduction <add>
// CHECK: arith.mulf
func.func @int8_k_in_lanes(%x: tensor<2x?x64xf32>, %w: tensor<40x64xf32>) -> tensor<2x?x40xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 4>} : tensor<2x?x64xf32>, tensor<40x64xf32> -> tensor<2x?x40xf32>
  return %0 : tensor<2x?x40xf32>
}

// -----

// int4 on AVX2 without VNNI (this RUN line), select-tiles writes row_lanes
// (8 rows per vector, the weight-only int4 layout). Before the kernel, once
// per call:
// q_x as words in the nibbles' order (word 2m + h holds q_x[8m + 2i + h]
// in byte i) and -8 x each run's sum of q_x. Per run of 32 k and tile of 8
// rows: 4 reads of 8 words; the bytes masked 0x0F0F0F0F (k even) and,
// shifted by 4, masked again (k odd) are vpmaddubsw'd against the q_x word
// broadcast and summed in i16; one vpmaddwd with ones per run; converted,
// plus the offset, times the 8 rows' group scales (one vector) and s_x.
// The 8 lanes are 8 output columns: no horizontal sum. These tiles serve
// every row count (act_panel_min_rows = 0: no f32 panels, no row-count
// test).
// CHECK-LABEL: func.func @int4
// CHECK-NOT: scf.if
// CHECK: %[[QX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x?x128xi8>)
// CHECK: %[[WORDS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x?x32xi32>)
// CHECK-COUNT-4: tensor.extract %[[QX]]
// CHECK: } -> tensor<1x?x32xi32>
// CHECK: %[[OFFSETS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x?x4x32xi8>) outs(%{{.*}} : tensor<1x?x4xf32>)
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: scf.forall
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c128{{.*}} step %c32
// CHECK: memref.prefetch
// CHECK: %[[XW:.*]] = tensor.extract %[[WORDS]]
// CHECK: %[[XB:.*]] = vector.broadcast %[[XW]] : i32 to vector<8xi32>
// CHECK: %[[X:.*]] = vector.bitcast %[[XB]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[W:.*]] = vector.transfer_read {{.*}} : tensor<8x144xi32>, vector<8xi32>
// CHECK: %[[LO:.*]] = arith.andi %[[W]], %[[MASK:.*]] : vector<8xi32>
// CHECK: %[[LOB:.*]] = vector.bitcast %[[LO]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[SH:.*]] = arith.shrui %[[W]]
// CHECK: arith.andi %[[SH]], %[[MASK]] : vector<8xi32>
// CHECK: %[[P:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[LOB]], %[[X]]) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK: arith.addi %{{.*}}, %[[P]] : vector<16xi16>
// CHECK-NOT: pmadd.wd
// CHECK-COUNT-7: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// CHECK: %[[OFF:.*]] = tensor.extract %[[OFFSETS]]
// CHECK: %[[SW:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: %[[F:.*]] = arith.sitofp %[[D]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[FO:.*]] = arith.addf %[[F]], %{{.*}} : vector<8xf32>
// CHECK: %[[FS:.*]] = arith.mulf %[[FO]], %[[SW]] : vector<8xf32>
// CHECK: vector.fma %[[FS]]
// CHECK-NOT: vector.reduction
// CHECK: vector.transfer_write
// CHECK: return
// VNNI-LABEL: func.func @int4
// VNNI: %[[X:.*]] = vector.transfer_read {{.*}} : tensor<1x?x128xi8>, vector<32xi8>
// VNNI: arith.constant dense<[1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 6.250000e-02, 6.250000e-02, 6.250000e-02, 6.250000e-02]> : vector<8xf32>
// VNNI: %[[E:.*]] = arith.constant dense<[8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128]> : vector<32xi8>
// VNNI: %[[C:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.*}}, %[[E]], %[[X]])
// VNNI: %[[OFF:.*]] = arith.subi %{{.*}}, %[[C]] : vector<8xi32>
// VNNI: %[[BOTH:.*]] = vector.shuffle %[[B:.*]], %[[B]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// VNNI: %[[MASK:.*]] = arith.constant dense<[15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16]> : vector<32xi8>
// VNNI: %[[U:.*]] = arith.andi %[[BOTH]], %[[MASK]] : vector<32xi8>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%[[OFF]], %[[U]], %[[X]])
// VNNI-NOT: pmadd
// VNNI: return
func.func @int4(%x: tensor<1x?x128xf32>, %w: tensor<64x128xf32>) -> tensor<1x?x64xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 64, activations = int8>} : tensor<1x?x128xf32>, tensor<64x128xf32> -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

// int4 with the rows interleaved but not in lanes (by hand; VNNI's and
// AVX-512's schedule): the k-in-lanes integer tiles. The chunk's 16 bytes
// of nibble pairs (low: k 0..15, high 16..31); the nibbles u = q_w + 8 are
// the unsigned operand and q_x the signed one, plus the offset -8 x q_x's
// lane sums (per row and run); the group's scale, broadcast, times the
// converted sum, times s_x. AVX2 shifts the high nibbles down. VNNI reads
// the 16 bytes into both halves and masks them with 0x0F / 0xF0, so that
// lanes 4..7 hold 16 x their sums: their offset is -128 x q_x's lane sums
// (the dot product's accumulator) and their s_x is divided by 16.
// CHECK-LABEL: func.func @int4_k_in_lanes
// CHECK: scf.forall
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c128{{.*}} step %c32
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : tensor<1x?x128xi8>, vector<32xi8>
// CHECK: %[[M:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%{{.*}}, %[[X]])
// CHECK: %[[COMP:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[M]], %{{.*}})
// CHECK: %[[OFF:.*]] = arith.subi %{{.*}}, %[[COMP]] : vector<8xi32>
// CHECK: %[[B:.*]] = vector.bitcast %{{.*}} : vector<4xi32> to vector<16xi8>
// CHECK: %[[LO:.*]] = arith.andi %[[B]]
// CHECK: %[[HI:.*]] = arith.shrui %[[B]]
// CHECK: %[[U:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xi8>, vector<16xi8>
// CHECK: %[[SWBITS:.*]] = tensor.extract
// CHECK: %[[SW:.*]] = arith.bitcast %[[SWBITS]] : i32 to f32
// CHECK: %[[SWV:.*]] = vector.broadcast %[[SW]] : f32 to vector<8xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[U]], %[[X]])
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: %[[DO:.*]] = arith.addi %[[D]], %[[OFF]] : vector<8xi32>
// CHECK: %[[F:.*]] = arith.sitofp %[[DO]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[FS:.*]] = arith.mulf %[[F]], %[[SWV]] : vector<8xf32>
// CHECK: vector.fma %[[FS]]
// CHECK: vector.reduction <add>
func.func @int4_k_in_lanes(%x: tensor<1x?x128xf32>, %w: tensor<64x128xf32>) -> tensor<1x?x64xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 64, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 6, panel_min_rows = 16, prefetch_tiles = 4, interleave = 8>} : tensor<1x?x128xf32>, tensor<64x128xf32> -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

// act_panel_min_rows given by hand (select-tiles keeps it): 4 here, so the
// row count is tested against 4 before the two scf.foralls (panels with
// their 256 x 32 buffer, then the integer tiles); 0 keeps the integer tiles
// for every row count, one scf.forall and no test of the row count.
// CHECK-LABEL: func.func @act_panels_pinned
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %{{.*}}, %c4 : index
// CHECK: scf.if %[[MANY]] -> (tensor<1x?x40xf32>) {
// CHECK: arith.mulf
// CHECK: } -> tensor<1x?x64xf32>
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<256x32xf32>
// CHECK: } else {
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK-NOT: memref.alloca
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// CHECK: return
// CHECK-LABEL: func.func @act_panels_off
// CHECK-NOT: scf.if
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK-NOT: scf.if
// CHECK: scf.forall
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @act_panels_pinned(%x: tensor<1x?x64xf32>, %w: tensor<40x64xf32>) -> tensor<1x?x40xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 2, block_n = 32, panel_k = 256, panel_rows = 3, panel_min_rows = 8, prefetch_tiles = 0, act_panel_min_rows = 4>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  return %0 : tensor<1x?x40xf32>
}
func.func @act_panels_off(%x: tensor<1x?x64xf32>, %w: tensor<40x64xf32>) -> tensor<1x?x40xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 2, block_n = 32, panel_k = 256, panel_rows = 3, panel_min_rows = 8, prefetch_tiles = 0, act_panel_min_rows = 0>} : tensor<1x?x64xf32>, tensor<40x64xf32> -> tensor<1x?x40xf32>
  return %0 : tensor<1x?x40xf32>
}
