//===- CodegenOps.td - blockc_codegen operations -----------*- tablegen -*-===//
//
// The one operation of the (otherwise attribute-only) codegen dialect.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_CODEGENOPS_TD
#define BLOCKC_DIALECT_CODEGEN_IR_CODEGENOPS_TD

include "blockc/Dialect/Codegen/IR/CodegenBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Codegen_Op<string mnemonic, list<Trait> traits = []>
    : Op<Codegen_Dialect, mnemonic, traits>;

def Codegen_WorkgroupBarrierOp
    : Codegen_Op<"workgroup_barrier", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "A gpu.barrier that declares its memory effects";
  let description = [{
    Synchronises the threads of a GPU block exactly like `gpu.barrier`, for
    kernels built on tensors (before bufferization): upstream's
    `gpu.barrier` declares no memory effects, which the ownership-based
    buffer deallocation rejects ("ops with unknown memory side effects are
    not supported"). This op reads and writes memory as far as analyses are
    concerned; `blockc-gpu-lower-workgroup-barriers` turns it into
    `gpu.barrier` once buffers are deallocated.

    With `cp_async_wait = N`, each thread first commits its `cp.async`
    copies issued since its last commit as one group and waits until at
    most `N` of its groups are pending (`nvgpu.device_async_create_group`
    without tokens, then `nvgpu.device_async_wait {numGroups = N}`, which
    declare no memory effects either): after the barrier, the copies of
    every thread of the block but those of its `N` newest groups are
    visible.

    ```mlir
    gpu.launch ... {
      ...
      blockc_codegen.workgroup_barrier
      blockc_codegen.workgroup_barrier {cp_async_wait = 0 : i32}
    }
    ```
  }];
  let arguments = (ins
      OptionalAttr<ConfinedAttr<I32Attr, [IntNonNegative]>>:$cp_async_wait);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state,
                                            ::mlir::IntegerAttr()); }]>];
  let assemblyFormat = "attr-dict";
}

#endif // BLOCKC_DIALECT_CODEGEN_IR_CODEGENOPS_TD
