//===- DecodeSession.h - KV-cached decoding in-process ----------*- C++ -*-===//
//
// Drives the decode entry that transformer-derive-decode derives from a
// model's forward function (docs/Decoding.md): the session owns one K and
// one V cache per layer, allocated and zeroed here in the layout the entry
// was derived for (head-major `bhsd` or token-major `bshd`), and calls the
// compiled entry with the caches written in place. Prefill is the entry at
// position 0 over the whole prompt; every later step appends its tokens at
// the current position. `generate` is prefill plus greedy-style steps,
// `compareWithPrefill` checks token-by-token decoding against one prefill.
// The caches' layout is read from the entry (getKVCacheArguments in
// ModelSignature.h).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_DECODESESSION_H
#define BLOCKC_EXECUTIONENGINE_DECODESESSION_H

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/ExecutionEngine/BlockJit.h"
#include "blockc/Pipelines/Pipelines.h"
#include "blockc/Support/TensorFiles.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <vector>

namespace blockc {

/// Rows [t0, t0 + n) of every batch of a [B, T, d] tensor.
HostTensor sliceRows(const HostTensor &x, int64_t t0, int64_t n);

/// Writes `rows` ([B, n, d]) at rows [t0, t0 + n) of `dst` ([B, T, d]).
void storeRows(HostTensor &dst, const HostTensor &rows, int64_t t0);

/// The greedy next token of every sequence: the arg max (the first of equal
/// maxima) of the last position's logits, as token ids [B, 1].
HostTensor greedyTokens(const HostTensor &logits);

/// The outputs and timings of a decode run.
struct DecodeRun {
  /// The output of every position, [B, T (+ steps), d] (logits: [B, T (+
  /// steps), vocab]).
  HostTensor output;
  /// The prefill call's time, and each single-token step's.
  double prefillSeconds = 0;
  std::vector<double> stepSeconds;
};

/// Token-by-token decoding against one prefill of the same input.
struct DecodeComparison {
  /// `output` holds the token-by-token outputs, `prefillSeconds` times the
  /// full prefill and `stepSeconds` the token-by-token steps.
  DecodeRun run;
  /// The largest |decode - prefill| (+inf when a NaN appears), where it is,
  /// and the largest |prefill output|.
  double maxDiff = 0, scale = 0;
  int64_t worstPosition = 0, worstBatch = 0;

  /// Whether maxDiff is at most `relativeTolerance` of the output scale.
  bool passes(double relativeTolerance) const;

  /// The default relative tolerance for a model whose activation has
  /// element type `element`: two units in the last place of bf16 (2^-7)
  /// and f16 (2^-10) (docs/Precision.md: prefill and decode kernels round
  /// at the same points but sum in different orders, e.g. the tensor-core
  /// and the weight-streaming projections, so a value may round to its
  /// neighbour), and 1e-4 otherwise (f32). A model with `activations =
  /// int8` projections (`quantizedActivations`) gets at least 2e-3, the
  /// bound of that mode against its reference: prefill and decode feed the
  /// projections inputs that differ in their last bits (the attention sums
  /// in another order), and where one lies at a rounding boundary of
  /// `rint(x / s_x)` its q_x moves by one.
  static double defaultTolerance(mlir::Type element,
                                 bool quantizedActivations = false);
};

class DecodeSession {
public:
  /// Derives the decode entry of `forward` in `module` with caches in
  /// `kvLayout` (deriveDecodeEntry in Compiler.h), dropping the forward
  /// function (prefill is the decode entry at position 0). `module` must
  /// outlive the session's compile(). Pass errors are emitted as diagnostics.
  static mlir::FailureOr<std::unique_ptr<DecodeSession>>
  derive(mlir::ModuleOp module, const ModelSignature &forward,
         transformer::KVLayout kvLayout = transformer::KVLayout::bhsd);

  /// Keeps `weights` (the model's weight arguments in order; referenced,
  /// not copied) and allocates one zeroed cache per K/V argument for
  /// `batch` sequences of up to `capacity` tokens. Fails when the entry's
  /// caches have a static batch other than `batch`.
  llvm::Error bind(llvm::ArrayRef<HostTensor> weights, int64_t batch,
                   int64_t capacity);

