// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-quantized-linear | FileCheck %s
// RUN: blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-quantized-linear | FileCheck %s --check-prefix=AVX512
// RUN: not blockc-opt %s --split-input-file --blockc-cpu-lower-quantized-linear 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not blockc-opt %s --split-input-file --blockc-cpu-select-tiles="isa=avx2 vector-width=2" --blockc-cpu-lower-quantized-linear 2>&1 | FileCheck %s --check-prefix=WIDTH

// int8, K = 44: the prepared weight is [6, 12 + 1] words (44 bytes padded
// to 48, then the row scale). From 16 rows (B x T) on, each panel of the
// block's weights is widened once into an f32 buffer [1024, 32]
// (transposed in registers, 8 x 8 blocks) that an outer-product
// micro-kernel (x broadcasts times 2 buffer vectors) reads for every row.
// Fewer rows read 8 bytes (AVX2) or 16 (AVX-512) per step, sign-extend and
// convert them in registers, and the last step (k = 40) reads x masked;
// the row scale multiplies the reduced sum, then the bias is added.
// CHECK-LABEL: func.func @int8
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<6x13xi32>) attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 6, cols = 44, bits = 8, group_size = 44>}
// CHECK: math.roundeven
// CHECK: arith.fptosi
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: scf.forall
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %{{.*}}, %c16 : index
// CHECK: scf.if %[[MANY]]
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1024x32xf32>
// CHECK-NOT: memref.alloca
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// CHECK: vector.store %{{.*}}, %[[BUF]]
// CHECK: %[[W0:.*]] = vector.load %[[BUF]]
// CHECK: %[[W1:.*]] = vector.load %[[BUF]]
// CHECK: %[[XB:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: vector.fma %[[XB]], %[[W0]]
// CHECK: vector.fma %[[XB]], %[[W1]]
// CHECK: } else {
// CHECK: vector.transfer_read %[[P]]{{.*}} : tensor<6x13xi32>, vector<2xi32>
// CHECK: vector.bitcast %{{.*}} : vector<2xi32> to vector<8xi8>
// CHECK: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}, %c40{{.*}}], %{{[^ ]*}} : tensor<1x?x44xf32>, vector<8xf32>{{$}}
// CHECK: vector.reduction <add>
// CHECK: %[[S:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.mulf %{{.*}}, %[[S]] : f32
// CHECK: arith.addf
// CHECK: {blockc_codegen.kernel = #blockc_codegen.kernel<quantized_linear>}
// CHECK-NOT: transformer.linear
// AVX512-LABEL: func.func @int8
// AVX512: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}], read, locality<2>, data : memref<6x13xi32>
// AVX512: vector.bitcast %{{.*}} : vector<4xi32> to vector<16xi8>
// AVX512: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
func.func @int8(%x: tensor<1x?x44xf32>, %w: tensor<6x44xf32>, %b: tensor<6xf32>) -> tensor<1x?x6xf32> {
  %0 = transformer.linear %x, %w bias %b {weight_quant = #transformer.weight_quant<int8>} : tensor<1x?x44xf32>, tensor<6x44xf32>, tensor<6xf32> -> tensor<1x?x6xf32>
  return %0 : tensor<1x?x6xf32>
}

// -----

// int4 in groups of 32, K = 64: 8 + 2 words a row (two nibbles a byte,
// then the two group scales). With AVX2 (8 lanes) select-tiles puts a
// tile's 8 rows in the vector lanes (row_lanes, interleave 8): [5, 8 x 10]
// words, per group the 4 runs of 8 k as 8 words each (word r: row r's 8
// nibbles), then the 8 scales. Before the kernel, once per call: the input
// scaled by 16^-(k % 8) (1 for k % 8 = 7; an exponent built in the bits)
// and the groups' sums of x times -8. The prefill path stores each run's
// 8 nibbles (shifted, masked, less 8, converted, times the scales)
// straight into the panel [1024, 64]; the few-rows path reads 8 words per
// tile and run, masks nibble j in place (u 16^j; nibble 7 shifted down),
// converts it and multiply-adds it with the scaled x[k] broadcast into the
// group's sums, which start from -8 times the group's sum of x, and
// scales the 8 rows' sums by their 8 scales once per group; 2 input rows
// x 2 tiles here, the rows written as vectors.
// CHECK-LABEL: func.func @int4
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x80xi32>) attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 40, cols = 64, bits = 4, group_size = 32, interleave = 8, row_lanes = true>}
// CHECK-COUNT-8: arith.shli
// CHECK: %[[P:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<5x80xi32> to memref<5x80xi32>
// CHECK: %[[XL:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3x64xf32>)
// CHECK: arith.remui %{{.*}}, %c8
// CHECK: arith.shli %{{.*}}, %c23
// CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.mulf %{{.*}}, %[[F]] : f32
// CHECK: %[[XG:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3x2x32xf32>) outs(%{{.*}} : tensor<2x3x2xf32>)
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.addf
// CHECK: scf.forall (%{{.*}}) in (1)
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<1024x64xf32>
// CHECK-NOT: vector.transpose
// CHECK: scf.for %{{.*}} step %c8
// CHECK: %[[PW:.*]] = vector.transfer_read %{{.*}} : tensor<5x80xi32>, vector<8xi32>
// CHECK: %[[PS:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: arith.andi %[[PW]], %{{.*}} : vector<8xi32>
// CHECK: arith.subi
// CHECK: %[[PQ:.*]] = arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: %[[PV:.*]] = arith.mulf %[[PQ]], %[[PS]] : vector<8xf32>
// CHECK: vector.store %[[PV]], %{{.*}} : memref<1024x64xf32>, vector<8xf32>
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// CHECK: %[[OFF:.*]] = tensor.extract %[[XG]]
// CHECK: %[[OFFV:.*]] = vector.broadcast %[[OFF]] : f32 to vector<8xf32>
// CHECK: memref.prefetch %[[P]][%{{.*}}, %{{.*}}], read, locality<2>, data : memref<5x80xi32>
// CHECK: %[[W0:.*]] = vector.transfer_read %{{.*}} : tensor<5x80xi32>, vector<8xi32>
// CHECK: %[[W1:.*]] = vector.transfer_read %{{.*}} : tensor<5x80xi32>, vector<8xi32>
// CHECK: %[[X:.*]] = tensor.extract %[[XL]]
// CHECK: %[[XB:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// CHECK: %[[M0:.*]] = arith.andi %[[W0]], %cst{{.*}} : vector<8xi32>
// CHECK: %[[Q0:.*]] = arith.sitofp %[[M0]] : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma %[[XB]], %[[Q0]], %[[OFFV]] : vector<8xf32>
// CHECK: arith.shrui %[[W0]], %{{.*}} : vector<8xi32>
// CHECK-NOT: vector.reduction
// CHECK: %[[S:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: %[[G:.*]] = arith.addf
// CHECK: vector.fma %[[G]], %[[S]], %{{.*}} : vector<8xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.transfer_write
// CHECK-NOT: transformer.linear
// With AVX-512 (16 lanes) select-tiles puts a tile's 16 rows in the
// vector lanes (row_lanes): [ceil(40 / 16), 16 x 10] words, per group the
// 4 runs of 8 k as 16 words each (word r: row r's 8 nibbles), then the 16
// scales. The prefill path stores each looked-up run straight into the
// panel [1024, 64] (no transpose, no staging buffer); the few-rows path
// reads 16 words per tile and run, looks each nibble (shifted by 4j) up
// in the constant table of q = u - 8, multiply-adds it with x[k]
// broadcast into the group's sums, and scales the 16 rows' sums by their
// 16 scales once per group; 2 input rows x 2 tiles here (1 x 4 for a
// single row), and the rows are written as vectors, masked past N.
// AVX512-LABEL: func.func @int4
// AVX512: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x160xi32>) attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 40, cols = 64, bits = 4, group_size = 32, interleave = 16, row_lanes = true>}
// AVX512-COUNT-8: arith.shli
// AVX512: %[[P:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<3x160xi32> to memref<3x160xi32>
// AVX512: scf.forall (%{{.*}}) in (1)
// AVX512: memref.alloca() {alignment = 64 : i64} : memref<1024x64xf32>
// AVX512-NOT: vector.transpose
// AVX512: %[[TAB:.*]] = arith.constant dense<[-8.000000e+00, -7.000000e+00, {{.*}}, 6.000000e+00, 7.000000e+00]> : vector<16xf32>
// AVX512: scf.for %{{.*}} step %c8
// AVX512: %[[PW:.*]] = vector.transfer_read %{{.*}} : tensor<3x160xi32>, vector<16xi32>
// AVX512: %[[PS:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// AVX512: %[[PQ:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%{{.*}}, %[[PW]])
// AVX512: %[[PV:.*]] = arith.mulf %[[PQ]], %[[PS]] : vector<16xf32>
// AVX512: vector.store %[[PV]], %{{.*}} : memref<1024x64xf32>, vector<16xf32>
// AVX512: } else {
// AVX512: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// AVX512: memref.prefetch %[[P]][%{{.*}}, %{{.*}}], read, locality<2>, data : memref<3x160xi32>
// AVX512: %[[W0:.*]] = vector.transfer_read %{{.*}} : tensor<3x160xi32>, vector<16xi32>
// AVX512: %[[W1:.*]] = vector.transfer_read %{{.*}} : tensor<3x160xi32>, vector<16xi32>
// AVX512: %[[X:.*]] = tensor.extract %arg0
// AVX512: %[[XB:.*]] = vector.broadcast %[[X]] : f32 to vector<16xf32>
// AVX512: %[[Q0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[T:.*]], %[[W0]]) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// AVX512: vector.fma %[[XB]], %[[Q0]]
// AVX512: %[[H:.*]] = arith.shrui %[[W0]], %{{.*}} : vector<16xi32>
// AVX512: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[T]], %[[H]])
// AVX512-NOT: arith.sitofp
// AVX512: %[[S:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// AVX512: %[[G:.*]] = arith.addf
// AVX512: vector.fma %[[G]], %[[S]], %{{.*}} : vector<16xf32>
// AVX512-NOT: vector.reduction
// AVX512: vector.transfer_write
func.func @int4(%x: tensor<2x3x64xf32>, %w: tensor<40x64xf32>) -> tensor<2x3x40xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>} : tensor<2x3x64xf32>, tensor<40x64xf32> -> tensor<2x3x40xf32>
  return %0 : tensor<2x3x40xf32>
}

