//===- PagePoolTest.cpp - page pool and sequence bookkeeping --------------===//

#include "blockc/Session/PagePool.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace blockc;

namespace {

TEST(PageAllocatorTest, HandsOutLastFreedFirst) {
  PageAllocator pages(4);
  EXPECT_EQ(pages.numFree(), 4);
  EXPECT_EQ(pages.allocate(), 0);
  EXPECT_EQ(pages.allocate(), 1);
  EXPECT_EQ(pages.allocate(), 2);
  EXPECT_TRUE(pages.release(0));
  EXPECT_EQ(pages.allocate(), 0);
  EXPECT_EQ(pages.allocate(), 3);
  EXPECT_EQ(pages.allocate(), -1);
  pages.retain(1);
  EXPECT_EQ(pages.refCount(1), 2);
  EXPECT_FALSE(pages.release(1));
  EXPECT_TRUE(pages.release(1));
  EXPECT_EQ(pages.numFree(), 1);
}

TEST(SequenceTableTest, StepAllocatesPagesAndCommits) {
  SequenceTable table(/*pageSize=*/4, /*numPages=*/8);
  int64_t a = table.add(), b = table.add();
  EXPECT_NE(a, b);
  StepPlan plan;
  ASSERT_EQ(table.plan({a, b}, {5, 1}, plan), PagePoolError::None);
  EXPECT_EQ(table.lookup(a)->pages.size(), 2u);
  EXPECT_EQ(table.lookup(a)->length, 0); // until commit
  table.commit(plan);
  EXPECT_EQ(table.lookup(a)->length, 5);
  EXPECT_EQ(table.lookup(b)->length, 1);
  EXPECT_EQ(table.getPages().numFree(), 5);
  // Three more tokens of a fit its second page.
  ASSERT_EQ(table.plan({a}, {3}, plan), PagePoolError::None);
  table.commit(plan);
  EXPECT_EQ(table.lookup(a)->pages.size(), 2u);
  EXPECT_EQ(table.getPages().numFree(), 5);
}

TEST(SequenceTableTest, RollbackRestoresEverything) {
  SequenceTable table(4, 8);
  int64_t a = table.add();
  StepPlan plan;
  ASSERT_EQ(table.plan({a}, {6}, plan), PagePoolError::None);
  table.commit(plan);
  std::vector<int32_t> pagesBefore = table.lookup(a)->pages;
  ASSERT_EQ(table.plan({a}, {9}, plan), PagePoolError::None);
  EXPECT_EQ(table.getPages().numFree(), 4); // 15 tokens: 4 pages
  table.rollback(plan);
  EXPECT_EQ(table.lookup(a)->pages, pagesBefore);
  EXPECT_EQ(table.lookup(a)->length, 6);
  EXPECT_EQ(table.getPages().numFree(), 6);
  // The same pages are handed out again.
  StepPlan again;
  ASSERT_EQ(table.plan({a}, {9}, again), PagePoolError::None);
  EXPECT_EQ(again.allocated, plan.allocated);
}

TEST(SequenceTableTest, OutOfPagesTakesNothing) {
  SequenceTable table(4, 3);
  int64_t a = table.add(), b = table.add();
  StepPlan plan;
  // a needs 2 pages, b 2: 4 > 3.
  EXPECT_EQ(table.plan({a, b}, {8, 5}, plan), PagePoolError::OutOfPages);
  EXPECT_NE(table.getError().find("out of pages: the step needs 4 new pages "
                                  "of 4 tokens, the pool has 3 free of 3"),
            std::string::npos)
      << table.getError();
  EXPECT_EQ(table.getPages().numFree(), 3);
  EXPECT_TRUE(table.lookup(a)->pages.empty());
  EXPECT_TRUE(table.lookup(b)->pages.empty());
  // After freeing b the step of a alone fits.
  EXPECT_EQ(table.free(b), PagePoolError::None);
  EXPECT_EQ(table.plan({a}, {8}, plan), PagePoolError::None);
}

TEST(SequenceTableTest, PlanChecksIdsAndCounts) {
  SequenceTable table(4, 8);
  int64_t a = table.add();
  StepPlan plan;
  EXPECT_EQ(table.plan({a, 7}, {1, 1}, plan), PagePoolError::UnknownSequence);
  EXPECT_EQ(table.getError(), "unknown sequence id 7");
  EXPECT_EQ(table.plan({a, a}, {1, 1}, plan), PagePoolError::InvalidArgument);
  EXPECT_EQ(table.plan({a}, {0}, plan), PagePoolError::InvalidArgument);
  EXPECT_EQ(table.plan({}, {}, plan), PagePoolError::InvalidArgument);
  EXPECT_EQ(table.getPages().numFree(), 8);
  EXPECT_EQ(table.free(9), PagePoolError::UnknownSequence);
}

TEST(SequenceTableTest, ForkSharesFullPagesAndCopiesThePartialOne) {
  SequenceTable table(4, 8);
  int64_t a = table.add();
  StepPlan plan;
  ASSERT_EQ(table.plan({a}, {6}, plan), PagePoolError::None);
  table.commit(plan);
  std::vector<int32_t> parentPages = table.lookup(a)->pages;
  PageCopy copy;
  PagePoolError why;
  int64_t c = table.fork(a, copy, why);
  ASSERT_GE(c, 0);
  const PagedSequence &child = *table.lookup(c);
  EXPECT_EQ(child.length, 6);
  ASSERT_EQ(child.pages.size(), 2u);
  EXPECT_EQ(child.pages[0], parentPages[0]); // shared
  EXPECT_NE(child.pages[1], parentPages[1]); // copied
  EXPECT_EQ(copy.from, parentPages[1]);
  EXPECT_EQ(copy.to, child.pages[1]);
  EXPECT_EQ(table.getPages().refCount(parentPages[0]), 2);
  // Freeing the parent keeps the shared page for the child.
  EXPECT_EQ(table.free(a), PagePoolError::None);
  EXPECT_EQ(table.getPages().refCount(parentPages[0]), 1);
  EXPECT_EQ(table.getPages().numFree(), 8 - 2);
  EXPECT_EQ(table.free(c), PagePoolError::None);
  EXPECT_EQ(table.getPages().numFree(), 8);
}

TEST(SequenceTableTest, ForkOfFullPagesCopiesNothing) {
  SequenceTable table(4, 2);
  int64_t a = table.add();
  StepPlan plan;
  ASSERT_EQ(table.plan({a}, {8}, plan), PagePoolError::None);
  table.commit(plan);
  PageCopy copy;
  PagePoolError why;
  int64_t c = table.fork(a, copy, why);
  ASSERT_GE(c, 0);
  EXPECT_EQ(copy.from, -1);
  EXPECT_EQ(table.lookup(c)->pages, table.lookup(a)->pages);
  // Each continues on a page of its own; the pool is full now.
  ASSERT_EQ(table.plan({c}, {1}, plan), PagePoolError::OutOfPages);
}

TEST(SequenceTableTest, ForkErrors) {
  SequenceTable table(4, 1);
  int64_t a = table.add();
  StepPlan plan;
  ASSERT_EQ(table.plan({a}, {3}, plan), PagePoolError::None);
  table.commit(plan);
  PageCopy copy;
  PagePoolError why;
  EXPECT_EQ(table.fork(5, copy, why), -1);
  EXPECT_EQ(why, PagePoolError::UnknownSequence);
  EXPECT_EQ(table.fork(a, copy, why), -1);
  EXPECT_EQ(why, PagePoolError::OutOfPages);
  EXPECT_EQ(table.numSequences(), 1);
  EXPECT_EQ(table.getPages().refCount(0), 1);
}

TEST(SequenceTableTest, FreedPagesComeBackFragmented) {
  SequenceTable table(2, 6);
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(table.add());
    StepPlan plan;
    ASSERT_EQ(table.plan({ids.back()}, {4}, plan), PagePoolError::None);
    table.commit(plan);
  }
  // Pages 0-1, 2-3, 4-5; freeing the first and last leaves holes.
  ASSERT_EQ(table.free(ids[0]), PagePoolError::None);
  ASSERT_EQ(table.free(ids[2]), PagePoolError::None);
  int64_t d = table.add();
  StepPlan plan;
  ASSERT_EQ(table.plan({d}, {8}, plan), PagePoolError::None);
  table.commit(plan);
  std::vector<int32_t> pages = table.lookup(d)->pages;
  EXPECT_EQ(pages, (std::vector<int32_t>{5, 4, 1, 0}));
  EXPECT_EQ(table.ids(), (std::vector<int64_t>{ids[1], d}));
}

} // namespace
