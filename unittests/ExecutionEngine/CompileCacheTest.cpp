//===- CompileCacheTest.cpp - the compile cache's file format -------------===//
//
// CompileCache (lib/ExecutionEngine): keys, the round trip, every way an
// entry can be bad (missing, truncated, a flipped byte, wrong magic, an
// entry of another key) is a miss or corrupt and never data, failed stores
// are errors that name the file, concurrent stores of one key leave one
// valid entry, the default directory follows XDG_CACHE_HOME then HOME, the
// size limit removes the least recently used entries, sizes parse; the
// prepare records' text form round-trips.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/CompileCache.h"
#include "blockc/Analysis/PreparedWeights.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <thread>

using namespace blockc;

namespace {

class CompileCacheTest : public testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("blockc-cache", dir));
    root = std::string(dir);
    // A directory that does not exist yet: store() creates it.
    llvm::SmallString<128> sub(dir);
    llvm::sys::path::append(sub, "a", "b");
    cacheDir = std::string(sub);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  std::string read(const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(static_cast<bool>(buffer));
    return buffer ? (*buffer)->getBuffer().str() : "";
  }
  void write(const std::string &path, const std::string &data) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << data;
  }

  std::string root, cacheDir;
};

TEST_F(CompileCacheTest, KeysDependOnEveryPart) {
  std::string k = CompileCache::key({"a", "bc"});
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, CompileCache::key({"a", "bc"}));
  EXPECT_NE(k, CompileCache::key({"ab", "c"})); // length-prefixed
  EXPECT_NE(k, CompileCache::key({"a", "bd"}));
  EXPECT_NE(k, CompileCache::key({"a", "bc", ""}));
}

TEST_F(CompileCacheTest, RoundTrip) {
  CompileCache cache(cacheDir);
  std::string key = CompileCache::key({"model"}), object, meta;
  EXPECT_EQ(cache.lookup(key, object, meta), CacheLookup::Miss);
  std::string bytes("\x7f"
                    "ELF\0\1\2",
                    7);
  ASSERT_FALSE(static_cast<bool>(cache.store(key, bytes, "prepare f\n")));
  ASSERT_EQ(cache.lookup(key, object, meta), CacheLookup::Hit);
  EXPECT_EQ(object, bytes);
  EXPECT_EQ(meta, "prepare f\n");
  EXPECT_EQ(cache.path(key), cacheDir + "/" + key + ".bco");
  // Only the entry is left (no temporary file).
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(cacheDir, ec), end; it != end;
       it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(CompileCacheTest, BadEntriesAreNeverLoaded) {
  CompileCache cache(cacheDir);
  std::string key = CompileCache::key({"m"}), object = "unchanged", meta;
  ASSERT_FALSE(static_cast<bool>(cache.store(key, "object bytes", "meta")));
  std::string good = read(cache.path(key));
  auto expectCorrupt = [&](const std::string &data, const char *what) {
    write(cache.path(key), data);
    std::string o = "unchanged", m = "unchanged";
    EXPECT_EQ(cache.lookup(key, o, m), CacheLookup::Corrupt) << what;
    EXPECT_EQ(o, "unchanged") << what;
    EXPECT_EQ(m, "unchanged") << what;
  };
  for (size_t n : {size_t(0), size_t(5), good.size() / 2, good.size() - 1})
    expectCorrupt(good.substr(0, n), "truncated");
  for (size_t at : {size_t(3), size_t(20), good.size() - 40, good.size() - 1}) {
    std::string flipped = good;
    flipped[at] ^= 1;
    expectCorrupt(flipped, "flipped byte");
  }
  std::string magic = good;
  magic[7] = '9';
  expectCorrupt(magic, "wrong magic");
  // A valid entry of another key, copied to this key's file.
  std::string other = CompileCache::key({"other"});
  ASSERT_FALSE(static_cast<bool>(cache.store(other, "x", "")));
  expectCorrupt(read(cache.path(other)), "another key");
  // A store replaces a bad entry.
  ASSERT_FALSE(static_cast<bool>(cache.store(key, "object bytes", "meta")));
  EXPECT_EQ(cache.lookup(key, object, meta), CacheLookup::Hit);
}

// Store failures are errors that name the file (blockc-run reports them in
// its compile line and goes on). Set up without permissions, which root
// ignores: a temporary file in a missing subdirectory, an entry path that is
// a non-empty directory.
TEST_F(CompileCacheTest, StoreErrorsNameTheFile) {
  CompileCache cache(cacheDir);
  llvm::Error e = cache.store("missing/k", "o", "m");
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_EQ(llvm::toString(std::move(e)),
            "cannot write to the cache directory " + cacheDir +
                ": No such file or directory");

  std::string key = CompileCache::key({"dir"});
  ASSERT_FALSE(llvm::sys::fs::create_directories(cache.path(key) + "/x"));
  e = cache.store(key, "o", "m");
  ASSERT_TRUE(static_cast<bool>(e));
  std::string message = llvm::toString(std::move(e));
  EXPECT_EQ(message.rfind("cannot rename " + cacheDir + "/" + key + ".", 0), 0u)
      << message;
  EXPECT_NE(message.find(".tmp to " + cache.path(key) + ": "),
            std::string::npos)
      << message;
  // The temporary file is removed: only the directory is left.
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(cacheDir, ec), end; it != end;
       it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(CompileCacheTest, ConcurrentStoresLeaveOneValidEntry) {
  CompileCache cache(cacheDir);
  std::string key = CompileCache::key({"shared"});
  std::string big(1 << 20, 'x');
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      std::string object = big;
      object[0] = static_cast<char>('a' + i);
      EXPECT_FALSE(static_cast<bool>(cache.store(key, object, "m")));
    });
  for (std::thread &t : threads)
    t.join();
  std::string object, meta;
  ASSERT_EQ(cache.lookup(key, object, meta), CacheLookup::Hit);
  EXPECT_EQ(object.size(), big.size());
  EXPECT_EQ(object.substr(1), big.substr(1));
}

