//===- Session.cpp - blockc's serving C API -------------------------------===//
//
// The C API of include/blockc/Session.h over the compiler and JIT libraries:
// a model is a ModelFile and its signature (lib/Compiler), its weights are
// bound by WeightBinding (loadRunWeights: files, folders, random) and its
// entries are compiled by BlockJit when first used, each with its own
// prepared copy of the weights (a prepare function replaces the tensors it
// packs). A session keeps a SequenceTable (PagePool.h) and one K and one V
// page pool per attention layer, [num_pages, S, H_kv, D] in the cache's
// element type.
//
// A step is one call of the model's paged entry (transformer-derive-paged-
// decode, compiled once per page size and kept in the model): the new tokens
// of every sequence packed without padding, their cu_seqlens, the cached
// lengths and the block table, the pools written in place
// (BlockJit::runPaged). Where the paged entry cannot be derived, and with
// BLOCKC_SESSION_PER_SEQUENCE=1 (a comparison switch for tests), a step runs
// the dense decode entry (transformer-derive-decode, token-major caches)
// once per sequence instead: the sequence's pages gathered into a dense
// cache, the new rows written back to its pages.
//
// On nvptx (a GPU, or the emulator with blockc_model_options.emulate) the
// same entries compile for NVPTX. A paged session's pools are then device
// memory (BlockJit::allocateDeviceTensor: managed memory on a GPU) that
// every step passes in place and that forks and blockc_session_read_page
// read and write from the host between runs; the per-sequence fallback
// keeps host pools. Runs of NVPTX code, and host accesses to device pools,
// take turns (gpuRunMutex).
//
// A model partitioned for tensor parallelism (blockc-import
// --tensor-parallel=N) runs as one process per rank under mpirun -np N,
// every rank making the same calls in the same order: loading it joins the
// MPI world (TensorParallelWorld; MPI the embedder started stays its own),
// each rank binds its part of the weights (the rank-aware WeightRequest, or
// its slices of a whole checkpoint in caller memory) and compiles the same
// program, whose blocks all-reduce over MPI_COMM_WORLD; a session's pools
// hold the rank's K/V heads and the same page ids on every rank. A step's
// checks read only what every rank holds alike (the arguments, the
// sequence table), and the ranks agree on their outcome (one all-reduce of
// who refused) before the entry's all-reduces, so a refused step is
// refused on every rank and changes nothing on any.
//
//===----------------------------------------------------------------------===//

#include "blockc/Session.h"

#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/ExecutionEngine/CompileCache.h"
#include "blockc/ExecutionEngine/Generation.h"
#include "blockc/ExecutionEngine/TensorParallel.h"
#include "blockc/ExecutionEngine/TokenIds.h"
#include "blockc/ExecutionEngine/WeightBinding.h"
#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Session/PagePool.h"
#include "blockc/Target/CPUISA.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace blockc;
using namespace mlir;

namespace {

thread_local std::string lastError;

blockc_status fail(blockc_status status, const llvm::Twine &message) {
  lastError = message.str();
  return status;
}

blockc_status fail(blockc_status status, llvm::Error error,
                   const std::string &diagnostics = "") {
  std::string message = llvm::toString(std::move(error));
  if (!diagnostics.empty())
    message = message.empty() ? diagnostics : message + "\n" + diagnostics;
  return fail(status, message);
}

blockc_status ok() {
  lastError.clear();
  return BLOCKC_OK;
}

/// Collects the diagnostics emitted in a context while alive (instead of
/// printing them), one "file:line:col: error: message" line each.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MLIRContext &context)
      : handler(&context, [this](Diagnostic &d) {
          llvm::raw_string_ostream os(text);
          if (!text.empty())
            os << "\n";
          if (auto loc = dyn_cast<FileLineColLoc>(d.getLocation()))
            os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
               << loc.getColumn() << ": ";
          switch (d.getSeverity()) {
          case DiagnosticSeverity::Error:
            os << "error: ";
            break;
          case DiagnosticSeverity::Warning:
            os << "warning: ";
            break;
          default:
            os << "note: ";
            break;
          }
          os << d;
          return success();
        }) {}
  const std::string &getText() const { return text; }

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

/// Held around every run of NVPTX code: the GPU runtime (the CUDA context
/// or the emulator, whose last error is per process) and a compiled
/// entry's device copies of its arguments are shared by every session of a
/// model, so runs on the GPU take turns.
std::mutex &gpuRunMutex() {
  static std::mutex mutex;
  return mutex;
}

/// gpuRunMutex, held while the result lives when `needed` (nothing
/// otherwise).
std::unique_lock<std::mutex> gpuTurn(bool needed) {
  return needed ? std::unique_lock<std::mutex>(gpuRunMutex())
                : std::unique_lock<std::mutex>();
}

/// Registers what compiling needs once per process (BlockJit applies the
/// pass-manager command-line options).
void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mlir::registerPassManagerCLOptions(); });
}

/// A compiled entry and the weights it reads (prepared for it).
struct CompiledEntry {
  std::unique_ptr<BlockJit> jit;
  ModelSignature signature;
  /// The weights after this entry's prepare function (a copy of the
  /// model's: borrowed tensors stay views of the file).
  std::vector<HostTensor> weights;
  /// A derived entry's module (a clone of the model's).
  OwningOpRef<ModuleOp> module;
  /// Paged: the pools [?, S, H_kv, D] (k_0, v_0, ...). Dense decode: the
  /// caches [B, L, H_kv, D].
  std::vector<RankedTensorType> pools;
  bool paged = false;

