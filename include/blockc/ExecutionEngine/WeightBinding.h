//===- WeightBinding.h - bind safetensors tensors to arguments --*- C++ -*-===//
//
// Turns the tensors of a safetensors file into the weight arguments of a
// model (every argument of ModelSignature but the activation input), by the
// tensor names that analyzeModel bound: the stored tensor is sliced
// (`transformer.weight_slice`) and transposed (`transformer.weight_transpose`)
// as the argument asks, and its shape must then be the argument's. Every
// error names the file, the tensor and the argument; nothing is loaded
// before its shape has been checked.
//
// Also: deterministic random weights and inputs (splitmix64), for runs
// without a weights file.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_WEIGHTBINDING_H
#define BLOCKC_EXECUTIONENGINE_WEIGHTBINDING_H

#include "blockc/Analysis/ModelSignature.h"
#include "blockc/Analysis/PreparedWeights.h"
#include "blockc/Support/Checkpoint.h"
#include "blockc/Support/TensorFiles.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blockc {

struct WeightBindingOptions {
  /// Ignore tensors of the file that bind to no argument (else an error).
  bool allowExtraTensors = false;
};

/// Loads the tensor of weight argument `arg` (of @`funcName`) from `file`,
/// sliced and transposed as `arg` asks. Fails when the tensor is missing,
/// not of a float dtype, too small for the slice, not a matrix but
/// transposed, or not of the argument's shape after both. A tensor neither
/// sliced nor transposed and stored in the argument's element type borrows
/// the mapped file's bytes (SafeTensorsFile::view): no copy.
/// A tensor-parallel argument (ModelArgument::shardAxis) is rank `rank`'s
/// part of that view, read from the file by offset: only its rows (or
/// columns) are touched.
llvm::Expected<HostTensor> bindWeight(const SafeTensorsFile &file,
                                      const ModelArgument &arg,
                                      llvm::StringRef funcName,
                                      unsigned rank = 0);

/// Binds every weight argument of `signature` (args[1..]) in order, then,
/// unless `options.allowExtraTensors`, fails on a tensor of `file` that no
/// argument reads.
llvm::Expected<std::vector<HostTensor>>
bindWeights(const SafeTensorsFile &file, const ModelSignature &signature,
            const WeightBindingOptions &options = {}, unsigned rank = 0);

/// bindWeight from the file of `checkpoint` that holds the tensor (a
/// folder's shard: the errors name it). A tensor the checkpoint does not
/// hold under its own name binds to the same name under transformers'
/// wrapper prefix ("transformer." + a GPT-2 name, as GPT2LMHeadModel saves
/// it) or without "model." (a bare LlamaModel's); a tensor that no file
/// holds is missing; in a sharded folder the error says the index does not
/// list it.
llvm::Expected<HostTensor> bindWeight(const Checkpoint &checkpoint,
                                      const ModelArgument &arg,
                                      llvm::StringRef funcName,
                                      unsigned rank = 0);

/// bindWeights over a checkpoint. A model folder's tensors that no argument
/// reads are allowed (a checkpoint holds the embeddings, the LM head, more
/// layers); a single file's are an error unless `options.allowExtraTensors`.
llvm::Expected<std::vector<HostTensor>>
bindWeights(const Checkpoint &checkpoint, const ModelSignature &signature,
            const WeightBindingOptions &options = {}, unsigned rank = 0);

/// The tensors of `checkpoint` that no weight argument of `signature` reads.
size_t countUnusedTensors(const Checkpoint &checkpoint,
                          const ModelSignature &signature);

/// Binds the weights of a file of prepared weights
/// (SafeTensorsFile::holdsPreparedWeights, written by savePreparedWeights):
/// each argument by its binding key. An argument that `prepare` prepares
/// must be stored with exactly the layout it makes (its
/// describePreparedLayout in the metadata), the others are checked as
/// bindWeight checks them. Errors name the file and the tensor.
llvm::Expected<std::vector<HostTensor>>
bindPreparedWeights(const SafeTensorsFile &file,
                    const ModelSignature &signature,
                    const PrepareEntry *prepare);

/// Writes the entry's weight arguments as they are after `prepare` ran
/// (`weights`: arguments 1..N) to `path` as a file of prepared weights. In
/// a tensor-parallel run (`ranks` > 1) they are rank `rank`'s parts and the
/// metadata says whose (kPreparedRankKey, kPreparedRanksKey); the caller
/// names the file (getRankPreparedPath).
llvm::Error savePreparedWeights(llvm::StringRef path,
                                const ModelSignature &signature,
                                const PrepareEntry *prepare,
                                llvm::ArrayRef<HostTensor> weights,
                                unsigned rank = 0, unsigned ranks = 1);

/// The metadata keys of a file of prepared weights that holds one rank's
/// parts: the rank and the rank count, in decimal.
inline constexpr const char *kPreparedRankKey = "blockc.tensor_parallel_rank";
inline constexpr const char *kPreparedRanksKey = "blockc.tensor_parallel_ranks";

/// The file of rank `rank`'s prepared weights when a run over `ranks`
/// ranks saves them as `path` (--save-prepared=path): `path` without its
/// ".safetensors", then ".rank<rank>-of-<ranks>.safetensors"
/// (p.safetensors -> p.rank1-of-2.safetensors).
std::string getRankPreparedPath(llvm::StringRef path, unsigned rank,
                                unsigned ranks);

