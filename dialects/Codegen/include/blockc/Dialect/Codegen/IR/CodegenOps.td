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

    ```mlir
    gpu.launch ... {
      ...
      blockc_codegen.workgroup_barrier
    }
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // BLOCKC_DIALECT_CODEGEN_IR_CODEGENOPS_TD
