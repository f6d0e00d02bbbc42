//===- CompileCache.h - persistent cache of compiled objects ----*- C++ -*-===//
//
// Objects that BlockJit compiled for the CPU, kept on disk so that a second
// run of the same model with the same options skips the pipeline and the
// backend: one file per key, `<dir>/<sha256>.bco` (dir:
// $XDG_CACHE_HOME/blockc, else ~/.cache/blockc). An entry holds the
// object, a metadata block (what the loader needs besides the object, e.g.
// the prepare function's records) and a SHA-256 of both; a file that does
// not parse, is truncated or fails its checksum is a miss and is
// overwritten. Writes go to a unique temporary file in the same directory,
// renamed over the entry (atomic: concurrent writers of one key leave one
// complete entry). The cache keeps at most a size (default 1 GiB): after a
// store, the least recently used entries (a hit refreshes an entry's
// modification time) are removed until the rest fit. See
// docs/CompileCache.md.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_COMPILECACHE_H
#define BLOCKC_EXECUTIONENGINE_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace blockc {

/// What a lookup found.
enum class CacheLookup {
  /// No entry for the key.
  Miss,
  /// A valid entry: object and metadata returned.
  Hit,
  /// An entry that is not valid (truncated, bad magic or checksum, another
  /// key): treated as a miss; the next store replaces it.
  Corrupt
};

class CompileCache {
public:
  /// The default size limit: 1 GiB.
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;

  /// A cache in `directory` (created on the first store) that keeps at
  /// most `maxBytes` of entries (0: no limit).
  explicit CompileCache(std::string directory,
                        uint64_t maxBytes = kDefaultMaxBytes);

  /// A size in bytes: a whole number, optionally followed by K, M or G
  /// (KiB, MiB, GiB); 0 means no limit.
  static llvm::Expected<uint64_t> parseSize(llvm::StringRef text);
  /// The cache of a tool: in defaultDirectory(), with the limit of
  /// maxBytesFromEnvironment(); their errors.
  static llvm::Expected<std::unique_ptr<CompileCache>> fromEnvironment();
  /// The limit set by $BLOCKC_CACHE_MAX_SIZE (parseSize), or
  /// kDefaultMaxBytes when it is unset or empty; an error naming the
  /// variable when it does not parse.
  static llvm::Expected<uint64_t> maxBytesFromEnvironment();

  /// $XDG_CACHE_HOME/blockc, or $HOME/.cache/blockc when XDG_CACHE_HOME is
  /// unset or empty; an error if neither is set.
  static llvm::Expected<std::string> defaultDirectory();

  /// The hex SHA-256 of the parts (each length-prefixed, so that no two
  /// lists of parts give the same byte stream).
  static std::string key(llvm::ArrayRef<llvm::StringRef> parts);

  /// The file of `key`.
  std::string path(llvm::StringRef key) const;

  /// Reads the entry of `key` into `object` and `metadata` (on a hit only);
  /// a hit marks the entry as used now (its modification time).
  CacheLookup lookup(llvm::StringRef key, std::string &object,
                     std::string &metadata) const;

  /// Writes the entry of `key` atomically (temporary file + rename), then
  /// trims the cache to its limit, keeping the new entry.
  llvm::Error store(llvm::StringRef key, llvm::StringRef object,
                    llvm::StringRef metadata) const;

  /// Removes the least recently used entries (oldest modification time
  /// first) other than `keep`'s until the entries take at most the limit.
  /// Best effort: an entry that cannot be removed is skipped.
  void trim(llvm::StringRef keep) const;

  const std::string &directory() const { return dir; }
  uint64_t maxBytes() const { return limit; }

private:
  std::string dir;
  uint64_t limit;
};

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_COMPILECACHE_H
