//===- BlockJit.h - compile and run a model in-process ----------*- C++ -*-===//
//
// Wraps mlir::ExecutionEngine: runs the CPU or NVPTX pipeline (the same
// builder functions as blockc), JIT-compiles the host code for the host CPU
// (AVX-512 when present, the target machine of lib/Target) and invokes the C
// interface of the entry function with host tensors. For NVPTX the kernels are
// embedded as PTX and the mgpu* calls resolve to libblockc_cuda_runtime, loaded
// with dlopen so that tools do not depend on libcuda unless a GPU run is asked
// for.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_BLOCKJIT_H
#define BLOCKC_EXECUTIONENGINE_BLOCKJIT_H

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/Compiler/CompileOptions.h"
#include "blockc/ExecutionEngine/CompileCache.h"
#include "blockc/ExecutionEngine/GPUProfile.h"
#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Support/TensorFiles.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace blockc {

/// The target a BlockJit runs on (the compile target).
using JitTarget = CompileTarget;

/// Whether BlockJit::run may keep the device copies of the weights.
enum class WeightReuse {
  /// Copy every argument (the default: weights may have been updated in
  /// place).
  Copy,
  /// The weights are the tensors of the previous run, unchanged since: only
  /// the input is copied (timed repeats).
  Unchanged
};

/// Checks that the GPU runtime of a run loads: the emulator's library
/// (`emulated`), else as checkCudaAvailable().
llvm::Error checkGPURuntimeAvailable(bool emulated);

/// Checks that GPU execution is possible: the CUDA runtime library was
/// built, the driver (libcuda.so.1) loads and a device initialises. The
/// error names what is missing.
llvm::Error checkCudaAvailable();

/// Sets the number of threads the CPU code's parallel loops use (OpenMP);
/// call it before the first run.
llvm::Error setCpuThreads(unsigned threads);

/// The GPU emulator's profile (docs/GPUEmulator.md#profile): records the
/// launches of kernels compiled with the NVPTX pipeline's `profile` option
/// from now on; with `sampleBlocks` > 0 each launch runs only that many of
/// its thread blocks (the results are then meaningless).
llvm::Error beginEmulatorProfile(int64_t sampleBlocks);
/// Calls `observer` with each emulated kernel's name as its launch starts
/// (progress reports); an empty function stops the calls.
llvm::Error
observeEmulatedLaunches(std::function<void(llvm::StringRef kernel)> observer);
/// Stops recording and returns the launches since beginEmulatorProfile.
llvm::Expected<std::vector<GPULaunchCounters>> endEmulatorProfile();

/// Per-kernel GPU timing (libblockc_cuda_runtime's blockcCudaProfile*:
/// CUDA events around every launch) from now on.
llvm::Error beginCudaProfile();
/// Stops timing and returns each kernel's launches and summed time.
llvm::Expected<std::vector<MeasuredKernel>> endCudaProfile();

class BlockJit {
public:
  /// Lowers a clone of `module` for `options` (the staged compile of
  /// lib/Compiler, the same as blockc's) and JIT-compiles it for the host
  /// CPU with the target machine of blockc -emit=obj.
  /// Pass-manager command-line options (--mlir-print-ir-after-all,
  /// --mlir-timing) apply: mlir::registerPassManagerCLOptions() must have
  /// been called (else the error is "invalid pass manager options"). Pipeline
  /// errors are reported as diagnostics, and the error returned names the
  /// target whose lowering failed. An NVPTX module is lowered before the CUDA
  /// runtime is loaded, so that lowering errors show on machines without a GPU
  /// too; PTX is embedded and compiled by the driver at load.
  /// CPU code is compiled to one object and linked in memory (ORC); with
  /// `cache`, the object comes from the cache when its key (module text,
  /// resolved pipeline, optimisation level, host CPU and features, blockc
  /// build) has an entry, and is stored there otherwise (cacheStatus() says
  /// which). NVPTX runs are not cached.
  static llvm::Expected<std::unique_ptr<BlockJit>>
  compile(mlir::ModuleOp module, const ModelSignature &signature,
          const CompileOptions &options = CompileOptions(),
          const CompileCache *cache = nullptr);

