// RUN: blockc-opt %s --blockc-gpu-set-target="chip=sm_90a" | FileCheck %s --check-prefix=H100
// RUN: blockc-opt %s --blockc-gpu-set-target="chip=sm_80 gpu=h200" | FileCheck %s --check-prefix=H200
// RUN: blockc-opt %s --blockc-gpu-set-target="chip=sm_89" | FileCheck %s --check-prefix=L4
// RUN: not blockc-opt %s --blockc-gpu-set-target="chip=sm_999" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not blockc-opt %s --blockc-gpu-set-target="chip=sm_90 gpu=v100" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not blockc-opt %s --blockc-gpu-set-target="chip=sm_90a gpu=a100" 2>&1 | FileCheck %s --check-prefix=OLD

// The known chip's facts on the module: the architecture's default chip,
// or a chosen one (sm_80 code on an H200 gets the H200's bandwidth and
// limits, and no arch-specific features).
// H100: module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>}
// H200: module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h200", arch = "sm_80", sm = 80, arch_specific = false, ptx = 75, sms = 132, {{.*}}memory_gbps = 4800, shared_per_sm = 233472, shared_per_block = 232448,
// L4: module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "l4", arch = "sm_89", sm = 89, arch_specific = false, ptx = 78, sms = 58, clock_mhz = 2040, bf16_gflops = 121000, tf32_gflops = 60000, fp32_gflops = 30300, memory_gbps = 300, shared_per_sm = 102400, shared_per_block = 101376, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 1536, max_blocks_per_sm = 24>}
// ARCH: error: blockc-gpu-set-target: unknown GPU architecture 'sm_999' (known: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a)
// CHIP: error: blockc-gpu-set-target: unknown GPU chip 'v100' (known: t4, a100, a10, l4, h100, h200, b200)
// OLD: error: blockc-gpu-set-target: GPU chip 'a100' (sm_80) cannot run code for sm_90a
module {
  func.func @f() {
    return
  }
}

