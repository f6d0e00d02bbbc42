// RUN: blockc-opt %s --blockc-cpu-expand-bf16 | FileCheck %s
// RUN: blockc-opt %s --blockc-cpu-expand-bf16 --transformer-strip-metadata --convert-arith-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O2 -mtriple=x86_64 -mattr=+avx512f,+avx512vl,+avx512bw,+avx512bf16 | FileCheck %s --check-prefix=ASM

// A function whose cpu_target has avx512_bf16 keeps its f32 -> bf16
// truncations (LLVM rounds with vcvtneps2bf16); the widenings from bf16
// are still a shift.
// CHECK-LABEL: func.func @trunc_native
// CHECK-NEXT: %[[T:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT: return %[[T]]
// ASM-LABEL: trunc_native:
// ASM: vcvtneps2bf16
// ASM-NOT: call
// ASM: ret
func.func @trunc_native(%x: vector<16xf32>) -> vector<16xbf16> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %0 : vector<16xbf16>
}

// CHECK-LABEL: func.func @ext_native
// CHECK: arith.shli
// CHECK-NOT: arith.extf
func.func @ext_native(%x: vector<16xbf16>) -> vector<16xf32> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576, avx512_bf16 = true>} {
  %0 = arith.extf %x : vector<16xbf16> to vector<16xf32>
  return %0 : vector<16xf32>
}

// Without it (the same ISA), the truncation is integer code.
// CHECK-LABEL: func.func @trunc_avx512
// CHECK-NOT: arith.truncf
// CHECK: arith.trunci %{{.+}} : vector<16xi32> to vector<16xi16>
// ASM-LABEL: trunc_avx512:
// ASM-NOT: call
// ASM: ret
func.func @trunc_avx512(%x: vector<16xf32>) -> vector<16xbf16> attributes {blockc_codegen.cpu_target = #blockc_codegen.cpu_target<isa = avx512, vector_width = 16, registers = 32, l1_bytes = 32768, l2_bytes = 1048576>} {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %0 : vector<16xbf16>
}
