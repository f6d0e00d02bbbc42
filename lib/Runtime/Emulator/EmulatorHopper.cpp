//===- EmulatorHopper.cpp - the GPU emulator's Hopper asynchrony ---------===//
//
// The blockcEmu* entry points of Hopper's asynchronous operations: named
// barriers, mbarriers, TMA loads and stores (with their bulk groups and
// the async-proxy fence) and their tensor maps
// (mgpuTensorMapEncodeTiledMemref), and warpgroup MMA (wgmma) with its
// commit / wait groups. EmulatorRuntime.cpp describes the whole runtime.
//
//===----------------------------------------------------------------------===//

#include "EmulatorState.h"

using namespace blockc::emu::detail;

//===----------------------------------------------------------------------===//
// Hopper: mbarriers, TMA, wgmma
//===----------------------------------------------------------------------===//

namespace {

/// The tensor maps that mgpuTensorMapEncodeTiledMemref made, interned:
/// equal maps share one entry. A map names a buffer's address, so programs
/// that allocate new buffers make new maps: past kMaxTensorMaps the old ones
/// are forgotten (launches complete before they return, so none is in use;
/// a forgotten pointer is reported as not a tensor map).
constexpr size_t kMaxTensorMaps = 4096;

struct TensorMaps {
  std::mutex mutex;
  std::set<TensorMap> maps;
  std::unordered_set<const void *> valid;
};

TensorMaps &tensorMaps() {
  static TensorMaps *maps = new TensorMaps;
  return *maps;
}

/// Fails the launch unless the kernel runs on fibers (was registered with
/// BLOCKC_EMU_SYNCHRONIZES).
bool needsFibers(ThreadState &t, const char *what, const char *site) {
  if (t.launch->fibers)
    return true;
  failInKernel(t, format("reaches %s at %s but was registered without "
                         "BLOCKC_EMU_SYNCHRONIZES",
                         what, siteName(site)));
  return false;
}

/// The shared offset of the mbarrier at `address`, or -1 after failing the
/// launch (outside shared memory or misaligned).
int64_t mbarrierOffset(ThreadState &t, const void *address, const char *what,
                       const char *site) {
  Launch &l = *t.launch;
  const char *p = static_cast<const char *>(address);
  if (p < l.shared || p + 8 > l.shared + l.sharedBytes) {
    failInKernel(t, format("%s: %s at %s uses an mbarrier outside the block's "
                           "%lld bytes of shared memory",
                           threadInBlock(t).c_str(), what, siteName(site),
                           static_cast<long long>(l.sharedBytes)));
    return -1;
  }
  int64_t offset = p - l.shared;
  if (offset % 8 != 0) {
    failInKernel(t, format("%s: %s at %s uses an mbarrier at shared offset "
                           "%lld, not 8-byte aligned",
                           threadInBlock(t).c_str(), what, siteName(site),
                           static_cast<long long>(offset)));
    return -1;
  }
  return offset;
}

/// The initialised mbarrier at `address`, or null after failing the launch.
Mbarrier *findMbarrier(ThreadState &t, const void *address, const char *what,
                       const char *site, int64_t *offsetOut = nullptr) {
  int64_t offset = mbarrierOffset(t, address, what, site);
  if (offset < 0)
    return nullptr;
  Launch &l = *t.launch;
  auto it = l.mbarriers.find(offset);
  if (it == l.mbarriers.end()) {
    failInKernel(t, format("%s: %s at %s uses the mbarrier at shared offset "
                           "%lld before its init",
                           threadInBlock(t).c_str(), what, siteName(site),
                           static_cast<long long>(offset)));
    return nullptr;
  }
  if (offsetOut)
    *offsetOut = offset;
  return &it->second;
}

/// The calling thread and the initialised mbarrier at `address` of the
/// entry point `function` (`what` in its errors; the launch runs on
/// fibers), and the mbarrier's shared offset; nulls after an error.
std::pair<ThreadState *, Mbarrier *>
mbarrierOp(BlockcEmuThread *thread, const void *address, const char *function,
           const char *what, const char *site, int64_t *offset) {
  ThreadState *t = threadState(thread, function, site);
  if (!t || !needsFibers(*t, what, site))
    return {nullptr, nullptr};
  Mbarrier *b = findMbarrier(*t, address, what, site, offset);
  return {b ? t : nullptr, b};
}

const char *swizzleName(int32_t swizzle) {
  static const char *names[] = {"no swizzle", "32B swizzle", "64B swizzle",
                                "128B swizzle"};
  return swizzle >= 0 && swizzle < 4 ? names[swizzle] : "?";
}

/// Bytes per element of a CUtensorMapDataType (0 if it is not one of
/// 0-12).
int32_t tensorElementBytes(int64_t dataType) {
  static const int32_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return dataType >= 0 && dataType < 13 ? bytes[dataType] : 0;
}

/// Checks and builds a tensor map; returns the problem, or an empty string.
std::string encodeTensorMap(int64_t rank, void *rankedDescriptor,
                            int64_t dataType, int64_t interleave,
                            int64_t swizzle, int64_t oobFill,
                            const int64_t *boxDims, TensorMap &m) {
  if (rank < 1 || rank > kMaxTensorRank)
    return format("rank %lld is not 1 to %d", static_cast<long long>(rank),
                  kMaxTensorRank);
  if (!rankedDescriptor || !boxDims)
    return "a null memref descriptor or box";
  int32_t e = tensorElementBytes(dataType);
  if (!e)
    return format("data type %lld is not a CUtensorMapDataType of 0 to 12",
                  static_cast<long long>(dataType));
  if (interleave != 0)
    return format("interleave %lld is not modelled (only 0, "
                  "CU_TENSOR_MAP_INTERLEAVE_NONE)",
                  static_cast<long long>(interleave));
  if (swizzle < 0 || swizzle > 3)
    return format("swizzle %lld is not 0 to 3 (none, 32B, 64B, 128B)",
                  static_cast<long long>(swizzle));
  if (oobFill != 0 && oobFill != 1)
    return format("OOB fill %lld is not 0 (zeros) or 1 (NaN)",
                  static_cast<long long>(oobFill));
  if (oobFill == 1 && dataType < 6)
    return format("NaN OOB fill needs a floating-point data type, not %lld",
                  static_cast<long long>(dataType));
  // {allocated, aligned, offset, sizes[rank], strides[rank]}.
  const auto *fields = static_cast<const int64_t *>(rankedDescriptor);
  const char *aligned = reinterpret_cast<const char *>(fields[1]);
  int64_t offset = fields[2];
  const int64_t *sizes = fields + 3, *strides = fields + 3 + rank;
  m.base = aligned + offset * e;
  m.rank = static_cast<int32_t>(rank);
  m.dataType = static_cast<int32_t>(dataType);
  m.elementBytes = e;
  m.swizzle = static_cast<int32_t>(swizzle);
  m.oobFill = static_cast<int32_t>(oobFill);
  if (strides[rank - 1] != 1)
    return format("the innermost stride is %lld, not 1",
                  static_cast<long long>(strides[rank - 1]));
  if (reinterpret_cast<uintptr_t>(m.base) % 16 != 0)
    return format("the base address %p (aligned pointer %p plus %lld "
                  "elements) is not 16-byte aligned",
                  static_cast<const void *>(m.base),
                  static_cast<const void *>(aligned),
                  static_cast<long long>(offset));
  // Dimension d of the map is dimension rank - 1 - d of the memref.
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = rank - 1 - i;
    if (sizes[i] < 1 || sizes[i] > (int64_t(1) << 32))
      return format("size %lld of dimension %lld is not 1 to 2^32",
                    static_cast<long long>(sizes[i]),
                    static_cast<long long>(i));
    if (d > 0 && (strides[i] < 1 || strides[i] * e % 16 != 0 ||
                  strides[i] * e >= (int64_t(1) << 40)))
      return format("stride %lld of dimension %lld is %lld bytes, not a "
                    "positive multiple of 16 below 2^40",
                    static_cast<long long>(strides[i]),
                    static_cast<long long>(i),
                    static_cast<long long>(strides[i] * e));
    if (boxDims[i] < 1 || boxDims[i] > 256)
      return format("box size %lld of dimension %lld is not 1 to 256",
                    static_cast<long long>(boxDims[i]),
                    static_cast<long long>(i));
    m.dims[d] = sizes[i];
    m.strides[d] = strides[i] * e;
    m.box[d] = static_cast<int32_t>(boxDims[i]);
  }
  int64_t rowBytes = m.box[0] * e;
  if (rowBytes % 16 != 0)
    return format("the innermost box dimension is %lld bytes, not a multiple "
                  "of 16",
                  static_cast<long long>(rowBytes));
  if (m.swizzle && rowBytes > m.swizzleWidth())
    return format("the innermost box dimension is %lld bytes, more than the "
                  "%d bytes of its %s",
                  static_cast<long long>(rowBytes), m.swizzleWidth(),
                  swizzleName(m.swizzle));
  return {};
}

} // namespace

