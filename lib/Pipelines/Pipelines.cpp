//===- Pipelines.cpp - blockc pass pipelines ------------------------------===//
//
// Every stage is built in C++ from its typed options; the common part of
// stage 1 is written once (addStage1) and each target only adds its kernel
// passes. What a builder adds is exactly what `--dump-pass-pipeline` prints
// and what `blockc-opt --pass-pipeline=...` replays.
//
//===----------------------------------------------------------------------===//

#include "blockc/Pipelines/Pipelines.h"

#include "blockc/Codegen/CPU/Passes.h"
#include "blockc/Codegen/Common/Passes.h"
#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Conversion/Passes.h"
#include "blockc/Dialect/Transformer/IR/TransformerDialect.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"
#include "blockc/Support/Error.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"

#include <functional>

using namespace mlir;
using namespace blockc;

//===----------------------------------------------------------------------===//
// CPU target configuration
//===----------------------------------------------------------------------===//

std::string blockc::missingHostFeature(const CPUTargetConfig &config) {
  if (std::string missing = missingHostFeature(config.isa); !missing.empty())
    return missing;
  for (CPUFeature f : config.features)
    if (f != CPUFeature::None && !hostHasFeature(f))
      return stringifyCPUFeature(f).str();
  return "";
}

CPUTargetConfig CPUTargetConfig::resolved() const {
  CPUTargetConfig c = *this;
  bool host = c.isa == CPUISA::Host;
  if (host)
    c.isa = getHostISA();
  const CPUISAInfo &info = getCPUISAInfo(c.isa);
  if (c.vectorWidth == 0)
    c.vectorWidth = info.vectorWidth;
  if (c.registers == 0)
    c.registers = info.registers;
  if (c.l1Bytes == 0)
    c.l1Bytes = host && getHostCacheBytes(1) ? getHostCacheBytes(1) : 32 * 1024;
  if (c.l2Bytes == 0)
    c.l2Bytes =
        host && getHostCacheBytes(2) ? getHostCacheBytes(2) : 1024 * 1024;
  // Extensions: the listed ones (none: an explicit empty set), or the
  // host's that the ISA can use with isa=host.
  llvm::SmallVector<CPUFeature> enabled;
  if (c.features.empty() && host) {
    enabled = getHostFeatures(c.isa);
  } else {
    for (const CPUFeatureInfo &f : getCPUFeatures())
      if (llvm::is_contained(c.features, f.feature))
        enabled.push_back(f.feature);
  }
  if (enabled.empty())
    enabled.push_back(CPUFeature::None);
  c.features = std::move(enabled);
  // The vendor's choices: the host's only with isa=host, so that code for a
  // pinned ISA does not depend on the compiling machine.
  if (c.vendor == CPUVendor::Auto)
    c.vendor = host ? getHostCPUVendor() : CPUVendor::Generic;
  return c;
}

std::string CPUTargetConfig::checkPrefetchBytes() const {
  if (prefetchBytes == -1 || prefetchBytes == 0 ||
      (prefetchBytes > 0 && prefetchBytes <= 65536 && prefetchBytes % 64 == 0))
    return "";
  return "must be -1 (by the CPU vendor), 0 (no prefetch) or a multiple of "
         "64 up to 65536, got " +
         std::to_string(prefetchBytes);
}

bool CPUTargetConfig::has(CPUFeature feature) const {
  return llvm::is_contained(features, feature);
}

std::string CPUTargetConfig::checkFeatures() const {
  for (const CPUFeatureInfo &f : getCPUFeatures())
    if (has(f.feature) && !cpuISAIncludes(isa, f.needs))
      return (f.name + " needs isa=" + getCPUFeatureISAs(f.feature) +
              ", not isa=" + stringifyCPUISA(isa))
          .str();
  return "";
}

llvm::SmallVector<std::string> CPUTargetConfig::llvmTargetFeatures() const {
  llvm::SmallVector<std::string> result;
  for (llvm::StringRef f : getCPUISAInfo(isa).llvmFeatures)
    result.push_back(f.str());
  // The extensions on top of a pinned ISA's CPU model (the host's has
  // them).
  if (isa != CPUISA::Host)
    for (CPUFeature f : features)
      if (f != CPUFeature::None)
        for (llvm::StringRef llvmFeature : getCPUFeatureInfo(f).llvmFeatures)
          result.push_back(llvmFeature.str());
  return result;
}

