//===- DecodeSession.cpp - KV-cached decoding of a model in-process -------===//
//
// See DecodeSession.h. The error messages are the ones blockc-run prints
// (test/blockc-run/decode-errors.test checks them).
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/DecodeSession.h"
#include "blockc/Compiler/Compiler.h"
#include "blockc/ExecutionEngine/Sampling.h"
#include "blockc/ExecutionEngine/TokenIds.h"
#include "blockc/Support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace mlir;
using namespace blockc;
using llvm::Twine;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

HostTensor blockc::sliceRows(const HostTensor &x, int64_t t0, int64_t n) {
  int64_t b = x.shape[0], t = x.shape[1], d = x.shape[2];
  HostTensor out;
  out.shape = {b, n, d};
  out.data.resize(b * n * d);
  for (int64_t i = 0; i < b; ++i)
    std::copy_n(x.data.begin() + (i * t + t0) * d, n * d,
                out.data.begin() + i * n * d);
  return out;
}

void blockc::storeRows(HostTensor &dst, const HostTensor &rows, int64_t t0) {
  int64_t b = dst.shape[0], t = dst.shape[1], d = dst.shape[2];
  int64_t n = rows.shape[1];
  for (int64_t i = 0; i < b; ++i)
    std::copy_n(rows.data.begin() + i * n * d, n * d,
                dst.data.begin() + (i * t + t0) * d);
}

HostTensor blockc::greedyTokens(const HostTensor &logits) {
  int64_t b = logits.shape[0], t = logits.shape[1], v = logits.shape[2];
  HostTensor ids = makeTokenIds({b, 1});
  // Greedy selection as --generate makes it: the first of equal maxima,
  // as the reference's greedy generation; NaN never chosen.
  Sampler greedy{SamplingOptions()};
  for (int64_t i = 0; i < b; ++i)
    setTokenId(ids, i,
               greedy.next(llvm::ArrayRef<float>(
                   logits.data.data() + (i * t + t - 1) * v, v)));
  return ids;
}

double DecodeComparison::defaultTolerance(mlir::Type element,
                                          bool quantizedActivations) {
  double type = element.isBF16() ? 0x1p-7 : element.isF16() ? 0x1p-10 : 1e-4;
  return quantizedActivations ? std::max(type, 2e-3) : type;
}

bool DecodeComparison::passes(double relativeTolerance) const {
  return maxDiff <= relativeTolerance * std::max(scale, 1e-30);
}

FailureOr<std::unique_ptr<DecodeSession>>
DecodeSession::derive(ModuleOp module, const ModelSignature &forward,
                      transformer::KVLayout kvLayout) {
  // The forward function is not kept: prefill is the decode entry at
  // position 0.
  if (failed(deriveDecodeEntry(module, forward.funcName, kvLayout,
                               /*keepPrefill=*/false)))
    return failure();

  std::unique_ptr<DecodeSession> session(new DecodeSession());
  session->module = module;
  session->signature = forward;
  session->signature.funcName += "_decode";
  auto decodeFunc =
      module.lookupSymbol<func::FuncOp>(session->signature.funcName);
  session->cacheArgs = getKVCacheArguments(decodeFunc);
  if (!session->cacheArgs.empty())
    session->headMajor = session->cacheArgs.back().headMajor;
  return session;
}

llvm::Error DecodeSession::bind(ArrayRef<HostTensor> weights, int64_t batchSize,
                                int64_t cacheCapacity) {
  // One zeroed cache per K/V argument: [B, H_kv, L_max, D] in memory for
  // the head-major layout, else [B, L_max, H_kv, D].
  std::vector<HostTensor> fresh;
  for (const KVCacheArgument &arg : cacheArgs) {
    int64_t argBatch = arg.type.getDimSize(0);
    if (!ShapedType::isDynamic(argBatch) && argBatch != batchSize)
      return makeError("the KV cache of argument #" + Twine(arg.argNumber) +
                       " has batch " + Twine(argBatch) + ", the input has " +
                       Twine(batchSize));
    HostTensor cache;
    int64_t heads = arg.type.getDimSize(2), headDim = arg.type.getDimSize(3);
    if (arg.headMajor)
      cache.shape = {batchSize, heads, cacheCapacity, headDim};
    else
      cache.shape = {batchSize, cacheCapacity, heads, headDim};
    cache.elementType = getHostElementType(arg.type.getElementType());
    fresh.push_back(std::move(cache));
  }
  caches = std::move(fresh);
  batch = batchSize;
  capacity = cacheCapacity;
  weightArgs.clear();
  for (const HostTensor &w : weights)
    weightArgs.push_back(&w);
  reset();
  return llvm::Error::success();
}

llvm::Error DecodeSession::compile(const CompileOptions &options,
                                   const CompileCache *cache) {
  auto compiled = BlockJit::compile(module, signature, options, cache);
  if (!compiled)
    return compiled.takeError();
  jit = std::move(*compiled);
  return llvm::Error::success();
}

llvm::Expected<int64_t>
DecodeSession::prepare(llvm::MutableArrayRef<HostTensor> weights) {
  if (!jit)
    return makeError("the decode entry is not compiled");
  if (weights.size() != weightArgs.size())
    return makeError("prepare: " + Twine(weights.size()) +
                     " weights given, the session was bound to " +
                     Twine(weightArgs.size()));
  // The entry's arguments: the input (not read by prepare), the weights.
  std::vector<HostTensor *> args = {nullptr};
  for (auto [w, bound] : llvm::zip_equal(weights, weightArgs)) {
    if (&w != bound)
      return makeError("prepare: the weights are not the bound tensors");
    args.push_back(&w);
  }
  return jit->prepare(args);
}

