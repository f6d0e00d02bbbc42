// RUN: blockc-opt %s --blockc-gpu-set-target="chip=sm_90a" | FileCheck %s
// RUN: not blockc-opt %s --blockc-gpu-set-target="chip=sm_80 gpu=h200" 2>&1 | FileCheck %s --check-prefix=OTHER

// A module that has a target keeps it when it is the same chip, and is an
// error otherwise.
// CHECK: module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a"
// OTHER: error: blockc-gpu-set-target: the module targets h100 (sm_90a) already, not h200 (sm_80)
module attributes {blockc_codegen.gpu_target = #blockc_codegen.gpu_target<name = "h100", arch = "sm_90a", sm = 90, arch_specific = true, ptx = 80, sms = 132, clock_mhz = 1980, bf16_gflops = 989400, tf32_gflops = 494700, fp32_gflops = 66900, memory_gbps = 3350, shared_per_sm = 233472, shared_per_block = 232448, static_shared_per_block = 49152, registers_per_sm = 65536, max_registers_per_thread = 255, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
}