  /// Where the code came from: "cache hit", "cache miss, stored", "cache
  /// entry corrupt, rebuilt" (and stored), "cache miss, not stored: <why>",
  /// "cache disabled" (no cache given) or "not cached: NVPTX".
  const std::string &cacheStatus() const { return cacheState; }

  ~BlockJit();

  /// The entry's prepare function (blockc-cpu-prepare-weights), when the
  /// compiled entry reads prepared weights: prepare() must then run once
  /// before run() / runDecode().
  const PrepareEntry *getPrepareEntry() const {
    return prepareEntry ? &*prepareEntry : nullptr;
  }

  /// Runs the prepare function on the arguments it reads (`args` in the
  /// entry's signature order; entries it does not read may be null) and
  /// replaces each prepared argument's tensor in place by its prepared form,
  /// releasing the original (HostTensor::release). With parts (one per
  /// prepared weight, see PrepareEntry::parts) it runs them one at a time,
  /// releasing each original as soon as its prepared form exists, so the
  /// weights are held about once plus one prepared weight, not twice.
  /// Returns the bytes of the prepared tensors. A no-op without a prepare
  /// function.
  llvm::Expected<int64_t> prepare(llvm::ArrayRef<HostTensor *> args);

  /// The most bytes of prepared weights and of the originals they replace
  /// that the last prepare() held at once (its own accounting, 0 before).
  int64_t getPreparePeakBytes() const { return preparePeak; }

  /// Runs the entry function: `args` in signature order (input first), the
  /// result written to `out`, whose shape must already be set. On the GPU
  /// (or the emulator) the arguments are copied to device-accessible memory
  /// on every run; with WeightReuse::Unchanged the weights' copies of the
  /// previous run are reused when the same host tensors are passed.
  llvm::Error run(llvm::ArrayRef<const HostTensor *> args, HostTensor &out,
                  WeightReuse reuseWeights = WeightReuse::Copy);

  /// Runs a decode entry derived by transformer-derive-decode (on the GPU
  /// or the emulator, the caches are device buffers that the kernels write
  /// in place, mirrored to the host tensors after each step):
  /// `args` are the input and the weights as for run(), `position` the
  /// number of tokens already cached and `caches` the K and V caches of
  /// every layer (k_0, v_0, k_1, ...). The entry sees each cache as the
  /// tensor [B, L_max, H_kv, D]; with `headMajor` (the entry's caches have
  /// transformer.kv_layout = "bhsd") the host tensors hold them as
  /// [B, H_kv, L_max, D], else as [B, L_max, H_kv, D]. The new rows are
  /// written into the caches in place; the caller checks that
  /// position + T <= L_max first (the compiled code aborts otherwise).
  llvm::Error runDecode(llvm::ArrayRef<const HostTensor *> args,
                        int64_t position, llvm::ArrayRef<HostTensor *> caches,
                        bool headMajor, HostTensor &out,
                        WeightReuse reuseWeights = WeightReuse::Copy);

  /// A zeroed tensor of `shape` in `type` whose elements are
  /// device-accessible memory of this NVPTX entry's GPU runtime (managed
  /// memory on a GPU, the emulator's device memory), freed when the last
  /// copy of the tensor goes (it borrows the memory: HostTensor::borrowed
  /// and keepAlive). The host may read and write it between runs. An error
  /// for a CPU entry.
  llvm::Expected<HostTensor> allocateDeviceTensor(std::vector<int64_t> shape,
                                                  ElementType type);