// -----

// int4 with 8 rows interleaved, pinned by hand (the layout of int8
// activations and of bf16 pairs): [5, 8 x 10] words, each tile of 8 rows
// group by group (the 8 rows' 4 words, then their 8 scales). With AVX2
// the few-rows path zero-extends a chunk's bytes, splits them into low and
// high nibbles u, which multiply-add into group accumulators beside the
// sum of x; then acc += (sum x u - 8 sum x) s with the group's scale; the
// prefill path stages each chunk's V rows in a [V, 32] buffer. With
// AVX-512 (16 lanes) the few-rows path looks the weights up:
// per group and column a table of (u - 8) s, which vpermps indexes with
// each byte's low nibble and, shifted, its high one; both multiply-add
// into the accumulators (no group accumulators, no sum of x), and each
// step prefetches the rows two tiles further (into L2).
// AVX512-LABEL: func.func @int4_tables
// AVX512: %[[P:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<5x80xi32> to memref<5x80xi32>
// AVX512: } else {
// AVX512: %[[BASE:.*]] = arith.constant dense<[-8.000000e+00, -7.000000e+00, {{.*}}, 6.000000e+00, 7.000000e+00]> : vector<16xf32>
// AVX512: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// AVX512: %[[S:.*]] = arith.bitcast %{{.*}} : i32 to f32
// AVX512: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// AVX512: %[[TAB:.*]] = arith.mulf %[[BASE]], %[[SV]] : vector<16xf32>
// AVX512: %[[XL:.*]] = vector.transfer_read %arg0
// AVX512: %[[XH:.*]] = vector.transfer_read %arg0
// AVX512: memref.prefetch %[[P]][%{{.*}}, %{{.*}}], read, locality<2>, data : memref<5x80xi32>
// AVX512: %[[U:.*]] = arith.extui %{{.*}} : vector<16xi8> to vector<16xi32>
// AVX512: %[[LO:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TAB]], %[[U]]) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// AVX512: %[[HI:.*]] = arith.shrui %[[U]], %{{.*}} : vector<16xi32>
// AVX512: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TAB]], %[[HI]])
// AVX512: vector.fma %[[XL]], %[[LO]]
// AVX512-NOT: arith.sitofp
// AVX512: vector.fma %[[XH]]
// AVX512: vector.reduction <add>
// CHECK-LABEL: func.func @int4_tables
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x80xi32>) attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 40, cols = 64, bits = 4, group_size = 32, interleave = 8>}
// CHECK: arith.shli
// CHECK: scf.forall
// The prefill path stages each chunk's V rows in a [V, 32] buffer.
// CHECK: scf.if
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<1024x32xf32>
// CHECK: %[[ROWS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<8x32xf32>
// CHECK: vector.store %{{.*}}, %[[ROWS]]
// CHECK: vector.load %[[ROWS]]
// CHECK: vector.transpose
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c32
// CHECK: %[[XL:.*]] = vector.transfer_read %arg0
// CHECK: %[[XH:.*]] = vector.transfer_read %arg0
// CHECK: %[[XS:.*]] = arith.addf %[[XL]], %[[XH]] : vector<8xf32>
// CHECK: vector.bitcast %{{.*}} : vector<2xi32> to vector<8xi8>
// CHECK: %[[U:.*]] = arith.extui %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.andi %[[U]], %{{.*}} : vector<8xi32>
// CHECK: arith.shrui %[[U]], %{{.*}} : vector<8xi32>
// CHECK: vector.fma %[[XL]]
// CHECK: vector.fma %[[XH]]
// CHECK: %[[S:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: %[[T:.*]] = vector.fma %{{.*}}, %cst{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.fma %[[T]], %[[SV]], %{{.*}} : vector<8xf32>
func.func @int4_tables(%x: tensor<2x3x64xf32>, %w: tensor<40x64xf32>) -> tensor<2x3x40xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 4, cols = 4, block_n = 32, panel_k = 1024, panel_rows = 8, panel_min_rows = 16, prefetch_tiles = 2, interleave = 8>} : tensor<2x3x64xf32>, tensor<40x64xf32> -> tensor<2x3x40xf32>
  return %0 : tensor<2x3x40xf32>
}