BLOCKC_EXPORT void blockcEmuNamedBarrier(BlockcEmuThread *thread, int32_t id,
                                         int32_t count, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuNamedBarrier", site);
  if (!t || !needsFibers(*t, "bar.sync", site))
    return;
  Launch &l = *t->launch;
  if (id < 0 || id >= kNamedBarriers) {
    failInKernel(*t, format("%s: bar.sync at %s uses barrier %d (0 to %d)",
                            threadInBlock(*t).c_str(), siteName(site), id,
                            kNamedBarriers - 1));
    return;
  }
  if (count <= 0 || count % kWarpSize != 0 || count > l.threadCount) {
    failInKernel(*t, format("%s: bar.sync at %s expects %d threads (a "
                            "positive multiple of 32 up to the block's %lld)",
                            threadInBlock(*t).c_str(), siteName(site), count,
                            static_cast<long long>(l.threadCount)));
    return;
  }
  NamedBarrier &b = l.named[id];
  if (b.arrived == 0) {
    b.count = count;
  } else if (b.count != count) {
    failInKernel(*t, format("%s: bar.sync at %s expects %d threads at barrier "
                            "%d, where the %d threads waiting there expect %d",
                            threadInBlock(*t).c_str(), siteName(site), count,
                            id, b.arrived, b.count));
    return;
  }
  ++b.arrived;
  t->status = Status::AtNamedBarrier;
  t->site = site;
  t->namedBarrier = id;
  yieldToScheduler(*t);
}

