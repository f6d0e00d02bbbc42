// RUN: blockc-opt %s -split-input-file --blockc-gpu-select-tiles --blockc-gpu-lower-sdpa | FileCheck %s
// RUN: blockc-opt %s -split-input-file --blockc-gpu-lower-sdpa -verify-diagnostics | FileCheck %s --check-prefix=UNCONF

// Causal GQA (4 query heads, 2 kv heads, head dim 64): one gpu.launch, the
// operands read in place through read-only buffers, the result a new buffer.
// Grid (ceil(T / 16), H, B): a query tile of 4 warps x 4 rows per block for
// one (batch, head); 32 x 4 threads. kv head = h / 2 (GQA by index, no
// copy). Each lane holds 64 / 32 = 2 elements of each of its warp's 4 rows:
// 2 query loads per row scaled by 1/sqrt(64). The key loop ends at the causal
// end of the warp's last row; per key and row: a 5-step xor-shuffle sum
// across the warp, one online-softmax update (two exps), and a select that
// leaves rows past their own causal end unchanged. Rows < T are stored.
// The launch is marked as the fused attention kernel. (Block shape from
// blockc-gpu-select-tiles: 4 warps x 4 rows.)
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME:    (%[[Q:.+]]: tensor<?x?x4x64xf32>, %[[K:.+]]: tensor<?x?x2x64xf32>, %[[V:.+]]: tensor<?x?x2x64xf32>)
// CHECK:         %[[QM:.+]] = bufferization.to_buffer %[[Q]] read_only : tensor<?x?x4x64xf32> to memref<?x?x4x64xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK:         %[[KM:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK:         %[[VM:.+]] = bufferization.to_buffer %[[V]] read_only
// CHECK:         %[[OUT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x?x4x64xf32>
// CHECK:         %[[TILES:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %[[H:[^ ,]+]], %[[B:[^ ,]+]]) in (%{{[^ ,]+}} = %[[TILES]], %{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK-SAME:        threads(%[[LANE:[^ ,]+]], %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c4{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK-NEXT:      %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[KVH:.+]] = arith.divui %[[H]], %[[C2]] : index
// CHECK:           %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-COUNT-8:   arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:             %[[D0:.+]] = arith.addi %[[LANE]], %{{.+}} : index
// CHECK:             memref.load %[[KM]][%[[B]], %[[J]], %[[KVH]], %[[D0]]]
// CHECK:             memref.load %[[VM]][%[[B]], %[[J]], %[[KVH]], %[[D0]]]
// CHECK-COUNT-4:     gpu.shuffle  xor %{{.+}}, %c16_i32{{.*}}, %c32_i32
// CHECK-NOT:         memref.load %[[KM]]
// CHECK:             scf.yield
// CHECK-COUNT-4:   scf.if
// CHECK:           gpu.terminator
// CHECK-NEXT:    } {blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>}
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x4x64xf32> to tensor<?x?x4x64xf32>
// CHECK:         return %[[R]]
// Without blockc-gpu-select-tiles the block shape is missing (UNCONF).
func.func @gqa_causal(%q: tensor<?x?x4x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) -> tensor<?x?x4x64xf32> {
  // expected-error @+1 {{'transformer.sdpa' op has no 'blockc_codegen.gpu_attention' (run blockc-gpu-select-tiles first)}}
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<?x?x4x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32> -> tensor<?x?x4x64xf32>
  return %o : tensor<?x?x4x64xf32>
}

// -----

// A pinned block shape (kept by blockc-gpu-select-tiles): 8 warps x 2 rows,
// a query tile of 16 rows, 32 x 8 threads; 2 rows x (2 + 64 / 32) values of
// loop state; one 5-step shuffle sum per row and key.
// CHECK-LABEL: func.func @gqa_causal_pinned
// CHECK:         arith.ceildivui %{{.+}}, %c16
// CHECK:         gpu.launch
// CHECK-SAME:        threads(%{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c8{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK:           scf.for {{.+}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-2:     gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK-NOT:         gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK:             scf.yield
// The pinned shape is all the pass needs.
// UNCONF-LABEL: func.func @gqa_causal_pinned
// UNCONF:         gpu.launch
func.func @gqa_causal_pinned(%q: tensor<?x?x4x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) -> tensor<?x?x4x64xf32> {
  %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 2, warps = 8>}
      : tensor<?x?x4x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32> -> tensor<?x?x4x64xf32>
  return %o : tensor<?x?x4x64xf32>
}

// -----