// -----

// The int4 layouts pinned by hand: one row after the other (interleave 1,
// the default: [N, 8 + 2] words) and 2 rows interleaved for N = 5 (three
// tiles, the last holding one row and a zero one: [3, 2 x 10]). A tile's
// words go group by group, 2 x (4 value words + 1 scale) = 10 each, so
// the kernel finds row n's group g at word 10 g + 4 (n mod 2) of tile
// n / 2 and its scale at word 10 g + 8 + n mod 2.
// CHECK-LABEL: func.func @int4_layouts
// (Both prepared words are built at the function's start, the last first.)
// CHECK: outs(%{{.*}} : tensor<3x20xi32>) attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 5, cols = 64, bits = 4, group_size = 32, interleave = 2>}
// CHECK: arith.remui %{{.*}}, %c10
// CHECK: arith.cmpi ult, %{{.*}}, %c8
// CHECK: arith.cmpi ult, %{{.*}}, %c5
// CHECK: outs(%{{.*}} : tensor<5x10xi32>) attrs = {blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 5, cols = 64, bits = 4, group_size = 32>}
// CHECK: scf.forall
// CHECK: scf.forall
// CHECK: arith.divui %{{.*}}, %c2
// CHECK: arith.remui %{{.*}}, %c2
// CHECK: arith.muli %{{.*}}, %c10
// CHECK: tensor.extract %{{.*}} : tensor<3x20xi32>
func.func @int4_layouts(%x: tensor<1x?x64xf32>, %w: tensor<5x64xf32>) -> (tensor<1x?x5xf32>, tensor<1x?x5xf32>) {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 2, block_n = 32, panel_k = 256, panel_rows = 3, panel_min_rows = 8, prefetch_tiles = 0>} : tensor<1x?x64xf32>, tensor<5x64xf32> -> tensor<1x?x5xf32>
  %1 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int4, group_size = 32>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 2, block_n = 32, panel_k = 256, panel_rows = 3, panel_min_rows = 8, prefetch_tiles = 0, interleave = 2>} : tensor<1x?x64xf32>, tensor<5x64xf32> -> tensor<1x?x5xf32>
  return %0, %1 : tensor<1x?x5xf32>, tensor<1x?x5xf32>
}