void DecodeSession::reset() {
  for (HostTensor &c : caches)
    c.allocate();
  position = 0;
}

int64_t DecodeSession::getCacheBytes() const {
  int64_t bytes = 0;
  for (const HostTensor &c : caches)
    bytes += c.numElements() * static_cast<int64_t>(c.elementBytes());
  return bytes;
}

llvm::Error DecodeSession::step(const HostTensor &x, HostTensor &out) {
  // The overflow check comes first: the compiled code would abort.
  int64_t n = x.shape[1];
  if (position + n > capacity)
    return makeError("KV cache overflow: " + Twine(position) + " cached + " +
                     Twine(n) + " new tokens exceed the capacity L_max = " +
                     Twine(capacity) + " (--max-len)");
  // Positions past a learned position table would read clamped rows.
  if (signature.maxPositions && position + n > signature.maxPositions)
    return makeError("position overflow: " + Twine(position) + " cached + " +
                     Twine(n) + " new tokens exceed the model's " +
                     Twine(signature.maxPositions) + " learned positions");
  if (!jit)
    return makeError("the decode entry is not compiled");
  out.shape = signature.getOutputShape(x.shape[0], n);
  out.data.assign(out.numElements(), 0.0f);
  std::vector<const HostTensor *> args = {&x};
  args.insert(args.end(), weightArgs.begin(), weightArgs.end());
  std::vector<HostTensor *> cachePtrs;
  for (HostTensor &c : caches)
    cachePtrs.push_back(&c);
  if (llvm::Error e = jit->runDecode(args, position, cachePtrs, headMajor, out))
    return makeError("execution failed: " + llvm::toString(std::move(e)));
  position += n;
  return llvm::Error::success();
}

llvm::Expected<DecodeRun> DecodeSession::generate(const HostTensor &prompt,
                                                  unsigned steps) {
  int64_t batchSize = prompt.shape[0], promptLen = prompt.shape[1];
  DecodeRun run;
  run.output.shape = signature.getOutputShape(batchSize, promptLen + steps);
  run.output.data.assign(run.output.numElements(), 0.0f);
  reset();
  // One call of the entry between the hooks; `seconds` times the call.
  auto hooked = [&](int64_t index, const HostTensor &x, HostTensor &out,
                    double &seconds) -> llvm::Error {
    if (beforeStep)
      if (llvm::Error e = beforeStep(index))
        return e;
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = step(x, out))
      return e;
    seconds = secondsSince(start);
    return afterStep ? afterStep(index) : llvm::Error::success();
  };
  HostTensor out;
  if (llvm::Error e = hooked(0, prompt, out, run.prefillSeconds))
    return std::move(e);
  storeRows(run.output, out, 0);
  for (unsigned s = 0; s < steps; ++s) {
    // A causal language model is fed the greedy token of its last logits;
    // a stack, its last output row (standing in for the sampled token's
    // embedding).
    HostTensor next = signature.takesTokenIds()
                          ? greedyTokens(out)
                          : sliceRows(out, out.shape[1] - 1, 1);
    int64_t pos = position;
    double seconds = 0;
    if (llvm::Error e = hooked(s + 1, next, out, seconds))
      return std::move(e);
    run.stepSeconds.push_back(seconds);
    storeRows(run.output, out, pos);
    if (stepObserver)
      stepObserver(s + 1, steps);
  }
  return std::move(run);
}

llvm::Expected<DecodeComparison>
DecodeSession::compareWithPrefill(const HostTensor &input) {
  int64_t batchSize = input.shape[0], promptLen = input.shape[1];
  DecodeComparison cmp;
  DecodeRun &run = cmp.run;
  run.output.shape = signature.getOutputShape(batchSize, promptLen);
  int64_t width = run.output.shape[2]; // d, or the vocabulary
  run.output.data.assign(run.output.numElements(), 0.0f);

  // One full prefill, then the same sequence token by token.
  reset();
  HostTensor full;
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error e = step(input, full))
    return std::move(e);
  run.prefillSeconds = secondsSince(start);
  reset();
  for (int64_t t = 0; t < promptLen; ++t) {
    HostTensor row = signature.takesTokenIds() ? sliceTokenIds(input, t, 1)
                                               : sliceRows(input, t, 1);
    HostTensor out;
    auto s0 = std::chrono::steady_clock::now();
    if (llvm::Error e = step(row, out))
      return std::move(e);
    run.stepSeconds.push_back(secondsSince(s0));
    storeRows(run.output, out, t);
    if (stepObserver)
      stepObserver(t + 1, promptLen);
  }

  for (float v : full.data)
    cmp.scale = std::max(cmp.scale, double(std::fabs(v)));
  for (int64_t b = 0; b < batchSize; ++b)
    for (int64_t t = 0; t < promptLen; ++t)
      for (int64_t i = 0; i < width; ++i) {
        int64_t at = (b * promptLen + t) * width + i;
        double diff = std::fabs(double(run.output.data[at]) - full.data[at]);
        if (!(diff <= cmp.maxDiff)) { // NaN counts as the worst
          cmp.maxDiff = std::isnan(diff) ? INFINITY : diff;
          cmp.worstPosition = t;
          cmp.worstBatch = b;
        }
      }
  return std::move(cmp);
}
