//===- ProgressTest.cpp - Progress: live, line by line, quiet -------------===//

#include "blockc/Support/Progress.h"

#include "gtest/gtest.h"

using namespace blockc;

namespace {

TEST(ProgressTest, OneLinePerFinishedStepOffATerminal) {
  std::string out;
  llvm::raw_string_ostream os(out);
  Progress p("tool", /*quiet=*/false, /*live=*/false, os);
  p.start("compiling @forward");
  p.update("half way");
  p.finish("compiled @forward in 1 s");
  p.start("running");
  p.clear();
  p.finish("ran once");
  EXPECT_EQ(out, "tool: compiled @forward in 1 s\ntool: ran once\n");
}

TEST(ProgressTest, LiveLineOnATerminal) {
  std::string out;
  llvm::raw_string_ostream os(out);
  Progress p("tool", /*quiet=*/false, /*live=*/true, os);
  p.start("decoding");
  // Updates within 100 ms of the start are dropped (at most 10 a second).
  p.update("step 1/2");
  p.finish("decoded 2 steps");
  EXPECT_EQ(out, "\r\x1b[Ktool: decoding ...\r\x1b[Ktool: decoded 2 steps\n");
  out.clear();
  p.start("compiling");
  p.clear();
  EXPECT_EQ(out, "\r\x1b[Ktool: compiling ...\r\x1b[K");
  out.clear();
  p.clear(); // nothing shown: nothing to clear
  EXPECT_EQ(out, "");
}

TEST(ProgressTest, QuietPrintsNothing) {
  for (bool live : {false, true}) {
    std::string out;
    llvm::raw_string_ostream os(out);
    Progress p("tool", /*quiet=*/true, live, os);
    p.start("compiling");
    p.update("x");
    p.finish("compiled");
    p.clear();
    EXPECT_EQ(out, "") << "live " << live;
    EXPECT_TRUE(p.isQuiet());
  }
}

} // namespace
