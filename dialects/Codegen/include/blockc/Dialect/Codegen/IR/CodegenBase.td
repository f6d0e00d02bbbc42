//===- CodegenBase.td - blockc_codegen dialect definition --*- tablegen -*-===//
//
// The `blockc_codegen` dialect says *how* the code of a target is generated:
// mainly the attributes through which the heuristic passes (which choose)
// talk to the lowering passes (which build), as IREE's lowering
// configurations do; its few ops are steps inside the NVPTX kernel
// lowering (CodegenOps.td, FragmentOps.td), never in a model.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_DIALECT_CODEGEN_IR_CODEGENBASE_TD
#define BLOCKC_DIALECT_CODEGEN_IR_CODEGENBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Codegen_Dialect : Dialect {
  let name = "blockc_codegen";
  let cppNamespace = "::blockc::codegen";
  let summary = "Typed code generation configuration of the blockc targets";
  let description = [{
    Attributes that configure blockc's code generation. A heuristic pass
    writes them (`blockc-cpu-select-tiles`, `blockc-cpu-group-projections`)
    and the lowering passes only read them, so that a test or a user can pin
    any choice by writing the attribute by hand, and the IR between the two
    says exactly what will be built.

    They are attached as discardable attributes whose names carry the
    dialect prefix; the dialect verifies that each name holds the right kind
    of attribute:

    | name | attribute | on |
    | --- | --- | --- |
    | `blockc_codegen.cpu_target` | `#blockc_codegen.cpu_target<...>` | `func.func` |
    | `blockc_codegen.linear_tiles` | `#blockc_codegen.linear_tiles<...>` | `transformer.linear` |
    | `blockc_codegen.quantized_tiles` | `#blockc_codegen.quantized_tiles<...>` | `transformer.linear` with `weight_quant` |
    | `blockc_codegen.elementwise_tiles` | `#blockc_codegen.elementwise_tiles<...>` | an all-parallel `linalg.generic` or a `linalg.fill` |
    | `blockc_codegen.horizontal_group` | `#blockc_codegen.horizontal_group<N>` | `transformer.linear` |
    | `blockc_codegen.kernel` | `#blockc_codegen.kernel<...>` | a kernel's loop or launch |
    | `blockc_codegen.gpu_matmul_tiles` | `#blockc_codegen.gpu_matmul_tiles<...>` | a linalg contraction on buffers |
    | `blockc_codegen.gpu_mma_tiles` | `#blockc_codegen.gpu_mma_tiles<...>` | a linalg contraction of 16-bit operands |
    | `blockc_codegen.gpu_warpgroup_tiles` | `#blockc_codegen.gpu_warpgroup_tiles<...>` | a linalg contraction of 16-bit operands (sm_90a) |
    | `blockc_codegen.gpu_map` | `#blockc_codegen.gpu_map<...>` | `func.func` |
    | `blockc_codegen.gpu_mma_attention` | `#blockc_codegen.gpu_mma_attention<...>` | `transformer.sdpa` |
    | `blockc_codegen.gpu_attention` | `#blockc_codegen.gpu_attention<...>` | `transformer.sdpa` |
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The target a function's kernels are generated for (a CPUTargetAttr).
    static constexpr ::llvm::StringLiteral kCpuTargetAttrName =
        "blockc_codegen.cpu_target";
    /// The tiles of one projection's kernel (a LinearTilesAttr).
    static constexpr ::llvm::StringLiteral kLinearTilesAttrName =
        "blockc_codegen.linear_tiles";
    /// The schedule of one attention kernel (an AttentionTilesAttr).
    static constexpr ::llvm::StringLiteral kAttentionTilesAttrName =
        "blockc_codegen.attention_tiles";
    /// The schedule of one quantised projection kernel (a
    /// QuantizedTilesAttr).
    static constexpr ::llvm::StringLiteral kQuantizedTilesAttrName =
        "blockc_codegen.quantized_tiles";
    /// The loops of one elementwise op (an ElementwiseTilesAttr).
    static constexpr ::llvm::StringLiteral kElementwiseTilesAttrName =
        "blockc_codegen.elementwise_tiles";
    /// Projections lowered as one kernel (a HorizontalGroupAttr).
    static constexpr ::llvm::StringLiteral kHorizontalGroupAttrName =
        "blockc_codegen.horizontal_group";
    /// What a generated kernel computes (a KernelKindAttr).
    static constexpr ::llvm::StringLiteral kKernelAttrName =
        "blockc_codegen.kernel";
    /// How a projection reads its weight (a WeightLayoutAttr).
    static constexpr ::llvm::StringLiteral kWeightLayoutAttrName =
        "blockc_codegen.weight_layout";
    /// A prepared weight's layout (a PackedWeightAttr): on the linalg.pack
    /// that makes it, the entry argument that receives it and the prepare
    /// function's result that returns it.
    static constexpr ::llvm::StringLiteral kPreparedAttrName =
        "blockc_codegen.prepared";
    /// On a prepare function: the name of the entry it prepares (a
    /// StringAttr, not a symbol reference, so the entry keeps no uses).
    static constexpr ::llvm::StringLiteral kPrepareForAttrName =
        "blockc_codegen.prepare_for";
    /// On a part of a prepare function (a function that makes one of its
    /// prepared weights alone, and that it calls): the prepare function's
    /// name (a StringAttr).
    static constexpr ::llvm::StringLiteral kPreparePartOfAttrName =
        "blockc_codegen.prepare_part_of";
    /// On a prepare function's arguments and results: the index of the
    /// entry argument they come from / are passed as (an i64 IntegerAttr).
    static constexpr ::llvm::StringLiteral kSourceArgAttrName =
        "blockc_codegen.source_arg";
    /// NVPTX: the tiles of one contraction's kernel (a GPUMatmulTilesAttr),
    /// the thread block of a function's loop kernels (a GPUMapAttr) and of
    /// one attention kernel (a GPUAttentionAttr).
    static constexpr ::llvm::StringLiteral kGpuMatmulTilesAttrName =
        "blockc_codegen.gpu_matmul_tiles";
    /// NVPTX: the tiles of one tensor-core contraction (a
    /// GPUMmaTilesAttr).
    static constexpr ::llvm::StringLiteral kGpuMmaTilesAttrName =
        "blockc_codegen.gpu_mma_tiles";
    /// NVPTX: the tiles of one warpgroup-MMA contraction on sm_90a (a
    /// GPUWarpgroupTilesAttr).
    static constexpr ::llvm::StringLiteral kGpuWarpgroupTilesAttrName =
        "blockc_codegen.gpu_warpgroup_tiles";
    static constexpr ::llvm::StringLiteral kGpuMapAttrName =
        "blockc_codegen.gpu_map";
    static constexpr ::llvm::StringLiteral kGpuAttentionAttrName =
        "blockc_codegen.gpu_attention";
    /// NVPTX: the blocks of one tensor-core attention kernel (a
    /// GPUMmaAttentionAttr).
    static constexpr ::llvm::StringLiteral kGpuMmaAttentionAttrName =
        "blockc_codegen.gpu_mma_attention";
    /// NVPTX: the blocks of one paged attention kernel (a
    /// GPUPagedAttentionAttr).
    static constexpr ::llvm::StringLiteral kGpuPagedAttentionAttrName =
        "blockc_codegen.gpu_paged_attention";
    /// NVPTX: the weight-streaming kernel of one small-M contraction (a
    /// GPUGemvAttr).
    static constexpr ::llvm::StringLiteral kGpuGemvAttrName =
        "blockc_codegen.gpu_gemv";
    /// The GPU emulator: a host function running one thread of a kernel
    /// (an EmulatedKernelAttr).
    static constexpr ::llvm::StringLiteral kEmulatedKernelAttrName =
        "blockc_codegen.emulated_kernel";
    /// NVPTX: the target GPU of a module (a GPUTargetAttr).
    static constexpr ::llvm::StringLiteral kGpuTargetAttrName =
        "blockc_codegen.gpu_target";
  }];
}

#endif // BLOCKC_DIALECT_CODEGEN_IR_CODEGENBASE_TD
