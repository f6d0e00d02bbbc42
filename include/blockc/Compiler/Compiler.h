//===- Compiler.h - one compile flow under every tool -----------*- C++ -*-===//
//
// The compile flow of blockc, written once for the driver (blockc), the JIT
// (BlockJit, DecodeSession, blockc-run) and the tests: which pipeline stages
// a compile runs (lib/Pipelines builds them), the staged CPU compile that
// reads the prepare functions' records after stage 1, the derivation of a
// decode entry, the tensor-parallel partition, the CUDA toolkit search and
// the host code generation. Each step returns its artefacts (the lowered
// module, the prepare records, the decode entry, the GPU binary, the host
// code, the C header); the tools only parse options and print.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_COMPILER_COMPILER_H
#define BLOCKC_COMPILER_COMPILER_H

#include "blockc/Analysis/BlockReport.h"
#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/Compiler/CompileOptions.h"
#include "blockc/Target/CHeader.h"
#include "blockc/Target/CPU.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>
#include <string>

namespace blockc {

/// Where a compile stops (blockc's -emit values, in pipeline order).
enum class CompileStage {
  Transformer, // parsed and verified
  Linalg,      // stage 1: linalg on tensors
  Buffers,     // stage 2: loops on buffers (NVPTX: gpu.launch)
  LLVMDialect, // stage 3: the LLVM dialect (NVPTX: with the gpu.binary)
  LLVMIR,      // host LLVM IR
  Asm,         // host assembly
  Object,      // host object (plus its C header)
  PTX,         // NVPTX: the GPU binary as PTX
  Cubin,       // NVPTX: cubin
  Fatbin       // NVPTX: fat binary
};

/// Whether a decode entry is derived (transformer-derive-decode) before
/// the target's pipeline.
enum class DecodeMode {
  None,
  /// <entry>_decode beside the entry (blockc --decode).
  BesideEntry,
  /// <entry>_decode only: the entry at position 0 is the prefill (the
  /// JIT's decode sessions).
  Only
};

/// A pipeline failure whose diagnostics were already emitted: its message
/// says what failed; a tool that printed the diagnostics may skip it.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  explicit DiagnosedError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string message;
};

/// A model file read into an MLIR context that holds every dialect blockc
/// parses and produces; its diagnostics print with file:line:col, one line
/// each (without the offending op in generic form).
class ModelFile {
public:
  ModelFile();
  ~ModelFile();
  mlir::MLIRContext &getContext() { return context; }
  /// Reads and parses `path` ('-': stdin). An unreadable file is an error
  /// naming it; a parse error a DiagnosedError.
  llvm::Expected<mlir::ModuleOp> load(llvm::StringRef path);

private:
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> handler;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// The message of `error` for a tool to print: empty for a DiagnosedError,
/// whose diagnostics were printed already.
std::string getErrorMessage(llvm::Error error);

/// The first error of compiling to `stage` with `options` (e.g. a PTX
/// stage for the CPU target), or an empty string.
std::string verifyStage(const CompileOptions &options, CompileStage stage);

/// Where blockc writes `stage` of `input`.
struct OutputPaths {
  /// -o, else <input>.o for an object, <input>.cubin / .fatbin for a GPU
  /// binary ("model" for stdin), else stdout ("-").
  std::string output;
  /// --header, else the output with extension .h.
  std::string header;
};
/// The paths of -o `output` and --header `header` (empty: not given); an
/// error for a binary stage written to stdout.
llvm::Expected<OutputPaths> getOutputPaths(llvm::StringRef input,
                                           llvm::StringRef output,
                                           llvm::StringRef header,
                                           CompileStage stage);

/// The GPU binary format that the NVPTX pipeline embeds for `stage`.
GPUBinaryFormat getGPUBinaryFormat(const CompileOptions &options,
                                   CompileStage stage);

/// The CUDA toolkit directory `stage` needs (ptxas for a cubin, also
/// fatbinary for a fat binary; -cuda-toolkit first, then PATH, $CUDA_ROOT,
/// $CUDA_HOME, $CUDA_PATH, /usr/local/cuda), "" when it needs none, or an
/// error naming the missing tools and where they were looked for.
llvm::Expected<std::string> findToolkit(const CompileOptions &options,
                                        CompileStage stage);

/// Which part of the pipeline buildCompilePipeline() adds: all of it, or
/// the CPU pipeline split after stage 1 (where the prepare functions'
/// records are read).
enum class PipelinePart { All, UpToLinalg, AfterLinalg };

/// Adds the passes that take a transformer module to `stage` (at most
/// CompileStage::LLVMDialect's passes: the later stages translate) for
/// `entry`, the decode entry first when `decode` asks for one; `toolkit`
/// serialises cubins and fat binaries.
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const CompileOptions &options, CompileStage stage,
                          llvm::StringRef entry,
                          DecodeMode decode = DecodeMode::None,
                          llvm::StringRef toolkit = "",
                          PipelinePart part = PipelinePart::All);

/// Runs `transformer-derive-decode` on `module` and returns the decode
/// entry <entry>_decode's signature for the C header (its caches and their
/// layout; the prepare function is filled in by lowerModule).
mlir::FailureOr<DecodeEntry> deriveDecodeEntry(mlir::ModuleOp module,
                                               llvm::StringRef entry,
                                               transformer::KVLayout layout,
                                               bool keepPrefill);