  std::vector<const HostTensor *> arguments(const HostTensor &input) const {
    std::vector<const HostTensor *> args = {&input};
    for (const HostTensor &w : weights)
      args.push_back(&w);
    return args;
  }
};

} // namespace

struct blockc_model {
  std::mutex mutex; // guards the lazy compiles
  std::string path;
  ModelFile file;
  ModuleOp module;
  ModelSignature signature;
  CompileOptions options;
  std::unique_ptr<CompileCache> cache;
  std::optional<RunWeights> weights;
  std::unique_ptr<CompiledEntry> forward, decode;
  /// The paged entries by page size (null: it cannot be derived; `pagedWhy`
  /// says why).
  std::map<int64_t, std::unique_ptr<CompiledEntry>> paged;
  std::map<int64_t, std::string> pagedWhy;
  std::string elementType;
  int sessions = 0;
  /// Tensor parallelism: the model's rank count (1: one process) and this
  /// process's place in the MPI world.
  int64_t ranks = 1;
  TensorParallelWorld world;

  /// Under tensor parallelism, a collective of every rank with the
  /// `status` of its checks of a call: BLOCKC_OK when no rank refused it,
  /// else the status to return: this rank's own (its message set), or on a
  /// rank that did not refuse it BLOCKC_ERROR_STATE with a message naming
  /// the first rank that did. Every rank must call it at the same point; in
  /// one process it returns `status`.
  blockc_status agree(blockc_status status) const;

  /// The entry of `kind`, compiled (with a prepared copy of the weights)
  /// when first asked for; a paged entry per page size.
  enum class Kind { Forward, Decode, Paged };
  blockc_status getEntry(Kind kind, int64_t pageSize, CompiledEntry *&entry);
  /// The entry a session with pages of `pageSize` steps with: the paged
  /// entry, else the dense decode entry.
  blockc_status getSessionEntry(int64_t pageSize, CompiledEntry *&entry);
};

struct blockc_session {
  blockc_model *model = nullptr;
  /// The paged entry, or the dense decode entry run per sequence.
  CompiledEntry *decode = nullptr;
  std::unique_ptr<SequenceTable> table;
  /// k_0, v_0, k_1, ...: [num_pages, S, H_kv, D].
  std::vector<HostTensor> pools;
  /// The pools are device memory (a paged session on nvptx): steps pass
  /// them in place; host accesses hold gpuRunMutex.
  bool poolsOnDevice = false;
  /// Per pool: the elements of one token's row (H_kv * D).
  std::vector<int64_t> rowElements;
  /// The dense caches of a sequence's step (reused).
  std::vector<HostTensor> dense;

  size_t rowBytes(size_t pool) const {
    return rowElements[pool] * pools[pool].elementBytes();
  }
  char *poolBytes(size_t pool) {
    return static_cast<char *>(pools[pool].bytes());
  }
  blockc_status step(int64_t count, const int64_t *ids,
                     const int64_t *numTokens, const void *input,
                     float *output);
  /// A step's checks, and its pages reserved in `plan` (left empty when a
  /// check fails first).
  blockc_status checkAndPlan(int64_t count, const int64_t *ids,
                             const int64_t *numTokens, const void *input,
                             StepPlan &plan);
  /// Runs a planned step and commits it (rolls it back on failure).
  blockc_status run(const StepPlan &plan, const void *input, float *output);
  /// Runs a planned step: the paged entry once, or the decode entry per
  /// sequence.
  llvm::Error runPaged(const StepPlan &plan, const void *input, float *output);
  llvm::Error runPerSequence(const StepPlan &plan, const void *input,
                             float *output);
};

blockc_status blockc_model::agree(blockc_status status) const {
  if (ranks <= 1)
    return status;
  int first = TensorParallelWorld::firstFailedRank(status != BLOCKC_OK);
  if (first < 0 || status != BLOCKC_OK)
    return status;
  lastError = llvm::formatv("rank {0} of {1} refused the call (see its "
                            "error); every rank refuses it and changes "
                            "nothing",
                            first, ranks)
                  .str();
  return BLOCKC_ERROR_STATE;
}

blockc_status blockc_model::getEntry(Kind kind, int64_t pageSize,
                                     CompiledEntry *&entry) {
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<CompiledEntry> &slot = kind == Kind::Forward ? forward
                                         : kind == Kind::Decode
                                             ? decode
                                             : paged[pageSize];
  if (slot) {
    entry = slot.get();
    return BLOCKC_OK;
  }
  if (!weights)
    return fail(BLOCKC_ERROR_STATE,
                "no weights are bound: bind a file, a folder, caller memory "
                "or random weights first");
  auto compiled = std::make_unique<CompiledEntry>();
  compiled->signature = signature;
  DiagnosticCapture diagnostics(file.getContext());
  ModuleOp toCompile = module;
  if (kind != Kind::Forward) {
    compiled->module = OwningOpRef<ModuleOp>(module.clone());
    if (kind == Kind::Paged) {
      FailureOr<std::string> name =
          derivePagedEntry(*compiled->module, signature.funcName, pageSize,
                           /*keepEntry=*/false);
      if (failed(name))
        return fail(BLOCKC_ERROR_COMPILE,
                    path + ": deriving the paged entry failed\n" +
                        diagnostics.getText());
      compiled->signature.funcName = *name;
      compiled->paged = true;
      auto func = compiled->module->lookupSymbol<func::FuncOp>(*name);
      for (const PagedPoolArgument &pool : getPagedArguments(func).pools)
        compiled->pools.push_back(pool.type);
    } else {
      if (failed(deriveDecodeEntry(*compiled->module, signature.funcName,
                                   transformer::KVLayout::bshd,
                                   /*keepPrefill=*/false)))
        return fail(BLOCKC_ERROR_COMPILE,
                    path + ": deriving the decode entry failed\n" +
                        diagnostics.getText());
      compiled->signature.funcName += "_decode";
      auto func = compiled->module->lookupSymbol<func::FuncOp>(
          compiled->signature.funcName);
      for (const KVCacheArgument &arg : getKVCacheArguments(func))
        compiled->pools.push_back(arg.type);
    }
    toCompile = *compiled->module;
  }
  auto jit =
      BlockJit::compile(toCompile, compiled->signature, options, cache.get());
  if (!jit)
    return fail(BLOCKC_ERROR_COMPILE, jit.takeError(), diagnostics.getText());
  compiled->jit = std::move(*jit);
  if (kind != Kind::Forward && compiled->pools.empty())
    return fail(BLOCKC_ERROR_UNSUPPORTED,
                path + ": the model has no attention layer to cache");
  compiled->weights = weights->tensors;
  std::vector<HostTensor *> args = {nullptr};
  for (HostTensor &w : compiled->weights)
    args.push_back(&w);
  if (auto prepared = compiled->jit->prepare(args); !prepared)
    return fail(BLOCKC_ERROR_EXECUTION,
                "preparing the weights failed: " +
                    llvm::toString(prepared.takeError()));
  slot = std::move(compiled);
  entry = slot.get();
  return BLOCKC_OK;
}

