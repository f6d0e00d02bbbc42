//===- Checkpoint.h - a checkpoint's safetensors files ----------*- C++ -*-===//
//
// What blockc-run's --weights names: one safetensors file, or a Hugging Face
// model folder as it ships: `model.safetensors`, or the shards that
// `model.safetensors.index.json` lists. Every file is memory-mapped
// (SafeTensorsFile), so a tensor used in its stored type is not copied.
// Opening a folder checks the index and every shard it names up front; the
// errors name the folder, the index or the shard file and the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_SUPPORT_CHECKPOINT_H
#define BLOCKC_SUPPORT_CHECKPOINT_H

#include "blockc/Support/TensorFiles.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace blockc {

class Checkpoint {
public:
  /// The file names of a Hugging Face model folder.
  static constexpr const char *kSingleFile = "model.safetensors";
  static constexpr const char *kIndexFile = "model.safetensors.index.json";

  /// Opens `path`. A directory is a model folder: its `model.safetensors`
  /// when there is one (as transformers prefers it), else the index, whose
  /// `weight_map` maps every tensor to a shard file in the folder; each
  /// shard is opened and must hold the tensors the index puts in it. The
  /// shards of a folder may hold tensors of any safetensors dtype (integer
  /// buffers, ...): only the tensors bound to arguments must be F32, F16
  /// or BF16. Anything else is opened as one safetensors file.
  static llvm::Expected<Checkpoint> open(llvm::StringRef path);

  /// One safetensors file as a checkpoint.
  static Checkpoint fromFile(SafeTensorsFile file);

  /// The `weight_map` of an index (the JSON text `json`, named `indexPath`
  /// in errors): (tensor, shard file name) pairs, sorted by tensor.
  static llvm::Expected<std::vector<std::pair<std::string, std::string>>>
  parseIndex(llvm::StringRef json, llvm::StringRef indexPath);

  /// The path given to open (the folder, or the file).
  const std::string &getPath() const { return path; }
  /// A model folder (single file or sharded), not a file given directly.
  bool isFolder() const { return folder; }
  /// A folder read through its index.
  bool isSharded() const { return sharded; }
  llvm::ArrayRef<SafeTensorsFile> getFiles() const { return files; }
  /// The file that holds tensor `name` (its shard), or null.
  const SafeTensorsFile *find(llvm::StringRef name) const;
  /// Every tensor of the checkpoint (the index's, or the file's), sorted.
  std::vector<std::string> getTensorNames() const;

private:
  std::string path;
  bool folder = false, sharded = false;
  std::vector<SafeTensorsFile> files;
  /// Tensor name -> index into `files`.
  llvm::StringMap<unsigned> fileOf;
};

} // namespace blockc

#endif // BLOCKC_SUPPORT_CHECKPOINT_H