TEST_F(CompileCacheTest, DefaultDirectory) {
  const char *oldXdg = getenv("XDG_CACHE_HOME");
  const char *oldHome = getenv("HOME");
  std::string savedXdg = oldXdg ? oldXdg : "",
              savedHome = oldHome ? oldHome : "";
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/h", 1);
  auto dir = CompileCache::defaultDirectory();
  ASSERT_TRUE(static_cast<bool>(dir));
  EXPECT_EQ(*dir, "/x/cache/blockc");
  setenv("XDG_CACHE_HOME", "", 1);
  dir = CompileCache::defaultDirectory();
  ASSERT_TRUE(static_cast<bool>(dir));
  EXPECT_EQ(*dir, "/h/.cache/blockc");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  dir = CompileCache::defaultDirectory();
  ASSERT_FALSE(static_cast<bool>(dir));
  EXPECT_EQ(llvm::toString(dir.takeError()),
            "no cache directory: neither XDG_CACHE_HOME nor HOME is set (use "
            "--no-cache)");
  if (oldXdg)
    setenv("XDG_CACHE_HOME", savedXdg.c_str(), 1);
  if (oldHome)
    setenv("HOME", savedHome.c_str(), 1);
}

TEST_F(CompileCacheTest, LeastRecentlyUsedEntriesGo) {
  // Entries of about 1 KiB in a cache of 2.5 KiB: the third store removes
  // the least recently used one, which a hit is not.
  std::string object(1000, 'o'), got, meta;
  CompileCache cache(cacheDir, 2560);
  EXPECT_EQ(cache.maxBytes(), 2560u);
  std::string a = CompileCache::key({"a"}), b = CompileCache::key({"b"}),
              c = CompileCache::key({"c"});
  ASSERT_FALSE(llvm::errorToBool(cache.store(a, object, "")));
  ASSERT_FALSE(llvm::errorToBool(cache.store(b, object, "")));
  // a older than b, whatever the file system's time resolution.
  auto setTime = [](const std::string &file, int64_t seconds) {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(
        file, fd, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_Append));
    llvm::sys::TimePoint<> t{std::chrono::seconds(seconds)};
    EXPECT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(fd, t));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  };
  setTime(cache.path(a), 1000);
  setTime(cache.path(b), 2000);
  // A hit on a makes it the most recently used.
  ASSERT_EQ(cache.lookup(a, got, meta), CacheLookup::Hit);
  ASSERT_FALSE(llvm::errorToBool(cache.store(c, object, "")));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.path(a)));
  EXPECT_FALSE(llvm::sys::fs::exists(cache.path(b)));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.path(c)));
  // An entry above the whole limit is kept (it was just stored), and the
  // others go; other files in the directory are not touched.
  write(cacheDir + "/notes.txt", "keep me");
  CompileCache tiny(cacheDir, 100);
  ASSERT_FALSE(llvm::errorToBool(tiny.store(b, object, "")));
  EXPECT_TRUE(llvm::sys::fs::exists(tiny.path(b)));
  EXPECT_FALSE(llvm::sys::fs::exists(tiny.path(a)));
  EXPECT_FALSE(llvm::sys::fs::exists(tiny.path(c)));
  EXPECT_TRUE(llvm::sys::fs::exists(cacheDir + "/notes.txt"));
  // No limit: nothing goes.
  CompileCache unlimited(cacheDir, 0);
  ASSERT_FALSE(llvm::errorToBool(unlimited.store(a, object, "")));
  ASSERT_FALSE(llvm::errorToBool(unlimited.store(c, object, "")));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.path(a)));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.path(b)));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.path(c)));
}