BLOCKC_EXPORT void blockcEmuMbarrierInit(BlockcEmuThread *thread, void *barrier,
                                         int32_t count, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuMbarrierInit", site);
  if (!t || !needsFibers(*t, "mbarrier.init", site))
    return;
  int64_t offset = mbarrierOffset(*t, barrier, "mbarrier.init", site);
  if (offset < 0)
    return;
  if (count < 1 || count > kMaxMbarrierCount) {
    failInKernel(*t, format("%s: mbarrier.init at %s has count %d (1 to %lld)",
                            threadInBlock(*t).c_str(), siteName(site), count,
                            static_cast<long long>(kMaxMbarrierCount)));
    return;
  }
  Mbarrier &b = t->launch->mbarriers[offset];
  if (!b.copies.empty()) {
    failInKernel(*t, format("%s: mbarrier.init at %s initialises the mbarrier "
                            "at shared offset %lld while %zu TMA loads are "
                            "queued on it",
                            threadInBlock(*t).c_str(), siteName(site),
                            static_cast<long long>(offset), b.copies.size()));
    return;
  }
  b = Mbarrier();
  b.expected = b.pending = count;
}

BLOCKC_EXPORT void blockcEmuMbarrierArrive(BlockcEmuThread *thread,
                                           void *barrier, int32_t txBytes,
                                           const char *site) {
  const char *what = "mbarrier.arrive";
  int64_t offset;
  auto [t, b] = mbarrierOp(thread, barrier, "blockcEmuMbarrierArrive", what,
                           site, &offset);
  if (!b)
    return;
  if (txBytes < 0 || b->tx + txBytes > kMaxTxCount) {
    failInKernel(*t, format("%s: %s at %s expects %d transaction bytes on the "
                            "mbarrier at shared offset %lld (%lld pending; "
                            "the count must stay within 0 to %lld)",
                            threadInBlock(*t).c_str(), what, siteName(site),
                            txBytes, static_cast<long long>(offset),
                            static_cast<long long>(b->tx),
                            static_cast<long long>(kMaxTxCount)));
    return;
  }
  if (b->pending == 0) {
    failInKernel(*t, format("%s: %s at %s arrives at the mbarrier at shared "
                            "offset %lld in phase %lld, whose %d expected "
                            "arrivals all arrived (%lld transaction bytes "
                            "pending)",
                            threadInBlock(*t).c_str(), what, siteName(site),
                            static_cast<long long>(offset),
                            static_cast<long long>(b->phase), b->expected,
                            static_cast<long long>(b->tx)));
    return;
  }
  b->tx += txBytes;
  --b->pending;
  b->advance();
}

