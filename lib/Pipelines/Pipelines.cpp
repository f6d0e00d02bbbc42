//===- Pipelines.cpp - blockc pass pipelines ------------------------------===//
//
// The stages are spelled as textual pipelines of registered passes, so that
// what a stage runs is exactly what `--dump-pass-pipeline` prints and what a
// user can paste into `blockc-opt --pass-pipeline=...`.
//
//===----------------------------------------------------------------------===//

#include "blockc/Pipelines/Pipelines.h"

#include "blockc/Codegen/NVPTX/Passes.h"
#include "blockc/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

void addTextual(OpPassManager &pm, llvm::StringRef pipeline) {
  std::string error;
  llvm::raw_string_ostream os(error);
  // The pipelines are fixed strings of registered passes: a failure here is
  // a bug in blockc, not a user error.
  if (failed(parsePassPipeline(pipeline, pm, os)))
    llvm::report_fatal_error(llvm::Twine("invalid built-in pipeline: ") +
                             error);
}

} // namespace

void blockc::buildLowerToLinalgPipeline(OpPassManager &pm) {
  addTextual(pm,
             "transformer-fold-empty,transformer-decompose,canonicalize,cse,"
             "convert-transformer-to-linalg,"
             "convert-elementwise-to-linalg,canonicalize,cse");
}

void blockc::buildCPULowerToLinalgPipeline(OpPassManager &pm) {
  // As the generic stage 1, but projections become the register-tiled
  // vector kernel of blockc-cpu-lower-linear instead of a linalg.generic.
  addTextual(pm,
             "transformer-fold-empty,transformer-decompose,canonicalize,cse,"
             "func.func(blockc-cpu-select-tiles,blockc-cpu-group-projections,"
             "blockc-cpu-lower-linear,"
             "blockc-cpu-fuse-norm,blockc-cpu-fuse-residual,"
             "blockc-cpu-fuse-activation,blockc-cpu-lower-sdpa),"
             "convert-transformer-to-linalg,"
             "convert-elementwise-to-linalg,canonicalize,cse");
}

void blockc::buildCPUBufferizePipeline(OpPassManager &pm) {
  // Results bufferized in place into an argument (KV caches of a decode
  // entry) are dropped before deallocation, which would clone them.
  addTextual(pm, "one-shot-bufferize{bufferize-function-boundaries "
                 "function-boundary-type-conversion=identity-layout-map},"
                 "blockc-drop-inplace-results,"
                 "buffer-results-to-out-params{hoist-static-allocs=true},"
                 "canonicalize,buffer-deallocation-pipeline,"
                 "convert-bufferization-to-memref,"
                 "convert-linalg-to-loops,canonicalize,cse,"
                 // Independent blocks (scf.forall) run on OpenMP threads.
                 "scf-forall-to-parallel,convert-scf-to-openmp,canonicalize");
}

void blockc::buildCPULowerToLLVMPipeline(OpPassManager &pm) {
  addTextual(pm,
             "transformer-strip-metadata,func.func(llvm-request-c-wrappers),"
             "convert-vector-to-scf{full-unroll=true},"
             "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
             "convert-openmp-to-llvm,"
             "convert-vector-to-llvm{vector-contract-lowering=outerproduct},"
             "finalize-memref-to-llvm,convert-math-to-llvm,"
             "convert-math-to-libm,convert-arith-to-llvm,"
             "convert-cf-to-llvm,convert-func-to-llvm,"
             "convert-index-to-llvm,convert-ub-to-llvm,"
             "reconcile-unrealized-casts");
}

void blockc::buildCPUPipeline(OpPassManager &pm) {
  buildCPULowerToLinalgPipeline(pm);
  buildCPUBufferizePipeline(pm);
  buildCPULowerToLLVMPipeline(pm);
}