//===----------------------------------------------------------------------===//
// Stage 1: transformer -> linalg on tensors
//===----------------------------------------------------------------------===//

namespace {

/// The stage 1 of every target: transformer ops decomposed into primitives,
/// `addKernels` (the target's kernel passes, on each function), then the
/// generic lowering of what the kernels left and of elementwise arith.
void addStage1(OpPassManager &pm,
               llvm::function_ref<void(OpPassManager &)> addKernels) {
  pm.addPass(transformer::createTransformerFoldEmptyPass());
  pm.addPass(transformer::createTransformerDecomposePass());
  // bf16/f16 blocks: f32 between the rounding points.
  pm.addPass(transformer::createTransformerComputeInF32Pass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (addKernels)
    addKernels(pm.nest<func::FuncOp>());
  // Quantised projections no kernel took: their dequantised weights.
  pm.addPass(createConvertWeightQuantToLinalgPass());
  pm.addPass(createConvertTransformerToLinalgPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

} // namespace

void blockc::buildLowerToLinalgPipeline(OpPassManager &pm) {
  addStage1(pm, nullptr);
}

void blockc::buildCPULowerToLinalgPipeline(OpPassManager &pm,
                                           const CPUTargetConfig &config) {
  CPUTargetConfig c = config.resolved();
  addStage1(pm, [&](OpPassManager &fpm) {
    // Heuristic passes write the typed configuration, the kernel passes
    // (mechanism) read it.
    cpu::CPUSelectTilesPassOptions tiles;
    tiles.isa = getCodegenISA(c.isa);
    tiles.vectorWidth = c.vectorWidth;
    tiles.registers = c.registers;
    tiles.l1Bytes = c.l1Bytes;
    tiles.l2Bytes = c.l2Bytes;
    tiles.prepareWeights = c.prepareWeights;
    tiles.avx512BF16 = c.has(CPUFeature::AVX512BF16);
    tiles.avx512VNNI = c.has(CPUFeature::AVX512VNNI);
    tiles.avxVNNI = c.has(CPUFeature::AVXVNNI);
    tiles.amxBF16 = c.has(CPUFeature::AMXBF16);
    tiles.vendor = getCodegenCPUVendor(c.vendor);
    tiles.prefetchBytes = c.prefetchBytes;
    fpm.addPass(cpu::createCPUSelectTilesPass(tiles));
    fpm.addPass(cpu::createCPULowerQuantizedLinearPass());
    fpm.addPass(cpu::createCPUGroupProjectionsPass());
    fpm.addPass(cpu::createCPULowerLinearPass());
    fpm.addPass(cpu::createCPUFuseNormPass());
    fpm.addPass(cpu::createCPUFuseResidualPass());
    fpm.addPass(cpu::createCPUFuseActivationPass());
    fpm.addPass(cpu::createCPUFuseRoPEPass());
    fpm.addPass(cpu::createCPULowerNormsPass());
    fpm.addPass(cpu::createCPULowerSDPAPass());
    fpm.addPass(cpu::createCPULowerTransposesPass());
  });
  // What the kernels left as elementwise linalg ops (e.g. RoPE, the
  // attention's reshapes, norm tails) is fused by upstream's patterns, as
  // on NVPTX.
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  // Packed weights: their packing moves into a prepare function per entry
  // (what stays, packs per call); both lowered to pad + transpose.
  pm.addPass(cpu::createCPUPrepareWeightsPass());
  // The packing's in-register transposes.
  pm.addNestedPass<func::FuncOp>(cpu::createCPULowerTransposesPass());
  // What is left between the kernels (a 16-bit block's conversions and
  // roundings, unfused activations): parallel loops over vectors.
  cpu::CPUSelectTilesPassOptions elementwiseTiles;
  elementwiseTiles.isa = getCodegenISA(c.isa); // (the target is the one
                                               // already on the function)
  elementwiseTiles.elementwise = true;
  pm.addNestedPass<func::FuncOp>(
      cpu::createCPUSelectTilesPass(elementwiseTiles));
  pm.addNestedPass<func::FuncOp>(cpu::createCPUTileElementwisePass());
  // Tensor-parallel blocks (transformer-tensor-parallel): their
  // shard.all_reduce ops become MPI calls on buffers, on MPI_COMM_WORLD
  // (blockc's lowering: upstream's sizes dynamic buffers wrongly), and
  // upstream's for any other shard op.
  pm.addPass(createShardAllReduceToMPIPass());
  pm.addPass(createConvertShardToMPIPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

//===----------------------------------------------------------------------===//
// Stages 2 and 3 (CPU)
//===----------------------------------------------------------------------===//

namespace {

bufferization::OneShotBufferizePassOptions functionBoundaryBufferization() {
  bufferization::OneShotBufferizePassOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  return options;
}

} // namespace

void blockc::buildCPUBufferizePipeline(OpPassManager &pm,
                                       const CPUTargetConfig &config) {
  CPUTargetConfig c = config.resolved();
  pm.addPass(bufferization::createOneShotBufferizePass(
      functionBoundaryBufferization()));
  // Results bufferized in place into an argument (KV caches of a decode
  // entry) are dropped before deallocation, which would clone them.
  pm.addPass(cpu::createDropInPlaceResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Independent blocks (scf.forall) run on OpenMP threads.
  pm.addPass(createForallToParallelLoopPass());
  ConvertSCFToOpenMPPassOptions openmp;
  openmp.numThreads = static_cast<unsigned>(c.threads);
  pm.addPass(createConvertSCFToOpenMPPass(openmp));
  pm.addNestedPass<func::FuncOp>(cpu::createCPUHoistThreadScratchPass());
  pm.addPass(createCanonicalizerPass());
}

void blockc::buildCPULowerToLLVMPipeline(OpPassManager &pm) {
  // Before the metadata goes: it reads the function's cpu_target.
  pm.addNestedPass<func::FuncOp>(cpu::createCPUExpandBF16Pass());
  pm.addPass(transformer::createTransformerStripMetadataPass());
  pm.addNestedPass<func::FuncOp>(cpu::createCPUFmaToFmulAddPass());
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // Every parallel kernel as a private function, identical ones (a stack's
  // layers, projections of one shape) kept once: the rest of the pipeline
  // and LLVM translate and compile each distinct kernel once.
  pm.addPass(cpu::createCPUOutlineParallelKernelsPass());
  pm.addPass(createMergeIdenticalFunctionsPass());
  // The register-tile micro-kernels that several kernels share (the
  // projections' tile shapes) as one function each.
  pm.addPass(cpu::createCPUOutlineMicroKernelsPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  // The x86vector and AMX ops of kernels that use an ISA extension
  // (vdpbf16ps, tdpbf16ps).
  vectorToLLVM.x86Vector = true;
  vectorToLLVM.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // MPI calls of tensor-parallel modules (the Open MPI ABI, from the
  // module's DLTI map): upstream has only the convert-to-llvm interface.
  ConvertToLLVMPassOptions mpiToLLVM;
  mpiToLLVM.filterDialects = {"mpi"};
  pm.addPass(createConvertToLLVMPass(mpiToLLVM));
  pm.addPass(createCSEPass());
  pm.addPass(createOpenMPIABIPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  // Through the dialect interfaces: loops that carry AMX tiles have branch
  // operands of the AMX tile type, which only its interface converts.
  ConvertToLLVMPassOptions cfToLLVM;
  cfToLLVM.filterDialects = {"cf", "amx"};
  pm.addPass(createConvertToLLVMPass(cfToLLVM));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void blockc::buildCPUPipeline(OpPassManager &pm,
                              const CPUTargetConfig &config) {
  CPUTargetConfig c = config.resolved();
  buildCPULowerToLinalgPipeline(pm, c);
  buildCPUBufferizePipeline(pm, c);
  buildCPULowerToLLVMPipeline(pm);
}

//===----------------------------------------------------------------------===//
// Decode
//===----------------------------------------------------------------------===//

void blockc::buildDeriveDecodePipeline(OpPassManager &pm,
                                       const DecodeOptions &options) {
  if (options.paged) {
    transformer::TransformerDerivePagedDecodePassOptions derive;
    derive.entry = options.entry;
    derive.pageSize = options.pageSize;
    derive.keepEntry = options.keepPrefill;
    pm.addPass(transformer::createTransformerDerivePagedDecodePass(derive));
    return;
  }
  transformer::TransformerDeriveDecodePassOptions derive;
  derive.entry = options.entry;
  derive.kvLayout = options.kvLayout;
  derive.keepEntry = options.keepPrefill;
  pm.addPass(transformer::createTransformerDeriveDecodePass(derive));
}

void blockc::buildCPUDecodePipeline(OpPassManager &pm,
                                    const CPUTargetConfig &config,
                                    const DecodeOptions &options) {
  buildDeriveDecodePipeline(pm, options);
  buildCPUPipeline(pm, config);
}

//===----------------------------------------------------------------------===//
// NVPTX
//===----------------------------------------------------------------------===//

namespace {

/// The NVPTX tile heuristic for the options' chip.
std::unique_ptr<Pass>
createGPUSelectTiles(const NVPTXPipelineOptions &options) {
  nvptx::GPUSelectTilesPassOptions tiles;
  tiles.chip = options.chip.getValue();
  tiles.allowTf32 = options.allowTf32;
  tiles.warpgroupSchedule = options.warpgroupSchedule.getValue();
  tiles.warpgroupEpilogue = options.warpgroupEpilogue.getValue();
  tiles.warpgroupRope = options.warpgroupRope;
  tiles.mmaRope = options.mmaRope;
  tiles.attentionConsumers = options.attentionConsumers;
  tiles.attentionStages = options.attentionStages;
  tiles.attentionOverlap = options.attentionOverlap;
  tiles.gemvRopeAppend = options.gemvRopeAppend;
  return nvptx::createGPUSelectTilesPass(tiles);
}

} // namespace

void blockc::buildNVPTXLowerToLinalgPipeline(
    OpPassManager &pm, const NVPTXPipelineOptions &options) {
  // The chip's facts, which the heuristics and the emulator read.
  nvptx::GPUSetTargetPassOptions target;
  target.chip = options.chip.getValue();
  target.gpu = options.gpu.getValue();
  pm.addPass(nvptx::createGPUSetTargetPass(target));
  // Attention becomes the fused GPU kernel; elementwise chains are fused
  // into single linalg ops (one kernel each).
  addStage1(pm, [&](OpPassManager &fpm) {
    fpm.addPass(createGPUSelectTiles(options));
    fpm.addPass(nvptx::createGPULowerSDPAPass());
    // A paged entry's positions, page writes and paged attention.
    fpm.addPass(nvptx::createGPULowerPagedPass());
  });
  // Tensor cores: contractions of a 16-bit weight with an f32 input that
  // holds 16-bit values read that input in 16 bits (exact); the fusion
  // below folds the narrowing into its producer.
  pm.addNestedPass<func::FuncOp>(createGPUSelectTiles(options));
  pm.addNestedPass<func::FuncOp>(nvptx::createGPUNarrowMmaOperandsPass());
  // On a GPU a launch costs more than recomputing a broadcast producer.
  FuseElementwisePassOptions fusion;
  fusion.fuseBroadcast = true;
  // The widening a norm's statistics read is recomputed in the reduction
  // (each element once) instead of written out in f32.
  fusion.fuseIntoReductions = true;
  // What a projection's epilogue computes once is not recomputed by each
  // reader.
  fusion.keepSharedTensorCoreResults = true;
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass(fusion));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void blockc::buildNVPTXMapToGPUPipeline(OpPassManager &pm,
                                        const NVPTXPipelineOptions &options) {
  // Contractions become shared-memory tiled kernels; the other parallel
  // loops are tiled into blocks of threads along their two innermost
  // dimensions, innermost on x (coalesced); their reductions stay
  // sequential loops inside each thread.
  // q, k and v bufferize to buffers of their own (not one shared with the
  // norms' and residuals' outputs or with other layers'), whose only
  // readers the epilogues can then take over: the RoPE, the cache append.
  pm.addNestedPass<func::FuncOp>(nvptx::createGPUSeparateHeadBuffersPass());
  pm.addPass(bufferization::createOneShotBufferizePass(
      functionBoundaryBufferization()));
  // A decode entry's KV caches are written in place into its arguments
  // (device memory); their results go, as on the CPU.
  pm.addPass(cpu::createDropInPlaceResultsPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Barriers of the kernels built on tensors, now that buffers are freed.
  fpm.addPass(nvptx::createGPULowerWorkgroupBarriersPass());
  // The sm_90a attention kernel (its TMA, mbarrier and wgmma ops declare
  // no memory effects).
  fpm.addPass(nvptx::createGPULowerWarpgroupAttentionPass());
  // Contractions exist only now (on buffers): the heuristic runs again and
  // keeps what stage 1 chose.
  fpm.addPass(createGPUSelectTiles(options));
  // Small-M contractions (decode steps): weight-streaming kernels.
  fpm.addPass(nvptx::createGPUTileGemvPass());
  // Decode projections that choose at run time compute the norm of their
  // input themselves; the norm runs for the tensor-core kernels only.
  nvptx::GPUTileMatmulPassOptions matmul;
  matmul.normPrologue = options.gemvNormPrologue;
  fpm.addPass(nvptx::createGPUTileMatmulPass(matmul));
  // Reductions over rows (norm statistics): a warp per row, a norm's two
  // statistics and its apply in one kernel.
  nvptx::GPUTileReductionsPassOptions reductions;
  reductions.chainStatistics = true;
  reductions.fuseApply = true;
  fpm.addPass(nvptx::createGPUTileReductionsPass(reductions));
  // Strided copies (a decode step's K/V rows into its caches) as kernels.
  fpm.addPass(nvptx::createGPUStridedCopiesToKernelsPass());
  // Elementwise ops (RoPE, roundings, widenings, those copies): 16-byte
  // vector accesses where the layout allows, checked on the host.
  fpm.addPass(nvptx::createGPUTileElementwisePass());
  fpm.addPass(createConvertLinalgToParallelLoopsPass());
  fpm.addPass(nvptx::createGPUTileAndMapPass());
  fpm.addPass(createConvertParallelLoopToGpuPass());
  fpm.addPass(nvptx::createGPULegalizeGridPass());
  nvptx::GPUExpandMathPassOptions math;
  math.portable = options.emulate;
  fpm.addPass(nvptx::createGPUExpandMathPass(math));
  fpm.addPass(nvptx::createGPUHostSharedAllocsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A decode step's q, k and v weight-streaming kernels (independent,
  // the same thread blocks) as one launch.
  if (options.mergeLaunches) {
    nvptx::GPUMergeLaunchesPassOptions merge;
    merge.kinds = {"gemv"};
    pm.addNestedPass<func::FuncOp>(nvptx::createGPUMergeLaunchesPass(merge));
  }
}

namespace {

llvm::StringRef stringifyGPUBinaryFormat(GPUBinaryFormat format) {
  switch (format) {
  case GPUBinaryFormat::ISA:
    return "isa";
  case GPUBinaryFormat::Bin:
    return "bin";
  case GPUBinaryFormat::Fatbin:
    return "fatbin";
  }
  llvm_unreachable("unknown GPU binary format");
}

} // namespace

void blockc::buildNVPTXEmulatorLowerToLLVMPipeline(
    OpPassManager &pm, const NVPTXPipelineOptions &options) {
  pm.addPass(transformer::createTransformerStripMetadataPass());
  pm.addNestedPass<func::FuncOp>(cpu::createCPUFmaToFmulAddPass());
  // The emulated kernels are host code: bf16 rounding as integer code, as
  // on the CPU (the PTX path keeps the native conversions).
  pm.addNestedPass<func::FuncOp>(cpu::createCPUExpandBF16Pass());
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // Constants (hoisted out of the launches by canonicalization, e.g. the
  // tensor-core kernels' zero accumulators) go back in, not into kernel
  // parameters.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(nvptx::createGPUMergeModulesPass());
  pm.addPass(nvptx::createGPULowerTensorMapArgsPass());
  nvptx::GPUEmulateKernelsPassOptions emulation;
  emulation.chip = options.chip.getValue();
  emulation.checkBounds = options.checkBounds;
  emulation.profile = options.profile;
  pm.addPass(nvptx::createGPUEmulateKernelsPass(emulation));
  // What stays on the host of the nvgpu dialect: TMA tensor maps
  // (mgpuTensorMapEncodeTiledMemref, which the emulator runtime provides).
  pm.addPass(createConvertNVGPUToNVVMPass());
  // Upstream's host lowering of the NVVM pipeline
  // (gpu::buildLowerToNVVMPassPipeline without its gpu.module half): the
  // kernels are host functions now and go the same way.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  // The fragments of the tensor-core ops (vectors).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(nvptx::createGPURegisterEmulatedKernelsPass());
  // The launches on one stream, as on a GPU (the emulator runs each launch
  // when it is made).
  pm.addPass(nvptx::createGPUAsyncLaunchesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void blockc::buildNVPTXLowerToLLVMPipeline(
    OpPassManager &pm, const NVPTXPipelineOptions &options) {
  if (options.emulate)
    return buildNVPTXEmulatorLowerToLLVMPipeline(pm, options);
  pm.addPass(transformer::createTransformerStripMetadataPass());
  pm.addNestedPass<func::FuncOp>(cpu::createCPUFmaToFmulAddPass());
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // Constants (hoisted out of the launches by canonicalization, e.g. the
  // tensor-core kernels' zero accumulators) go back in, not into kernel
  // parameters.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(nvptx::createGPUMergeModulesPass());
  pm.addPass(nvptx::createGPULowerTensorMapArgsPass());
  // bf16 mma.sync, which upstream's convert-nvgpu-to-nvvm does not lower.
  pm.addNestedPass<gpu::GPUModuleOp>(nvptx::createGPULowerMmaToNVVMPass());
  // The warpgroup accumulator fragment ops, as accesses of the struct that
  // upstream's convert-nvgpu-to-nvvm (in the builder below) makes of an
  // accumulator.
  pm.addNestedPass<gpu::GPUModuleOp>(
      nvptx::createGPULowerAccumulatorFragmentsPass());
  // ptxas applies setmaxnreg only where it knows the register count at
  // entry: one block per SM as the launch bound of those kernels.
  pm.addNestedPass<gpu::GPUModuleOp>(nvptx::createGPUSetMinBlocksPass());
  pm.addNestedPass<func::FuncOp>(createLowerAffinePass());
  // No scf-to-cf before upstream's builder: its convert-nvgpu-to-nvvm
  // converts the warpgroup accumulators that scf.for loops carry (it has
  // SCF's structural type conversions, not cf's) and runs scf-to-cf next.
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip.getValue();
  nvvm.cubinFeatures = options.features.getValue();
  if (nvvm.cubinFeatures.empty())
    nvvm.cubinFeatures =
        "+ptx" + std::to_string(
                     codegen::getKnownArchPtxVersion(options.chip.getValue()));
  nvvm.cubinFormat = stringifyGPUBinaryFormat(options.format).str();
  nvvm.optLevel = options.optLevel.getValue();
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  // Each function's launches, copies and frees on one stream, the host
  // waiting only where it touches memory and at the return.
  pm.addPass(nvptx::createGPUAsyncLaunchesPass());
  if (options.toolkit.empty())
    return;
  // Upstream's builder has no toolkit option: set it on its
  // gpu-module-to-binary, so that the toolkit is part of the printed
  // pipeline instead of the process environment.
  for (Pass &pass : pm.getPasses()) {
    if (pass.getArgument() != "gpu-module-to-binary")
      continue;
    if (failed(pass.initializeOptions(
            "toolkit=" + options.toolkit.getValue(),
            [](const llvm::Twine &) { return failure(); })))
      llvm::report_fatal_error("gpu-module-to-binary has no toolkit option");
  }
}

void blockc::buildNVPTXPipeline(OpPassManager &pm,
                                const NVPTXPipelineOptions &options) {
  buildNVPTXLowerToLinalgPipeline(pm, options);
  buildNVPTXMapToGPUPipeline(pm, options);
  buildNVPTXLowerToLLVMPipeline(pm, options);
}

void blockc::buildNVPTXDecodePipeline(OpPassManager &pm,
                                      const NVPTXPipelineOptions &options,
                                      const DecodeOptions &decode) {
  buildDeriveDecodePipeline(pm, decode);
  buildNVPTXPipeline(pm, options);
}

//===----------------------------------------------------------------------===//
// Tensor parallelism
//===----------------------------------------------------------------------===//

int64_t blockc::getTensorParallelRanks(ModuleOp module) {
  auto ranks = module->getAttrOfType<IntegerAttr>(
      transformer::TransformerDialect::kTensorParallelAttr);
  return ranks ? ranks.getInt() : 1;
}

llvm::Error blockc::partitionForTensorParallel(ModuleOp module, int64_t ranks) {
  int64_t done = getTensorParallelRanks(module);
  if (done > 1) {
    if (ranks != 0 && ranks != done)
      return makeError("--tensor-parallel=" + llvm::Twine(ranks) +
                       ", but the model is partitioned over " +
                       llvm::Twine(done) + " ranks already");
    return llvm::Error::success();
  }
  if (ranks < 2)
    return llvm::Error::success();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  transformer::TransformerTensorParallelPassOptions options;
  options.ranks = ranks;
  pm.addPass(transformer::createTransformerTensorParallelPass(options));
  if (failed(pm.run(module)))
    return makeError("the model cannot be split over " + llvm::Twine(ranks) +
                     " ranks (see above)");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void blockc::registerBlockcPipelines() {
  PassPipelineRegistration<>(
      "blockc-lower-to-linalg-pipeline",
      "Stage 1: transformer dialect to linalg on tensors (generic lowering)",
      [](OpPassManager &pm) { buildLowerToLinalgPipeline(pm); });
  PassPipelineRegistration<CPUPipelineOptions>(
      "blockc-cpu-lower-to-linalg-pipeline",
      "Stage 1 (CPU): transformer to linalg, with vector kernels",
      [](OpPassManager &pm, const CPUPipelineOptions &options) {
        buildCPULowerToLinalgPipeline(pm, options.getTargetConfig());
      });
  PassPipelineRegistration<CPUPipelineOptions>(
      "blockc-cpu-bufferize-pipeline",
      "Stage 2 (CPU): linalg on tensors to loops on buffers",
      [](OpPassManager &pm, const CPUPipelineOptions &options) {
        buildCPUBufferizePipeline(pm, options.getTargetConfig());
      });
  PassPipelineRegistration<>(
      "blockc-cpu-lower-to-llvm-pipeline",
      "Stage 3 (CPU): loops on buffers to the LLVM dialect",
      [](OpPassManager &pm) { buildCPULowerToLLVMPipeline(pm); });
  PassPipelineRegistration<CPUPipelineOptions>(
      "blockc-cpu-pipeline", "All CPU stages: transformer to LLVM dialect",
      [](OpPassManager &pm, const CPUPipelineOptions &options) {
        buildCPUPipeline(pm, options.getTargetConfig());
      });
  PassPipelineRegistration<CPUDecodePipelineOptions>(
      "blockc-cpu-decode-pipeline",
      "The decode entry (transformer-derive-decode) and all CPU stages",
      [](OpPassManager &pm, const CPUDecodePipelineOptions &options) {
        buildCPUDecodePipeline(pm, options.getTargetConfig(),
                               options.getDecodeOptions());
      });
  PassPipelineRegistration<NVPTXPipelineOptions>(
      "blockc-nvptx-lower-to-linalg-pipeline",
      "Stage 1 (NVPTX): transformer to linalg, fused attention kernel, "
      "elementwise fusion",
      [](OpPassManager &pm, const NVPTXPipelineOptions &options) {
        buildNVPTXLowerToLinalgPipeline(pm, options);
      });
  PassPipelineRegistration<NVPTXPipelineOptions>(
      "blockc-nvptx-map-to-gpu-pipeline",
      "Stage 2 (NVPTX): linalg on tensors to gpu.launch on managed buffers",
      [](OpPassManager &pm, const NVPTXPipelineOptions &options) {
        buildNVPTXMapToGPUPipeline(pm, options);
      });
  PassPipelineRegistration<NVPTXPipelineOptions>(
      "blockc-nvptx-lower-to-llvm-pipeline",
      "Stage 3 (NVPTX): outline kernels, NVVM, GPU binary, host LLVM",
      [](OpPassManager &pm, const NVPTXPipelineOptions &options) {
        buildNVPTXLowerToLLVMPipeline(pm, options);
      });
  PassPipelineRegistration<NVPTXPipelineOptions>(
      "blockc-nvptx-pipeline", "All NVPTX stages: transformer to GPU binary",
      [](OpPassManager &pm, const NVPTXPipelineOptions &options) {
        buildNVPTXPipeline(pm, options);
      });
}
