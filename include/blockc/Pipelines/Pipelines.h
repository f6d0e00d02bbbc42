//===- Pipelines.h - blockc pass pipelines ----------------------*- C++ -*-===//
//
// Builder functions for every named pipeline, each taking a typed options
// struct (the model is upstream's buildLowerToNVVMPassPipeline). The drivers
// (blockc, blockc-run) call these same functions, and
// registerBlockcPipelines() registers them by name with their options, so
// `blockc-opt --blockc-cpu-pipeline="isa=avx2"` reproduces exactly what a
// driver runs (see docs/Pipelines.md).
//
// Host-derived choices (`isa=host`, cache sizes of 0) are resolved to
// explicit values before any pass is built (resolveHostCPU), so a pipeline
// printed with --dump-pass-pipeline names every choice and replays the same
// IR on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_PIPELINES_PIPELINES_H
#define BLOCKC_PIPELINES_PIPELINES_H

#include "blockc/Dialect/Transformer/IR/TransformerOps.h"
#include "blockc/Target/CPUISA.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

#include <string>

namespace blockc {

/// The CPU the kernels are generated for. Zero fields mean "derive it":
/// from the ISA (vector width, registers) or from the host (caches, with
/// isa=host). resolved() makes every choice explicit.
struct CPUTargetConfig {
  CPUISA isa = CPUISA::Host;
  int64_t vectorWidth = 0;
  int64_t registers = 0;
  int64_t l1Bytes = 0;
  int64_t l2Bytes = 0;
  /// Threads of every parallel loop; 0 leaves it to the run time
  /// (OMP_NUM_THREADS, blockc-run --threads).
  int64_t threads = 0;
  /// The ISA extensions the kernels may use. Empty: the host's with
  /// isa=host, none with a pinned ISA (whose code then runs on every CPU of
  /// that ISA). resolved() leaves the enabled ones, or {None}.
  llvm::SmallVector<CPUFeature> features;
  /// Projections whose weight is an entry argument read packed panels made
  /// once by the entry's prepare function (blockc-cpu-prepare-weights);
  /// off: every call packs.
  bool prepareWeights = true;
  /// Whose cores the kernels are tuned for: Auto resolves to the host's
  /// with isa=host, Generic with a pinned ISA.
  CPUVendor vendor = CPUVendor::Auto;
  /// How far ahead the few-row projection kernels prefetch their weight
  /// stream (linear_tiles' prefetch_bytes): -1 chooses by the vendor
  /// (blockc-cpu-select-tiles), 0 disables, else a multiple of 64 up to
  /// 65536.
  int64_t prefetchBytes = -1;

  /// A copy with isa=host replaced by the compiling machine's ISA, a vector
  /// width or register count of 0 by the ISA's, cache sizes of 0 by the
  /// host's (isa=host) or by 32 KiB / 1 MiB. Every builder resolves its
  /// config first, so printed pipelines carry explicit values only.
  CPUTargetConfig resolved() const;

  /// Whether `feature` is in `features` (of a resolved config).
  bool has(CPUFeature feature) const;

  /// Why `features` does not fit the ISA (e.g. "avx512bf16 needs
  /// isa=avx512"), or "" (of a resolved config).
  std::string checkFeatures() const;

  /// Why `prefetchBytes` is not a valid choice, or "".
  std::string checkPrefetchBytes() const;

  /// LLVM target features that keep the host target machine within `isa`
  /// (e.g. "-avx512f" for avx2), so that objects and JIT code shaped for a
  /// smaller ISA also run on CPUs that have only that ISA; none for host.
  llvm::SmallVector<std::string> llvmTargetFeatures() const;
};

/// The host CPU feature that code for a resolved config needs and the host
/// lacks (missingHostFeature of its ISA, then its extensions), or "".
std::string missingHostFeature(const CPUTargetConfig &config);

/// The options of every CPU pipeline, under the same names everywhere
/// (`blockc-opt --blockc-cpu-pipeline="isa=avx2 threads=2"`).
template <typename Derived>
struct CPUPipelineOptionsBase : public mlir::PassPipelineOptions<Derived> {
  template <typename T> using Option = mlir::detail::PassOptions::Option<T>;

