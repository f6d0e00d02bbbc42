//===- FragmentOps.td - warpgroup accumulator fragments ----*- tablegen -*-===//
//
// Two blockc_codegen ops between a warpgroup MMA accumulator and the
// thread's registers. Their own TableGen file (and FragmentOps.h) keeps the
// nvgpu dependency out of CodegenDialect.h, which most of blockc includes.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_FRAGMENTOPS_TD
#define BLOCKC_DIALECT_CODEGEN_IR_FRAGMENTOPS_TD

include "blockc/Dialect/Codegen/IR/CodegenBase.td"
include "mlir/Dialect/NVGPU/IR/NVGPUTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Codegen_FragmentOp<string mnemonic, list<Trait> traits = []>
    : Op<Codegen_Dialect, mnemonic, traits # [NoMemoryEffect]> {
  let hasVerifier = 1;
}

def Codegen_AccumulatorToFragmentOp
    : Codegen_FragmentOp<"accumulator_to_fragment"> {
  let summary = "This thread's registers of a warpgroup MMA accumulator";
  let description = [{
    The `N / 2` f32 that this thread of the warpgroup holds of a 64 x N
    `!nvgpu.warpgroup.accumulator` (upstream's nvgpu has no op that exposes
    them). The layout is the PTX ISA's for wgmma's f32 accumulator: thread
    `t` of the warpgroup, warp `w = t / 32 % 4`, lane `4 g + q`, holds
    `D(16 w + g + 8 h, 8 j + 2 q + e)` in element `4 j + 2 h + e`.

    Reading the accumulator needs the wgmma groups that write it waited for
    (a `waitGroup = 0` warpgroup MMA or `wgmma.wait_group 0`); the GPU
    emulator checks that when the op runs. On NVVM
    (`blockc-gpu-lower-accumulator-fragments`) it is `llvm.extractvalue` of
    the accumulator's struct; under the emulator, the value itself.

    ```mlir
    %s = blockc_codegen.accumulator_to_fragment %acc
        : !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
        -> vector<32xf32>
    ```
  }];
  let arguments = (ins NVGPU_WarpgroupAccumulator:$accumulator);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$fragment);
  let assemblyFormat = [{
    $accumulator attr-dict `:` qualified(type($accumulator)) `->` type($fragment)
  }];
}

def Codegen_FragmentToAccumulatorOp
    : Codegen_FragmentOp<"fragment_to_accumulator"> {
  let summary = "A warpgroup MMA accumulator from this thread's registers";
  let description = [{
    The inverse of `blockc_codegen.accumulator_to_fragment`: the 64 x N
    accumulator whose share in this thread is `fragment` (same layout), for
    warpgroup MMAs to accumulate onto, e.g. after the thread rescaled its
    elements. On NVVM it is `llvm.insertvalue` into the accumulator's
    struct; under the emulator, the value itself.

    ```mlir
    %acc = blockc_codegen.fragment_to_accumulator %o
        : vector<32xf32>
        -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$fragment);
  let results = (outs NVGPU_WarpgroupAccumulator:$accumulator);
  let assemblyFormat = [{
    $fragment attr-dict `:` type($fragment) `->` qualified(type($accumulator))
  }];
}

#endif // BLOCKC_DIALECT_CODEGEN_IR_FRAGMENTOPS_TD