// Not causal, MHA, explicit scale: keys run to S for every warp, no
// per-row causal select.
// CHECK-LABEL: func.func @mha_full
// CHECK:         bufferization.to_buffer %{{.+}} read_only
// CHECK-NEXT:    %[[KM:.+]] = bufferization.to_buffer %{{.+}} read_only
// CHECK:         %[[S:.+]] = memref.dim %[[KM]], %c1{{.*}} : memref<1x?x2x32xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK:         gpu.launch
// CHECK:           arith.constant 5.000000e-01 : f32
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[S]] step
// CHECK-NOT:         arith.cmpi sge
// CHECK:             scf.yield
func.func @mha_full(%q: tensor<1x?x2x32xf32>, %k: tensor<1x?x2x32xf32>, %v: tensor<1x?x2x32xf32>) -> tensor<1x?x2x32xf32> {
  // expected-error @+1 {{'transformer.sdpa' op has no 'blockc_codegen.gpu_attention' (run blockc-gpu-select-tiles first)}}
  %o = transformer.sdpa %q, %k, %v {scale = 0.5 : f64} : tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32>, tensor<1x?x2x32xf32> -> tensor<1x?x2x32xf32>
  return %o : tensor<1x?x2x32xf32>
}

// -----

// A head dim that is not a multiple of 32 keeps transformer.sdpa for the
// generic linalg lowering; it needs no block shape.
// CHECK-LABEL: func.func @small_head
// CHECK-NOT:     gpu.launch
// CHECK:         transformer.sdpa
// UNCONF-LABEL: func.func @small_head
// UNCONF-NEXT:     transformer.sdpa
func.func @small_head(%q: tensor<1x4x2x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> {
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32> -> tensor<1x4x2x8xf32>
  return %o : tensor<1x4x2x8xf32>
}

// -----

// One query row (T = 1, a decode step over S cached keys): split-KV
// (flash-decoding) in two kernels and no barrier. splits =
// clamp(ceil(S / 64), 1, 32), chunk = ceil(S / splits). Kernel 1: grid
// (splits, H / 2, B) of one warp each; the warp attends for the 2 query heads
// of one GQA group (kv head = 2 (block y) / 2) and scans keys [split * chunk,
// ...) two at a time: f32 operands of head dim 64 are read 16 bytes (4
// elements) per lane, so 16 lanes read one K or V row (lane slot = lane %
// 16, its elements 4 slot .. 4 slot + 3) and the warp reads two rows per
// step, key lane / 16 (clamped to the last key; past the chunk's end the
// state is kept). Per head and key: a 4-step xor sum over the 16 lanes of
// the row, one online-softmax update. After the loop the two halves of the
// warp merge their states (one xor 16 per value), then every lane stores
// (m, l) to a scratch buffer [B, H, 32, 2] and the first 16 lanes their 4
// accumulators (one 16-byte store) to [B, H, 32, 64]. The vector loads need
// the run-time layout check (unit d stride, offset and strides multiples
// of 4, 16-byte aligned bases); otherwise the same kernel with element
// loads runs. Kernel 2: grid (1, H, B), one warp per (batch, head) merges
// the splits: the max of m, then l and acc rescaled by exp(m_s - M). No row
// kernel: T is statically 1.
// CHECK-LABEL: func.func @decode_split_kv
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x1x4x64xf32>, %[[K:.+]]: tensor<1x?x2x64xf32>, %[[V:.+]]: tensor<1x?x2x64xf32>)
// CHECK:         %[[QM:.+]] = bufferization.to_buffer %[[Q]] read_only
// CHECK:         %[[KM:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK:         %[[OUT:.+]] = memref.alloc() : memref<1x1x4x64xf32>
// CHECK:         %[[S:.+]] = memref.dim %[[KM]], %c1
// CHECK:         %[[NS:.+]] = arith.ceildivui %[[S]], %c64 : index
// CHECK:         %[[CAPPED:.+]] = arith.minui %[[NS]], %c32 : index
// CHECK:         %[[SPLITS:.+]] = arith.maxui %[[CAPPED]], %c1 : index
// CHECK:         %[[CHUNK:.+]] = arith.ceildivui %[[S]], %[[SPLITS]] : index
// CHECK:         %[[STATS:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32x2xf32>
// CHECK:         %[[ACCS:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32x64xf32>
// CHECK:         memref.extract_strided_metadata %[[QM]]
// CHECK:         %[[QV:.+]] = memref.reinterpret_cast %[[QM]]
// CHECK:         %[[KV:.+]] = memref.reinterpret_cast %[[KM]]
// CHECK:         %[[VV:.+]] = memref.reinterpret_cast %{{.+}} to {{.+}} to memref<1x?x2x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK:         scf.if %{{.+}} {
// CHECK:           %[[BLOCKS:.+]] = arith.divui %{{.+}}, %c2
// CHECK:           gpu.launch blocks(%[[SPLIT:[^ ,]+]], %[[HB:[^ ,]+]], %[[B:[^ ,]+]]) in (%{{[^ ,]+}} = %[[SPLITS]], %{{[^ ,]+}} = %[[BLOCKS]], %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK-SAME:        threads(%[[LANE:[^ ,]+]], %{{[^ ,]+}}, %{{[^ ,]+}}) in (%{{[^ ,]+}} = %c32{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}}, %{{[^ ,]+}} = %c1{{[^ ,]*}})
// CHECK:             %[[H0:.+]] = arith.muli %[[HB]], %{{.+}} : index
// CHECK:             %[[KVH:.+]] = arith.divui %[[H0]], %{{.+}} : index
// CHECK:             %[[SLOT:.+]] = arith.remui %[[LANE]], %c16{{.*}} : index
// CHECK:             %[[ROW:.+]] = arith.divui %[[LANE]], %c16{{.*}} : index
// CHECK:             %[[START:.+]] = arith.muli %[[SPLIT]], %[[CHUNK]] : index
// CHECK:             %[[LO:.+]] = arith.minui %[[START]], %[[S]] : index
// CHECK:             %[[END:.+]] = arith.addi %[[LO]], %[[CHUNK]] : index
// CHECK:             %[[HI:.+]] = arith.minui %[[END]], %[[S]] : index
// CHECK-COUNT-2:     vector.load %[[QV]]{{.+}} : memref<1x1x4x64xf32, strided<[?, ?, ?, 1], offset: ?>>, vector<4xf32>
// CHECK:             %[[ST:.+]]:12 = scf.for %[[J0:.+]] = %[[LO]] to %[[HI]] step %c2{{.*}} iter_args({{.+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:               %[[J:.+]] = arith.addi %[[J0]], %[[ROW]] : index
// CHECK:               %[[KEEP:.+]] = arith.cmpi uge, %[[J]], %[[HI]] : index
// CHECK:               %[[JC:.+]] = arith.minui %[[J]], %{{.+}} : index
// CHECK:               vector.load %[[KV]][%[[B]], %[[JC]], %[[KVH]], %{{.+}}] {alignment = 16 : i64} : memref<1x?x2x64xf32, strided<[?, ?, ?, 1], offset: ?>>, vector<4xf32>
// CHECK:               vector.load %[[VV]][%[[B]], %[[JC]], %[[KVH]], %{{.+}}] {alignment = 16 : i64} : memref<1x?x2x64xf32, strided<[?, ?, ?, 1], offset: ?>>, vector<4xf32>
// CHECK-NOT:           vector.load
// CHECK-COUNT-4:       gpu.shuffle  xor
// CHECK-NOT:           gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK:               arith.select %[[KEEP]]
// CHECK-COUNT-4:       gpu.shuffle  xor
// CHECK:               scf.yield
// CHECK-COUNT-12:    gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK:             memref.store %{{.+}}, %[[STATS]][%[[B]], %{{.+}}, %[[SPLIT]], %c0{{[^ ,]*}}]
// CHECK:             memref.store %{{.+}}, %[[STATS]][%[[B]], %{{.+}}, %[[SPLIT]], %c1{{[^ ,]*}}]
// CHECK:             scf.if
// CHECK:               vector.store %{{.+}}, %[[ACCS]][%[[B]], %{{.+}}, %[[SPLIT]], %{{.+}}] {alignment = 16 : i64} : memref<?x?x32x64xf32>, vector<4xf32>
// CHECK-NOT:         gpu.barrier
// CHECK:             gpu.terminator
// CHECK-NEXT:      } {blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>}
// CHECK:         } else {
// CHECK:           gpu.launch
// CHECK-NOT:         vector.load
// CHECK:             memref.load %[[KM]]
// CHECK:             gpu.terminator
// CHECK-NEXT:      } {blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>}
// CHECK:         }
// CHECK:         gpu.launch blocks(%{{[^ ,]+}}, %[[H2:[^ ,]+]], %[[B2:[^ ,]+]]) in (%{{[^ ,]+}} = %c1{{[^ ,]*}}, %{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %{{[^ ,]+}})
// CHECK:           %[[M:.+]] = scf.for %{{.+}} = %c0{{[^ ,]*}} to %[[SPLITS]] step
// CHECK:             memref.load %[[STATS]]
// CHECK:             arith.maximumf
// CHECK:           %[[SUM:.+]]:3 = scf.for %{{.+}} = %c0{{[^ ,]*}} to %[[SPLITS]] step
// CHECK:             arith.subf %{{.+}}, %[[M]] : f32
// CHECK:             math.exp
// CHECK-COUNT-3:     math.fma
// CHECK:           arith.divf %{{.+}}, %[[SUM]]#0 : f32
// CHECK:           memref.store %{{.+}}, %[[OUT]][%[[B2]], %c0{{[^ ,]*}}, %[[H2]], %{{.+}}] : memref<1x1x4x64xf32>
// CHECK:           memref.store %{{.+}}, %[[OUT]][%[[B2]], %c0{{[^ ,]*}}, %[[H2]], %{{.+}}] : memref<1x1x4x64xf32>
// CHECK-NOT:       gpu.shuffle
// CHECK:           gpu.terminator
// CHECK-NEXT:    } {blockc_codegen.kernel = #blockc_codegen.kernel<fused_attention>}
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @decode_split_kv(%q: tensor<1x1x4x64xf32>, %k: tensor<1x?x2x64xf32>, %v: tensor<1x?x2x64xf32>) -> tensor<1x1x4x64xf32> {
  // expected-error @+1 {{'transformer.sdpa' op has no 'blockc_codegen.gpu_attention' (run blockc-gpu-select-tiles first)}}
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<1x1x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x1x4x64xf32>
  return %o : tensor<1x1x4x64xf32>
}