blockc_status blockc_model::getSessionEntry(int64_t pageSize,
                                            CompiledEntry *&entry) {
  const char *perSequence = getenv("BLOCKC_SESSION_PER_SEQUENCE");
  if (!perSequence || llvm::StringRef(perSequence) != "1") {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = paged.find(pageSize);
      if (it != paged.end() && it->second) {
        entry = it->second.get();
        return BLOCKC_OK;
      }
      if (pagedWhy.count(pageSize))
        perSequence = "1";
    }
  }
  if (!perSequence || llvm::StringRef(perSequence) != "1") {
    blockc_status status = getEntry(Kind::Paged, pageSize, entry);
    if (status != BLOCKC_ERROR_COMPILE)
      return status;
    // The per-sequence path below, whose own errors are reported.
    std::lock_guard<std::mutex> lock(mutex);
    paged.erase(pageSize);
    pagedWhy[pageSize] = lastError;
  }
  return getEntry(Kind::Decode, 0, entry);
}

namespace {

/// The model's input tensor for `batch` x `seqLen` tokens from caller
/// memory: int32 ids, or float32 rows of d.
HostTensor makeInput(const ModelSignature &sig, int64_t batch, int64_t seqLen,
                     const void *input) {
  if (sig.takesTokenIds()) {
    HostTensor ids = makeTokenIds({batch, seqLen});
    const int32_t *src = static_cast<const int32_t *>(input);
    for (int64_t i = 0, e = batch * seqLen; i < e; ++i)
      setTokenId(ids, i, src[i]);
    return ids;
  }
  HostTensor x;
  x.shape = {batch, seqLen, sig.getModelDim()};
  const float *src = static_cast<const float *>(input);
  x.data.assign(src, src + x.numElements());
  return x;
}

std::optional<CPUISA> parseISA(llvm::StringRef name) {
  for (const CPUISAInfo &info : getCPUISAs())
    if (stringifyCPUISA(info.isa) == name)
      return info.isa;
  return std::nullopt;
}

/// Binds the weights of `request` (its rank fields set here), or of a
/// checkpoint in memory. Under tensor parallelism each rank binds its own
/// part and the ranks then agree: a rank may fail alone (a file it cannot
/// read), and then no rank keeps its weights.
blockc_status bindWeights(blockc_model *model, WeightRequest request,
                          std::optional<Checkpoint> checkpoint) {
  if (model->weights)
    return fail(BLOCKC_ERROR_STATE, "the model's weights are bound already");
  request.rank = model->world.rank;
  request.ranks = static_cast<unsigned>(model->ranks);
  std::optional<RunWeights> bound;
  blockc_status status = BLOCKC_OK;
  if (checkpoint) {
    auto tensors =
        blockc::bindWeights(*checkpoint, model->signature, {}, request.rank);
    if (!tensors) {
      status = fail(BLOCKC_ERROR_IO, tensors.takeError());
    } else {
      bound.emplace();
      bound->tensors = std::move(*tensors);
      bound->label = request.file;
      bound->rank = request.rank;
      bound->ranks = request.ranks;
    }
  } else {
    auto loaded = loadRunWeights(model->signature, request);
    if (!loaded)
      status = fail(BLOCKC_ERROR_IO, loaded.takeError());
    else
      bound = std::move(*loaded);
  }
  if (blockc_status agreed = model->agree(status))
    return agreed;
  model->weights = std::move(bound);
  return ok();
}

/// A session of `model` (blockc_session_create after its argument checks).
blockc_status createSession(blockc_model *model, int64_t pageSize,
                            int64_t numPages,
                            std::unique_ptr<blockc_session> &s) {
  CompiledEntry *decode = nullptr;
  if (blockc_status status = model->getSessionEntry(pageSize, decode))
    return status;
  s = std::make_unique<blockc_session>();
  s->model = model;
  s->decode = decode;
  s->table = std::make_unique<SequenceTable>(pageSize, numPages);
  s->poolsOnDevice = model->options.isNVPTX() && decode->paged;
  for (RankedTensorType type : decode->pools) {
    HostTensor pool;
    int64_t heads = type.getDimSize(2), headDim = type.getDimSize(3);
    pool.shape = {numPages, pageSize, heads, headDim};
    pool.elementType = getHostElementType(type.getElementType());
    if (s->poolsOnDevice) {
      auto device =
          decode->jit->allocateDeviceTensor(pool.shape, pool.elementType);
      if (!device)
        return fail(BLOCKC_ERROR_EXECUTION,
                    "allocating the session's pools failed: " +
                        llvm::toString(device.takeError()));
      pool = std::move(*device);
    } else {
      pool.allocate();
    }
    s->rowElements.push_back(heads * headDim);
    s->pools.push_back(std::move(pool));
    HostTensor dense;
    dense.elementType = s->pools.back().elementType;
    s->dense.push_back(std::move(dense));
  }
  return BLOCKC_OK;
}

} // namespace