/// Runs `transformer-derive-paged-decode` on `module` (pages of `pageSize`
/// tokens; `keepEntry`: keep the forward function beside it) and returns
/// the paged entry <entry>_paged's name; failures are diagnosed.
mlir::FailureOr<std::string> derivePagedEntry(mlir::ModuleOp module,
                                              llvm::StringRef entry,
                                              int64_t pageSize, bool keepEntry);

/// Runs derivePagedEntry on `module` (keeping the entry) and returns the
/// paged entry's signature for the C header (its pools, page size and
/// packed input and result; the prepare function is filled in by
/// lowerModule).
mlir::FailureOr<DecodeEntry> derivePagedSignature(mlir::ModuleOp module,
                                                  llvm::StringRef entry,
                                                  int64_t pageSize);

/// What lowering a module gave beside the lowered module itself.
struct LoweredModule {
  /// The entry's prepare function (CPU with prepared weights).
  std::optional<PrepareEntry> prepare;
  /// With DecodeMode::BesideEntry: the decode entry (derived on a copy)
  /// and its prepare function.
  std::optional<DecodeEntry> decode;
};

/// Lowers `module` in place to `stage` (at most LLVMDialect) for the entry
/// of `signature`. The CPU pipeline runs in two parts when
/// `readPrepareRecords`: the prepare functions' records are read after
/// stage 1, which writes them (stage 3 strips them). Pass-manager
/// command-line options apply; passes are timed under `timing` when given.
/// A failing pass returns a DiagnosedError.
llvm::Expected<LoweredModule>
lowerModule(mlir::ModuleOp module, const CompileOptions &options,
            CompileStage stage, const ModelSignature &signature,
            DecodeMode decode = DecodeMode::None, llvm::StringRef toolkit = "",
            bool readPrepareRecords = false,
            mlir::TimingScope *timing = nullptr);

/// Splits every block of `module` over options.tensorParallel ranks
/// (a model partitioned already keeps its ranks) and returns the ranks; an
/// error names the option or the target that cannot run them.
llvm::Expected<int64_t> partitionModule(mlir::ModuleOp module,
                                        const CompileOptions &options);

/// The ranks a tensor-parallel run of `module` needs, before anything is
/// partitioned (a run joins its MPI world first): options.tensorParallel,
/// else the ranks of a model partitioned already (which must agree with
/// the option); an error for a target that cannot run ranks.
llvm::Expected<int64_t> planTensorParallel(mlir::ModuleOp module,
                                           const CompileOptions &options);

/// Makes `module` the program compiled for `options`: partitions it for
/// tensor parallelism (partitionModule) and returns the signature of its
/// entry (a DiagnosedError when the entry is malformed).
llvm::Expected<ModelSignature> prepareModel(mlir::ModuleOp module,
                                            const CompileOptions &options);

/// What a compile to a stage gives.
struct CompileArtefacts {
  /// The stage's output: the module's text (up to the LLVM dialect), LLVM
  /// IR text, assembly, an object file, or a GPU binary.
  std::string output;
  /// With CompileStage::Object: the C header that declares the entry (and
  /// its prepare and decode entries).
  std::string header;
};

/// Compiles `module` (whose entry is `signature`, see prepareModel) to
/// `stage`: lowerModule, then the GPU binary, the host code and the C
/// header `headerName` as the stage asks (with relocation model PIC: an
/// object may be linked into a PIE).
llvm::Expected<CompileArtefacts>
compileModule(mlir::ModuleOp module, const CompileOptions &options,
              CompileStage stage, const ModelSignature &signature,
              DecodeMode decode = DecodeMode::None,
              llvm::StringRef toolkit = "", llvm::StringRef headerName = "",
              mlir::TimingScope *timing = nullptr);

/// Writes `artefacts` of `stage` to `paths` (the C header too with
/// CompileStage::Object); the files are kept only when all were written.
llvm::Error writeArtefacts(const CompileArtefacts &artefacts,
                           const OutputPaths &paths, CompileStage stage);

/// blockc --report: partitions `module` as a compile for `options` would
/// (each block is then one rank's part, report.ranks set accordingly) and
/// writes the report of its blocks titled `title` to `outputPath` ("-":
/// stdout). An error when the module has no transformer.block.
llvm::Error writeModelReport(mlir::ModuleOp module,
                             const CompileOptions &options,
                             ReportOptions report, ReportFormat format,
                             llvm::StringRef title, llvm::StringRef outputPath);

/// The host code of a module lowered to the LLVM dialect.
struct HostCode {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

/// Translates `lowered` to optimised LLVM IR for the host target of
/// `options` (getCodegenTarget) with relocation model `relocModel`.
llvm::Expected<HostCode>
translateHostCode(mlir::ModuleOp lowered, const CompileOptions &options,
                  std::optional<llvm::Reloc::Model> relocModel);

/// The GPU binaries embedded in `lowered` (one gpu.binary after merging),
/// concatenated; empty when it launches no kernel.
std::string getGPUBinary(mlir::ModuleOp lowered);

} // namespace blockc

#endif // BLOCKC_COMPILER_COMPILER_H