  Option<CPUISA> isa{*this, "isa",
                     llvm::cl::desc("Vector ISA the kernels are shaped for"),
                     llvm::cl::init(CPUISA::Host), CPUISAOptionValues{}};
  /// The values of `features`: set on the parser itself, because a
  /// ListOption parses its elements with a parser of its own (to which
  /// llvm::cl::values would not apply). Added once the option has its name
  /// (initialize), so that they are not registered as options themselves.
  struct FeatureParser : llvm::cl::parser<CPUFeature> {
    using llvm::cl::parser<CPUFeature>::parser;
    void initialize() {
      llvm::cl::parser<CPUFeature>::initialize();
      if (!Values.empty())
        return;
      CPUFeatureOptionValues{/*commandLine=*/false, "none of them"}.addTo(
          *this);
    }
    static void print(llvm::raw_ostream &os, CPUFeature feature) {
      os << stringifyCPUFeature(feature);
    }
  };
  mlir::detail::PassOptions::ListOption<CPUFeature, FeatureParser> features{
      *this, "features",
      llvm::cl::desc("ISA extensions the kernels may use beyond isa (empty: "
                     "the host's with isa=host, none otherwise)")};
  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per vector (0: the ISA's)"), llvm::cl::init(0)};
  Option<int64_t> registers{
      *this, "registers",
      llvm::cl::desc("Vector registers the kernels may use (0: the ISA's)"),
      llvm::cl::init(0)};
  Option<int64_t> l1Bytes{
      *this, "l1-bytes",
      llvm::cl::desc("L1 data cache per core in bytes (0: the host's with "
                     "isa=host, else 32768)"),
      llvm::cl::init(0)};
  Option<int64_t> l2Bytes{
      *this, "l2-bytes",
      llvm::cl::desc("L2 cache per core in bytes (0: the host's with "
                     "isa=host, else 1048576)"),
      llvm::cl::init(0)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads of every parallel loop (0: decided at run "
                     "time, OMP_NUM_THREADS or blockc-run --threads)"),
      llvm::cl::init(0)};

  Option<bool> prepareWeights{
      *this, "prepare-weights",
      llvm::cl::desc("Weights that are entry arguments are packed once, by "
                     "a prepare function per entry (off: every call packs)"),
      llvm::cl::init(true)};
  Option<CPUVendor> vendor{
      *this, "vendor",
      llvm::cl::desc("Whose cores the kernels are tuned for (the software "
                     "prefetch distance)"),
      llvm::cl::init(CPUVendor::Auto), CPUVendorOptionValues{}};
  Option<int64_t> prefetchBytes{
      *this, "prefetch-bytes",
      llvm::cl::desc("Bytes ahead the few-row projection kernels prefetch "
                     "their weight stream (-1: by the vendor, 0: none, else "
                     "a multiple of 64 up to 65536)"),
      llvm::cl::init(-1)};

  CPUTargetConfig getTargetConfig() const {
    CPUTargetConfig c;
    c.prepareWeights = prepareWeights;
    c.vendor = vendor;
    c.prefetchBytes = prefetchBytes;
    c.isa = isa;
    c.features.assign(features.begin(), features.end());
    c.vectorWidth = vectorWidth;
    c.registers = registers;
    c.l1Bytes = l1Bytes;
    c.l2Bytes = l2Bytes;
    c.threads = threads;
    return c;
  }
};

struct CPUPipelineOptions : CPUPipelineOptionsBase<CPUPipelineOptions> {};

/// What the decode pipelines derive (transformer-derive-decode).
struct DecodeOptions {
  /// The prefill entry to derive from; its decode entry is
  /// `<entry>_decode`.
  std::string entry = "forward";
  transformer::KVLayout kvLayout = transformer::KVLayout::bhsd;
  /// Keep the prefill entry beside the decode entry (blockc -emit=obj
  /// --decode); blockc-run drops it, since the decode entry at position 0
  /// is the prefill.
  bool keepPrefill = true;
  /// Derive the ragged paged entry `<entry>_paged` instead
  /// (transformer-derive-paged-decode) with pages of `pageSize` tokens.
  bool paged = false;
  int64_t pageSize = 16;
};

struct CPUDecodePipelineOptions
    : CPUPipelineOptionsBase<CPUDecodePipelineOptions> {
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("Prefill entry to derive from"),
                            llvm::cl::init("forward")};
  Option<transformer::KVLayout> kvLayout{
      *this, "kv-layout", llvm::cl::desc("Memory order of the KV caches"),
      llvm::cl::init(transformer::KVLayout::bhsd),
      llvm::cl::values(clEnumValN(transformer::KVLayout::bhsd, "bhsd",
                                  "[B, H_kv, L_max, D]"),
                       clEnumValN(transformer::KVLayout::bshd, "bshd",
                                  "[B, L_max, H_kv, D]"))};
  Option<bool> keepPrefill{
      *this, "keep-prefill",
      llvm::cl::desc("Keep the prefill entry beside the decode entry"),
      llvm::cl::init(true)};
  Option<bool> paged{
      *this, "paged",
      llvm::cl::desc("Derive the ragged paged entry <entry>_paged "
                     "(transformer-derive-paged-decode) instead"),
      llvm::cl::init(false)};
  Option<int64_t> pageSize{*this, "page-size",
                           llvm::cl::desc("Tokens per page of a paged entry"),
                           llvm::cl::init(16)};

