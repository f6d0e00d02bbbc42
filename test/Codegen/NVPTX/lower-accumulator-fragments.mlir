// RUN: blockc-opt %s --blockc-gpu-lower-accumulator-fragments | FileCheck %s
// RUN: blockc-opt %s --blockc-gpu-lower-accumulator-fragments --convert-nvgpu-to-nvvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

// A 64 x 16 f32 accumulator is 8 registers per thread: reading it extracts
// [0, i] of the struct that convert-nvgpu-to-nvvm makes of it, writing it
// inserts them into a poison struct. The accumulator carried by the loop
// is left to convert-nvgpu-to-nvvm; the casts on both sides fold, so after
// it only the struct of 8 f32 flows (no nvgpu type and no cast of the
// struct left; the loop's index casts are upstream's).

// CHECK-LABEL: gpu.func @k
// CHECK:         %[[INIT:.+]] = nvgpu.warpgroup.mma.init.accumulator
// CHECK:         scf.for {{.+}} iter_args(%[[A:.+]] = %[[INIT]]) -> (!nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>)
// CHECK:           %[[S:.+]] = builtin.unrealized_conversion_cast %[[A]] : !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>> to !llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)>
// CHECK:           %[[E0:.+]] = llvm.extractvalue %[[S]][0, 0]
// CHECK-COUNT-6:   llvm.extractvalue %[[S]][0, {{[1-6]}}]
// CHECK:           %[[E7:.+]] = llvm.extractvalue %[[S]][0, 7]
// CHECK:           %[[F:.+]] = vector.from_elements %[[E0]], {{.+}}, %[[E7]] : vector<8xf32>
// CHECK:           %[[G:.+]] = arith.addf %[[F]], %[[F]]
// CHECK:           %[[P:.+]] = llvm.mlir.poison : !llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)>
// CHECK:           %[[X0:.+]] = vector.extract %[[G]][0]
// CHECK:           %[[I0:.+]] = llvm.insertvalue %[[X0]], %[[P]][0, 0]
// CHECK-COUNT-7:   llvm.insertvalue
// CHECK:           %[[BACK:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)> to !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
// CHECK:           scf.yield %[[BACK]]
// CHECK-NOT:     blockc_codegen.

// NVVM-LABEL: gpu.func @k
// NVVM-NOT:     nvgpu
// NVVM-NOT:     unrealized_conversion_cast {{.*}}!llvm.struct
// NVVM:         %[[INIT:.+]] = llvm.insertvalue %{{.+}}, %{{.+}}[0] : !llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)>
// NVVM:         scf.for {{.+}} iter_args(%[[A:.+]] = %[[INIT]]) -> (!llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)>)
// NVVM:           llvm.extractvalue %[[A]][0, 0]
// NVVM:           %[[Y:.+]] = llvm.insertvalue %{{.+}}, %{{.+}}[0, 7]
// NVVM-NEXT:      scf.yield %[[Y]] :
// NVVM:         llvm.extractvalue %{{.+}}[0, 7]
// NVVM:         vector.store
// NVVM-NOT:     nvgpu
// NVVM-NOT:     unrealized_conversion_cast {{.*}}!llvm.struct
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x16xf32>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%out: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %init) -> (!acc) {
        %f = blockc_codegen.accumulator_to_fragment %a : !acc -> vector<8xf32>
        %g = arith.addf %f, %f : vector<8xf32>
        %n = blockc_codegen.fragment_to_accumulator %g : vector<8xf32> -> !acc
        scf.yield %n : !acc
      }
      %f = blockc_codegen.accumulator_to_fragment %r : !acc -> vector<8xf32>
      vector.store %f, %out[%c0] : memref<8xf32>, vector<8xf32>
      gpu.return
    }
  }
}
