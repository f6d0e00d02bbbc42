// RUN: blockc-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(blockc-cpu-lower-transposes))" | FileCheck %s --implicit-check-not=vector.transpose

// blockc-cpu-lower-transposes picks upstream's lowering per transpose from
// the function's cpu_target.

// 16x16 of 32-bit elements: shuffle_16x16, four stages of 16 two-source
// shuffles of 16-lane rows (32-bit and 64-bit unpacks, then two stages
// of 128-bit lane selects).
// CHECK-LABEL: func.func @avx512_16x16
// CHECK-COUNT-16: vector.shuffle %{{.+}}, %{{.+}} [{{0, 16, 1, 17|2, 18, 3, 19}}, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.shuffle %{{.+}}, %{{.+}} [{{0, 1, 16, 17|2, 3, 18, 19}}, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-32: vector.shuffle %{{.+}}, %{{.+}} [{{0, 1, 2, 3, 8|4, 5, 6, 7, 12}}, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK-NOT:   vector.shuffle
// CHECK:       return
func.func @avx512_16x16(%a: vector<16x16xf32>) -> vector<16x16xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 1048576>} {
  %t = vector.transpose %a, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %t : vector<16x16xf32>
}

// -----

// 8x8xf32 on AVX2: x86vector's sequence: 8 unpacks, 4 shufps, 8 blends
// (inline vblendps) and 8 cross-lane permutes.
// CHECK-LABEL: func.func @avx2_8x8
// CHECK-COUNT-8: vector.shuffle %{{.+}}, %{{.+}} [{{0, 8, 1, 9, 4, 12, 5, 13|2, 10, 3, 11, 6, 14, 7, 15}}] : vector<8xf32>, vector<8xf32>
// CHECK-COUNT-4: vector.shuffle %{{.+}}, %{{.+}} [2, 3, 8, 9, 6, 7, 12, 13] : vector<8xf32>, vector<8xf32>
// CHECK-COUNT-8: llvm.inline_asm asm_dialect = intel "vblendps $0, $1, $2, {{0xcc|0x33}}"
// CHECK-COUNT-8: vector.shuffle %{{.+}}, %{{.+}} [{{0, 1, 2, 3, 8, 9, 10, 11|4, 5, 6, 7, 12, 13, 14, 15}}] : vector<8xf32>, vector<8xf32>
// CHECK-NOT:   vector.shuffle
// CHECK:       return
func.func @avx2_8x8(%a: vector<8x8xf32>) -> vector<8x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx2, vector_width = 8, registers = 16, l1_bytes = 32768, l2_bytes = 524288>} {
  %t = vector.transpose %a, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
  return %t : vector<8x8xf32>
}

// -----

// The same 8x8 on an AVX-512 target (no AVX2 sequence there: LLVM maps the
// flattened shuffle to two-source 512-bit permutes): shuffle_1d.
// CHECK-LABEL: func.func @avx512_8x8
// CHECK:       %[[F:.+]] = vector.shape_cast %{{.+}} : vector<8x8xf32> to vector<64xf32>
// CHECK-NEXT:  %[[S:.+]] = vector.shuffle %[[F]], %[[F]] [0, 8, 16, 24, 32, 40, 48, 56, 1, 9, {{.*}}, 55, 63] : vector<64xf32>, vector<64xf32>
// CHECK-NEXT:  vector.shape_cast %[[S]] : vector<64xf32> to vector<8x8xf32>
// CHECK-NOT:   llvm.inline_asm
func.func @avx512_8x8(%a: vector<8x8xf32>) -> vector<8x8xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 49152, l2_bytes = 1048576>} {
  %t = vector.transpose %a, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
  return %t : vector<8x8xf32>
}

// -----

// SSE, 4x4: shuffle_1d.
// CHECK-LABEL: func.func @sse_4x4
// CHECK:       %[[F:.+]] = vector.shape_cast %{{.+}} : vector<4x4xf32> to vector<16xf32>
// CHECK-NEXT:  vector.shuffle %[[F]], %[[F]] [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15] : vector<16xf32>, vector<16xf32>
func.func @sse_4x4(%a: vector<4x4xf32>) -> vector<4x4xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = sse, vector_width = 4, registers = 16, l1_bytes = 32768, l2_bytes = 524288>} {
  %t = vector.transpose %a, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
  return %t : vector<4x4xf32>
}

// -----

// A function without transposes needs no target and is left alone.
// CHECK-LABEL: func.func @nothing
// CHECK-NEXT:  return %{{.+}} : vector<4xf32>
func.func @nothing(%a: vector<4xf32>) -> vector<4xf32> {
  return %a : vector<4xf32>
}

// -----

// expected-error @below {{blockc-cpu-lower-transposes: the function has no 'blockc_codegen.cpu_target' (run blockc-cpu-select-tiles first)}}
func.func @no_target(%a: vector<4x4xf32>) -> vector<4x4xf32> {
  %t = vector.transpose %a, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
  return %t : vector<4x4xf32>
}