  /// Runs a paged entry (transformer-derive-paged-decode). `args`: the
  /// packed input ([total, d] f32, or [total] ids as TokenIds-style
  /// HostTensor), then the weights, as for run(); `cuSeqlens` [B+1],
  /// `seqPositions` [B], `blockTable` [B, max_pages] (int32 host arrays);
  /// `pools` k_0, v_0, ... host tensors [num_pages, S, H_kv, D] in the
  /// model's KV element type, written in place; `out` [total, d] (or
  /// [total, vocab]) must have its shape set. The batch is checked on the
  /// host first (cu_seqlens from 0 and non-decreasing, positions >= 0, every
  /// page a new or cached token lives in within the block table and the
  /// pools): a bad one is an error, never a wild write. On NVPTX (a GPU or
  /// the emulator) the pools are copied to device memory before the call
  /// and back after it, unless `poolsOnDevice`: then they are tensors of
  /// allocateDeviceTensor(), passed in place (they stay there across calls).
  llvm::Error runPaged(llvm::ArrayRef<const HostTensor *> args,
                       llvm::ArrayRef<int32_t> cuSeqlens,
                       llvm::ArrayRef<int32_t> seqPositions,
                       llvm::ArrayRef<int32_t> blockTable, int64_t maxPages,
                       llvm::ArrayRef<HostTensor *> pools, HostTensor &out,
                       WeightReuse reuseWeights = WeightReuse::Copy,
                       bool poolsOnDevice = false);

private:
  BlockJit() = default;
  /// Invokes the entry with the result descriptor first, then `descriptors`
  /// (one pointer each) with `position` inserted before the caches when
  /// given, and copies the result into `out`.
  llvm::Error invoke(std::vector<std::vector<int64_t>> &descriptors,
                     std::optional<int64_t> position, size_t numCaches,
                     HostTensor &out, bool gpu);
  /// The descriptor of a device copy of `t` in device slot `slot`
  /// (allocated on first use or when the size changes; the data copied when
  /// `copyData`, on allocation, or when `t` moved).
  llvm::Expected<std::vector<int64_t>>
  deviceDescriptor(size_t slot, const HostTensor &t, bool copyData);
  /// Appends the descriptors of `args` (device copies on the GPU, see
  /// run()) to `descriptors`.
  llvm::Error
  argumentDescriptors(llvm::ArrayRef<const HostTensor *> args,
                      WeightReuse reuseWeights,
                      std::vector<std::vector<int64_t>> &descriptors);
  /// Runs prepare function (or part) `p` for prepare(): allocates its
  /// destinations, calls it and moves each result over its original;
  /// `held` (the bytes of weights held) grows by the destinations and
  /// shrinks by the originals released. Returns the destinations' bytes.
  llvm::Expected<int64_t> runPrepareFunction(const PrepareEntry &p,
                                             llvm::ArrayRef<HostTensor *> args,
                                             int64_t &held);
  /// Calls the packed wrapper (`_mlir_<name>`, one pointer per argument)
  /// of C-interface function `name`.
  llvm::Error invokePacked(llvm::StringRef name,
                           llvm::MutableArrayRef<void *> packed);
  /// NVPTX: mlir::ExecutionEngine. CPU: the object linked by ORC.
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::string cacheState = "cache disabled";
  std::string entry;
  std::optional<PrepareEntry> prepareEntry;
  int64_t preparePeak = 0;
  JitTarget target = JitTarget::CPU;
  /// NVPTX on the GPU emulator's runtime.
  bool emulated = false;
  /// The element type of the entry's activation and result (the host's
  /// are f32: run converts at the call).
  ElementType activationType = ElementType::F32;
  /// A paged entry's pools (getPagedArguments): their element types and
  /// shapes [?, S, H_kv, D]; empty for other entries.
  std::vector<mlir::RankedTensorType> pagedPools;
  /// GPU copies of the arguments, kept across runs.
  struct DeviceCopy {
    const void *host = nullptr;
    size_t count = 0; // bytes
    void *device = nullptr;
  };
  std::vector<DeviceCopy> deviceArgs;
};

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_BLOCKJIT_H
