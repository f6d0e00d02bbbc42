//===- Checkpoint.cpp - a checkpoint's safetensors files ------------------===//
//
// See Checkpoint.h. The index is parsed with llvm::json; the error messages
// are the ones blockc-run prints (test/blockc-run/hf-folder-errors.test).
//
//===----------------------------------------------------------------------===//

#include "blockc/Support/Checkpoint.h"
#include "blockc/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace blockc;
using llvm::Twine;

/// `dir`/`name`.
static std::string join(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p);
}

Checkpoint Checkpoint::fromFile(SafeTensorsFile file) {
  Checkpoint c;
  c.path = file.getPath();
  for (const auto &entry : file.getEntries())
    c.fileOf[entry.getKey()] = 0;
  c.files.push_back(std::move(file));
  return c;
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>>
Checkpoint::parseIndex(llvm::StringRef json, llvm::StringRef indexPath) {
  auto malformed = [&](const Twine &why) {
    return makeError(indexPath + ": malformed index: " + why);
  };
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(json);
  if (!root)
    return malformed("invalid JSON: " + llvm::toString(root.takeError()));
  const llvm::json::Object *object = root->getAsObject();
  const llvm::json::Object *map =
      object ? object->getObject("weight_map") : nullptr;
  if (!map)
    return malformed("no \"weight_map\" object");
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &kv : *map) {
    std::optional<llvm::StringRef> shard = kv.second.getAsString();
    if (!shard)
      return malformed("the shard of tensor '" + llvm::StringRef(kv.first) +
                       "' is not a string");
    // A file name in the folder, never a path out of it.
    if (shard->empty() || *shard == "." || *shard == ".." ||
        shard->find_first_of("/\\") != llvm::StringRef::npos)
      return malformed("the shard '" + *shard + "' of tensor '" +
                       llvm::StringRef(kv.first) +
                       "' is not a file name in the folder");
    entries.emplace_back(kv.first.str(), shard->str());
  }
  if (entries.empty())
    return malformed("\"weight_map\" lists no tensors");
  llvm::sort(entries);
  return std::move(entries);
}

llvm::Expected<Checkpoint> Checkpoint::open(llvm::StringRef path) {
  if (!llvm::sys::fs::is_directory(path)) {
    auto file = SafeTensorsFile::open(path);
    if (!file)
      return file.takeError();
    return fromFile(std::move(*file));
  }
  std::string single = join(path, kSingleFile);
  std::string indexPath = join(path, kIndexFile);
  if (llvm::sys::fs::exists(single)) {
    auto file = SafeTensorsFile::open(single, /*anyDType=*/true);
    if (!file)
      return file.takeError();
    Checkpoint c = fromFile(std::move(*file));
    c.path = path.str();
    c.folder = true;
    return std::move(c);
  }
  if (!llvm::sys::fs::exists(indexPath))
    return makeError(path + ": not a Hugging Face model folder (no " +
                     kSingleFile + " or " + kIndexFile + ")");
  auto text = llvm::MemoryBuffer::getFile(indexPath, /*IsText=*/true);
  if (!text)
    return makeError(indexPath +
                     ": cannot read the index: " + text.getError().message());
  auto entries = parseIndex((*text)->getBuffer(), indexPath);
  if (!entries)
    return entries.takeError();

  Checkpoint c;
  c.path = path.str();
  c.folder = c.sharded = true;
  // Each shard once, in name order, with the tensors the index puts in it.
  std::map<std::string, std::vector<llvm::StringRef>> shards;
  for (const auto &[tensor, shard] : *entries)
    shards[shard].push_back(tensor);
  for (const auto &[shard, tensors] : shards) {
    std::string shardPath = join(path, shard);
    if (!llvm::sys::fs::exists(shardPath)) {
      std::string more;
      if (tensors.size() > 1)
        more = " and " + std::to_string(tensors.size() - 1) + " more " +
               (tensors.size() > 2 ? "tensors" : "tensor");
      return makeError(shardPath + ": missing shard (" + kIndexFile +
                       " puts '" + tensors.front() + "'" + more + " in it)");
    }
    auto file = SafeTensorsFile::open(shardPath, /*anyDType=*/true);
    if (!file)
      return file.takeError();
    for (llvm::StringRef tensor : tensors) {
      if (!file->getEntries().count(tensor))
        return makeError(shardPath + ": tensor '" + tensor +
                         "' is not in this shard, where " + kIndexFile +
                         " puts it");
      c.fileOf[tensor] = c.files.size();
    }
    c.files.push_back(std::move(*file));
  }
  return std::move(c);
}

const SafeTensorsFile *Checkpoint::find(llvm::StringRef name) const {
  auto it = fileOf.find(name);
  return it == fileOf.end() ? nullptr : &files[it->second];
}

std::vector<std::string> Checkpoint::getTensorNames() const {
  std::vector<std::string> names;
  for (const auto &entry : fileOf)
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}
