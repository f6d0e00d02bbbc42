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

def Codegen_WarpgroupAttentionOp
    : Codegen_Op<"warpgroup_attention", []> {
  let summary = "The warpgroup-MMA attention kernel, built after deallocation";
  let description = [{
    Stands for the FlashAttention-3-style attention kernel of sm_90a
    between `blockc-gpu-lower-sdpa` (which works on tensors) and
    `blockc-gpu-lower-warpgroup-attention` (which runs after the buffer
    deallocation and builds the kernel): the kernel's TMA, mbarrier and
    warpgroup MMA ops declare no memory effects, which the ownership-based
    buffer deallocation rejects. `q`, `k` and `v` are the 16-bit
    `[B, T|S, H|H_kv, D]` buffers (read), `out` the `[B, T, H, D]` result
    (written; f32, or q's type when the sdpa's rounding is folded in);
    `group` is H / H_kv, `scale` the softmax scale, `consumers` the
    consumer warpgroups of a block (1: one warpgroup per 64 query rows; 2:
    the warp-specialised kernel, a producer warpgroup and two consumers
    per 128 query rows), `stages` the K/V ring's stages of the
    warp-specialised kernel (2 or 3; the one-warpgroup kernel has 2),
    `overlap` the warp-specialised consumers' intra-warpgroup overlap (S
    of key tile j issued with P V of tile j - 1; without it, one tile at a
    time; only with `consumers = 2`).

    ```mlir
    blockc_codegen.warpgroup_attention %q, %k, %v, %out
        {causal, group = 2 : i64, scale = 0.125 : f64}
        : memref<1x?x4x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, ...
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$query,
                       Arg<AnyMemRef, "", [MemRead]>:$key,
                       Arg<AnyMemRef, "", [MemRead]>:$value,
                       Arg<AnyMemRef, "", [MemWrite]>:$out,
                       UnitAttr:$causal,
                       F64Attr:$scale,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group,
                       DefaultValuedAttr<I64Attr, "1">:$consumers,
                       DefaultValuedAttr<I64Attr, "2">:$stages,
                       UnitAttr:$overlap);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out attr-dict `:` type($query) `,`
    type($key) `,` type($value) `,` type($out)
  }];
}

#endif // BLOCKC_DIALECT_CODEGEN_IR_CODEGENOPS_TD
