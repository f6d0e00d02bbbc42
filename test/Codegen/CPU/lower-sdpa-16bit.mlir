// RUN: blockc-opt %s -split-input-file --blockc-cpu-select-tiles="isa=avx512" --blockc-cpu-lower-sdpa --canonicalize | FileCheck %s --implicit-check-not=transformer.sdpa

// K and V widened from 16-bit tensors (a bf16 block's caches after
// transformer-compute-in-f32) are read as stored: the single-row kernel
// (decode) reads 16 bf16 of a key or value row and widens them in
// registers, the block kernel widens the elements it extracts, and the
// prefetches go through read-only views of the 16-bit tensors, one per
// 64-byte line (a 32-wide bf16 row is one line). No f32 copy of K or V is
// left (the tensor extf folds away).
// CHECK-LABEL: func.func @bf16_cache
// CHECK-SAME: (%{{.+}}: tensor<?x?x4x32xf32>, %[[K:.+]]: tensor<?x?x2x32xbf16>, %[[V:.+]]: tensor<?x?x2x32xbf16>)
// CHECK-NOT: arith.extf %[[K]]
// CHECK-NOT: arith.extf %[[V]]
// CHECK: %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only : tensor<?x?x2x32xbf16> to memref<?x?x2x32xbf16
// CHECK: %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only : tensor<?x?x2x32xbf16> to memref<?x?x2x32xbf16
// CHECK: %[[KE:.+]] = tensor.extract %[[K]][{{.+}}] : tensor<?x?x2x32xbf16>
// CHECK: arith.extf %[[KE]] : bf16 to f32
// CHECK: %[[VE:.+]] = tensor.extract %[[V]][{{.+}}] : tensor<?x?x2x32xbf16>
// CHECK: arith.extf %[[VE]] : bf16 to f32
// CHECK: } else {
// CHECK: memref.prefetch %[[KB]][%{{.+}}, %{{.+}}, %{{.+}}, %c0{{.*}}], read, locality<2>, data
// CHECK-NOT: memref.prefetch %[[KB]][%{{.+}}, %{{.+}}, %{{.+}}, %c16
// CHECK: memref.prefetch %[[VB]]
// CHECK: %[[KR:.+]] = vector.transfer_read %[[K]][{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x?x2x32xbf16>, vector<16xbf16>
// CHECK: arith.extf %[[KR]] : vector<16xbf16> to vector<16xf32>
// CHECK: %[[VR:.+]] = vector.transfer_read %[[V]][{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x?x2x32xbf16>, vector<16xbf16>
// CHECK: arith.extf %[[VR]] : vector<16xbf16> to vector<16xf32>
func.func @bf16_cache(%q: tensor<?x?x4x32xf32>, %k16: tensor<?x?x2x32xbf16>, %v16: tensor<?x?x2x32xbf16>) -> tensor<?x?x4x32xf32> {
  %k = arith.extf %k16 : tensor<?x?x2x32xbf16> to tensor<?x?x2x32xf32>
  %v = arith.extf %v16 : tensor<?x?x2x32xbf16> to tensor<?x?x2x32xf32>
  %o = transformer.sdpa %q, %k, %v {causal} : tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32> -> tensor<?x?x4x32xf32>
  return %o : tensor<?x?x4x32xf32>
}

// -----

// A head dim that needs padding (12 -> 16 lanes of 4) keeps the widened
// f32 tensors (the padding is of the f32 values).
// CHECK-LABEL: func.func @f16_padded
// CHECK: arith.extf %{{.+}} : tensor<1x8x1x6xf16> to tensor<1x8x1x6xf32>
// CHECK: tensor.pad
func.func @f16_padded(%q: tensor<1x8x1x6xf32>, %k16: tensor<1x8x1x6xf16>) -> tensor<1x8x1x6xf32> {
  %k = arith.extf %k16 : tensor<1x8x1x6xf16> to tensor<1x8x1x6xf32>
  %o = transformer.sdpa %q, %k, %k {causal} : tensor<1x8x1x6xf32>, tensor<1x8x1x6xf32>, tensor<1x8x1x6xf32> -> tensor<1x8x1x6xf32>
  return %o : tensor<1x8x1x6xf32>
}
