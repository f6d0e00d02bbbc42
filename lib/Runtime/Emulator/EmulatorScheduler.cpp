//===- EmulatorScheduler.cpp - the GPU emulator's block scheduler --------===//
//
// Fibers (one per thread of a block that synchronizes), the round-robin
// scheduler of a block, the collectives it completes (barriers, shuffles,
// ldmatrix / mma.sync, mbarrier phases and the TMA loads that land on
// them), launches and modules. EmulatorRuntime.cpp describes the whole
// runtime.
//
//===----------------------------------------------------------------------===//

#include "EmulatorState.h"

// AddressSanitizer's fiber interface (sanitizer/common_interface_defs.h and
// sanitizer/asan_interface.h), weak: null unless the process has ASan.
extern "C" {
__attribute__((weak)) void __sanitizer_start_switch_fiber(void **fakeStackSave,
                                                          const void *bottom,
                                                          size_t size);
__attribute__((weak)) void
__sanitizer_finish_switch_fiber(void *fakeStackSave, const void **bottomOld,
                                size_t *sizeOld);
__attribute__((weak)) void
__asan_unpoison_memory_region(const volatile void *addr, size_t size);
}

namespace blockc::emu::detail {

//===----------------------------------------------------------------------===//
// Fibers
//===----------------------------------------------------------------------===//

inline void startSwitch(void **fakeStackSave, const void *bottom, size_t size) {
  if (__sanitizer_start_switch_fiber)
    __sanitizer_start_switch_fiber(fakeStackSave, bottom, size);
}

inline void finishSwitch(void *fakeStackSave, const void **bottomOld,
                         size_t *sizeOld) {
  if (__sanitizer_finish_switch_fiber)
    __sanitizer_finish_switch_fiber(fakeStackSave, bottomOld, sizeOld);
}

/// Switches from a fiber back to its block's scheduler; returns when the
/// scheduler resumes the fiber (never, if it abandons the launch).
void yieldToScheduler(ThreadState &t) {
  Launch &l = *t.launch;
  startSwitch(&t.fakeStack, l.schedulerStackBottom, l.schedulerStackSize);
  ctx::transfer_t from = ctx::jump_fcontext(l.scheduler, nullptr);
  finishSwitch(t.fakeStack, &l.schedulerStackBottom, &l.schedulerStackSize);
  l.scheduler = from.fctx;
}

/// The entry of every fiber: runs the kernel for one thread. It never
/// returns (make_fcontext's contract): the last switch goes back to the
/// scheduler, which does not resume an exited fiber.
void fiberMain(ctx::transfer_t from) {
  ThreadState &t = *static_cast<ThreadState *>(from.data);
  Launch &l = *t.launch;
  finishSwitch(t.fakeStack, &l.schedulerStackBottom, &l.schedulerStackSize);
  l.scheduler = from.fctx;
  l.fn(l.params, &t.thread, l.shared, l.sharedBytes);
  checkStoresWaited(t);
  // What an exiting thread's wgmma groups read is no longer in flight.
  retireWgmmaGroups(t, 0);
  t.status = Status::Exited;
  ++l.exited;
  // Keep the fake stack (all its frames are free now) for the next fiber on
  // this stack.
  startSwitch(&t.fakeStack, l.schedulerStackBottom, l.schedulerStackSize);
  ctx::jump_fcontext(l.scheduler, nullptr);
  std::abort(); // not reached
}

inline void resume(Launch &l, ThreadState &t) {
  ++l.switches;
  startSwitch(&l.schedulerFakeStack, t.stack, kStackSize);
  ctx::transfer_t back = ctx::jump_fcontext(t.context, &t);
  finishSwitch(l.schedulerFakeStack, nullptr, nullptr);
  t.context = back.fctx;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// "N threads wait at <site>, ..., M threads exited" for the threads
/// [begin, end) of the block, grouped by site in order of first appearance.
std::string describeWaits(const Launch &l, int64_t begin, int64_t end) {
  std::vector<std::pair<const char *, int64_t>> sites;
  int64_t exited = 0;
  for (int64_t i = begin; i < end; ++i) {
    const ThreadState &t = l.threads[i];
    if (t.status == Status::Exited) {
      ++exited;
      continue;
    }
    if (t.status == Status::Ready)
      continue;
    auto it = std::find_if(sites.begin(), sites.end(),
                           [&](const auto &s) { return s.first == t.site; });
    if (it == sites.end())
      sites.push_back({t.site, 1});
    else
      ++it->second;
  }
  std::string text;
  auto count = [](int64_t n, const char *one, const char *many) {
    return format("%lld %s", static_cast<long long>(n), n == 1 ? one : many);
  };
  for (const auto &[site, n] : sites) {
    if (!text.empty())
      text += ", ";
    text += count(n, "thread waits at ", "threads wait at ");
    text += siteName(site);
  }
  if (exited) {
    if (!text.empty())
      text += ", ";
    text += count(exited, "thread exited", "threads exited");
  }
  return text;
}

/// Recounts the shuffle waiters of warp `w` after some of them were
/// released.
void recountWarp(Launch &l, int64_t w) {
  WarpState &warp = l.warps[w];
  bool hadWaiters = warp.waiting > 0;
  warp.waiting = 0;
  warp.site = nullptr;
  warp.mixed = false;
  int64_t first = w * kWarpSize;
  for (int32_t lane = 0; lane < warp.lanes; ++lane) {
    const ThreadState &t = l.threads[first + lane];
    if (t.status != Status::AtShuffle)
      continue;
    if (warp.waiting++ == 0)
      warp.site = t.site;
    else if (t.site != warp.site)
      warp.mixed = true;
  }
  if (hadWaiters && warp.waiting == 0)
    --l.warpsAtShuffle;
}

const char *modeName(int32_t mode) {
  static const char *names[] = {"xor", "down", "up", "idx"};
  if (mode >= kMmaMode) {
    static const char *mma[] = {"mma.m16n8k16 bf16", "mma.m16n8k16 f16",
                                "mma.m16n8k8 tf32"};
    return mode - kMmaMode < 3 ? mma[mode - kMmaMode] : "mma.?";
  }
  if (mode >= kLdMatrixMode) {
    static const char *ld[] = {
        "ldmatrix.x1", "ldmatrix.x1.trans", "ldmatrix.x2", "ldmatrix.x2.trans",
        "ldmatrix.x3", "ldmatrix.x3.trans", "ldmatrix.x4", "ldmatrix.x4.trans"};
    int32_t i = mode - kLdMatrixMode - 2;
    return i >= 0 && i < 8 ? ld[i] : "ldmatrix.?";
  }
  return mode >= 0 && mode < 4 ? names[mode] : "?";
}

/// Completes the matrix collective (ldmatrix or mma.sync) that every lane
/// of the full warp `w` waits at: gathers the lanes' operands, computes
/// (blockc::emu), scatters the results. Returns false if it failed the
/// launch.
bool completeMatrix(Launch &l, int64_t w, const char *site, int32_t mode) {
  ThreadState *lanes = &l.threads[w * kWarpSize];
  if (mode >= kMmaMode) {
    uint32_t a[kWarpSize][4], b[kWarpSize][2];
    float c[kWarpSize][4], d[kWarpSize][4];
    for (int32_t lane = 0; lane < kWarpSize; ++lane) {
      std::memcpy(a[lane], lanes[lane].operands[0], sizeof(a[lane]));
      std::memcpy(b[lane], lanes[lane].operands[1], sizeof(b[lane]));
      std::memcpy(c[lane], lanes[lane].operands[2], sizeof(c[lane]));
    }
    auto type = static_cast<blockc::emu::MmaType>(mode - kMmaMode);
    bool tf32 = type == blockc::emu::MmaType::TF32;
    if (tf32)
      blockc::emu::mmaM16N8K8TF32(a, b, c, d);
    else
      blockc::emu::mmaM16N8K16(type, a, b, c, d);
    // m16n8k16: 2 x 16 x 8 x 16 FLOPs per warp instruction; m16n8k8 half.
    if (l.profiler)
      l.profiler->tensorFlops(tf32 ? 2048 : 4096, tf32);
    for (int32_t lane = 0; lane < kWarpSize; ++lane)
      std::memcpy(lanes[lane].resultAddress, d[lane], sizeof(d[lane]));
    return true;
  }
  int32_t tiles = (mode - kLdMatrixMode) / 2;
  bool transpose = (mode - kLdMatrixMode) % 2;
  const uint16_t *rows[kWarpSize] = {};
  for (int32_t lane = 0; lane < 8 * tiles; ++lane) {
    const char *row = static_cast<const char *>(lanes[lane].operands[0]);
    if (row < l.shared || row + 16 > l.shared + l.sharedBytes ||
        (row - l.shared) % 16 != 0) {
      l.fail(format("lane %d of warp %lld in block %s gives %s at %s a row "
                    "address that is not a 16-byte aligned row of the "
                    "block's shared memory (offset %lld of %lld bytes)",
                    lane, static_cast<long long>(w), l.block().c_str(),
                    modeName(mode), siteName(site),
                    static_cast<long long>(row - l.shared),
                    static_cast<long long>(l.sharedBytes)));
      return false;
    }
    rows[lane] = reinterpret_cast<const uint16_t *>(row);
    if (l.profiler)
      l.profiler->access(
          static_cast<int32_t>(w), lane, reinterpret_cast<uintptr_t>(site),
          lanes[lane].occurrences[reinterpret_cast<uintptr_t>(site)]++,
          reinterpret_cast<uintptr_t>(row), 16,
          /*shared=*/true);
  }
  uint32_t out[kWarpSize][4];
  blockc::emu::ldMatrix(tiles, transpose, rows, out);
  for (int32_t lane = 0; lane < kWarpSize; ++lane)
    std::memcpy(lanes[lane].resultAddress, out[lane], sizeof(uint32_t) * tiles);
  return true;
}

/// Completes the shuffle at `site` of warp `w` if every existing lane of its
/// member mask waits there. Returns true if it completed; false if it must
/// wait (or failed the launch).
bool completeShuffle(Launch &l, int64_t w, const char *site) {
  WarpState &warp = l.warps[w];
  int64_t first = w * kWarpSize;
  uint32_t participants = 0;
  int32_t width = 0, mode = 0, firstLane = -1;
  for (int32_t lane = 0; lane < warp.lanes; ++lane) {
    const ThreadState &t = l.threads[first + lane];
    if (t.status != Status::AtShuffle || t.site != site)
      continue;
    participants |= 1u << lane;
    if (firstLane < 0) {
      firstLane = lane;
      width = t.width;
      mode = t.mode;
    } else if (t.width != width || t.mode != mode) {
      l.fail(format("the lanes of warp %lld in block %s disagree at the "
                    "shuffle at %s: lane %d has mode %s and width %d, lane %d "
                    "mode %s and width %d",
                    static_cast<long long>(w), l.block().c_str(),
                    siteName(site), firstLane, modeName(mode), width, lane,
                    modeName(t.mode), t.width));
      return false;
    }
  }
  // convert-gpu-to-nvvm: member mask = (-1u) >> (32 - width).
  uint32_t members = ~0u >> (32 - width);
  if (uint32_t outside = participants & ~members) {
    int lane = __builtin_ctz(outside);
    l.fail(format("lane %d of warp %lld in block %s executes the shuffle at "
                  "%s with width %d, outside its member mask (lanes 0-%d)",
                  lane, static_cast<long long>(w), l.block().c_str(),
                  siteName(site), width, width - 1));
    return false;
  }
  uint32_t existing = ~0u >> (32 - warp.lanes);
  if (members & existing & ~participants)
    return false; // a member lane has not arrived
  if (mode >= kLdMatrixMode) {
    if (warp.lanes < kWarpSize) {
      l.fail(format("%s at %s needs a full warp; warp %lld of block %s has "
                    "%d threads",
                    modeName(mode), siteName(site), static_cast<long long>(w),
                    l.block().c_str(), warp.lanes));
      return false;
    }
    if (!completeMatrix(l, w, site, mode))
      return false;
    for (int32_t lane = 0; lane < warp.lanes; ++lane)
      l.threads[first + lane].status = Status::Ready;
    return true;
  }
  // shfl.sync with c = (up ? 32 - width : width - 1) and segmask 0:
  // maxLane = c, minLane = 0; b is taken modulo 32.
  int32_t maxLane = mode == 2 ? 32 - width : width - 1;
  for (int32_t lane = 0; lane < warp.lanes; ++lane) {
    if (!(participants >> lane & 1))
      continue;
    ThreadState &t = l.threads[first + lane];
    int32_t b = t.offset & 31;
    int32_t j;
    bool valid;
    switch (mode) {
    case 0: // xor (bfly)
      j = lane ^ b;
      valid = j <= maxLane;
      break;
    case 1: // down
      j = lane + b;
      valid = j <= maxLane;
      break;
    case 2: // up
      j = lane - b;
      valid = j >= maxLane;
      break;
    default: // idx
      j = b;
      valid = j <= maxLane;
      break;
    }
    if (!valid)
      j = lane;
    if (!(participants >> j & 1)) {
      l.fail(format("lane %d of warp %lld in block %s reads lane %d in the "
                    "shuffle at %s (%s %d, width %d), but lane %d %s",
                    lane, static_cast<long long>(w), l.block().c_str(), j,
                    siteName(site), modeName(mode), t.offset, width, j,
                    j < warp.lanes ? "does not take part"
                                   : "does not exist in this partial warp"));
      return false;
    }
    uint32_t bits = static_cast<uint32_t>(l.threads[first + j].value);
    t.result = static_cast<int64_t>(bits) | (static_cast<int64_t>(valid) << 32);
  }
  for (int32_t lane = 0; lane < warp.lanes; ++lane)
    if (participants >> lane & 1)
      l.threads[first + lane].status = Status::Ready;
  return true;
}

/// Completes the shuffles of warp `w` that can complete.
bool completeWarp(Launch &l, int64_t w) {
  WarpState &warp = l.warps[w];
  bool progress = false;
  if (!warp.mixed) {
    progress = completeShuffle(l, w, warp.site);
  } else {
    const char *done[kWarpSize];
    int32_t doneCount = 0;
    int64_t first = w * kWarpSize;
    for (int32_t lane = 0; lane < warp.lanes && !l.failed; ++lane) {
      const ThreadState &t = l.threads[first + lane];
      if (t.status != Status::AtShuffle ||
          std::find(done, done + doneCount, t.site) != done + doneCount)
        continue;
      done[doneCount++] = t.site;
      progress |= completeShuffle(l, w, t.site);
    }
  }
  if (progress)
    recountWarp(l, w);
  return progress;
}

/// Row `row` of `m`'s box at `coords` (the box's dimensions after the
/// first, row-major): the byte offset of its element at coordinate 0 along
/// dimension 0 in the tensor, and whether the row lies inside the tensor
/// along the other dimensions.
std::pair<int64_t, bool> boxRow(const TensorMap &m, const int32_t *coords,
                                int64_t row) {
  bool inside = true;
  int64_t offset = 0;
  for (int d = 1; d < m.rank; ++d) {
    int64_t coord = coords[d] + row % m.box[d];
    row /= m.box[d];
    inside &= coord >= 0 && coord < m.dims[d];
    offset += coord * m.strides[d];
  }
  return {offset, inside};
}

/// The rows of `m`'s box: the product of its dimensions after the first.
int64_t boxRows(const TensorMap &m) {
  int64_t rows = 1;
  for (int d = 1; d < m.rank; ++d)
    rows *= m.box[d];
  return rows;
}

/// Copies the box of a queued TMA load into shared memory: row-major from
/// its destination, each element at its swizzled offset, elements outside
/// the tensor filled with zeros or NaN.
void landTma(Launch &l, const PendingTma &copy) {
  const TensorMap &m = *copy.map;
  int64_t e = m.elementBytes;
  int width = m.swizzleWidth();
  // NVIDIA's canonical NaN of every floating-point width: 0x7F, then ones.
  unsigned char fill[8] = {};
  if (m.oobFill) {
    std::memset(fill, 0xFF, sizeof(fill));
    fill[e - 1] = 0x7F;
  }
  int64_t dstOffset = copy.dst - l.shared;
  for (int64_t row = 0, rows = boxRows(m); row < rows; ++row) {
    auto [source, inside] = boxRow(m, copy.coords, row);
    for (int64_t x = 0; x < m.box[0]; ++x) {
      int64_t coord = copy.coords[0] + x;
      int64_t offset = blockc::emu::swizzleOffset(
          dstOffset + (row * m.box[0] + x) * e, width);
      if (inside && coord >= 0 && coord < m.dims[0]) {
        std::memcpy(l.shared + offset, m.base + source + coord * e, e);
        if (l.profiler)
          l.profiler->bulkGlobal(
              reinterpret_cast<uintptr_t>(m.base + source + coord * e), e);
      } else
        std::memcpy(l.shared + offset, fill, e);
    }
  }
}

void performTmaStore(Launch &l, const PendingTmaStore &store) {
  const TensorMap &m = *store.map;
  int64_t e = m.elementBytes;
  // The box is row-major in shared memory (no swizzle: the stores'
  // maps have none, blockcEmuTmaStore); rows and elements outside the
  // tensor are not written (TMA clips them).
  for (int64_t row = 0, rows = boxRows(m); row < rows; ++row) {
    auto [target, inside] = boxRow(m, store.coords, row);
    if (!inside)
      continue;
    int64_t first = std::max<int64_t>(0, -int64_t(store.coords[0]));
    int64_t last = std::min<int64_t>(m.box[0], m.dims[0] - store.coords[0]);
    if (first >= last)
      continue;
    char *to =
        const_cast<char *>(m.base) + target + (store.coords[0] + first) * e;
    std::memcpy(to, store.src + (row * m.box[0] + first) * e,
                (last - first) * e);
    if (l.profiler)
      l.profiler->bulkGlobal(reinterpret_cast<uintptr_t>(to),
                             (last - first) * e);
  }
}

void checkStoresWaited(ThreadState &t) {
  size_t pending = t.openStores.size();
  for (const std::vector<PendingTmaStore> &group : t.storeGroups)
    pending += group.size();
  if (!pending)
    return;
  const PendingTmaStore &first = t.storeGroups.empty()
                                     ? t.openStores.front()
                                     : t.storeGroups.front().front();
  t.launch->fail(format(
      "%s: the thread exits with %zu TMA store%s (the first at %s) not "
      "performed: commit them (cp.async.bulk.commit_group) and wait for their "
      "reads "
      "(cp.async.bulk.wait_group.read 0) before the block's shared memory "
      "goes",
      threadInBlock(t).c_str(), pending, pending == 1 ? "" : "s",
      siteName(first.site)));
}

/// Lands the TMA loads queued on `barrier` in order, each completing its
/// box's bytes of transactions.
void landCopies(Launch &l, Mbarrier &barrier) {
  std::vector<PendingTma> copies = std::move(barrier.copies);
  barrier.copies.clear();
  for (const PendingTma &copy : copies) {
    landTma(l, copy);
    barrier.tx -= copy.map->boxBytes();
    barrier.advance();
  }
}

/// Releases the threads waiting on an mbarrier whose phase of their parity
/// completed (after landing the TMA loads queued on it). Returns true if it
/// released any.
bool completeMbarrierWaits(Launch &l) {
  bool progress = false;
  for (ThreadState &t : l.threads) {
    if (t.status != Status::AtMbarrier)
      continue;
    Mbarrier &barrier = l.mbarriers[t.mbarrier];
    if (!barrier.copies.empty())
      landCopies(l, barrier);
    if ((barrier.phase & 1) != t.parity) {
      t.status = Status::Ready;
      progress = true;
    }
  }
  return progress;
}

/// Releases the threads of every named barrier that all its threads reached.
/// Returns true if it released any.
bool completeNamedBarriers(Launch &l) {
  bool progress = false;
  for (int32_t id = 0; id < kNamedBarriers; ++id) {
    NamedBarrier &b = l.named[id];
    if (b.arrived == 0 || b.arrived != b.count)
      continue;
    if (l.profiler)
      l.profiler->barrier();
    for (ThreadState &t : l.threads)
      if (t.status == Status::AtNamedBarrier && t.namedBarrier == id)
        t.status = Status::Ready;
    b.arrived = 0;
    progress = true;
  }
  return progress;
}

/// After a round in which every fiber ran until it blocked: completes what
/// can complete. Returns false when nothing could (or the launch failed).
bool completeCollectives(Launch &l) {
  if (l.atBarrier == l.threadCount && !l.barrierMixed) {
    if (l.profiler)
      l.profiler->barrier();
    for (ThreadState &t : l.threads)
      t.status = Status::Ready;
    l.atBarrier = 0;
    l.barrierSite = nullptr;
    return true;
  }
  bool progress = false;
  if (l.warpsAtShuffle > 0)
    for (size_t w = 0; w < l.warps.size() && !l.failed; ++w)
      if (l.warps[w].waiting > 0)
        progress |= completeWarp(l, w);
  progress |= completeMbarrierWaits(l);
  progress |= completeNamedBarriers(l);
  if (progress) {
    // Released threads no longer count at the barrier.
    l.atBarrier = 0;
    l.barrierSite = nullptr;
    l.barrierMixed = false;
    for (const ThreadState &t : l.threads) {
      if (t.status != Status::AtBarrier)
        continue;
      if (l.atBarrier++ == 0)
        l.barrierSite = t.site;
      else if (t.site != l.barrierSite)
        l.barrierMixed = true;
    }
  }
  return progress && !l.failed;
}

/// Fails a launch whose block cannot make progress.
void reportStuck(Launch &l) {
  // A warp whose shuffle cannot complete is the most precise description.
  for (size_t w = 0; w < l.warps.size(); ++w) {
    if (l.warps[w].waiting == 0)
      continue;
    int64_t begin = w * kWarpSize, end = begin + l.warps[w].lanes;
    bool exited = false;
    for (int64_t i = begin; i < end; ++i)
      exited |= l.threads[i].status == Status::Exited;
    l.fail(format("%s in block %s, warp %lld: %s",
                  exited ? "divergent shuffle" : "deadlock", l.block().c_str(),
                  static_cast<long long>(w),
                  describeWaits(l, begin, end).c_str()));
    return;
  }
  // Threads waiting on an mbarrier phase that cannot complete: a deadlock,
  // with the state of each barrier they wait on.
  std::vector<int64_t> barriers;
  for (const ThreadState &t : l.threads)
    if (t.status == Status::AtMbarrier &&
        std::find(barriers.begin(), barriers.end(), t.mbarrier) ==
            barriers.end())
      barriers.push_back(t.mbarrier);
  if (!barriers.empty()) {
    std::string states;
    for (int64_t offset : barriers) {
      const Mbarrier &b = l.mbarriers[offset];
      states += format("; the mbarrier at shared offset %lld is in phase %lld "
                       "with %d of %d arrivals and %lld transaction bytes "
                       "pending",
                       static_cast<long long>(offset),
                       static_cast<long long>(b.phase), b.pending, b.expected,
                       static_cast<long long>(b.tx));
    }
    l.fail(format("deadlock in block %s: %s%s", l.block().c_str(),
                  describeWaits(l, 0, l.threadCount).c_str(), states.c_str()));
    return;
  }
  l.fail(format("%s in block %s: %s",
                l.exited ? "divergent barrier" : "deadlock", l.block().c_str(),
                describeWaits(l, 0, l.threadCount).c_str()));
}

/// Runs the current block with one fiber per thread.
void runBlockOnFibers(Launch &l, StackPool &stacks) {
  for (size_t i = 0; i < l.threads.size(); ++i) {
    ThreadState &t = l.threads[i];
    Stack &stack = stacks[i];
    if (stack.dirty) {
      if (__asan_unpoison_memory_region)
        __asan_unpoison_memory_region(stack.base, kStackSize);
      stack.dirty = false;
    }
    t.status = Status::Ready;
    t.site = nullptr;
    t.resetAsyncCopies();
    t.stack = stack.base;
    t.fakeStack = stack.fakeStack;
    t.context =
        ctx::make_fcontext(stack.base + kStackSize, kStackSize, fiberMain);
  }
  for (WarpState &warp : l.warps) {
    warp.waiting = 0;
    warp.site = nullptr;
    warp.mixed = false;
  }
  l.exited = 0;
  l.atBarrier = 0;
  l.barrierSite = nullptr;
  l.barrierMixed = false;
  l.warpsAtShuffle = 0;
  for (NamedBarrier &b : l.named)
    b = NamedBarrier();
  l.mbarriers.clear();
  l.sharedReads.clear();

  for (;;) {
    for (size_t i = 0; i < l.threads.size(); ++i) {
      if (l.threads[i].status != Status::Ready)
        continue;
      resume(l, l.threads[i]);
      if (l.failed)
        break;
    }
    if (l.failed || l.exited == l.threadCount)
      break;
    if (!completeCollectives(l)) {
      if (!l.failed)
        reportStuck(l);
      break;
    }
  }
  if (l.failed) {
    stacks.markDirty(l.threads.size());
    return;
  }
  for (size_t i = 0; i < l.threads.size(); ++i)
    stacks[i].fakeStack = l.threads[i].fakeStack;
}

/// The thread state behind `thread`, if it belongs to the launch running on
/// this thread; otherwise records an error.
ThreadState *threadState(BlockcEmuThread *thread, const char *function,
                         const char *site) {
  ThreadState *t =
      thread ? static_cast<ThreadState *>(thread->runtime) : nullptr;
  if (!t || !currentLaunch || t->launch != currentLaunch) {
    recordError(format("%s (at %s) called outside an emulated kernel launch",
                       function, siteName(site)));
    return nullptr;
  }
  return t;
}

/// Fails the launch from inside a kernel; a fiber is abandoned here.
void failInKernel(ThreadState &t, const std::string &message) {
  Launch &l = *t.launch;
  l.fail(message);
  if (l.fibers)
    yieldToScheduler(t); // never resumed
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

/// Checks a launch against CUDA's limits and the kernel's registration;
/// returns the error, or an empty string.
std::string checkLaunch(const Kernel &k, const int64_t grid[3],
                        const int64_t block[3], int64_t dynamicShared,
                        const int64_t *cluster) {
  static const char *axis[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i)
    if (grid[i] < 1)
      return format("grid %s = %lld is not positive", axis[i],
                    static_cast<long long>(grid[i]));
  for (int i = 0; i < 3; ++i)
    if (block[i] < 1)
      return format("block %s = %lld is not positive", axis[i],
                    static_cast<long long>(block[i]));
  for (int i = 0; i < 3; ++i) {
    int64_t limit = i == 2 ? kMaxBlockZ : kMaxBlockXY;
    if (block[i] > limit)
      return format("block %s = %lld exceeds %lld", axis[i],
                    static_cast<long long>(block[i]),
                    static_cast<long long>(limit));
  }
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > kMaxThreadsPerBlock)
    return format("block %s has %lld threads, more than %lld",
                  dims(block).c_str(), static_cast<long long>(threads),
                  static_cast<long long>(kMaxThreadsPerBlock));
  for (int i = 0; i < 3; ++i) {
    int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
    if (grid[i] > limit)
      return format("grid %s = %lld exceeds %lld", axis[i],
                    static_cast<long long>(grid[i]),
                    static_cast<long long>(limit));
  }
  if (k.staticShared < 0 || k.staticShared > kMaxStaticShared)
    return format("static shared memory of %lld bytes exceeds %lld",
                  static_cast<long long>(k.staticShared),
                  static_cast<long long>(kMaxStaticShared));
  if (dynamicShared < 0)
    return format("dynamic shared memory of %lld bytes is negative",
                  static_cast<long long>(dynamicShared));
  int64_t maxShared = k.maxShared > 0 ? k.maxShared : kMaxStaticShared;
  if (k.staticShared + dynamicShared > maxShared)
    return format("static (%lld) plus dynamic (%lld) shared memory is %lld "
                  "bytes, more than the target's %lld",
                  static_cast<long long>(k.staticShared),
                  static_cast<long long>(dynamicShared),
                  static_cast<long long>(k.staticShared + dynamicShared),
                  static_cast<long long>(maxShared));
  if ((k.known[0] || k.known[1] || k.known[2]) &&
      (block[0] != k.known[0] || block[1] != k.known[1] ||
       block[2] != k.known[2]))
    return format("block size %s differs from the kernel's known block size "
                  "%s",
                  dims(block).c_str(), dims(k.known).c_str());
  if (cluster) {
    for (int i = 0; i < 3; ++i)
      if (cluster[i] < 1)
        return format("cluster %s = %lld is not positive", axis[i],
                      static_cast<long long>(cluster[i]));
    for (int i = 0; i < 3; ++i)
      if (grid[i] % cluster[i])
        return format("cluster %s = %lld does not divide grid %s = %lld",
                      axis[i], static_cast<long long>(cluster[i]), axis[i],
                      static_cast<long long>(grid[i]));
    int64_t blocks = cluster[0] * cluster[1] * cluster[2];
    if (blocks > kMaxPortableCluster)
      return format("cluster %s has %lld blocks, more than the portable "
                    "%lld",
                    dims(cluster).c_str(), static_cast<long long>(blocks),
                    static_cast<long long>(kMaxPortableCluster));
  }
  return {};
}

void launchKernel(void *function, const int64_t grid[3], const int64_t block[3],
                  int32_t dynamicShared, void **params, void **extra,
                  size_t paramCount, const int64_t *cluster) {
  if (hasError())
    return;
  if (!function) {
    recordError("launch of a null kernel function (mgpuModuleGetFunction "
                "found no kernel)");
    return;
  }
  if (currentLaunch) {
    recordError(format("kernel '%s' launches a kernel (dynamic parallelism "
                       "is not emulated)",
                       currentLaunch->kernel.c_str()));
    return;
  }
  Kernel k;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    k = *static_cast<Kernel *>(function);
  }
  if (!k.registered) {
    recordError(format("kernel '%s' of emulator module '%s' was unregistered "
                       "before its launch",
                       k.name.c_str(), k.module.c_str()));
    return;
  }
  std::string problem = checkLaunch(k, grid, block, dynamicShared, cluster);
  if (problem.empty() && extra)
    problem = "kernel arguments in 'extra' are not supported";
  if (problem.empty() && paramCount && !params)
    problem =
        format("%zu kernel arguments but a null argument array", paramCount);
  if (!problem.empty()) {
    recordError("kernel '" + k.name + "': " + problem);
    return;
  }
  if (BlockcEmuLaunchObserver observer = launchObserver.load())
    observer(k.name.c_str(), launchObserverUser.load());

  LaunchResources &res = launchResources();
  std::lock_guard<std::mutex> lock(res.mutex);
  Launch l;
  l.kernel = k.name;
  l.fn = k.fn;
  l.params = params;
  l.sharedBytes = k.staticShared + dynamicShared;
  l.fibers = k.flags & BLOCKC_EMU_SYNCHRONIZES;
  l.threadCount = block[0] * block[1] * block[2];
  if (l.fibers && !res.stacks.reserve(l.threadCount, l.kernel))
    return;
  size_t sharedSize =
      (std::max<size_t>(l.sharedBytes, 1) + kSharedAlignment - 1) &
      ~(kSharedAlignment - 1);
  if (sharedSize > res.sharedCapacity) {
    std::free(res.shared);
    res.shared =
        static_cast<char *>(std::aligned_alloc(kSharedAlignment, sharedSize));
    res.sharedCapacity = res.shared ? sharedSize : 0;
    if (!res.shared) {
      recordError(format("kernel '%s': cannot allocate %zu bytes of shared "
                         "memory",
                         l.kernel.c_str(), sharedSize));
      return;
    }
  }
  l.shared = res.shared;

  l.threads.resize(l.threadCount);
  l.warps.resize((l.threadCount + kWarpSize - 1) / kWarpSize);
  for (size_t w = 0; w < l.warps.size(); ++w)
    l.warps[w].lanes = static_cast<int32_t>(
        std::min<int64_t>(kWarpSize, l.threadCount - w * kWarpSize));
  for (int64_t i = 0; i < l.threadCount; ++i) {
    ThreadState &t = l.threads[i];
    BlockcEmuThread &th = t.thread;
    th.threadId[0] = static_cast<int32_t>(i % block[0]);
    th.threadId[1] = static_cast<int32_t>(i / block[0] % block[1]);
    th.threadId[2] = static_cast<int32_t>(i / (block[0] * block[1]));
    for (int d = 0; d < 3; ++d) {
      th.blockDim[d] = static_cast<int32_t>(block[d]);
      th.gridDim[d] = static_cast<int32_t>(grid[d]);
    }
    th.laneId = static_cast<int32_t>(i % kWarpSize);
    th.reserved = 0;
    th.runtime = &t;
    t.launch = &l;
    t.warp = static_cast<int32_t>(i / kWarpSize);
  }

  // The profile: every block, or a sample spread over the grid.
  blockc::emu::LaunchProfiler profiler;
  int64_t totalBlocks = grid[0] * grid[1] * grid[2];
  int64_t sample = 0;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> profileLock(r.mutex);
    if (r.profiling) {
      l.profiler = &profiler;
      sample = r.sampleBlocks;
    }
  }
  int64_t runBlocks =
      sample > 0 ? std::min<int64_t>(sample, totalBlocks) : totalBlocks;

