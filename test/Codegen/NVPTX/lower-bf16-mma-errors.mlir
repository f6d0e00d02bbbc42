// RUN: blockc-opt %s --pass-pipeline='builtin.module(gpu.module(blockc-gpu-lower-bf16-mma))' -verify-diagnostics

// Only m16n8k16 with f32 accumulators is lowered for bf16.
gpu.module @kernels {
  gpu.func @k8(%a: vector<2x2xbf16>, %b: vector<1x2xbf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'nvgpu.mma.sync' op bf16 is lowered for mmaShape [16, 8, 16] with vector<4x2xbf16>, vector<2x2xbf16> and vector<2x2xf32> fragments only}}
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8]} : (vector<2x2xbf16>, vector<1x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %d, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
    gpu.return
  }
}