blockc_status blockc_session::step(int64_t count, const int64_t *ids,
                                   const int64_t *numTokens, const void *input,
                                   float *output) {
  StepPlan plan;
  if (blockc_status status =
          model->agree(checkAndPlan(count, ids, numTokens, input, plan))) {
    if (!plan.ids.empty())
      table->rollback(plan);
    return status;
  }
  return run(plan, input, output);
}

blockc_status blockc_session::checkAndPlan(int64_t count, const int64_t *ids,
                                           const int64_t *numTokens,
                                           const void *input, StepPlan &plan) {
  const ModelSignature &sig = model->signature;
  std::vector<int64_t> idList(ids, ids + count);
  std::vector<int64_t> tokenList(numTokens, numTokens + count);
  // Every check before any page is taken.
  for (int64_t i = 0; i < count; ++i) {
    const PagedSequence *seq = table->lookup(idList[i]);
    if (seq && sig.maxPositions && tokenList[i] > 0 &&
        seq->length + tokenList[i] > sig.maxPositions)
      return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                  llvm::formatv("position overflow: sequence {0} has {1} "
                                "cached + {2} new tokens, past the model's "
                                "{3} learned positions",
                                idList[i], seq->length, tokenList[i],
                                sig.maxPositions));
  }
  int64_t total = 0;
  for (int64_t n : tokenList)
    total += n > 0 ? n : 0;
  if (sig.takesTokenIds()) {
    const int32_t *tokens = static_cast<const int32_t *>(input);
    for (int64_t t = 0; t < total; ++t)
      if (tokens[t] < 0 || tokens[t] >= sig.vocabSize)
        return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                    llvm::formatv("token id {0} at position {1} of the step "
                                  "is outside the vocabulary [0, {2})",
                                  tokens[t], t, sig.vocabSize));
  }
  switch (table->plan(idList, tokenList, plan)) {
  case PagePoolError::None:
    return BLOCKC_OK;
  case PagePoolError::UnknownSequence:
    return fail(BLOCKC_ERROR_UNKNOWN_SEQUENCE, table->getError());
  case PagePoolError::OutOfPages:
    return fail(BLOCKC_ERROR_OUT_OF_PAGES, table->getError());
  case PagePoolError::InvalidArgument:
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT, table->getError());
  }
  return fail(BLOCKC_ERROR_INVALID_ARGUMENT, "unknown page pool error");
}

blockc_status blockc_session::run(const StepPlan &plan, const void *input,
                                  float *output) {
  std::unique_lock<std::mutex> gpuLock = gpuTurn(model->options.isNVPTX());
  llvm::Error error = decode->paged ? runPaged(plan, input, output)
                                    : runPerSequence(plan, input, output);
  if (gpuLock)
    gpuLock.unlock();
  if (error) {
    table->rollback(plan);
    return fail(BLOCKC_ERROR_EXECUTION,
                "execution failed: " + llvm::toString(std::move(error)));
  }
  table->commit(plan);
  return ok();
}

llvm::Error blockc_session::runPaged(const StepPlan &plan, const void *input,
                                     float *output) {
  const ModelSignature &sig = model->signature;
  int64_t count = plan.ids.size(), total = 0, maxPages = 1;
  std::vector<int32_t> cuSeqlens = {0}, positions;
  for (int64_t i = 0; i < count; ++i) {
    total += plan.newTokens[i];
    cuSeqlens.push_back(static_cast<int32_t>(total));
    positions.push_back(static_cast<int32_t>(plan.oldLengths[i]));
    maxPages =
        std::max<int64_t>(maxPages, table->lookup(plan.ids[i])->pages.size());
  }
  // Rows past a sequence's pages are never read: page 0 stands in.
  std::vector<int32_t> blockTable(count * maxPages, 0);
  for (int64_t i = 0; i < count; ++i) {
    const std::vector<int32_t> &pages = table->lookup(plan.ids[i])->pages;
    std::copy(pages.begin(), pages.end(), blockTable.begin() + i * maxPages);
  }
  HostTensor x;
  if (sig.takesTokenIds()) {
    x = makeTokenIds({total});
    const int32_t *ids = static_cast<const int32_t *>(input);
    for (int64_t t = 0; t < total; ++t)
      setTokenId(x, t, ids[t]);
  } else {
    x.shape = {total, sig.getModelDim()};
    const float *rows = static_cast<const float *>(input);
    x.data.assign(rows, rows + x.numElements());
  }
  int64_t width = sig.takesTokenIds() ? sig.vocabSize : sig.getModelDim();
  HostTensor out;
  out.shape = {total, width};
  out.data.assign(out.numElements(), 0.0f);
  std::vector<HostTensor *> poolPtrs;
  for (HostTensor &pool : pools)
    poolPtrs.push_back(&pool);
  // The entry's weights never change once prepared: on the GPU their
  // device copies are made once.
  if (llvm::Error e = decode->jit->runPaged(
          decode->arguments(x), cuSeqlens, positions, blockTable, maxPages,
          poolPtrs, out, WeightReuse::Unchanged, poolsOnDevice))
    return e;
  std::memcpy(output, out.data.data(), out.numElements() * sizeof(float));
  return llvm::Error::success();
}