BLOCKC_EXPORT void blockcEmuMbarrierTryWaitParity(BlockcEmuThread *thread,
                                                  void *barrier, int32_t parity,
                                                  const char *site) {
  const char *what = "mbarrier.try_wait.parity";
  int64_t offset;
  auto [t, b] = mbarrierOp(thread, barrier, "blockcEmuMbarrierTryWaitParity",
                           what, site, &offset);
  if (!b)
    return;
  if (parity != 0 && parity != 1) {
    failInKernel(*t, format("%s: %s at %s has parity %d (0 or 1)",
                            threadInBlock(*t).c_str(), what, siteName(site),
                            parity));
    return;
  }
  // The TMA loads queued on the barrier land now.
  if (!b->copies.empty())
    landCopies(*t->launch, *b);
  if ((b->phase & 1) != parity)
    return; // the phase of this parity completed
  t->status = Status::AtMbarrier;
  t->site = site;
  t->mbarrier = offset;
  t->parity = parity;
  yieldToScheduler(*t); // resumed when the phase completed
}

namespace {

/// The tensor map at `tensorMap` if mgpuTensorMapEncodeTiledMemref made it.
const TensorMap *lookUpTensorMap(const void *tensorMap) {
  TensorMaps &maps = tensorMaps();
  std::lock_guard<std::mutex> lock(maps.mutex);
  return maps.valid.count(tensorMap) ? static_cast<const TensorMap *>(tensorMap)
                                     : nullptr;
}

/// What is wrong with a TMA copy's map `m` (from lookUpTensorMap) and its
/// `rank` coordinates, or "".
std::string tensorMapProblem(const TensorMap *m, int32_t rank,
                             const int32_t *coords) {
  if (!m)
    return "has a tensor map that mgpuTensorMapEncodeTiledMemref did not "
           "make";
  if (rank != m->rank || !coords)
    return format("gives %d coordinates for a rank-%d tensor map", rank,
                  m->rank);
  return "";
}

} // namespace

BLOCKC_EXPORT void blockcEmuTmaLoad(BlockcEmuThread *thread, void *dst,
                                    const void *tensorMap, int32_t rank,
                                    const int32_t *coords, void *barrier,
                                    const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuTmaLoad", site);
  const char *what = "the TMA load";
  if (!t || !needsFibers(*t, what, site))
    return;
  Launch &l = *t->launch;
  const TensorMap *m = lookUpTensorMap(tensorMap);
  const char *d = static_cast<const char *>(dst);
  std::string problem = tensorMapProblem(m, rank, coords);
  if (!problem.empty()) {
    // Reported below.
  } else if (d < l.shared || d >= l.shared + l.sharedBytes) {
    problem = format("writes outside the block's %lld bytes of shared memory",
                     static_cast<long long>(l.sharedBytes));
  } else {
    int64_t offset = d - l.shared;
    int width = m->swizzleWidth();
    // The swizzle's repeat: 8 rows of its width (128 bytes without).
    int64_t alignment = width ? 8 * width : 128;
    // Swizzled chunks stay within their `width`-byte segment.
    int64_t granule = width ? width : 16;
    int64_t span = (m->boxBytes() + granule - 1) / granule * granule;
    if (offset % alignment != 0)
      problem =
          format("writes to shared offset %lld, not aligned to the %lld "
                 "bytes that its %s needs",
                 static_cast<long long>(offset),
                 static_cast<long long>(alignment), swizzleName(m->swizzle));
    else if (offset + span > l.sharedBytes)
      problem =
          format("writes a box of %lld bytes at shared offset %lld, "
                 "past the end of the block's %lld bytes of shared "
                 "memory",
                 static_cast<long long>(span), static_cast<long long>(offset),
                 static_cast<long long>(l.sharedBytes));
  }
  if (!problem.empty()) {
    failInKernel(*t, format("%s: %s at %s %s", threadInBlock(*t).c_str(), what,
                            siteName(site), problem.c_str()));
    return;
  }
  // The box may land as soon as it is issued: nothing a wgmma group in
  // flight reads may be in it.
  if (!l.sharedReads.empty()) {
    int64_t offset = d - l.shared;
    checkSharedWrite(*t, offset, offset + m->boxBytes(), what, site);
    if (l.failed)
      return;
  }
  Mbarrier *b = findMbarrier(*t, barrier, what, site);
  if (!b)
    return;
  PendingTma copy = {m, static_cast<char *>(dst), {}};
  std::copy(coords, coords + rank, copy.coords);
  b->copies.push_back(copy);
}