// -----

// Weight-only int8 with K = 64 (a multiple of 32) on AVX2: the 8 rows of a
// tile in the vector lanes (interleave 8: [3, 8 x (16 + 1)] words for 20
// rows), 64 rows per work item. Before the blocks, once per call: x scaled
// by 256^-(k % 4) (1 for k % 4 = 3) and each row's sum of x times -128 (the
// offset of u = q + 128). Prefill: the panel [1024, 64] of q s, each byte
// sign-extended by two shifts. Decode: per word one xor (the bytes' sign
// bits: u = q + 128), the bytes masked in place (255, 255 << 8, 255 << 16;
// the top one shifted down by 24), converted and FMA'd. AVX-512 keeps the
// k-in-lanes tiles (interleave 1).
// CHECK-LABEL: func.func @int8_row_lanes
// CHECK: blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 20, cols = 64, bits = 8, group_size = 64, interleave = 8, row_lanes = true>
// CHECK: arith.constant -1.280000e+02 : f32
// CHECK: scf.forall (%{{.*}}) in (1)
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<1024x64xf32>
// CHECK: arith.shrsi %{{.*}} : vector<8xi32>
// CHECK: arith.constant dense<-2139062144> : vector<8xi32>
// CHECK-NEXT: arith.xori %{{.*}} : vector<8xi32>
// CHECK: arith.constant dense<255> : vector<8xi32>
// CHECK: arith.constant dense<65280> : vector<8xi32>
// CHECK: arith.constant dense<16711680> : vector<8xi32>
// CHECK: arith.shrui %{{.*}} : vector<8xi32>
// CHECK-NEXT: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma
// AVX512-LABEL: func.func @int8_row_lanes
// AVX512: blockc_codegen.prepared = #blockc_codegen.quantized_weight<rows = 20, cols = 64, bits = 8, group_size = 64>
// AVX512-NOT: arith.xori
// AVX512: return
func.func @int8_row_lanes(%x: tensor<1x?x64xf32>, %w: tensor<20x64xf32>) -> tensor<1x?x20xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<1x?x64xf32>, tensor<20x64xf32> -> tensor<1x?x20xf32>
  return %0 : tensor<1x?x20xf32>
}

