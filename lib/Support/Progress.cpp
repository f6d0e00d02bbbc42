//===- Progress.cpp - progress of a tool's long steps ---------------------===//

#include "blockc/Support/Progress.h"

#include "llvm/Support/Process.h"

using namespace blockc;

Progress::Progress(llvm::StringRef tool, bool quiet, bool live,
                   llvm::raw_ostream &os)
    : tool(tool.str()), quiet(quiet), live(live), os(&os) {}

Progress Progress::forStderr(llvm::StringRef tool, bool quiet) {
  return Progress(tool, quiet, llvm::sys::Process::StandardErrIsDisplayed());
}

void Progress::show(const llvm::Twine &text) {
  // Carriage return and "erase to the end of the line".
  *os << "\r\x1b[K" << tool << ": " << text;
  os->flush();
  shown = true;
}

void Progress::start(const llvm::Twine &newStep) {
  step = newStep.str();
  lastUpdate = std::chrono::steady_clock::now();
  if (!quiet && live)
    show(step + " ...");
}

void Progress::update(const llvm::Twine &detail) {
  if (quiet || !live)
    return;
  auto now = std::chrono::steady_clock::now();
  if (now - lastUpdate < std::chrono::milliseconds(100))
    return;
  lastUpdate = now;
  show(step + " ... " + detail);
}

void Progress::finish(const llvm::Twine &line) {
  step.clear();
  if (quiet)
    return;
  if (live) {
    show(line);
    *os << "\n";
    shown = false;
  } else {
    *os << tool << ": " << line << "\n";
  }
  os->flush();
}

void Progress::clear() {
  if (!shown)
    return;
  *os << "\r\x1b[K";
  os->flush();
  shown = false;
}