llvm::Error blockc_session::runPerSequence(const StepPlan &plan,
                                           const void *input, float *output) {
  const ModelSignature &sig = model->signature;
  int64_t pageSize = table->getPageSize();
  int64_t width = sig.takesTokenIds() ? sig.vocabSize : sig.getModelDim();
  int64_t inWidth = sig.takesTokenIds() ? 1 : sig.getModelDim();
  int64_t offset = 0;
  for (size_t i = 0; i < plan.ids.size(); ++i) {
    const PagedSequence &seq = *table->lookup(plan.ids[i]);
    int64_t position = plan.oldLengths[i], n = plan.newTokens[i];
    int64_t capacity = static_cast<int64_t>(seq.pages.size()) * pageSize;
    std::vector<HostTensor *> cachePtrs;
    for (size_t c = 0; c < pools.size(); ++c) {
      HostTensor &d = dense[c];
      std::vector<int64_t> shape = {1, capacity, pools[c].shape[2],
                                    pools[c].shape[3]};
      if (d.shape != shape) {
        d.shape = shape;
        d.allocate();
      }
      size_t pageBytes = rowBytes(c) * pageSize;
      char *to = static_cast<char *>(d.bytes());
      int64_t cachedPages = table->pagesFor(position);
      for (int64_t p = 0; p < cachedPages; ++p)
        std::memcpy(to + p * pageBytes, poolBytes(c) + seq.pages[p] * pageBytes,
                    pageBytes);
      cachePtrs.push_back(&d);
    }
    const char *in = static_cast<const char *>(input) + offset * inWidth * 4;
    HostTensor x = makeInput(sig, 1, n, in);
    HostTensor out;
    out.shape = decode->signature.getOutputShape(1, n);
    out.data.assign(out.numElements(), 0.0f);
    if (llvm::Error e = decode->jit->runDecode(
            decode->arguments(x), position, cachePtrs,
            /*headMajor=*/false, out, WeightReuse::Unchanged))
      return e;
    // The new rows go to the sequence's pages.
    for (size_t c = 0; c < pools.size(); ++c) {
      size_t row = rowBytes(c);
      const char *from = static_cast<const char *>(dense[c].bytes());
      for (int64_t t = position; t < position + n; ++t)
        std::memcpy(poolBytes(c) +
                        (seq.pages[t / pageSize] * pageSize + t % pageSize) *
                            row,
                    from + t * row, row);
    }
    std::memcpy(output + offset * width, out.data.data(),
                n * width * sizeof(float));
    offset += n;
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

#define CHECK_ARG(cond, message)                                               \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(BLOCKC_ERROR_INVALID_ARGUMENT, message);                     \
  } while (false)

extern "C" {

const char *blockc_last_error(void) { return lastError.c_str(); }

const char *blockc_status_name(blockc_status status) {
  switch (status) {
  case BLOCKC_OK:
    return "BLOCKC_OK";
  case BLOCKC_ERROR_INVALID_ARGUMENT:
    return "BLOCKC_ERROR_INVALID_ARGUMENT";
  case BLOCKC_ERROR_IO:
    return "BLOCKC_ERROR_IO";
  case BLOCKC_ERROR_COMPILE:
    return "BLOCKC_ERROR_COMPILE";
  case BLOCKC_ERROR_UNSUPPORTED:
    return "BLOCKC_ERROR_UNSUPPORTED";
  case BLOCKC_ERROR_UNKNOWN_SEQUENCE:
    return "BLOCKC_ERROR_UNKNOWN_SEQUENCE";
  case BLOCKC_ERROR_OUT_OF_PAGES:
    return "BLOCKC_ERROR_OUT_OF_PAGES";
  case BLOCKC_ERROR_EXECUTION:
    return "BLOCKC_ERROR_EXECUTION";
  case BLOCKC_ERROR_STATE:
    return "BLOCKC_ERROR_STATE";
  }
  return "unknown status";
}

void blockc_model_options_init(blockc_model_options *options) {
  if (options)
    *options = blockc_model_options{nullptr, nullptr, 0, 0, nullptr};
}

blockc_status blockc_model_load(const char *path,
                                const blockc_model_options *options,
                                blockc_model **model) {
  CHECK_ARG(path && model, "blockc_model_load: null path or result");
  *model = nullptr;
  initializeOnce();
  blockc_model_options defaults;
  blockc_model_options_init(&defaults);
  const blockc_model_options &o = options ? *options : defaults;
  auto m = std::make_unique<blockc_model>();
  m->path = path;
  llvm::StringRef target = o.target ? o.target : "cpu";
  if (target == "nvptx")
    m->options.target = CompileTarget::NVPTX;
  else if (target != "cpu")
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                "unknown target '" + target + "' (cpu or nvptx)");
  if (o.isa) {
    std::optional<CPUISA> isa = parseISA(o.isa);
    if (!isa)
      return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                  llvm::Twine("unknown ISA '") + o.isa +
                      "' (host, avx512, avx2 or sse)");
    m->options.cpu.isa = *isa;
  }
  if (o.threads < 0)
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                "threads must be 0 (the default) or more, not " +
                    llvm::Twine(o.threads));
  if (o.emulate != 0 && o.emulate != 1)
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                "emulate must be 0 (a GPU) or 1 (the GPU emulator), not " +
                    llvm::Twine(o.emulate));
  if (o.emulate && !m->options.isNVPTX())
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                "emulate = 1 runs NVPTX kernels: it needs target nvptx");
  m->options.emulate = o.emulate;
  if (o.entry)
    m->options.entry = o.entry;
  if (std::string error = m->options.verify(); !error.empty())
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT, error);
  if (!m->options.isNVPTX())
    if (std::string missing = missingHostFeature(m->options.getCPUConfig());
        !missing.empty())
      return fail(BLOCKC_ERROR_UNSUPPORTED,
                  "this CPU lacks " + missing + " for isa=" +
                      stringifyCPUISA(m->options.getCPUConfig().isa));
  if (m->options.isNVPTX())
    if (llvm::Error e = checkGPURuntimeAvailable(m->options.emulate))
      return fail(BLOCKC_ERROR_UNSUPPORTED,
                  llvm::toString(std::move(e)) +
                      (m->options.emulate
                           ? ""
                           : " (in the C API: blockc_model_options.emulate "
                             "= 1; in Python: emulate=True)"));

  DiagnosticCapture diagnostics(m->file.getContext());
  llvm::Expected<ModuleOp> module = m->file.load(path);
  if (!module) {
    std::string message = getErrorMessage(module.takeError());
    return fail(
        BLOCKC_ERROR_IO,
        (message.empty() ? std::string(path) + ": "
                                               "the model does not parse"
                         : message) +
            (diagnostics.getText().empty() ? std::string()
                                           : "\n" + diagnostics.getText()));
  }
  m->module = *module;
  auto sig = prepareModel(m->module, m->options);
  if (!sig) {
    std::string message = getErrorMessage(sig.takeError());
    return fail(BLOCKC_ERROR_COMPILE,
                std::string(path) + ": the entry's signature is invalid" +
                    (message.empty() ? "" : ": " + message) +
                    (diagnostics.getText().empty()
                         ? std::string()
                         : "\n" + diagnostics.getText()));
  }
  // A module partitioned for tensor parallelism calls MPI in every block:
  // this process is one of its ranks (mpirun -np N, every rank loading the
  // same model). MPI started here ends when the process exits.
  if (int64_t ranks = getTensorParallelRanks(m->module); ranks > 1) {
    // Also after a failed join: MPI may have started (a world of the wrong
    // size), and a process that ends without finalising it fails its job.
    static std::once_flag atExit;
    std::call_once(
        atExit, [] { std::atexit([] { TensorParallelWorld::finalize(); }); });
    if (llvm::Error e =
            TensorParallelWorld::join(ranks, nullptr, nullptr, m->world))
      return fail(BLOCKC_ERROR_UNSUPPORTED,
                  llvm::Twine(path) +
                      " is partitioned for tensor parallelism: " +
                      llvm::toString(std::move(e)));
    m->ranks = ranks;
  }
  m->signature = std::move(*sig);
  llvm::raw_string_ostream(m->elementType)
      << m->signature.getModelElementType();
  if (auto cache = CompileCache::fromEnvironment())
    m->cache = std::move(*cache);
  else
    llvm::consumeError(cache.takeError());
  if (o.threads > 0 && !m->options.isNVPTX())
    if (llvm::Error e = setCpuThreads(o.threads))
      return fail(BLOCKC_ERROR_INVALID_ARGUMENT, std::move(e));
  *model = m.release();
  return ok();
}

