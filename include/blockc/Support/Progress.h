//===- Progress.h - progress of a tool's long steps --------------*- C++
//-*-===//
//
// What a tool reports on stderr while it loads, compiles, prepares and
// runs: on a terminal a live line that says which step is under way (and
// how far it got: "decode step 17/128"), replaced by the step's result when
// it ends; otherwise one line per finished step, so that logs stay short.
// A quiet reporter (--quiet) prints nothing.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_SUPPORT_PROGRESS_H
#define BLOCKC_SUPPORT_PROGRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <string>

namespace blockc {

class Progress {
public:
  /// Reports as `tool` on `os` (stderr by default). `live` is whether `os`
  /// is a terminal (the live line); nothing is printed when `quiet`.
  Progress(llvm::StringRef tool, bool quiet, bool live,
           llvm::raw_ostream &os = llvm::errs());
  /// A reporter on stderr, live when stderr is a terminal.
  static Progress forStderr(llvm::StringRef tool, bool quiet);

  /// A step starts ("compiling @forward"): shown live on a terminal.
  void start(const llvm::Twine &step);
  /// How far the current step got ("17/128"): shown live on a terminal, at
  /// most ten times a second; nothing otherwise.
  void update(const llvm::Twine &detail);
  /// The current step ended: its result line ("compiled @forward in
  /// 1.23 s"), printed on a terminal and otherwise.
  void finish(const llvm::Twine &line);
  /// Clears the live line (before an error message or other output).
  void clear();

  bool isQuiet() const { return quiet; }

private:
  void show(const llvm::Twine &text);

  std::string tool, step;
  bool quiet, live, shown = false;
  llvm::raw_ostream *os;
  std::chrono::steady_clock::time_point lastUpdate;
};

} // namespace blockc

#endif // BLOCKC_SUPPORT_PROGRESS_H
