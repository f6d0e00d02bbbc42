//===- CompileCache.cpp - persistent cache of compiled objects ------------===//
//
// Entry format (all integers little-endian u64):
//   "BLOCKCO1"                      magic and format version
//   key length, key                 the key again (a file renamed by hand
//                                   or a hash collision is not a hit)
//   metadata length, metadata
//   object length, object
//   32 bytes: SHA-256 of everything above
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/CompileCache.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace blockc;
using namespace llvm;

namespace {

constexpr StringLiteral kMagic = "BLOCKCO1";
constexpr size_t kHashBytes = 32;

void appendU64(std::string &out, uint64_t v) {
  char bytes[8];
  support::endian::write64le(bytes, v);
  out.append(bytes, 8);
}

/// Reads a length-prefixed field at `pos`; false if it does not fit.
bool readField(StringRef data, size_t &pos, StringRef &field) {
  if (data.size() - pos < 8)
    return false;
  uint64_t n = support::endian::read64le(data.data() + pos);
  pos += 8;
  if (data.size() - pos < n)
    return false;
  field = data.substr(pos, n);
  pos += n;
  return true;
}

} // namespace

CompileCache::CompileCache(std::string directory, uint64_t maxBytes)
    : dir(std::move(directory)), limit(maxBytes) {}

Expected<uint64_t> CompileCache::parseSize(StringRef text) {
  StringRef digits = text.take_while([](char c) { return isDigit(c); });
  StringRef suffix = text.drop_front(digits.size());
  uint64_t value, unit = 1;
  if (suffix == "K")
    unit = uint64_t(1) << 10;
  else if (suffix == "M")
    unit = uint64_t(1) << 20;
  else if (suffix == "G")
    unit = uint64_t(1) << 30;
  else if (!suffix.empty())
    digits = "";
  if (digits.empty() || digits.getAsInteger(10, value) ||
      value > UINT64_MAX / unit)
    return createStringError("'" + text +
                             "' is not a size (a whole number of bytes, "
                             "optionally followed by K, M or G)");
  return value * unit;
}

Expected<std::unique_ptr<CompileCache>> CompileCache::fromEnvironment() {
  Expected<std::string> directory = defaultDirectory();
  if (!directory)
    return directory.takeError();
  Expected<uint64_t> maxBytes = maxBytesFromEnvironment();
  if (!maxBytes)
    return maxBytes.takeError();
  return std::make_unique<CompileCache>(*directory, *maxBytes);
}

Expected<uint64_t> CompileCache::maxBytesFromEnvironment() {
  std::optional<std::string> text =
      sys::Process::GetEnv("BLOCKC_CACHE_MAX_SIZE");
  if (!text || text->empty())
    return kDefaultMaxBytes;
  Expected<uint64_t> size = parseSize(*text);
  if (!size)
    return createStringError("BLOCKC_CACHE_MAX_SIZE: " +
                             toString(size.takeError()));
  return *size;
}

Expected<std::string> CompileCache::defaultDirectory() {
  SmallString<256> p;
  std::optional<std::string> xdg = sys::Process::GetEnv("XDG_CACHE_HOME");
  if (xdg && !xdg->empty()) {
    p = *xdg;
  } else {
    std::optional<std::string> home = sys::Process::GetEnv("HOME");
    if (!home || home->empty())
      return createStringError(
          "no cache directory: neither XDG_CACHE_HOME nor HOME is set "
          "(use --no-cache)");
    p = *home;
    sys::path::append(p, ".cache");
  }
  sys::path::append(p, "blockc");
  return std::string(p);
}

std::string CompileCache::key(ArrayRef<StringRef> parts) {
  SHA256 hash;
  for (StringRef part : parts) {
    std::string len;
    appendU64(len, part.size());
    hash.update(len);
    hash.update(part);
  }
  std::array<uint8_t, 32> digest = hash.final();
  return toHex(digest, /*LowerCase=*/true);
}

std::string CompileCache::path(StringRef key) const {
  SmallString<256> p(dir);
  sys::path::append(p, key + ".bco");
  return std::string(p);
}

CacheLookup CompileCache::lookup(StringRef key, std::string &object,
                                 std::string &metadata) const {
  std::string file = path(key);
  if (!sys::fs::exists(file))
    return CacheLookup::Miss;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(file, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return CacheLookup::Corrupt;
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < kMagic.size() + kHashBytes || !data.starts_with(kMagic))
    return CacheLookup::Corrupt;
  StringRef body = data.drop_back(kHashBytes);
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(body));
  if (StringRef(reinterpret_cast<const char *>(digest.data()), kHashBytes) !=
      data.take_back(kHashBytes))
    return CacheLookup::Corrupt;
  size_t pos = kMagic.size();
  StringRef storedKey, meta, obj;
  if (!readField(body, pos, storedKey) || !readField(body, pos, meta) ||
      !readField(body, pos, obj) || pos != body.size() || storedKey != key)
    return CacheLookup::Corrupt;
  object = obj.str();
  metadata = meta.str();
  // Used now: the last to go when the cache is trimmed (best effort).
  int fd;
  if (!sys::fs::openFileForWrite(file, fd, sys::fs::CD_OpenExisting,
                                 sys::fs::OF_Append)) {
    (void)sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    (void)sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return CacheLookup::Hit;
}

Error CompileCache::store(StringRef key, StringRef object,
                          StringRef metadata) const {
  if (std::error_code ec = sys::fs::create_directories(dir))
    return createStringError(ec, "cannot create the cache directory " + dir +
                                     ": " + ec.message());
  std::string data(kMagic);
  appendU64(data, key.size());
  data += key;
  appendU64(data, metadata.size());
  data += metadata;
  appendU64(data, object.size());
  data += object;
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(data));
  data.append(reinterpret_cast<const char *>(digest.data()), kHashBytes);

  SmallString<256> tmpModel(dir);
  sys::path::append(tmpModel, key + ".%%%%%%%%.tmp");
  int fd;
  SmallString<256> tmp;
  if (std::error_code ec = sys::fs::createUniqueFile(tmpModel, fd, tmp))
    return createStringError(ec, "cannot write to the cache directory " + dir +
                                     ": " + ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << data;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      (void)sys::fs::remove(tmp);
      return createStringError(ec, "cannot write " + std::string(tmp) + ": " +
                                       ec.message());
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path(key))) {
    (void)sys::fs::remove(tmp);
    return createStringError(ec, "cannot rename " + std::string(tmp) + " to " +
                                     path(key) + ": " + ec.message());
  }
  trim(key);
  return Error::success();
}

void CompileCache::trim(StringRef keep) const {
  if (!limit)
    return;
  struct Entry {
    std::string file;
    uint64_t bytes;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef file = it->path();
    if (sys::path::extension(file) != ".bco")
      continue;
    sys::fs::file_status status;
    if (sys::fs::status(file, status) ||
        status.type() != sys::fs::file_type::regular_file)
      continue;
    total += status.getSize();
    if (sys::path::stem(file) != keep)
      entries.push_back(
          {file.str(), status.getSize(), status.getLastModificationTime()});
  }
  llvm::sort(entries, [](const Entry &a, const Entry &b) {
    return a.used < b.used || (a.used == b.used && a.file < b.file);
  });
  for (const Entry &e : entries) {
    if (total <= limit)
      break;
    if (!sys::fs::remove(e.file))
      total -= e.bytes;
  }
}
