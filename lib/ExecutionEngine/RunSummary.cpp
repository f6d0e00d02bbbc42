//===- RunSummary.cpp - what a run of a model reports ---------------------===//
//
// See RunSummary.h. The lines are the ones test/blockc-run checks.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/RunSummary.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

using namespace blockc;

llvm::Expected<int64_t> blockc::prepareRunWeights(BlockJit &jit,
                                                  const ModelSignature &sig,
                                                  RunWeights &weights) {
  if (weights.preparedFile) {
    auto bound =
        bindPreparedWeights(*weights.preparedFile, sig, jit.getPrepareEntry());
    if (!bound)
      return bound.takeError();
    weights.tensors = std::move(*bound);
    return 0;
  }
  std::vector<HostTensor *> entryArgs = {nullptr};
  for (HostTensor &w : weights.tensors)
    entryArgs.push_back(&w);
  llvm::Expected<int64_t> bytes = jit.prepare(entryArgs);
  if (!bytes)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "preparing the weights failed: " +
                                       llvm::toString(bytes.takeError()));
  return bytes;
}

llvm::Error blockc::beginProfile(RunProfile profile, int64_t sampleBlocks) {
  return profile == RunProfile::Emulator ? beginEmulatorProfile(sampleBlocks)
                                         : beginCudaProfile();
}

llvm::Error blockc::endProfile(RunProfile profile, mlir::ModuleOp module,
                               const CompileOptions &options,
                               int64_t sampleBlocks, TimedRuns &runs) {
  if (profile == RunProfile::GPU) {
    auto kernels = endCudaProfile();
    if (!kernels)
      return kernels.takeError();
    runs.measured = std::move(*kernels);
    return llvm::Error::success();
  }
  auto launches = endEmulatorProfile();
  if (!launches)
    return launches.takeError();
  auto built = profileRun(module, options, *launches, sampleBlocks);
  if (!built)
    return built.takeError();
  runs.profile = std::move(*built);
  return llvm::Error::success();
}

llvm::Expected<TimedRuns>
blockc::runTimed(BlockJit &jit, mlir::ModuleOp module,
                 const CompileOptions &options,
                 llvm::ArrayRef<const HostTensor *> args, HostTensor &out,
                 unsigned repeat, RunProfile profile, int64_t sampleBlocks) {
  TimedRuns runs;
  for (unsigned r = 0; r < repeat; ++r) {
    // The profile records the last run (after --repeat's warm-ups).
    bool profiled = profile != RunProfile::None && r + 1 == repeat;
    if (profiled)
      if (llvm::Error e = beginProfile(profile, sampleBlocks))
        return std::move(e);
    auto start = std::chrono::steady_clock::now();
    // Repeats run the same weights: their device copies are reused.
    if (llvm::Error e = jit.run(
            args, out, r == 0 ? WeightReuse::Copy : WeightReuse::Unchanged))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "execution failed: " +
                                         llvm::toString(std::move(e)));
    runs.seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    if (profiled)
      if (llvm::Error e =
              endProfile(profile, module, options, sampleBlocks, runs))
        return std::move(e);
  }
  return runs;
}

std::string blockc::formatSeconds(double s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (s < 1e-3)
    os << llvm::format("%.1f us", s * 1e6);
  else if (s < 1.0)
    os << llvm::format("%.3f ms", s * 1e3);
  else
    os << llvm::format("%.3f s", s);
  return out;
}

double blockc::medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Checksum Checksum::of(const HostTensor &tensor) {
  Checksum c;
  for (float v : tensor.data) {
    c.sum += v;
    c.absSum += std::fabs(v);
    c.finite &= std::isfinite(v);
  }
  return c;
}

std::string blockc::describeHeld(llvm::ArrayRef<HostTensor> weights) {
  uint64_t bytes = 0;
  std::set<std::string> types;
  for (const HostTensor &w : weights) {
    bytes += w.numElements() * w.elementBytes();
    types.insert(stringifyElementType(w.elementType));
  }
  return llvm::formatv("  ({0:F1} MiB {1})", bytes / 1048576.0,
                       llvm::join(types, "+"))
      .str();
}