void blockc_model_free(blockc_model *model) { delete model; }

blockc_status blockc_model_bind_weights(blockc_model *model, const char *path) {
  CHECK_ARG(model && path, "blockc_model_bind_weights: null model or path");
  WeightRequest request;
  request.file = path;
  request.preparedRefused =
      "a file of prepared weights serves one compiled entry; a model's "
      "entries (forward, sessions) prepare their own: give the checkpoint";
  return bindWeights(model, request, std::nullopt);
}

blockc_status blockc_model_bind_weights_memory(blockc_model *model,
                                               const void *data, size_t size,
                                               const char *name) {
  CHECK_ARG(model && data, "blockc_model_bind_weights_memory: null model or "
                           "data");
  std::string label = name ? name : "<memory>";
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(static_cast<const char *>(data), size), label,
      /*RequiresNullTerminator=*/false);
  auto file = SafeTensorsFile::fromBuffer(std::move(buffer), label);
  if (!file)
    return fail(BLOCKC_ERROR_IO, file.takeError());
  WeightRequest request;
  request.file = label;
  return bindWeights(model, request, Checkpoint::fromFile(std::move(*file)));
}

blockc_status blockc_model_bind_random_weights(blockc_model *model,
                                               uint64_t seed) {
  CHECK_ARG(model, "blockc_model_bind_random_weights: null model");
  WeightRequest request;
  request.seed = seed;
  return bindWeights(model, request, std::nullopt);
}

blockc_status blockc_model_get_info(const blockc_model *model,
                                    blockc_model_info *info) {
  CHECK_ARG(model && info, "blockc_model_get_info: null model or result");
  const ModelSignature &sig = model->signature;
  info->model_dim = sig.getModelDim();
  info->vocab_size = sig.vocabSize;
  info->output_width = sig.takesTokenIds() ? sig.vocabSize : sig.getModelDim();
  info->takes_token_ids = sig.takesTokenIds();
  int32_t layers = 0;
  ModuleOp module = model->module;
  module.walk([&](Operation *op) {
    if (op->getName().getStringRef() == "transformer.block")
      ++layers;
  });
  info->num_layers = layers;
  info->element_type = model->elementType.c_str();
  info->max_positions = sig.maxPositions;
  return ok();
}