BLOCKC_EXPORT void blockcEmuTmaStore(BlockcEmuThread *thread, const void *src,
                                     const void *tensorMap, int32_t rank,
                                     const int32_t *coords, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuTmaStore", site);
  if (!t)
    return;
  Launch &l = *t->launch;
  const TensorMap *m = lookUpTensorMap(tensorMap);
  const char *s = static_cast<const char *>(src);
  std::string problem = tensorMapProblem(m, rank, coords);
  if (!problem.empty()) {
    // Reported below.
  } else if (m->swizzle) {
    problem = format("has a tensor map with a %s (only stores without a "
                     "swizzle are modelled)",
                     swizzleName(m->swizzle));
  } else if (s < l.shared || s >= l.shared + l.sharedBytes) {
    problem = format("reads outside the block's %lld bytes of shared memory",
                     static_cast<long long>(l.sharedBytes));
  } else if ((s - l.shared) % 128 != 0) {
    problem = format("reads from shared offset %lld, not 128-byte aligned",
                     static_cast<long long>(s - l.shared));
  } else if (s - l.shared + m->boxBytes() > l.sharedBytes) {
    problem = format("reads a box of %lld bytes at shared offset %lld, past "
                     "the end of the block's %lld bytes of shared memory",
                     static_cast<long long>(m->boxBytes()),
                     static_cast<long long>(s - l.shared),
                     static_cast<long long>(l.sharedBytes));
  } else if (!t->asyncFenced) {
    problem = "follows no fence.proxy.async of its thread since the thread "
              "last committed a bulk group: the async proxy need not see "
              "the generic proxy's writes of the box";
  }
  if (!problem.empty()) {
    failInKernel(*t,
                 format("%s: the TMA store at %s %s", threadInBlock(*t).c_str(),
                        siteName(site), problem.c_str()));
    return;
  }
  PendingTmaStore store = {m, s, {}, site};
  std::copy(coords, coords + rank, store.coords);
  t->openStores.push_back(store);
}

BLOCKC_EXPORT void blockcEmuBulkCommit(BlockcEmuThread *thread,
                                       const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuBulkCommit", site);
  if (!t)
    return;
  t->storeGroups.push_back(std::move(t->openStores));
  t->openStores.clear();
  t->asyncFenced = false;
}

BLOCKC_EXPORT void blockcEmuBulkWait(BlockcEmuThread *thread, int32_t pending,
                                     const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuBulkWait", site);
  if (!t)
    return;
  if (pending < 0) {
    failInKernel(*t,
                 format("%s: cp.async.bulk.wait_group at %s allows %d "
                        "pending groups",
                        threadInBlock(*t).c_str(), siteName(site), pending));
    return;
  }
  // The stores read shared memory (and write the tensor) now: a box
  // rewritten before the wait is stored as rewritten.
  while (t->storeGroups.size() > static_cast<size_t>(pending)) {
    for (const PendingTmaStore &store : t->storeGroups.front())
      performTmaStore(*t->launch, store);
    t->storeGroups.pop_front();
  }
}