  // The blocks to run, by linear index: all of them, or a sample along the
  // grid's diagonal (block i of n at the middle of the i-th n-th of every
  // dimension, so that work varying along any one dimension, like causal
  // attention's query tiles, is averaged); where that would run a block
  // twice (n above every dimension), the middles of n equal runs of the
  // linear order.
  std::vector<int64_t> sampled;
  if (runBlocks < totalBlocks) {
    for (int64_t i = 0; i < runBlocks; ++i) {
      int64_t c[3];
      for (int d = 0; d < 3; ++d)
        c[d] = (2 * i + 1) * grid[d] / (2 * runBlocks);
      sampled.push_back(c[0] + grid[0] * (c[1] + grid[1] * c[2]));
    }
    std::vector<int64_t> sorted = sampled;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      for (int64_t i = 0; i < runBlocks; ++i)
        sampled[i] = (2 * i + 1) * totalBlocks / (2 * runBlocks);
  }

  currentLaunch = &l;
  int64_t blocks = 0;
  for (int64_t i = 0; i < runBlocks && !l.failed; ++i) {
    int64_t linear = sampled.empty() ? i : sampled[i];
    l.blockId[0] = static_cast<int32_t>(linear % grid[0]);
    l.blockId[1] = static_cast<int32_t>(linear / grid[0] % grid[1]);
    l.blockId[2] = static_cast<int32_t>(linear / (grid[0] * grid[1]));
    for (ThreadState &t : l.threads) {
      std::memcpy(t.thread.blockId, l.blockId, sizeof(l.blockId));
      t.occurrences.clear();
      t.wgmmaUncommitted = false;
      t.wgmmaCommitted = t.wgmmaRetired = 0;
      t.accumulatorGroups.clear();
      t.openReads.clear();
      t.readGroups.clear();
    }
    // Uninitialised shared memory reads as NaN.
    std::memset(l.shared, 0xFF, sharedSize);
    ++blocks;
    if (l.fibers) {
      runBlockOnFibers(l, res.stacks);
    } else {
      for (ThreadState &t : l.threads) {
        t.resetAsyncCopies();
        l.fn(l.params, &t.thread, l.shared, l.sharedBytes);
        checkStoresWaited(t);
        if (l.failed)
          break;
      }
    }
    if (l.profiler)
      profiler.endBlock();
  }
  currentLaunch = nullptr;
  if (l.profiler) {
    BlockcEmuLaunchProfile p = {};
    std::vector<std::pair<uint64_t, uint64_t>> allocations;
    {
      Registry &r = registry();
      std::lock_guard<std::mutex> allocationLock(r.mutex);
      for (const auto &[ptr, size] : r.allocations)
        allocations.emplace_back(reinterpret_cast<uintptr_t>(ptr),
                                 reinterpret_cast<uintptr_t>(ptr) + size);
    }
    blockc::emu::LaunchCounters c = profiler.finish(
        blocks ? static_cast<double>(totalBlocks) / blocks : 0.0, allocations);
    for (int d = 0; d < 3; ++d) {
      p.grid[d] = static_cast<int32_t>(grid[d]);
      p.block[d] = static_cast<int32_t>(block[d]);
    }
    p.sharedBytes = l.sharedBytes;
    p.blocksRun = blocks;
    p.blocksTotal = totalBlocks;
    p.flops = c.flops;
    p.tensorFlops16 = c.tensorFlops16;
    p.tensorFlopsTF32 = c.tensorFlopsTF32;
    p.globalRequests = c.globalRequests;
    p.globalSectors = c.globalSectors;
    p.globalBytes = c.globalBytes;
    p.uniqueBytes = c.uniqueBytes;
    p.sharedRequests = c.sharedRequests;
    p.sharedWavefronts = c.sharedWavefronts;
    p.barriers = c.barriers;
    Registry &r = registry();
    std::lock_guard<std::mutex> profileLock(r.mutex);
    if (r.profiling)
      r.profile.emplace_back(l.kernel, p);
  }
  if (l.outOfBounds > 1)
    std::fprintf(stderr,
                 "blockc GPU emulator: kernel '%s': %lld more out-of-bounds "
                 "access%s in this launch\n",
                 l.kernel.c_str(), static_cast<long long>(l.outOfBounds - 1),
                 l.outOfBounds > 2 ? "es" : "");

