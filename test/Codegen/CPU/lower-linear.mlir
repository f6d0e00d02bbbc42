// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-linear | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx2" --blockc-cpu-lower-linear | FileCheck %s --check-prefix=AVX2 --implicit-check-not="vector<16xf32>"

// transformer.linear on [B, T, K] becomes a loop nest on tensors (n-block,
// k-block, batch, row tiles, column tiles) around a register-tiled kernel:
// rows x cols accumulators of vector<V x f32> updated by vector.fma from
// full-vector reads of x and of W in its stored [N, K] layout, a masked
// (zero-padded) step for the k remainder, and a horizontal add per output.
// The tiles are those blockc-cpu-select-tiles chose (linear_tiles), the
// vector width V the function's cpu_target's: 16 lanes with AVX-512, 8
// with AVX2 (and no 16-lane vector anywhere).

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x40xf32>, %[[W:.+]]: tensor<24x40xf32>)
// No packing or transposition of W.
// CHECK-NOT: linalg.transpose
// CHECK: %[[INIT:.+]] = linalg.fill
// T is dynamic, so both kernels are built and T >= pack-min-rows (32)
// picks one at run time, with its own block size (packed: panel-n = 32
// columns; dot product: block-n = 32).
// CHECK: %[[PACKED:.+]] = arith.cmpi uge, %{{.+}}, %c32
// CHECK: %[[BS:.+]] = arith.select %[[PACKED]]
// CHECK: %[[NB:.+]] = arith.divui %{{.+}}, %[[BS]]
// n-blocks in parallel (scf.forall over ceil(24 / 32) = 1 block, each
// writing its own columns).
// CHECK: scf.forall (%{{.+}}) in (%[[NB]]) shared_outs(%[[OUT:.+]] = %[[INIT]])
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[OUT]]
// CHECK: scf.if %[[PACKED]]
// The packed kernel (lower-linear-tiles.mlir checks it in detail).
// CHECK: tensor.empty() : tensor<48x32xf32>
// CHECK: vector.transpose %{{.+}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// The dot-product kernel: k-block (block_k = 48: 40 rounded up to the
// vector width; the whole row when B * T == 1: nothing reuses a block
// then), batch, full row tiles (4).
// CHECK: } else {
// CHECK: %[[BT:.+]] = arith.muli
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[BT]], %c1
// CHECK: %[[KS:.+]] = arith.select %[[ONE]], %c40{{.*}}, %c48
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c40{{.*}} step %[[KS]] iter_args(%{{.+}} = %[[SLICE]])
// CHECK: scf.for
// CHECK: scf.for
// The 4 x 4 kernel: 4 + 4 full-vector reads and 16 FMAs per k step.
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4: vector.transfer_read %[[X]]{{.*}} {in_bounds = [true]} : tensor<?x?x40xf32>, vector<16xf32>
// CHECK-COUNT-4: vector.transfer_read %[[W]]{{.*}} {in_bounds = [true]} : tensor<24x40xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.fma
// The k remainder (40 = 2 x 16 + 8): masked reads.
// CHECK: vector.transfer_read %[[X]][%{{[^]]+}}], %{{[^ ]+}} : tensor<?x?x40xf32>, vector<16xf32>
// CHECK: vector.transfer_read %[[W]][%{{[^]]+}}], %{{[^ ]+}} : tensor<24x40xf32>, vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: tensor.insert
// The 1-row kernel (row remainder, and a single token) covers 2 x cols = 8
// weight rows: 8 accumulators, one x read and 8 W reads per k step.
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-1: vector.transfer_read %[[X]]
// CHECK-COUNT-8: vector.transfer_read %[[W]]
// CHECK-COUNT-8: vector.fma
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]]
func.func @linear(%x: tensor<?x?x40xf32>, %w: tensor<24x40xf32>) -> tensor<?x?x24xf32> {
  %y = transformer.linear %x, %w : tensor<?x?x40xf32>, tensor<24x40xf32> -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}
// With AVX2, 8 lanes: a packed panel of 6 x 2 vectors of 8 lanes (16 columns),
// a 2 x 4 dot-product tile over k-blocks of 40 (= 5 x 8: the masked step
// never runs).
// AVX2-LABEL: func.func @linear
// AVX2: scf.forall (%{{.+}}) in (%{{.+}})
// AVX2: scf.if
// AVX2: tensor.empty() : tensor<40x16xf32>
// AVX2: vector.transpose %{{.+}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-12: vector.fma
// AVX2: } else {
// AVX2: arith.select %{{.+}}, %c40{{.*}}, %c40
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2-COUNT-2: vector.transfer_read %{{.+}} {in_bounds = [true]} : tensor<?x?x40xf32>, vector<8xf32>
// AVX2-COUNT-4: vector.transfer_read %{{.+}} {in_bounds = [true]} : tensor<24x40xf32>, vector<8xf32>
// AVX2-COUNT-8: vector.fma
// AVX2: vector.reduction <add>, %{{.+}} : vector<8xf32> into f32

// -----

// The bias initialises the output (broadcast along B and T).
// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME: (%{{.+}}: tensor<2x3x16xf32>, %{{.+}}: tensor<8x16xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[INIT:.+]] = linalg.generic
// CHECK-SAME: ins(%[[B]] : tensor<8xf32>)
// CHECK: scf.forall {{.*}} shared_outs(%{{.+}} = %[[INIT]])
func.func @linear_bias(%x: tensor<2x3x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y = transformer.linear %x, %w bias %b : tensor<2x3x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Inputs that are not [B, T, K] are left to convert-transformer-to-linalg.
// CHECK-LABEL: func.func @negative_rank2
// CHECK: transformer.linear
// CHECK-NOT: vector.fma
func.func @negative_rank2(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %y = transformer.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// One input row (decode) streams the weight rows once: the single-row
// kernel prefetches each of its weight rows 1024 bytes (256 f32) ahead
// (past a row's end, the next rows), in the weight as one flat read-only
// buffer, clamped to its last element. Tiles of several rows do not.
// CHECK-LABEL: func.func @decode_prefetch
// CHECK-SAME:  (%{{.+}}: tensor<1x1x40xf32>, %[[W:.+]]: tensor<48x40xf32>)
// CHECK:       %[[FLAT:.+]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1]] : tensor<48x40xf32> into tensor<1920xf32>
// CHECK:       %[[BUF:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<1920xf32> to memref<1920xf32>
// CHECK:       arith.constant 256 : index
// CHECK:       %[[AT:.+]] = arith.minui %{{.+}}, %c1919{{.*}} : index
// CHECK-NEXT:  memref.prefetch %[[BUF]][%[[AT]]], read, locality<3>, data : memref<1920xf32>
// AVX2-LABEL:  func.func @decode_prefetch
// AVX2:        memref.prefetch %{{.+}} : memref<1920xf32>
func.func @decode_prefetch(%x: tensor<1x1x40xf32>, %w: tensor<48x40xf32>) -> tensor<1x1x48xf32> {
  %y = transformer.linear %x, %w : tensor<1x1x40xf32>, tensor<48x40xf32> -> tensor<1x1x48xf32>
  return %y : tensor<1x1x48xf32>
}
