// RUN: blockc-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(blockc-gpu-lower-bf16-mma))' | FileCheck %s
// RUN: blockc-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(blockc-gpu-lower-bf16-mma),convert-nvgpu-to-nvvm)' | FileCheck %s --check-prefix=NVVM

// bf16 mma.sync m16n8k16 becomes nvvm.mma.sync with each fragment row
// packed into an i32; f16 is left to convert-nvgpu-to-nvvm (which then
// lowers every op of the module).

// CHECK-LABEL: gpu.func @bf16
// CHECK-SAME:    (%[[A:.+]]: vector<4x2xbf16>, %[[B:.+]]: vector<2x2xbf16>, %[[C:.+]]: vector<2x2xf32>
// CHECK-DAG:     %[[A0:.+]] = vector.extract %[[A]][0] : vector<2xbf16> from vector<4x2xbf16>
// CHECK-DAG:     %[[R0:.+]] = llvm.bitcast %[[A0]] : vector<2xbf16> to i32
// CHECK-DAG:     %[[A3:.+]] = vector.extract %[[A]][3] : vector<2xbf16> from vector<4x2xbf16>
// CHECK-DAG:     %[[B1:.+]] = vector.extract %[[B]][1] : vector<2xbf16> from vector<2x2xbf16>
// CHECK-DAG:     %[[C10:.+]] = vector.extract %[[C]][1, 0] : f32 from vector<2x2xf32>
// CHECK:         %[[D:.+]] = nvvm.mma.sync A[%[[R0]], %{{.+}}, %{{.+}}, %{{.+}}] B[%{{.+}}, %{{.+}}] C[%{{.+}}, %{{.+}}, %[[C10]], %{{.+}}]
// CHECK-SAME:      layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME:      multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME:      shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME:      -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:         %[[D3:.+]] = llvm.extractvalue %[[D]][3]
// CHECK:         %[[V:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %[[D3]] : vector<2x2xf32>
// CHECK:         vector.store %[[V]]
// CHECK-NOT:     nvgpu.mma.sync
// CHECK-LABEL: gpu.func @f16
// CHECK:         nvgpu.mma.sync
// NVVM-LABEL: gpu.func @bf16
// NVVM:         nvvm.mma.sync {{.+}}#nvvm.mma_type<bf16>
// NVVM-LABEL: gpu.func @f16
// NVVM:         nvvm.mma.sync {{.+}} : (vector<2xf16>, vector<2xf16>, f32)
gpu.module @kernels {
  gpu.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %d, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
    gpu.return
  }
  gpu.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %d, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
    gpu.return
  }
}
