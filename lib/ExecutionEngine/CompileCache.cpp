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

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

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

CompileCache::CompileCache(std::string directory) : dir(std::move(directory)) {}

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
  return Error::success();
}