// -----

// The split rule comes from the attribute: pinned by hand to 128 keys per
// split and at most 8 splits (scratch [B, H, 8, 2] and [B, H, 8, 64]).
// CHECK-LABEL: func.func @decode_split_kv_pinned
// CHECK:         %[[NS:.+]] = arith.ceildivui %{{.+}}, %c128 : index
// CHECK:         arith.minui %[[NS]], %c8 : index
// CHECK:         memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x8x2xf32>
// CHECK:         memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x8x64xf32>
// UNCONF-LABEL: func.func @decode_split_kv_pinned
// UNCONF:         memref<?x?x8x64xf32>
func.func @decode_split_kv_pinned(%q: tensor<1x1x4x64xf32>, %k: tensor<1x?x2x64xf32>, %v: tensor<1x?x2x64xf32>) -> tensor<1x1x4x64xf32> {
  %o = transformer.sdpa %q, %k, %v {causal, blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4, keys_per_split = 128, max_splits = 8>} : tensor<1x1x4x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32> -> tensor<1x1x4x64xf32>
  return %o : tensor<1x1x4x64xf32>
}

// -----

// A dynamic T (the decode entry also prefills): the row kernel when T != 1,
// the split-KV kernel otherwise.
// CHECK-LABEL: func.func @dynamic_t_both
// CHECK:         %[[SEVERAL:.+]] = arith.cmpi ne, %{{.+}}, %c1{{[^ ,]*}} : index
// CHECK:         scf.if %[[SEVERAL]] {
// CHECK:           gpu.launch
// CHECK:         } else {
// CHECK:           memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32x32xf32>
// CHECK:           scf.if
// CHECK:             gpu.launch
// CHECK:           } else {
// CHECK:             gpu.launch
// CHECK:           }
// CHECK:           gpu.launch
// CHECK:         }
// CHECK:         return
func.func @dynamic_t_both(%q: tensor<2x?x2x32xf32>, %k: tensor<2x?x2x32xf32>, %v: tensor<2x?x2x32xf32>) -> tensor<2x?x2x32xf32> {
  // expected-error @+1 {{'transformer.sdpa' op has no 'blockc_codegen.gpu_attention' (run blockc-gpu-select-tiles first)}}
  %o = transformer.sdpa %q, %k, %v : tensor<2x?x2x32xf32>, tensor<2x?x2x32xf32>, tensor<2x?x2x32xf32> -> tensor<2x?x2x32xf32>
  return %o : tensor<2x?x2x32xf32>
}