/// getRankPreparedPath naming every rank's file: "p.rank<r>-of-2.safetensors".
std::string getRankPreparedPattern(llvm::StringRef path, unsigned ranks);

/// splitmix64: a small, portable, deterministic generator.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed)
      : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  float uniform() {
    return static_cast<float>((next() >> 40) * 0x1.0p-23 - 1.0);
  }

private:
  uint64_t state;
};

/// A deterministic random value for weight argument `arg`: norm gains near
/// 1, matrices uniform with scale 1/sqrt(columns), other vectors uniform in
/// [-0.1, 0.1). Each argument has its own stream (seeded by `seed` and the
/// argument's index), so a weight does not change when others are added.
/// A tensor-parallel argument gets rank `rank`'s part of the weight drawn
/// for the whole view, so that every partitioning draws the same model.
HostTensor makeRandomWeight(const ModelArgument &arg, uint64_t seed,
                            unsigned rank = 0);

/// makeRandomWeight for every weight argument of `signature`, in order.
std::vector<HostTensor> makeRandomWeights(const ModelSignature &signature,
                                          uint64_t seed, unsigned rank = 0);

/// A tensor of `shape` uniform in [-1, 1) from SplitMix64(seed).
HostTensor makeRandomTensor(std::vector<int64_t> shape, uint64_t seed);

/// The weights a run asks for: a safetensors file (a checkpoint, or the
/// prepared weights blockc-run --save-prepared wrote) or a Hugging Face
/// model folder (Checkpoint), else random weights from `seed`; `rank`
/// picks a tensor-parallel rank's parts.
struct WeightRequest {
  std::string file;
  uint64_t seed = 0;
  unsigned rank = 0;
  WeightBindingOptions binding;
  /// Why prepared weights cannot be used here (empty: they can).
  std::string preparedRefused;
  /// The tensor-parallel rank count: above 1, prepared weights are rank
  /// `rank`'s file (getRankPreparedPath of `file`, or `file` itself when it
  /// holds that rank's parts).
  unsigned ranks = 1;
};

/// A run's weights.
struct RunWeights {
  /// The weight arguments in order (empty until bound for a prepared file).
  std::vector<HostTensor> tensors;
  /// A file of prepared weights, bound once the compiled prepare entry
  /// says which layouts it needs (bindPreparedWeights).
  std::optional<SafeTensorsFile> preparedFile;
  /// The file, or "random (seed N)"; a folder's says how many files it
  /// read and how many of its tensors no argument reads, e.g.
  /// "ckpt (2 shards, 5 tensors unused)"; a tensor-parallel run's
  /// prepared parts, "p.rank<r>-of-2.safetensors".
  std::string label;
  /// The tensor-parallel rank these weights are the parts of, of `ranks`.
  unsigned rank = 0, ranks = 1;
};

/// Binds or makes the weights of `signature`'s entry for `request`; a file
/// of prepared weights is refused with `<file>: <preparedRefused>`. A file
/// of prepared weights must be of the request's rank and rank count: one
/// process's file under tensor parallelism, a rank's file in one process,
/// another rank's or another rank count's file, and a missing rank file
/// are errors naming the file, its rank and the run's.
llvm::Expected<RunWeights> loadRunWeights(const ModelSignature &signature,
                                          const WeightRequest &request);

/// The input a run asks for: an .npy file ([B, T, d] or [T, d]), else a
/// random tensor from `seed`; `batch` and `seqLen` (0: not given) fix the
/// random input's shape and must agree with a file's.
struct InputRequest {
  std::string file;
  uint64_t seed = 0;
  int64_t batch = 0, seqLen = 0;

  /// The file's shape ([B, T, ...]) against `batch` and `seqLen`: an error
  /// naming the file when they disagree.
  llvm::Error checkFileShape(const std::vector<int64_t> &shape) const;
  /// An input's shape ([B, T, ...]): an error when B or T is 0 (a file's,
  /// or a model's static dimension).
  static llvm::Error checkNotEmpty(const std::vector<int64_t> &shape);
  /// {B, T} of a random input to an entry whose input is `type` ([B, T,
  /// ...]): `batch` or the static B or 1, `seqLen` or the static T or 16.
  std::array<int64_t, 2> randomShape(mlir::RankedTensorType type) const;
};

/// A run's input, [B, T, d].
struct ModelInput {
  HostTensor tensor;
  /// The file held [T, d]: the output is given back as [T, d] too.
  bool rank2 = false;
  /// The file, or "random (seed N)".
  std::string label;
};

/// Reads or makes the input of `signature`'s entry for `request`: a random
/// input is [batch or the model's static B or 1, seqLen or the model's
/// static T or 16, d]. `checkSize` sees B and T before a random input is
/// made (a memory check). The errors name the file and what disagrees.
llvm::Expected<ModelInput> loadModelInput(
    const ModelSignature &signature, const InputRequest &request,
    llvm::function_ref<llvm::Error(int64_t batch, int64_t seqLen)> checkSize =
        nullptr);

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_WEIGHTBINDING_H