  /// JIT-compiles the decode entry for `options` (see BlockJit::compile):
  /// the CPU, or NVPTX on a GPU or the emulator (`options.emulate`).
  llvm::Error compile(const CompileOptions &options = CompileOptions(),
                      const CompileCache *cache = nullptr);
  /// BlockJit::cacheStatus() of the compiled entry.
  std::string cacheStatus() const {
    return jit ? jit->cacheStatus() : std::string("not compiled");
  }

  /// Runs the decode entry's prepare function (see BlockJit::prepare) on
  /// `weights`, which must be the tensors given to bind(): each prepared
  /// weight replaces its original in place. Returns the prepared bytes (0
  /// when the entry reads no prepared weights). Call after compile() and
  /// before the first step.
  llvm::Expected<int64_t> prepare(llvm::MutableArrayRef<HostTensor> weights);

  /// Zeroes the caches: the next step starts at position 0.
  void reset();

  /// Runs `x` ([B, n, d], or for a causal language model the ids [B, n] of
  /// n new tokens, see TokenIds.h) at the current position, appending its n
  /// tokens to every cache in place, and writes the n output rows ([B, n,
  /// d], or the f32 logits [B, n, vocab]) to `out`. Fails without running
  /// when position + n exceeds the capacity.
  llvm::Error step(const HostTensor &x, HostTensor &out);

  /// Prefills `prompt` ([B, T, d] or ids [B, T]) into zeroed caches, then
  /// runs `steps` single-token steps, each fed the previous call's last
  /// output row (a causal language model: the greedy token of its last
  /// logits, greedyTokens). The output holds every position's rows or
  /// logits.
  llvm::Expected<DecodeRun> generate(const HostTensor &prompt, unsigned steps);

  /// Runs `input` ([B, T, d] or ids [B, T]) once as a prefill and once
  /// token by token (each from zeroed caches) and compares the outputs.
  llvm::Expected<DecodeComparison> compareWithPrefill(const HostTensor &input);

  /// Called after each single-token step of generate() and
  /// compareWithPrefill() with the steps done and their number (progress).
  void setStepObserver(std::function<void(int64_t done, int64_t total)> f) {
    stepObserver = std::move(f);
  }

  /// Called by generate() before and after each call of the entry: `step`
  /// 0 is the prefill, 1 to `steps` the single-token steps (e.g. to
  /// profile one of them). An error stops the run and is returned.
  using StepHook = std::function<llvm::Error(int64_t step)>;
  void setStepHooks(StepHook before, StepHook after) {
    beforeStep = std::move(before);
    afterStep = std::move(after);
  }

  /// The decode entry's signature (@<forward>_decode, the forward
  /// function's arguments without the position and the caches).
  const ModelSignature &getSignature() const { return signature; }
  /// The decode entry's prepare function, if any (after compile()).
  const PrepareEntry *getPrepareEntry() const {
    return jit ? jit->getPrepareEntry() : nullptr;
  }
  /// The caches, k_0, v_0, k_1, ... (after bind()).
  llvm::ArrayRef<HostTensor> getCaches() const { return caches; }
  unsigned getNumLayers() const { return cacheArgs.size() / 2; }
  bool isHeadMajor() const { return headMajor; }
  int64_t getCapacity() const { return capacity; }
  int64_t getPosition() const { return position; }
  int64_t getCacheBytes() const;

private:
  DecodeSession() = default;

  std::function<void(int64_t, int64_t)> stepObserver;
  StepHook beforeStep, afterStep;

  ModelSignature signature;
  mlir::ModuleOp module;
  llvm::SmallVector<KVCacheArgument> cacheArgs;
  bool headMajor = false;
  std::unique_ptr<BlockJit> jit;
  std::vector<const HostTensor *> weightArgs;
  std::vector<HostTensor> caches;
  int64_t batch = 0, capacity = 0, position = 0;
};

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_DECODESESSION_H
