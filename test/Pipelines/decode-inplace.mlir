// RUN: blockc-opt %s --transformer-derive-decode --blockc-cpu-lower-to-linalg-pipeline \
// RUN:   --blockc-cpu-bufferize-pipeline | FileCheck %s --implicit-check-not=bufferization.clone
// RUN: blockc-opt %s --transformer-derive-decode --blockc-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// After bufferization the decode entry writes the caches in place: each
// cache argument is read for its capacity (the bound check) and otherwise
// used by exactly two subviews, the T new rows at
// [0, pos] (written by one memref.copy of [B, T, H_kv, D]) and the first
// pos + T rows (read by the attention kernel). No alloc, copy or clone of a
// whole cache exists, and the caches are no longer results (the entry keeps
// the one-result C interface of @forward). The caches are head-major
// (strides [?, D, ?, 1] of the [B, L_max, H_kv, D] tensor): bufferization
// returns them as copies into identity-layout buffers, which
// blockc-drop-inplace-results removes with the results.

// CHECK-LABEL: func.func @forward_decode(
// CHECK-SAME: %[[POS:[a-z0-9]+]]: index {transformer.kv_position}
// CHECK-SAME: %[[KC:[a-z0-9]+]]: memref<?x?x1x16xf32, strided<[?, 16, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<key>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 0 : i64}
// CHECK-SAME: %[[VC:[a-z0-9]+]]: memref<?x?x1x16xf32, strided<[?, 16, ?, 1], offset: ?>> {transformer.kv_cache = #transformer.kv_cache<value>, transformer.kv_layout = #transformer.kv_layout<bhsd>, transformer.layer = 0 : i64})
// CHECK-SAME: -> memref<?x?x64xf32>
// CHECK-NOT: %[[KC]]
// CHECK: memref.dim %[[KC]], %{{.+}} : memref<?x?x1x16xf32, strided<[?, 16, ?, 1], offset: ?>>
// CHECK-NOT: %[[KC]]
// CHECK: cf.assert %{{.+}}, "blockc: KV cache overflow
// CHECK-NOT: %[[KC]]
// CHECK: %[[KW:.+]] = memref.subview %[[KC]][0, %[[POS]], 0, 0] [%{{.+}}, %{{.+}}, 1, 16] [1, 1, 1, 1]
// CHECK-NEXT: memref.copy %{{.+}}, %[[KW]] : memref<?x?x1x16xf32> to memref<?x?x1x16xf32, strided<[?, 16, ?, 1], offset: ?>>
// CHECK-NOT: %[[KC]]
// CHECK: memref.subview %[[KC]][0, 0, 0, 0] [%{{.+}}, %{{.+}}, 1, 16] [1, 1, 1, 1]
// CHECK-NOT: %[[KC]]
// CHECK: memref.dim %[[VC]], %{{.+}} : memref<?x?x1x16xf32, strided<[?, 16, ?, 1], offset: ?>>
// CHECK: %[[VW:.+]] = memref.subview %[[VC]][0, %[[POS]], 0, 0]
// CHECK-NEXT: memref.copy %{{.+}}, %[[VW]]
// CHECK-NEXT: memref.subview %[[VC]][0, 0, 0, 0]
// CHECK-NOT: %[[KC]]
// CHECK-NOT: %[[VC]]
// CHECK: return %{{.+}} : memref<?x?x64xf32>

// The C interface: result descriptor, input, 9 weights, the position as an
// i64 by value, then the two cache descriptors.
// LLVM: llvm.func @_mlir_ciface_forward_decode(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// LLVM-NOT: !llvm.ptr
// LLVM-SAME: {
func.func @forward(%x: tensor<?x?x64xf32>,
    %attn_norm: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<16x64xf32>,
    %wv: tensor<16x64xf32>, %wo: tensor<64x64xf32>, %ffn_norm: tensor<64xf32>,
    %wgate: tensor<128x64xf32>, %wup: tensor<128x64xf32>, %wdown: tensor<64x128xf32>)
    -> tensor<?x?x64xf32> {
  %y = transformer.block %x attn_norm(%attn_norm : tensor<64xf32>)
      q(%wq : tensor<64x64xf32>) k(%wk : tensor<16x64xf32>) v(%wv : tensor<16x64xf32>)
      o(%wo : tensor<64x64xf32>) ffn_norm(%ffn_norm : tensor<64xf32>)
      gate(%wgate : tensor<128x64xf32>) up(%wup : tensor<128x64xf32>) down(%wdown : tensor<64x128xf32>)
      {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, d_ff = 128 : i64,
       causal, rope = #transformer.rope<rotate_half>} : tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
