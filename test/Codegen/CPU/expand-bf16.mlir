// RUN: blockc-opt %s --blockc-cpu-expand-bf16 | FileCheck %s --implicit-check-not="arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>"
// RUN: blockc-opt %s --blockc-cpu-expand-bf16 --convert-arith-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O2 -mtriple=x86_64 -mattr=+avx2,+fma | FileCheck %s --check-prefix=ASM

// f32 -> bf16 becomes integer code: the bits as i32, plus 0x7fff plus the
// lowest kept bit (round to nearest even), shifted right by 16, with NaN
// kept a NaN; never a call.
// CHECK-LABEL: func.func @trunc
// CHECK-DAG: %[[NAN:.+]] = arith.cmpf une, %[[X:.+]], %[[X]] : vector<8xf32>
// CHECK-DAG: %[[QNAN:.+]] = arith.constant dense<32704> : vector<8xi16>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[X]] : vector<8xf32> to vector<8xi32>
// CHECK: arith.shrui %[[BITS]]
// CHECK: arith.andi
// CHECK: arith.addi
// CHECK: %[[SUM:.+]] = arith.addi %[[BITS]]
// CHECK: %[[HI:.+]] = arith.shrui %[[SUM]]
// CHECK: %[[T:.+]] = arith.trunci %[[HI]] : vector<8xi32> to vector<8xi16>
// CHECK: %[[SEL:.+]] = arith.select %[[NAN]], %[[QNAN]], %[[T]]
// CHECK: arith.bitcast %[[SEL]] : vector<8xi16> to vector<8xbf16>
// ASM-LABEL: trunc:
// ASM-NOT: call
// ASM: ret
func.func @trunc(%x: vector<8xf32>) -> vector<8xbf16> {
  %0 = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  return %0 : vector<8xbf16>
}

// bf16 -> f32: a shift left by 16.
// CHECK-LABEL: func.func @ext
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: arith.extf
func.func @ext(%x: bf16) -> f32 {
  %0 = arith.extf %x : bf16 to f32
  return %0 : f32
}

// Other conversions are left alone.
// CHECK-LABEL: func.func @f16
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16(%x: f32) -> f16 {
  %0 = arith.truncf %x : f32 to f16
  return %0 : f16
}