  Registry &r = registry();
  std::lock_guard<std::mutex> statsLock(r.mutex);
  r.stats.launches += 1;
  r.stats.blocks += blocks;
  r.stats.threads += blocks * l.threadCount;
  r.stats.fiberRuns += l.fibers ? 1 : 0;
  r.stats.switches += l.switches;
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

void *loadModule(const char *function, const char *data, size_t size) {
  size_t prefix = sizeof(kModulePrefix) - 1;
  if (!data || size < prefix || std::memcmp(data, kModulePrefix, prefix)) {
    const char *what = "";
    if (data && size >= 4 &&
        std::memcmp(data,
                    "\x7f"
                    "ELF",
                    4) == 0)
      what = " (it is an ELF object, a cubin)";
    else if (data && size >= 2 && (data[0] == '/' || data[0] == '.'))
      what = " (it looks like PTX)";
    recordError(format("%s: the GPU module is not an emulator module%s; "
                       "compile with --emulate",
                       function, what));
    return nullptr;
  }
  std::string name(data + prefix, size - prefix);
  while (!name.empty() && name.back() == '\0')
    name.pop_back();
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::unique_ptr<Module> &module = r.modules[name];
  if (!module)
    module.reset(new Module{name});
  return module.get();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void *newToken() {
  static std::atomic<uintptr_t> next{1};
  return reinterpret_cast<void *>(next.fetch_add(1) * 16);
}

} // namespace blockc::emu::detail