TEST_F(CompileCacheTest, SizeLimits) {
  auto size = [](llvm::StringRef text) -> std::string {
    llvm::Expected<uint64_t> v = CompileCache::parseSize(text);
    return v ? std::to_string(*v) : llvm::toString(v.takeError());
  };
  EXPECT_EQ(size("4096"), "4096");
  EXPECT_EQ(size("0"), "0");
  EXPECT_EQ(size("64K"), "65536");
  EXPECT_EQ(size("512M"), "536870912");
  EXPECT_EQ(size("2G"), "2147483648");
  for (llvm::StringRef bad : {"", "G", "1.5G", "-1", "12X", "3GB", " 1"})
    EXPECT_EQ(size(bad), "'" + bad.str() +
                             "' is not a size (a whole number of bytes, "
                             "optionally followed by K, M or G)");
  const char *old = getenv("BLOCKC_CACHE_MAX_SIZE");
  std::string saved = old ? old : "";
  unsetenv("BLOCKC_CACHE_MAX_SIZE");
  llvm::Expected<uint64_t> v = CompileCache::maxBytesFromEnvironment();
  ASSERT_TRUE(static_cast<bool>(v));
  EXPECT_EQ(*v, CompileCache::kDefaultMaxBytes);
  setenv("BLOCKC_CACHE_MAX_SIZE", "256M", 1);
  v = CompileCache::maxBytesFromEnvironment();
  ASSERT_TRUE(static_cast<bool>(v));
  EXPECT_EQ(*v, uint64_t(256) << 20);
  setenv("BLOCKC_CACHE_MAX_SIZE", "lots", 1);
  v = CompileCache::maxBytesFromEnvironment();
  ASSERT_FALSE(static_cast<bool>(v));
  EXPECT_EQ(llvm::toString(v.takeError()),
            "BLOCKC_CACHE_MAX_SIZE: 'lots' is not a size (a whole number of "
            "bytes, optionally followed by K, M or G)");
  if (old)
    setenv("BLOCKC_CACHE_MAX_SIZE", saved.c_str(), 1);
  else
    unsetenv("BLOCKC_CACHE_MAX_SIZE");
}

