//===- TensorParallel.h - the MPI world of tensor-parallel runs -*- C++ -*-===//
//
// A tensor-parallel model (transformer-tensor-parallel, docs/TensorParallel.md)
// runs as one process per rank of its grid, started by mpirun; each rank
// reads its part of the weights and the compiled blocks all-reduce over
// MPI_COMM_WORLD. This is what the drivers need of MPI around that: joining
// the world, checking its size, and ending every rank when one fails.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_EXECUTIONENGINE_TENSORPARALLEL_H
#define BLOCKC_EXECUTIONENGINE_TENSORPARALLEL_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace blockc {

/// This process's place in the MPI world of a tensor-parallel run.
struct TensorParallelWorld {
  unsigned rank = 0, size = 1;

  /// Initialises MPI, sets `world` to this process's place in it and
  /// checks that it has exactly `ranks` processes; otherwise the error names
  /// both counts (every rank reports it, so none waits for the others).
  /// MPI that the caller initialised already is used as it is; `argc` and
  /// `argv` may be null (a library has none).
  static llvm::Error join(int64_t ranks, int *argc, char ***argv,
                          TensorParallelWorld &world);
  /// Whether join() ran in this process (MPI is up for this run).
  static bool isActive();
  /// Ends every rank of the world with `code` (MPI_Abort): after an error
  /// on one rank the others would wait in their next all-reduce forever.
  [[noreturn]] static void abortAll(int code);
  /// For an error that every rank meets alike (the rank count, a model that
  /// cannot be split): waits until every rank reached it, so that each
  /// reports it before mpirun ends the job, then ends MPI.
  static void endTogether();
  /// Ends MPI normally if join() started it (every rank calls it at exit).
  static void finalize();
  /// A collective every rank calls with whether it failed a step that some
  /// ranks may fail alone (reading its own weights): the lowest rank that
  /// failed, or -1 when none did (outside a joined world: this process's
  /// own outcome, 0 or -1). Then
  /// every rank can report and end together instead of the others waiting
  /// in their next all-reduce.
  static int firstFailedRank(bool failed);

  /// Prints `message` as `tool`'s error and returns the exit code (1). In
  /// a run that joined the world, the message names this rank and, in one
  /// write so that the ranks' lines do not interleave, every rank ends: at
  /// once (abortAll), or together (endTogether) for an error that
  /// `everyRank` meets alike (the same model, options and world).
  int reportError(llvm::StringRef tool, const llvm::Twine &message,
                  bool everyRank = false) const;
};

} // namespace blockc

#endif // BLOCKC_EXECUTIONENGINE_TENSORPARALLEL_H