blockc_status blockc_model_forward(blockc_model *model, int64_t batch,
                                   int64_t seqLen, const void *input,
                                   float *output) {
  CHECK_ARG(model && input && output,
            "blockc_model_forward: null model, input or output");
  const ModelSignature &sig = model->signature;
  HostTensor x;
  CompiledEntry *entry = nullptr;
  // Every check before the ranks agree (under tensor parallelism).
  auto check = [&]() -> blockc_status {
    CHECK_ARG(batch > 0 && seqLen > 0,
              "blockc_model_forward: batch and sequence length must be "
              "positive, not " +
                  llvm::Twine(batch) + " and " + llvm::Twine(seqLen));
    RankedTensorType inType = sig.args.front().type;
    for (auto [dim, value, what] :
         {std::make_tuple(0, batch, "batch"),
          std::make_tuple(1, seqLen, "sequence length")})
      if (!inType.isDynamicDim(dim) && inType.getDimSize(dim) != value)
        return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                    llvm::formatv("the model's @{0} takes a {1} of {2}, not "
                                  "{3}",
                                  sig.funcName, what, inType.getDimSize(dim),
                                  value));
    if (sig.maxPositions && seqLen > sig.maxPositions)
      return fail(BLOCKC_ERROR_INVALID_ARGUMENT,
                  llvm::formatv("{0} tokens exceed the model's {1} learned "
                                "positions",
                                seqLen, sig.maxPositions));
    x = makeInput(sig, batch, seqLen, input);
    if (sig.takesTokenIds())
      if (llvm::Error e = checkTokenIds(x, sig.vocabSize, "the input"))
        return fail(BLOCKC_ERROR_INVALID_ARGUMENT, std::move(e));
    return model->getEntry(blockc_model::Kind::Forward, 0, entry);
  };
  if (blockc_status s = model->agree(check()))
    return s;
  HostTensor out;
  out.shape = sig.getOutputShape(batch, seqLen);
  out.data.assign(out.numElements(), 0.0f);
  std::unique_lock<std::mutex> gpuLock = gpuTurn(model->options.isNVPTX());
  if (llvm::Error e =
          entry->jit->run(entry->arguments(x), out, WeightReuse::Unchanged))
    return fail(BLOCKC_ERROR_EXECUTION,
                "execution failed: " + llvm::toString(std::move(e)));
  std::memcpy(output, out.data.data(), out.numElements() * sizeof(float));
  return ok();
}

blockc_status blockc_session_create(blockc_model *model, int64_t pageSize,
                                    int64_t numPages,
                                    blockc_session **session) {
  CHECK_ARG(model && session, "blockc_session_create: null model or result");
  *session = nullptr;
  CHECK_ARG(pageSize > 0 && pageSize <= (1 << 20),
            "page size must be in [1, 2^20], not " + llvm::Twine(pageSize));
  CHECK_ARG(numPages > 0 && numPages <= INT32_MAX,
            "the pool needs 1 to 2^31 - 1 pages, not " + llvm::Twine(numPages));
  // Under tensor parallelism the ranks agree that each made its session.
  std::unique_ptr<blockc_session> s;
  if (blockc_status status =
          model->agree(createSession(model, pageSize, numPages, s)))
    return status;
  {
    std::lock_guard<std::mutex> lock(model->mutex);
    ++model->sessions;
  }
  *session = s.release();
  return ok();
}

void blockc_session_free(blockc_session *session) {
  if (!session)
    return;
  {
    std::lock_guard<std::mutex> lock(session->model->mutex);
    --session->model->sessions;
  }
  delete session;
}

blockc_status blockc_session_add(blockc_session *session, int64_t *id) {
  CHECK_ARG(session && id, "blockc_session_add: null session or result");
  *id = session->table->add();
  return ok();
}

blockc_status blockc_session_fork(blockc_session *session, int64_t parent,
                                  int64_t *child) {
  CHECK_ARG(session && child, "blockc_session_fork: null session or result");
  PageCopy copy;
  PagePoolError why;
  int64_t id = session->table->fork(parent, copy, why);
  if (id < 0)
    return fail(why == PagePoolError::OutOfPages
                    ? BLOCKC_ERROR_OUT_OF_PAGES
                    : BLOCKC_ERROR_UNKNOWN_SEQUENCE,
                session->table->getError());
  std::unique_lock<std::mutex> gpuLock = gpuTurn(session->poolsOnDevice);
  if (copy.from >= 0)
    for (size_t c = 0; c < session->pools.size(); ++c) {
      size_t pageBytes = session->rowBytes(c) * session->table->getPageSize();
      std::memcpy(session->poolBytes(c) + copy.to * pageBytes,
                  session->poolBytes(c) + copy.from * pageBytes, pageBytes);
    }
  *child = id;
  return ok();
}

blockc_status blockc_session_release(blockc_session *session, int64_t id) {
  CHECK_ARG(session, "blockc_session_release: null session");
  if (session->table->free(id) != PagePoolError::None)
    return fail(BLOCKC_ERROR_UNKNOWN_SEQUENCE, session->table->getError());
  return ok();
}

blockc_status blockc_session_step(blockc_session *session, int64_t count,
                                  const int64_t *ids, const int64_t *numTokens,
                                  const void *input, float *output) {
  CHECK_ARG(session, "blockc_session_step: null session");
  CHECK_ARG(count > 0,
            "a step needs at least one sequence, not " + llvm::Twine(count));
  CHECK_ARG(ids && numTokens && input && output,
            "blockc_session_step: null ids, token counts, input or output");
  return session->step(count, ids, numTokens, input, output);
}