// -----

// Not f32: left to convert-weight-quant-to-linalg.
// CHECK-LABEL: func.func @bf16
// CHECK: transformer.linear {{.*}}weight_quant
func.func @bf16(%x: tensor<2x3x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<2x3x8xbf16> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<2x3x64xbf16>, tensor<8x64xbf16> -> tensor<2x3x8xbf16>
  return %0 : tensor<2x3x8xbf16>
}

// -----

// An f32 projection of a bf16 weight (a bf16 model after
// transformer-compute-in-f32): quantised from the weight's values widened
// to f32.
// CHECK-LABEL: func.func @f32_of_bf16
// CHECK: linalg.generic
// CHECK: %[[E:.+]] = tensor.extract %{{.+}} : tensor<8x64xbf16>
// CHECK-NEXT: arith.extf %[[E]] : bf16 to f32
// CHECK: blockc_codegen.kernel = #blockc_codegen.kernel<quantized_linear>
// CHECK-NOT: transformer.linear
func.func @f32_of_bf16(%x: tensor<2x3x64xf32>, %w: tensor<8x64xbf16>) -> tensor<2x3x8xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>} : tensor<2x3x64xf32>, tensor<8x64xbf16> -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// A schedule pinned by hand (blockc-cpu-select-tiles keeps it): 64 weight
// rows per work item (N = 200: 4 items), panels of 256 k x 64 from 8 rows
// on, in tiles of 3 rows, no prefetch; select-tiles would have written 32,
// 1024 and 16 (the first case).
// CHECK-LABEL: func.func @pinned
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: arith.cmpi uge, %{{.*}}, %c8 : index
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<256x64xf32>
// CHECK-NOT: memref.prefetch
// AVX512-LABEL: func.func @pinned
// AVX512-NOT: memref.prefetch
// AVX512: return
func.func @pinned(%x: tensor<1x?x64xf32>, %w: tensor<200x64xf32>) -> tensor<1x?x200xf32> {
  %0 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8, activations = int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 2, block_n = 64, panel_k = 256, panel_rows = 3, panel_min_rows = 8, prefetch_tiles = 0>} : tensor<1x?x64xf32>, tensor<200x64xf32> -> tensor<1x?x200xf32>
  %1 = transformer.linear %x, %w {weight_quant = #transformer.weight_quant<int8>, blockc_codegen.quantized_tiles = #blockc_codegen.quantized_tiles<rows = 2, cols = 2, block_n = 64, panel_k = 256, panel_rows = 3, panel_min_rows = 8, prefetch_tiles = 0>} : tensor<1x?x64xf32>, tensor<200x64xf32> -> tensor<1x?x200xf32>
  %2 = arith.addf %0, %1 : tensor<1x?x200xf32>
  return %2 : tensor<1x?x200xf32>
}

// NOTARGET: error: blockc-cpu-lower-quantized-linear: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)
// WIDTH: error: blockc-cpu-lower-quantized-linear: vector width 2 is not 4, 8 or 16