  DecodeOptions getDecodeOptions() const {
    DecodeOptions d;
    d.entry = entry;
    d.kvLayout = kvLayout;
    d.keepPrefill = keepPrefill;
    d.paged = paged;
    d.pageSize = pageSize;
    return d;
  }
};

/// The GPU binary the NVPTX pipeline embeds (gpu-module-to-binary's
/// format).
enum class GPUBinaryFormat { ISA, Bin, Fatbin };

/// Options of the NVPTX pipeline (blockc's -gpu-arch, -ptx-features,
/// -gpu-binary, -cuda-toolkit and -emit flags map onto them).
struct NVPTXPipelineOptions
    : public mlir::PassPipelineOptions<NVPTXPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture (sm_XX)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> gpu{
      *this, "gpu",
      llvm::cl::desc(
          "GPU chip whose limits and peaks the tiles and the "
          "profile assume (t4, a100, a10, l4, h100, h200, b200; empty: "
          "the architecture's default)"),
      llvm::cl::init("")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (empty: the PTX ISA version the "
                     "architecture needs, e.g. +ptx80 for sm_90a)"),
      llvm::cl::init("")};
  Option<GPUBinaryFormat> format{
      *this, "format", llvm::cl::desc("Embedded GPU binary"),
      llvm::cl::init(GPUBinaryFormat::ISA),
      llvm::cl::values(
          clEnumValN(GPUBinaryFormat::ISA, "isa",
                     "PTX text, JIT-compiled by the driver at load (needs no "
                     "CUDA toolkit)"),
          clEnumValN(GPUBinaryFormat::Bin, "bin", "cubin (needs ptxas)"),
          clEnumValN(GPUBinaryFormat::Fatbin, "fatbin",
                     "fat binary (needs ptxas and fatbinary)"))};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("NVVM optimisation level"),
                       llvm::cl::init(3)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory whose bin/ has ptxas and "
                     "fatbinary (empty: MLIR's search: PATH, $CUDA_ROOT, "
                     "...)"),
      llvm::cl::init("")};
  Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Compile for the GPU emulator: portable math in stage "
                     "2, and in stage 3 the kernels become host functions "
                     "run by libblockc_emulator_runtime instead of PTX "
                     "(docs/GPUEmulator.md)"),
      llvm::cl::init(false)};
  Option<bool> allowTf32{
      *this, "allow-tf32",
      llvm::cl::desc("Run f32 contractions on TF32 tensor cores (sm_80+): "
                     "their operands are rounded to tf32 (10-bit mantissas)"),
      llvm::cl::init(false)};
  Option<std::string> warpgroupSchedule{
      *this, "warpgroup-schedule",
      llvm::cl::desc("sm_90a projections: specialized (a producer "
                     "warpgroup feeds two consumer warpgroups), persistent "
                     "(also one block per multiprocessor) or cooperative "
                     "(no producer) (docs/GPU.md)"),
      llvm::cl::init("specialized")};
  Option<std::string> warpgroupEpilogue{
      *this, "warpgroup-epilogue",
      llvm::cl::desc("sm_90a projections' epilogue: tma (a TMA store of "
                     "each output tile from shared memory where it fits) or "
                     "elements (per-element stores) (docs/GPU.md)"),
      llvm::cl::init("tma")};
  Option<bool> mmaRope{
      *this, "mma-rope",
      llvm::cl::desc("mma.sync projections (sm_80 and newer): apply the RoPE "
                     "that reads the rounded result on a shared-memory "
                     "staging tile where the tiles cover whole heads "
                     "(docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<bool> warpgroupRope{
      *this, "warpgroup-rope",
      llvm::cl::desc("sm_90a projections with a TMA-store epilogue: apply "
                     "the RoPE that reads the rounded result on the staging "
                     "tile where the tiles cover whole heads (docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<int64_t> attentionConsumers{
      *this, "attention-consumers",
      llvm::cl::desc("sm_90a attention: consumer warpgroups of the "
                     "warpgroup kernel, 2 (warp-specialised where its "
                     "shared memory fits) or 1 (docs/GPU.md)"),
      llvm::cl::init(2)};
  Option<int64_t> attentionStages{
      *this, "attention-stages",
      llvm::cl::desc("sm_90a attention: K/V ring stages of the "
                     "warp-specialised kernel, 3 (where its shared memory "
                     "fits, else 2) or 2 (docs/GPU.md)"),
      llvm::cl::init(3)};
  Option<bool> attentionOverlap{
      *this, "attention-overlap",
      llvm::cl::desc("sm_90a attention: the warp-specialised consumers' "
                     "intra-warpgroup overlap (default true; false: one "
                     "key tile at a time) (docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<bool> gemvRopeAppend{
      *this, "gemv-rope-append",
      llvm::cl::desc("Decode projections: the weight-streaming kernel "
                     "applies RoPE and appends K and V to the KV cache "
                     "(default true; false: separate kernels) "
                     "(docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<bool> gemvNormPrologue{
      *this, "gemv-norm-prologue",
      llvm::cl::desc("Decode projections: the weight-streaming kernel "
                     "computes the norm of its input itself (default "
                     "true; false: the norm's kernel) (docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<bool> mergeLaunches{
      *this, "merge-launches",
      llvm::cl::desc("Independent neighbouring weight-streaming kernels "
                     "(a decode step's q, k and v) run as one launch "
                     "(default true) (docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<bool> checkBounds{
      *this, "check-bounds",
      llvm::cl::desc("With emulate: check the indices of every memref access "
                     "inside kernels"),
      llvm::cl::init(false)};
  Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("With emulate: count each kernel's FLOPs and memory "
                     "traffic for the profile (docs/GPUEmulator.md#profile)"),
      llvm::cl::init(false)};
};

/// Stage 1, every target: transformer dialect -> linalg on tensors with the
/// generic lowering of every op (the reference the kernels are checked
/// against).
void buildLowerToLinalgPipeline(mlir::OpPassManager &pm);

/// Stage 1 (CPU): the common stage 1 with projections, attention and their
/// prologues/epilogues as vector kernels sized by `options`.
void buildCPULowerToLinalgPipeline(mlir::OpPassManager &pm,
                                   const CPUTargetConfig &config);

/// Stage 2 (CPU): linalg on tensors -> loops on buffers, parallel loops on
/// OpenMP. The entry function's tensor results become trailing
/// out-parameters.
void buildCPUBufferizePipeline(mlir::OpPassManager &pm,
                               const CPUTargetConfig &config);

/// Stage 3 (CPU): loops on buffers -> LLVM dialect, with C-interface
/// wrappers (`_mlir_ciface_<name>`) on every function.
void buildCPULowerToLLVMPipeline(mlir::OpPassManager &pm);

/// All CPU stages.
void buildCPUPipeline(mlir::OpPassManager &pm, const CPUTargetConfig &config);

/// Derives the decode entry (transformer-derive-decode) and, unless
/// `keepPrefill`, drops the prefill entry it was derived from. Target
/// independent: runs before a target's stage 1.
void buildDeriveDecodePipeline(mlir::OpPassManager &pm,
                               const DecodeOptions &options);

/// The decode entry derived and compiled for the CPU (blockc-run --decode,
/// blockc -emit=obj --decode).
void buildCPUDecodePipeline(mlir::OpPassManager &pm,
                            const CPUTargetConfig &config,
                            const DecodeOptions &options);

/// Stage 1 (NVPTX): the common stage 1 with attention as the fused kernel
/// (blockc-gpu-lower-sdpa, its tiles chosen for `options.chip` by
/// blockc-gpu-select-tiles) and elementwise chains fused
/// (blockc-gpu-fuse-elementwise).
void buildNVPTXLowerToLinalgPipeline(mlir::OpPassManager &pm,
                                     const NVPTXPipelineOptions &options);

/// Stage 2 (NVPTX): linalg on tensors -> buffers in managed memory and
/// gpu.launch ops (parallel loops tiled into blocks of threads; tiles and
/// thread blocks chosen for `options.chip` by blockc-gpu-select-tiles).
void buildNVPTXMapToGPUPipeline(mlir::OpPassManager &pm,
                                const NVPTXPipelineOptions &options);

/// Stage 3 (NVPTX): kernel outlining into one gpu.module, NVVM, the GPU
/// binary and the host side in the LLVM dialect.
void buildNVPTXLowerToLLVMPipeline(mlir::OpPassManager &pm,
                                   const NVPTXPipelineOptions &options);

/// Stage 3 for the GPU emulator (`emulate`): kernel outlining into one
/// gpu.module, the kernels as host functions (blockc-gpu-emulate-kernels),
/// everything to the LLVM dialect with upstream's host lowering
/// (gpu-to-llvm: the same mgpu* calls as for a GPU), and the registration
/// of the kernels with the emulator runtime.
void buildNVPTXEmulatorLowerToLLVMPipeline(mlir::OpPassManager &pm,
                                           const NVPTXPipelineOptions &options);

/// All NVPTX stages.
void buildNVPTXPipeline(mlir::OpPassManager &pm,
                        const NVPTXPipelineOptions &options);

/// The decode entry for NVPTX (or the GPU emulator): derivation, then every
/// NVPTX stage; the KV caches are arguments in device memory, written in
/// place by the kernels.
void buildNVPTXDecodePipeline(mlir::OpPassManager &pm,
                              const NVPTXPipelineOptions &options,
                              const DecodeOptions &decode);

/// The number of ranks `module` is partitioned over (its
/// `transformer.tensor_parallel`, docs/TensorParallel.md), or 1.
int64_t getTensorParallelRanks(mlir::ModuleOp module);

/// Partitions `module` over `ranks` ranks (transformer-tensor-parallel)
/// unless it is partitioned already, in which case `ranks` must match (0:
/// take the module's). On a module that is not partitioned, 0 and 1 do
/// nothing. Diagnostics go to the context's
/// handler; the error says what failed. Every driver runs this before it
/// reads the entry's signature: the weights become the rank's parts.
llvm::Error partitionForTensorParallel(mlir::ModuleOp module, int64_t ranks);

/// Registers the pipelines above under their names
/// (blockc-lower-to-linalg-pipeline, blockc-cpu-lower-to-linalg-pipeline,
/// blockc-cpu-bufferize-pipeline, blockc-cpu-lower-to-llvm-pipeline,
/// blockc-cpu-pipeline, blockc-cpu-decode-pipeline,
/// blockc-nvptx-lower-to-linalg-pipeline, blockc-nvptx-map-to-gpu-pipeline,
/// blockc-nvptx-lower-to-llvm-pipeline, blockc-nvptx-pipeline).
void registerBlockcPipelines();

} // namespace blockc

#endif // BLOCKC_PIPELINES_PIPELINES_H