TEST(PrepareEntryText, RoundTripAndErrors) {
  EXPECT_EQ(serializePrepareEntry(std::nullopt), "");
  auto none = parsePrepareEntry("");
  ASSERT_TRUE(succeeded(none));
  EXPECT_FALSE(none->has_value());

  PrepareEntry e;
  e.funcName = "forward_prepare";
  e.inputs = {2, 5};
  PreparedWeight w;
  w.argIndex = 2;
  w.rows = 40;
  w.cols = 24;
  w.panelK = 24;
  w.panelN = 32;
  w.shape = {2, 1, 24, 32};
  PreparedWeight q;
  q.argIndex = 5;
  q.rows = 16;
  q.cols = 64;
  q.bits = 4;
  q.groupSize = 32;
  q.interleave = 8;
  q.rowLanes = true; // (with interleave 16 in a real layout)
  q.shape = {2, 80};
  PreparedWeight h = w;
  h.argIndex = 7;
  h.elementType = ElementType::BF16;
  // Panels of bf16 k pairs: the packed layout of rank 6.
  PreparedWeight pr = h;
  pr.argIndex = 8;
  pr.shape = {2, 1, 1, 12, 32, 2};
  e.results = {w, q, h, pr};
  std::string text = serializePrepareEntry(e);
  // The fields before the shape are the element type (0 f32, 1 bf16, 2
  // f16) and the rows interleaved (1: one after the other).
  EXPECT_EQ(text, "prepare forward_prepare\ninputs 2 5\nresult 2 40 24 24 32 0 "
                  "0 0 1 0 2 1 24 32\nresult 5 16 64 0 0 4 32 0 8 1 2 80\n"
                  "result 7 40 24 24 32 0 0 1 1 0 2 1 24 32\n"
                  "result 8 40 24 24 32 0 0 1 1 0 2 1 1 12 32 2\n");
  auto back = parsePrepareEntry(text);
  ASSERT_TRUE(succeeded(back));
  ASSERT_TRUE(back->has_value());
  const PrepareEntry &p = **back;
  EXPECT_EQ(p.funcName, e.funcName);
  EXPECT_EQ(p.inputs, e.inputs);
  ASSERT_EQ(p.results.size(), 4u);
  EXPECT_FALSE(p.results[2].pairs());
  EXPECT_TRUE(p.results[3].pairs());
  EXPECT_EQ(p.results[3].shape, pr.shape);
  EXPECT_EQ(p.results[0].elementType, ElementType::F32);
  EXPECT_EQ(p.results[2].elementType, ElementType::BF16);
  EXPECT_EQ(p.results[2].shape, w.shape);
  EXPECT_EQ(p.results[0].argIndex, 2u);
  EXPECT_EQ(p.results[0].shape, w.shape);
  EXPECT_EQ(p.results[0].panelN, 32);
  EXPECT_EQ(p.results[0].bits, 0);
  EXPECT_EQ(p.results[1].argIndex, 5u);
  EXPECT_EQ(p.results[1].shape, q.shape);
  EXPECT_EQ(p.results[1].bits, 4);
  EXPECT_EQ(p.results[1].groupSize, 32);
  EXPECT_EQ(p.results[1].interleave, 8);
  EXPECT_EQ(p.results[0].interleave, 1);
  EXPECT_TRUE(p.results[1].rowLanes);
  EXPECT_FALSE(p.results[0].rowLanes);
  for (const char *bad :
       {"prepare \ninputs\n", "inputs 1\n", "prepare f\n",
        "prepare f\ninputs x\n", "prepare f\ninputs 1\nresult 1 2 3\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 -6\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 8\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 3 1 9\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 0 0 9\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 0 1 2 9\n",
        "prepare f\ninputs 1\nweight 1 2 3 4 5 6\n"})
    EXPECT_TRUE(failed(parsePrepareEntry(bad))) << bad;

  // Parts: each a prepare function of one result, after the whole.
  PrepareEntry part2, part5;
  part2.funcName = "forward_prepare_2";
  part2.inputs = {2};
  part2.results = {w};
  part5.funcName = "forward_prepare_5";
  part5.inputs = {5};
  part5.results = {q};
  e.results = {w, q};
  e.parts = {part2, part5};
  text = serializePrepareEntry(e);
  EXPECT_EQ(text, "prepare forward_prepare\ninputs 2 5\nresult 2 40 24 24 32 0 "
                  "0 0 1 0 2 1 24 32\nresult 5 16 64 0 0 4 32 0 8 1 2 80\n"
                  "part forward_prepare_2\ninputs 2\n"
                  "result 2 40 24 24 32 0 0 0 1 0 2 1 24 32\n"
                  "part forward_prepare_5\ninputs 5\n"
                  "result 5 16 64 0 0 4 32 0 8 1 2 80\n");
  back = parsePrepareEntry(text);
  ASSERT_TRUE(succeeded(back));
  ASSERT_TRUE(back->has_value());
  const PrepareEntry &withParts = **back;
  EXPECT_EQ(withParts.results.size(), 2u);
  ASSERT_EQ(withParts.parts.size(), 2u);
  EXPECT_EQ(withParts.parts[0].funcName, "forward_prepare_2");
  EXPECT_EQ(withParts.parts[1].funcName, "forward_prepare_5");
  EXPECT_EQ(withParts.parts[1].inputs, std::vector<unsigned>{5});
  ASSERT_EQ(withParts.parts[1].results.size(), 1u);
  EXPECT_EQ(withParts.parts[1].results[0].bits, 4);
  EXPECT_TRUE(withParts.parts[0].parts.empty());
  // A part makes one result.
  for (const char *bad :
       {"prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 0 9\npart g\ninputs 1\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 0 9\npart g\ninputs "
        "1\nresult 1 2 3 4 5 6 7 0 9\nresult 1 2 3 4 5 6 7 0 9\n",
        "prepare f\ninputs 1\nresult 1 2 3 4 5 6 7 0 9\nprepare g\ninputs "
        "1\nresult 1 2 3 4 5 6 7 0 9\n"})
    EXPECT_TRUE(failed(parsePrepareEntry(bad))) << bad;
}

} // namespace