BLOCKC_EXPORT void blockcEmuFenceProxyAsync(BlockcEmuThread *thread,
                                            const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuFenceProxyAsync", site);
  if (t)
    t->asyncFenced = true;
}

namespace blockc::emu::detail {

void retireWgmmaGroups(ThreadState &t, int64_t pending) {
  int64_t target = t.wgmmaCommitted - std::max<int64_t>(pending, 0);
  if (target > t.wgmmaRetired)
    t.wgmmaRetired = target;
  std::vector<PendingSharedRead> &reads = t.launch->sharedReads;
  while (!t.readGroups.empty() &&
         t.readGroups.front().group <= t.wgmmaRetired) {
    const WgmmaReadGroup &group = t.readGroups.front();
    for (const SharedRange &r : group.ranges)
      for (size_t i = 0; i < reads.size(); ++i)
        if (reads[i].range.begin == r.begin && reads[i].range.end == r.end &&
            reads[i].site == group.site) {
          if (--reads[i].readers == 0)
            reads.erase(reads.begin() + i);
          break;
        }
    t.readGroups.pop_front();
  }
}

void checkSharedWrite(ThreadState &t, int64_t begin, int64_t end,
                      const char *what, const char *site) {
  for (const PendingSharedRead &read : t.launch->sharedReads) {
    if (begin >= read.range.end || read.range.begin >= end)
      continue;
    std::string writer = *what ? format("%s at %s", what, siteName(site))
                               : std::string(siteName(site));
    failInKernel(
        t, format("%s: %s writes shared bytes [%lld, %lld), which a "
                  "wgmma group in flight reads (shared bytes [%lld, %lld), "
                  "the wgmma at %s): the group must be waited for "
                  "(wgmma.wait_group) by every thread that issued it before "
                  "the buffer is written",
                  threadInBlock(t).c_str(), writer.c_str(),
                  static_cast<long long>(begin), static_cast<long long>(end),
                  static_cast<long long>(read.range.begin),
                  static_cast<long long>(read.range.end), siteName(read.site)));
    return;
  }
}

} // namespace blockc::emu::detail

namespace {

/// Adds [begin, end) to `ranges`, merging it with the ranges it overlaps or
/// touches.
void addRange(std::vector<SharedRange> &ranges, int64_t begin, int64_t end) {
  for (size_t i = 0; i < ranges.size();) {
    if (begin <= ranges[i].end && ranges[i].begin <= end) {
      begin = std::min(begin, ranges[i].begin);
      end = std::max(end, ranges[i].end);
      ranges.erase(ranges.begin() + i);
    } else {
      ++i;
    }
  }
  ranges.push_back({begin, end});
}

/// The group of the last MMA that wrote accumulator `accumulator` of `t`
/// (0: none).
int64_t &accumulatorGroup(ThreadState &t, int32_t accumulator) {
  if (static_cast<size_t>(accumulator) >= t.accumulatorGroups.size())
    t.accumulatorGroups.resize(accumulator + 1, 0);
  return t.accumulatorGroups[accumulator];
}

/// Fails the launch if `t` may not access (`verb`: "reads" or "writes")
/// its accumulator `accumulator` (-1: every accumulator) at `site`: an MMA
/// that writes it is uncommitted or its group in flight.
void checkAccumulator(ThreadState &t, int32_t accumulator, const char *verb,
                      const char *site) {
  if (accumulator < 0) {
    if (t.wgmmaUncommitted)
      failInKernel(t, format("%s: %s %s a warpgroup accumulator whose "
                             "wgmma were not committed and waited for "
                             "(wgmma.commit_group, wgmma.wait_group)",
                             threadInBlock(t).c_str(), siteName(site), verb));
    else if (int64_t n = t.wgmmaGroupsInFlight(); n > 0)
      failInKernel(t, format("%s: %s %s a warpgroup accumulator while %lld "
                             "wgmma group%s in flight: wait for %s with "
                             "wgmma.wait_group 0 first",
                             threadInBlock(t).c_str(), siteName(site), verb,
                             static_cast<long long>(n),
                             n == 1 ? " is" : "s are", n == 1 ? "it" : "them"));
    return;
  }
  int64_t group = accumulatorGroup(t, accumulator);
  if (group > t.wgmmaCommitted)
    failInKernel(t, format("%s: %s %s warpgroup accumulator %d, which a wgmma "
                           "not yet committed writes (wgmma.commit_group, "
                           "then wgmma.wait_group)",
                           threadInBlock(t).c_str(), siteName(site), verb,
                           accumulator));
  else if (group > t.wgmmaRetired)
    failInKernel(
        t, format("%s: %s %s warpgroup accumulator %d while the wgmma group "
                  "that writes it is in flight (%lld group%s in flight, it "
                  "is the %lld%s newest): wait for it with wgmma.wait_group "
                  "%lld first",
                  threadInBlock(t).c_str(), siteName(site), verb, accumulator,
                  static_cast<long long>(t.wgmmaGroupsInFlight()),
                  t.wgmmaGroupsInFlight() == 1 ? "" : "s",
                  static_cast<long long>(t.wgmmaCommitted - group + 1),
                  t.wgmmaCommitted - group == 0   ? "st"
                  : t.wgmmaCommitted - group == 1 ? "nd"
                  : t.wgmmaCommitted - group == 2 ? "rd"
                                                  : "th",
                  static_cast<long long>(t.wgmmaCommitted - group)));
}

} // namespace

