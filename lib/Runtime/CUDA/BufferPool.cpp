//===- BufferPool.cpp - bounded reuse of freed device buffers -------------===//
//
// See BufferPool.h.
//
//===----------------------------------------------------------------------===//

#include "BufferPool.h"

#include <limits>

namespace blockc::cuda {

std::optional<uint64_t> parseByteCount(std::string_view text) {
  uint64_t shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    default:
      break;
    }
    if (shift)
      text.remove_suffix(1);
  }
  if (text.empty())
    return std::nullopt;
  uint64_t value = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (kMax - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  if (value > (kMax >> shift))
    return std::nullopt;
  return value << shift;
}

BufferPool::BufferPool(uint64_t maxIdleBytes, ReleaseFn release)
    : maxIdleBytes(maxIdleBytes), release(std::move(release)) {}

std::optional<BufferPool::Handle> BufferPool::acquire(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [first, last] = idleBySize.equal_range(bytes);
  if (first == last)
    return std::nullopt;
  Handle handle = std::prev(last)->second; // the most recently freed
  removeIdleLocked(handle, entries.at(handle));
  return handle;
}

void BufferPool::track(Handle handle, uint64_t bytes) {
  if (!enabled())
    return;
  std::lock_guard<std::mutex> lock(mutex);
  Entry &entry = entries[handle];
  if (entry.idle) // an address reused by the driver behind the pool's back
    removeIdleLocked(handle, entry);
  entry.bytes = bytes;
}

BufferPool::FreeResult BufferPool::free(Handle handle) {
  std::vector<std::pair<Handle, uint64_t>> evicted;
  FreeResult result;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(handle);
    if (it == entries.end())
      return FreeResult::NotPooled;
    Entry &entry = it->second;
    if (entry.idle)
      return FreeResult::AlreadyFree;
    if (entry.bytes > maxIdleBytes) {
      evicted.emplace_back(handle, entry.bytes);
      entries.erase(it);
      result = FreeResult::Released;
    } else {
      entry.idle = true;
      entry.order = idleOrder.insert(idleOrder.end(), handle);
      idleBySize.emplace(entry.bytes, handle);
      idleTotal += entry.bytes;
      evictLocked(maxIdleBytes, evicted);
      result = FreeResult::Kept;
    }
  }
  releaseAll(evicted);
  return result;
}

void BufferPool::releaseIdle() {
  std::vector<std::pair<Handle, uint64_t>> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex);
    evictLocked(0, evicted);
  }
  releaseAll(evicted);
}

uint64_t BufferPool::idleBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return idleTotal;
}

size_t BufferPool::idleCount() const {
  std::lock_guard<std::mutex> lock(mutex);
  return idleOrder.size();
}

size_t BufferPool::trackedCount() const {
  std::lock_guard<std::mutex> lock(mutex);
  return entries.size();
}

void BufferPool::evictLocked(
    uint64_t limit, std::vector<std::pair<Handle, uint64_t>> &evicted) {
  while (idleTotal > limit && !idleOrder.empty()) {
    Handle oldest = idleOrder.front();
    auto it = entries.find(oldest);
    uint64_t bytes = it->second.bytes;
    removeIdleLocked(oldest, it->second);
    entries.erase(it);
    evicted.emplace_back(oldest, bytes);
  }
}

void BufferPool::removeIdleLocked(Handle handle, Entry &entry) {
  idleOrder.erase(entry.order);
  auto [first, last] = idleBySize.equal_range(entry.bytes);
  for (auto it = first; it != last; ++it) {
    if (it->second == handle) {
      idleBySize.erase(it);
      break;
    }
  }
  idleTotal -= entry.bytes;
  entry.idle = false;
}

void BufferPool::releaseAll(
    const std::vector<std::pair<Handle, uint64_t>> &evicted) {
  for (const auto &[handle, bytes] : evicted)
    release(handle, bytes);
}

} // namespace blockc::cuda