blockc_status blockc_session_length(const blockc_session *session, int64_t id,
                                    int64_t *length) {
  CHECK_ARG(session && length, "blockc_session_length: null argument");
  const PagedSequence *seq = session->table->lookup(id);
  if (!seq)
    return fail(BLOCKC_ERROR_UNKNOWN_SEQUENCE,
                "unknown sequence id " + llvm::Twine(id));
  *length = seq->length;
  return ok();
}

blockc_status blockc_session_pages(const blockc_session *session, int64_t id,
                                   int32_t *pages, int64_t capacity,
                                   int64_t *count) {
  CHECK_ARG(session && count, "blockc_session_pages: null argument");
  const PagedSequence *seq = session->table->lookup(id);
  if (!seq)
    return fail(BLOCKC_ERROR_UNKNOWN_SEQUENCE,
                "unknown sequence id " + llvm::Twine(id));
  *count = static_cast<int64_t>(seq->pages.size());
  if (pages)
    for (int64_t i = 0; i < std::min(capacity, *count); ++i)
      pages[i] = seq->pages[i];
  return ok();
}

blockc_status blockc_session_get_info(const blockc_session *session,
                                      blockc_session_info *info) {
  CHECK_ARG(session && info, "blockc_session_get_info: null argument");
  const SequenceTable &t = *session->table;
  info->page_size = t.getPageSize();
  info->num_pages = t.getPages().size();
  info->free_pages = t.getPages().numFree();
  info->num_sequences = t.numSequences();
  info->paged = session->decode->paged;
  return ok();
}

blockc_status blockc_session_read_page(const blockc_session *session,
                                       int32_t layer, int32_t value,
                                       int32_t page, void *data,
                                       size_t capacity, size_t *size) {
  CHECK_ARG(session && size, "blockc_session_read_page: null argument");
  int64_t layers = static_cast<int64_t>(session->pools.size() / 2);
  CHECK_ARG(layer >= 0 && layer < layers, "layer " + llvm::Twine(layer) +
                                              " is not in [0, " +
                                              llvm::Twine(layers) + ")");
  CHECK_ARG(value == 0 || value == 1, "value must be 0 (K) or 1 (V)");
  CHECK_ARG(page >= 0 && page < session->table->getPages().size(),
            "page " + llvm::Twine(page) + " is not in the pool of " +
                llvm::Twine(session->table->getPages().size()));
  size_t pool = 2 * layer + value;
  size_t pageBytes = session->rowBytes(pool) * session->table->getPageSize();
  *size = pageBytes;
  if (!data)
    return ok();
  CHECK_ARG(capacity >= pageBytes, "a page has " + llvm::Twine(pageBytes) +
                                       " bytes; the buffer holds " +
                                       llvm::Twine(capacity));
  std::unique_lock<std::mutex> gpuLock = gpuTurn(session->poolsOnDevice);
  std::memcpy(data,
              static_cast<const char *>(session->pools[pool].bytes()) +
                  page * pageBytes,
              pageBytes);
  return ok();
}

blockc_status blockc_model_generate(blockc_model *model, int64_t batch,
                                    int64_t promptLen, const int32_t *prompt,
                                    int64_t numTokens,
                                    const blockc_sampling *sampling,
                                    int32_t *tokens) {
  CHECK_ARG(model && prompt && tokens,
            "blockc_model_generate: null model, prompt or result");
  const ModelSignature &sig = model->signature;
  if (!sig.takesTokenIds())
    return fail(BLOCKC_ERROR_UNSUPPORTED,
                model->path + ": generation needs a causal language model "
                              "(blockc-import --model=causal-lm), whose entry "
                              "takes token ids");
  CHECK_ARG(batch > 0 && promptLen > 0 && numTokens > 0,
            "generate: batch, prompt length and token count must be "
            "positive");
  GenerationOptions options;
  options.maxNewTokens = numTokens;
  if (sampling) {
    options.sampling.temperature = sampling->temperature;
    options.sampling.topK = sampling->top_k;
    options.sampling.topP = sampling->top_p;
    options.sampling.seed = sampling->seed;
  }
  if (llvm::Error e = options.sampling.check())
    return fail(BLOCKC_ERROR_INVALID_ARGUMENT, std::move(e));
  // One session with room for every sequence's prompt and tokens.
  const int64_t pageSize = 16;
  int64_t pagesPerSequence = (promptLen + numTokens + pageSize - 1) / pageSize;
  blockc_session *session = nullptr;
  if (blockc_status s = blockc_session_create(
          model, pageSize, batch * pagesPerSequence, &session))
    return s;
  std::unique_ptr<blockc_session, void (*)(blockc_session *)> owner(
      session, blockc_session_free);
  std::vector<int64_t> ids(batch);
  for (int64_t &id : ids)
    id = session->table->add();
  blockc_status status = BLOCKC_OK;
  DecodeStepFunction step = [&](llvm::ArrayRef<int32_t> in, int64_t n,
                                std::vector<float> &logits) -> llvm::Error {
    std::vector<int64_t> counts(batch, n);
    logits.assign(batch * n * sig.vocabSize, 0.0f);
    status = session->step(batch, ids.data(), counts.data(), in.data(),
                           logits.data());
    if (status != BLOCKC_OK)
      return llvm::createStringError(lastError);
    return llvm::Error::success();
  };
  auto generated =
      generateTokens(step, llvm::ArrayRef<int32_t>(prompt, batch * promptLen),
                     batch, promptLen, sig.vocabSize, options);
  if (!generated)
    return fail(status != BLOCKC_OK ? status : BLOCKC_ERROR_EXECUTION,
                generated.takeError());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < numTokens; ++i)
      tokens[b * numTokens + i] = generated->token(b, i);
  return ok();
}

} // extern "C"