BLOCKC_EXPORT void blockcEmuWgmmaCommit(BlockcEmuThread *thread,
                                        int32_t waitDepth, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaCommit", site);
  if (!t)
    return;
  if (t->wgmmaUncommitted) {
    ++t->wgmmaCommitted;
    t->wgmmaUncommitted = false;
    if (!t->openReads.empty()) {
      std::vector<PendingSharedRead> &reads = t->launch->sharedReads;
      for (const SharedRange &r : t->openReads) {
        auto it = std::find_if(
            reads.begin(), reads.end(), [&](const PendingSharedRead &read) {
              return read.range.begin == r.begin && read.range.end == r.end &&
                     read.site == t->openReadSite;
            });
        if (it == reads.end())
          reads.push_back({r, 1, t->openReadSite});
        else
          ++it->readers;
      }
      t->readGroups.push_back(
          {t->wgmmaCommitted, t->openReadSite, std::move(t->openReads)});
      t->openReads.clear();
    }
  }
  retireWgmmaGroups(*t, waitDepth);
}

BLOCKC_EXPORT void blockcEmuWgmmaWait(BlockcEmuThread *thread, int32_t pending,
                                      const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaWait", site);
  if (!t)
    return;
  retireWgmmaGroups(*t, pending);
}

BLOCKC_EXPORT void blockcEmuWgmmaRead(BlockcEmuThread *thread,
                                      int32_t accumulator, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaRead", site);
  if (t)
    checkAccumulator(*t, accumulator, "reads", site);
}

BLOCKC_EXPORT void blockcEmuWgmmaWrite(BlockcEmuThread *thread,
                                       int32_t accumulator, const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmmaWrite", site);
  if (t)
    checkAccumulator(*t, accumulator, "writes", site);
}