void blockc::buildNVPTXLowerToLinalgPipeline(OpPassManager &pm) {
  // As the generic stage 1, but attention becomes the fused GPU kernel and
  // elementwise chains are fused into single linalg ops (one kernel each).
  addTextual(pm,
             "transformer-fold-empty,transformer-decompose,canonicalize,cse,"
             "func.func(blockc-gpu-select-tiles,blockc-gpu-lower-sdpa),"
             "convert-transformer-to-linalg,"
             "convert-elementwise-to-linalg,canonicalize,cse,"
             "func.func(blockc-gpu-fuse-elementwise),canonicalize,cse");
}

void blockc::buildNVPTXMapToGPUPipeline(OpPassManager &pm) {
  // Contractions become shared-memory tiled kernels; the other parallel
  // loops are tiled into blocks of 8 x 32 threads along their two innermost
  // dimensions, innermost on x (coalesced); their reductions stay
  // sequential loops inside each thread.
  addTextual(pm, "one-shot-bufferize{bufferize-function-boundaries "
                 "function-boundary-type-conversion=identity-layout-map},"
                 "canonicalize,buffer-deallocation-pipeline,"
                 "func.func(blockc-gpu-select-tiles,blockc-gpu-tile-matmul,"
                 "convert-linalg-to-parallel-loops,"
                 "blockc-gpu-tile-and-map,convert-parallel-loops-to-gpu,"
                 "blockc-gpu-expand-math,blockc-gpu-host-shared-allocs),"
                 "canonicalize,cse");
}

void blockc::buildNVPTXLowerToLLVMPipeline(
    OpPassManager &pm, const NVPTXPipelineOptions &options) {
  addTextual(pm, "transformer-strip-metadata,"
                 "func.func(llvm-request-c-wrappers),"
                 "gpu-kernel-outlining,blockc-gpu-merge-modules,"
                 "func.func(lower-affine),convert-scf-to-cf");
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip.getValue();
  nvvm.cubinFeatures = options.features.getValue();
  nvvm.cubinFormat = options.format.getValue();
  nvvm.optLevel = options.optLevel.getValue();
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void blockc::buildNVPTXPipeline(OpPassManager &pm,
                                const NVPTXPipelineOptions &options) {
  buildNVPTXLowerToLinalgPipeline(pm);
  buildNVPTXMapToGPUPipeline(pm);
  buildNVPTXLowerToLLVMPipeline(pm, options);
}

void blockc::registerBlockcPipelines() {
  PassPipelineRegistration<>(
      "blockc-lower-to-linalg-pipeline",
      "Stage 1: transformer dialect to linalg on tensors",
      [](OpPassManager &pm) { buildLowerToLinalgPipeline(pm); });
  PassPipelineRegistration<>(
      "blockc-cpu-lower-to-linalg-pipeline",
      "Stage 1 (CPU): transformer to linalg, with vector kernels for linear",
      [](OpPassManager &pm) { buildCPULowerToLinalgPipeline(pm); });
  PassPipelineRegistration<>(
      "blockc-cpu-bufferize-pipeline",
      "Stage 2 (CPU): linalg on tensors to loops on buffers",
      [](OpPassManager &pm) { buildCPUBufferizePipeline(pm); });
  PassPipelineRegistration<>(
      "blockc-cpu-lower-to-llvm-pipeline",
      "Stage 3 (CPU): loops on buffers to the LLVM dialect",
      [](OpPassManager &pm) { buildCPULowerToLLVMPipeline(pm); });
  PassPipelineRegistration<>("blockc-cpu-pipeline",
                             "All CPU stages: transformer to LLVM dialect",
                             [](OpPassManager &pm) { buildCPUPipeline(pm); });
  PassPipelineRegistration<>(
      "blockc-nvptx-lower-to-linalg-pipeline",
      "Stage 1 (NVPTX): transformer to linalg, fused attention kernel, "
      "elementwise fusion",
      [](OpPassManager &pm) { buildNVPTXLowerToLinalgPipeline(pm); });
  PassPipelineRegistration<>(
      "blockc-nvptx-map-to-gpu-pipeline",
      "Stage 2 (NVPTX): linalg on tensors to gpu.launch on managed buffers",
      [](OpPassManager &pm) { buildNVPTXMapToGPUPipeline(pm); });
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