// -----

// A bf16 block (transformer-compute-in-f32 widens q, k and v): the SIMT
// kernels read the bf16 tensors and widen in registers, so the widenings
// are left unused (no f32 copy of q, k or v is made). Head dim 128 in
// bf16: 16 bytes are 8 elements, 16 lanes read a K or V row with one
// vector<8xbf16> load each, two rows per step. GQA 8/2: one warp attends
// for the 4 query heads of a group (grid y = H / 4), sharing each K and V
// load. The row kernel (T != 1) reads bf16 elements. The result's rounding
// is stored by the merge kernel. (Checked without blockc-gpu-select-tiles,
// which would add the tensor-core kernel for T != 1.)
// UNCONF-LABEL: func.func @decode_bf16_gqa
// UNCONF-SAME:    (%[[Q:.+]]: tensor<1x?x8x128xbf16>, %[[K:.+]]: tensor<1x?x2x128xbf16>, %[[V:.+]]: tensor<1x?x2x128xbf16>)
// UNCONF:         %[[QM:.+]] = bufferization.to_buffer %[[Q]] read_only : tensor<1x?x8x128xbf16>
// UNCONF:         %[[KM:.+]] = bufferization.to_buffer %[[K]] read_only : tensor<1x?x2x128xbf16>
// UNCONF:         %[[VM:.+]] = bufferization.to_buffer %[[V]] read_only : tensor<1x?x2x128xbf16>
// UNCONF-NOT:     bufferization.to_buffer
// UNCONF:         %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<1x?x8x128xbf16>
// UNCONF:         scf.if
// UNCONF:           gpu.launch
// UNCONF:             memref.load %[[QM]]{{.+}} : memref<1x?x8x128xbf16, strided<[?, ?, ?, ?], offset: ?>>
// UNCONF:             arith.extf %{{.+}} : bf16 to f32
// UNCONF:             memref.load %[[KM]]{{.+}} : memref<1x?x2x128xbf16, strided<[?, ?, ?, ?], offset: ?>>
// UNCONF:             arith.extf %{{.+}} : bf16 to f32
// UNCONF:         } else {
// UNCONF:           memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32x128xf32>
// UNCONF:           %[[KV:.+]] = memref.reinterpret_cast %[[KM]]
// UNCONF:           %[[VV:.+]] = memref.reinterpret_cast %[[VM]]
// UNCONF:           scf.if
// UNCONF:             %[[BLOCKS:.+]] = arith.divui %{{.+}}, %c4
// UNCONF:             gpu.launch blocks({{.+}}) in (%{{[^ ,]+}} = %{{[^ ,]+}}, %{{[^ ,]+}} = %[[BLOCKS]], %{{[^ ,]+}} = %{{[^ ,]+}})
// UNCONF:               arith.remui %{{.+}}, %c16
// UNCONF-COUNT-4:       vector.load {{.+}} : memref<1x?x8x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// UNCONF:               scf.for {{.+}} step %c2
// UNCONF:                 vector.load %[[KV]]{{.+}} : memref<1x?x2x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// UNCONF-COUNT-8:         arith.extf %{{.+}} : bf16 to f32
// UNCONF:                 vector.load %[[VV]]{{.+}} : memref<1x?x2x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// UNCONF-NOT:             vector.load
// UNCONF-COUNT-16:        gpu.shuffle  xor
// UNCONF-NOT:             gpu.shuffle
// UNCONF:                 scf.yield
// UNCONF:               vector.store {{.+}} : memref<?x?x32x128xf32>, vector<4xf32>
// UNCONF:               vector.store {{.+}} : memref<?x?x32x128xf32>, vector<4xf32>
// UNCONF:           } else {
// UNCONF:             gpu.launch
// UNCONF:           }
// UNCONF:           gpu.launch
// UNCONF:             arith.truncf %{{.+}} : f32 to bf16
// UNCONF:             memref.store %{{.+}}, %[[OUT]]
// UNCONF:         }
// UNCONF:         %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<1x?x8x128xbf16>
// UNCONF:         return %[[R]]
func.func @decode_bf16_gqa(%q: tensor<1x?x8x128xbf16>, %k: tensor<1x?x2x128xbf16>, %v: tensor<1x?x2x128xbf16>) -> tensor<1x?x8x128xbf16> {
  %qf = arith.extf %q : tensor<1x?x8x128xbf16> to tensor<1x?x8x128xf32>
  %kf = arith.extf %k : tensor<1x?x2x128xbf16> to tensor<1x?x2x128xf32>
  %vf = arith.extf %v : tensor<1x?x2x128xbf16> to tensor<1x?x2x128xf32>
  %o = transformer.sdpa %qf, %kf, %vf {causal, blockc_codegen.gpu_attention = #blockc_codegen.gpu_attention<rows_per_warp = 4, warps = 4>}
      : tensor<1x?x8x128xf32>, tensor<1x?x2x128xf32>, tensor<1x?x2x128xf32> -> tensor<1x?x8x128xf32>
  %r = arith.truncf %o : tensor<1x?x8x128xf32> to tensor<1x?x8x128xbf16>
  return %r : tensor<1x?x8x128xbf16>
}