BLOCKC_EXPORT void blockcEmuWgmma(BlockcEmuThread *thread, int32_t type,
                                  uint64_t descA, uint64_t descB, int32_t n,
                                  int32_t transposeA, int32_t transposeB,
                                  float *acc, int32_t accumulator,
                                  const char *site) {
  ThreadState *t = threadState(thread, "blockcEmuWgmma", site);
  if (!t || !needsFibers(*t, "wgmma", site))
    return;
  Launch &l = *t->launch;
  std::string problem;
  blockc::emu::MatrixDescriptor a = blockc::emu::decodeDescriptor(descA);
  blockc::emu::MatrixDescriptor b = blockc::emu::decodeDescriptor(descB);
  // bf16 and f16: m64nNk16; tf32: m64nNk8.
  bool tf32 = type == static_cast<int32_t>(blockc::emu::MmaType::TF32);
  int k = tf32 ? 8 : 16;
  if (type != 0 && type != 1 && !tf32)
    problem = format("has multiplicand type %d (0 bf16, 1 f16, 2 tf32)", type);
  else if (n < 8 || n > 256 || n % 8 != 0)
    problem = format("has n = %d (8 to 256, a multiple of 8)", n);
  else if (tf32 && (transposeA || transposeB))
    problem = format("has transpose flags A %d, B %d: tf32 operands are "
                     "K-major only (the PTX ISA has no transpose for tf32)",
                     transposeA, transposeB);
  else if (transposeA || (transposeB & ~1) ||
           (transposeB && b.swizzleMode == 0))
    problem = format("has transpose flags A %d, B %d (B swizzle mode %d): "
                     "an MN-major A, or an MN-major B without a swizzle, is "
                     "not modelled",
                     transposeA, transposeB, b.swizzleMode);
  else if (a.baseOffset || b.baseOffset)
    problem = format("has descriptor base offsets A %d, B %d: only 0 is "
                     "modelled",
                     a.baseOffset, b.baseOffset);
  else if (l.threadCount % kWarpgroupSize != 0)
    problem = format("needs whole warpgroups; the block has %lld threads, not "
                     "a multiple of 128",
                     static_cast<long long>(l.threadCount));
  if (problem.empty()) {
    int32_t linear = static_cast<int32_t>(t - l.threads.data());
    int64_t bad = blockc::emu::wgmmaThread(
        static_cast<blockc::emu::MmaType>(type), descA, descB, n,
        linear % kWarpgroupSize, l.shared, l.sharedBytes, acc, transposeB != 0);
    t->wgmmaUncommitted = true;
    if (accumulator >= 0)
      accumulatorGroup(*t, accumulator) = t->wgmmaCommitted + 1;
    // What the MMA reads stays read until its group is waited for.
    if (bad < 0) {
      int elementBytes = tf32 ? 4 : 2;
      auto [aBegin, aEnd] = blockc::emu::wgmmaOperandRange(
          a, 64, k, elementBytes, /*mnMajor=*/false);
      auto [bBegin, bEnd] = blockc::emu::wgmmaOperandRange(
          b, n, k, elementBytes, transposeB != 0);
      addRange(t->openReads, aBegin, aEnd);
      addRange(t->openReads, bBegin, bEnd);
      t->openReadSite = site;
    }
    // m64nNkK: 2 x 64 x N x K FLOPs per warpgroup, a 128th per thread.
    if (l.profiler)
      l.profiler->tensorFlops(2.0 * 64 * n * k / kWarpgroupSize, tf32);
    if (bad >= 0)
      problem = format(
          "reads shared offset %lld, outside the block's %lld bytes of shared "
          "memory (A: start %lld, SBO %lld, LBO %lld, mode %d; B: start %lld, "
          "SBO %lld, LBO %lld, mode %d)",
          static_cast<long long>(bad), static_cast<long long>(l.sharedBytes),
          static_cast<long long>(a.start),
          static_cast<long long>(a.strideOffset),
          static_cast<long long>(a.leadingOffset), a.swizzleMode,
          static_cast<long long>(b.start),
          static_cast<long long>(b.strideOffset),
          static_cast<long long>(b.leadingOffset), b.swizzleMode);
  }
  if (!problem.empty())
    failInKernel(*t, format("%s: wgmma.m64n%dk%d at %s %s",
                            threadInBlock(*t).c_str(), n, k, siteName(site),
                            problem.c_str()));
}

BLOCKC_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *rankedDescriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t /*l2promo*/, int64_t oobFill, int64_t *boxDims) {
  TensorMap m;
  std::string problem =
      encodeTensorMap(rank, rankedDescriptor, dataType, interleave, swizzle,
                      oobFill, boxDims, m);
  if (!problem.empty()) {
    recordError("mgpuTensorMapEncodeTiledMemref: " + problem);
    return nullptr;
  }
  TensorMaps &maps = tensorMaps();
  std::lock_guard<std::mutex> lock(maps.mutex);
  if (maps.maps.size() >= kMaxTensorMaps && !maps.maps.count(m)) {
    maps.maps.clear();
    maps.valid.clear();
  }
  const TensorMap *interned = &*maps.maps.insert(m).first;
  maps.valid.insert(interned);
  return const_cast<TensorMap *>(interned);
}
