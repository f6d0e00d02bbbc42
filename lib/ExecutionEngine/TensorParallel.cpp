//===- TensorParallel.cpp - the MPI world of tensor-parallel runs ---------===//
//
// See TensorParallel.h and docs/TensorParallel.md.
//
//===----------------------------------------------------------------------===//

#include "blockc/ExecutionEngine/TensorParallel.h"

#include "llvm/Support/WithColor.h"

#ifdef BLOCKC_ENABLE_MPI
#include <dlfcn.h>
#include <mpi.h>
#endif

#include <cstdlib>

using namespace blockc;

namespace {
/// Whether join() ran (MPI is up for this run), and whether it started MPI
/// (then finalize() ends it; an embedder's MPI is the embedder's).
bool mpiActive = false;
bool mpiStartedHere = false;

#ifdef BLOCKC_ENABLE_MPI
/// Makes the MPI library's symbols global in the process. A library that
/// links it and is itself loaded into a local scope (libblockc_session.so
/// under Python's ctypes) has it there too: the JIT, which resolves the
/// compiled all-reduces against the process's global symbols, and Open
/// MPI's plugins would not find them.
void makeMPISymbolsGlobal() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&MPI_Init), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}
#endif
} // namespace

llvm::Error TensorParallelWorld::join(int64_t ranks, int *argc, char ***argv,
                                      TensorParallelWorld &world) {
#ifndef BLOCKC_ENABLE_MPI
  (void)argc;
  (void)argv;
  (void)world;
  return llvm::createStringError(
      "the model runs on " + llvm::Twine(ranks) +
      " ranks, but this blockc was built without MPI "
      "(-DBLOCKC_ENABLE_MPI=OFF): tensor-parallel runs need Open MPI");
#else
  makeMPISymbolsGlobal();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Serialized: the session API may be called from any one thread at a
    // time (a server's worker thread), not only the one that started MPI.
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS)
      return llvm::createStringError("MPI_Init failed");
    mpiStartedHere = true;
  }
  mpiActive = true;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  world.rank = static_cast<unsigned>(rank);
  world.size = static_cast<unsigned>(size);
  if (size != ranks)
    return llvm::createStringError(
        "the model runs on " + llvm::Twine(ranks) +
        " ranks but this MPI job has " + llvm::Twine(size) +
        " (start it with mpirun -np " + llvm::Twine(ranks) + ")");
  return llvm::Error::success();
#endif
}

bool TensorParallelWorld::isActive() { return mpiActive; }

void TensorParallelWorld::abortAll(int code) {
#ifdef BLOCKC_ENABLE_MPI
  MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code); // not reached
}

void TensorParallelWorld::endTogether() {
#ifdef BLOCKC_ENABLE_MPI
  if (mpiActive)
    MPI_Barrier(MPI_COMM_WORLD);
#endif
  finalize();
}

void TensorParallelWorld::finalize() {
#ifdef BLOCKC_ENABLE_MPI
  if (mpiStartedHere)
    MPI_Finalize();
#endif
  mpiActive = mpiStartedHere = false;
}

int TensorParallelWorld::firstFailedRank(bool failed) {
#ifdef BLOCKC_ENABLE_MPI
  if (mpiActive) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = failed ? rank : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return first < size ? first : -1;
  }
#endif
  return failed ? 0 : -1;
}

int TensorParallelWorld::reportError(llvm::StringRef tool,
                                     const llvm::Twine &message,
                                     bool everyRank) const {
  if (!isActive()) {
    llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
    return 1;
  }
  // One write, so that the ranks' lines do not interleave.
  std::string line;
  llvm::raw_string_ostream os(line);
  llvm::WithColor::error(os, tool, /*DisableColors=*/true)
      << "(rank " << rank << " of " << size << ") " << message << "\n";
  llvm::errs() << line;
  llvm::errs().flush();
  if (!everyRank)
    abortAll(1);
  endTogether();
  return 1;
}