void blockc::printRunHead(llvm::raw_ostream &os, const RunHead &head,
                          const ModelSignature &signature) {
  os << "blockc-run: " << head.model << " @" << head.entry << " (target "
     << head.target << (head.emulated ? " emulated" : "") << ", threads "
     << head.threads
     << (head.threadsSource.empty() ? "" : " = " + head.threadsSource)
     << (head.ranks > 1 ? ", " + std::to_string(head.ranks) + " ranks" : "")
     << ")\n";
  os << "  input    " << formatShape(head.inputShape) << "  " << head.inputLabel
     << "\n";
  os << "  weights  " << head.numWeights << " tensors, " << head.numParams
     << " parameters";
  // In a tensor-parallel run, the parameters of the whole model, of which
  // the counts before are rank 0's part.
  if (head.ranks > 1) {
    int64_t total = 0;
    for (const ModelArgument &arg : llvm::drop_begin(signature.args)) {
      int64_t n = 1;
      for (int64_t d : arg.fullShape())
        n *= d;
      total += n;
    }
    os << " on rank 0 (of " << total << ")";
  }
  os << "  " << head.weightsLabel << head.weightsHeld << "\n";
}

void blockc::printChecksum(llvm::raw_ostream &os, const Checksum &c) {
  os << llvm::format("  checksum sum=%.6e abs_sum=%.6e%s\n", c.sum, c.absSum,
                     c.finite ? "" : " (non-finite values!)");
}

void blockc::printPrepare(llvm::raw_ostream &os, const PrepareEntry *entry,
                          double seconds, int64_t bytes) {
  if (!entry)
    return;
  os << "  prepare  " << formatSeconds(seconds) << " (@" << entry->funcName
     << ": " << entry->results.size() << " weights packed, "
     << llvm::format("%.1f MiB", bytes / (1024.0 * 1024.0)) << ")\n";
}

void blockc::printKVCaches(llvm::raw_ostream &os,
                           const DecodeSession &session) {
  llvm::ArrayRef<HostTensor> caches = session.getCaches();
  os << "  kv cache " << session.getNumLayers() << " layer"
     << (caches.size() == 2 ? "" : "s") << " x K, V "
     << (caches.empty() ? std::string("(none)")
                        : formatShape(caches.front().shape))
     << (session.isHeadMajor() ? " [B, H_kv, L_max, D]"
                               : " [B, L_max, H_kv, D]")
     << ", " << llvm::format("%.1f KiB", session.getCacheBytes() / 1024.0)
     << "\n";
}

void blockc::printDecodeSteps(llvm::raw_ostream &os,
                              const std::vector<double> &stepTimes,
                              int64_t batch) {
  if (stepTimes.empty())
    return;
  std::vector<double> sorted = stepTimes;
  std::sort(sorted.begin(), sorted.end());
  double p90 = sorted[std::min<size_t>(sorted.size() - 1,
                                       (sorted.size() * 9 + 9) / 10 - 1)];
  double total = 0;
  for (double t : stepTimes)
    total += t;
  os << "  decode   " << stepTimes.size() << " steps of 1 token: median "
     << formatSeconds(medianOf(stepTimes)) << ", p90 " << formatSeconds(p90)
     << llvm::format(", %.1f tokens/s (batch %lld)\n",
                     double(batch) * stepTimes.size() / total,
                     (long long)batch);
}

void blockc::printOutputLine(llvm::raw_ostream &os,
                             const std::vector<int64_t> &shape,
                             llvm::StringRef path, bool sampled) {
  os << "  output   " << formatShape(shape);
  if (!path.empty())
    os << (sampled ? "  (not written: --profile-blocks ran a sample of each "
                     "launch)"
                   : "  -> " + path.str());
  os << "\n";
}

void blockc::printCompileLine(llvm::raw_ostream &os, double seconds,
                              llvm::StringRef cacheStatus) {
  os << "  compile  " << formatSeconds(seconds) << " (" << cacheStatus << ")\n";
}

void blockc::printRunTimes(llvm::raw_ostream &os,
                           const std::vector<double> &seconds, double flops) {
  double median = medianOf(seconds);
  os << "  run      median " << formatSeconds(median) << " over "
     << seconds.size() << (seconds.size() == 1 ? " run" : " runs") << " (min "
     << formatSeconds(*std::min_element(seconds.begin(), seconds.end()))
     << ")\n";
  os << llvm::format("  flops    %.4g per run, %.2f GFLOP/s\n", flops,
                     flops / median * 1e-9);
}
