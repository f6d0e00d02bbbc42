//===- PagePool.cpp - pages of a paged KV cache and their sequences -------===//

#include "blockc/Session/PagePool.h"

#include <algorithm>
#include <cassert>
#include <set>

using namespace blockc;

PageAllocator::PageAllocator(int64_t numPages) : counts(numPages, 0) {
  // Page 0 is handed out first.
  for (int64_t p = numPages - 1; p >= 0; --p)
    freeList.push_back(static_cast<int32_t>(p));
}

int32_t PageAllocator::allocate() {
  if (freeList.empty())
    return -1;
  int32_t page = freeList.back();
  freeList.pop_back();
  counts[page] = 1;
  return page;
}

void PageAllocator::retain(int32_t page) {
  assert(counts[page] > 0 && "retaining a free page");
  ++counts[page];
}

bool PageAllocator::release(int32_t page) {
  assert(counts[page] > 0 && "releasing a free page");
  if (--counts[page] > 0)
    return false;
  freeList.push_back(page);
  return true;
}

SequenceTable::SequenceTable(int64_t pageSize, int64_t numPages)
    : pageSize(pageSize), pages(numPages) {}

PagePoolError SequenceTable::fail(PagePoolError why, std::string message) {
  error = std::move(message);
  return why;
}

int64_t SequenceTable::add() {
  int64_t id = nextId++;
  seqs[id] = PagedSequence();
  return id;
}

const PagedSequence *SequenceTable::lookup(int64_t id) const {
  auto it = seqs.find(id);
  return it == seqs.end() ? nullptr : &it->second;
}

std::vector<int64_t> SequenceTable::ids() const {
  std::vector<int64_t> result;
  for (const auto &entry : seqs)
    result.push_back(entry.first);
  return result;
}

int64_t SequenceTable::fork(int64_t parent, PageCopy &copy,
                            PagePoolError &why) {
  copy = PageCopy();
  auto it = seqs.find(parent);
  if (it == seqs.end()) {
    why = fail(PagePoolError::UnknownSequence,
               "unknown sequence id " + std::to_string(parent));
    return -1;
  }
  const PagedSequence &from = it->second;
  PagedSequence child;
  child.length = from.length;
  bool partial = from.length % pageSize != 0;
  if (partial) {
    int32_t page = pages.allocate();
    if (page < 0) {
      why = fail(PagePoolError::OutOfPages,
                 "out of pages: forking sequence " + std::to_string(parent) +
                     " needs 1 page for the copy of its partially filled "
                     "last page, and none of the pool's " +
                     std::to_string(pages.size()) + " is free");
      return -1;
    }
    copy.from = from.pages.back();
    copy.to = page;
  }
  size_t shared = from.pages.size() - (partial ? 1 : 0);
  for (size_t p = 0; p < shared; ++p) {
    pages.retain(from.pages[p]);
    child.pages.push_back(from.pages[p]);
  }
  if (partial)
    child.pages.push_back(copy.to);
  int64_t id = nextId++;
  seqs[id] = std::move(child);
  why = PagePoolError::None;
  return id;
}

PagePoolError SequenceTable::free(int64_t id) {
  auto it = seqs.find(id);
  if (it == seqs.end())
    return fail(PagePoolError::UnknownSequence,
                "unknown sequence id " + std::to_string(id));
  for (int32_t page : it->second.pages)
    pages.release(page);
  seqs.erase(it);
  return PagePoolError::None;
}

PagePoolError SequenceTable::plan(const std::vector<int64_t> &ids,
                                  const std::vector<int64_t> &newTokens,
                                  StepPlan &plan) {
  plan = StepPlan();
  if (ids.size() != newTokens.size())
    return fail(PagePoolError::InvalidArgument,
                "a step needs one token count per sequence");
  if (ids.empty())
    return fail(PagePoolError::InvalidArgument, "a step needs a sequence");
  std::set<int64_t> seen;
  int64_t needed = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const PagedSequence *seq = lookup(ids[i]);
    if (!seq)
      return fail(PagePoolError::UnknownSequence,
                  "unknown sequence id " + std::to_string(ids[i]));
    if (!seen.insert(ids[i]).second)
      return fail(PagePoolError::InvalidArgument,
                  "sequence " + std::to_string(ids[i]) +
                      " appears twice in one step");
    if (newTokens[i] <= 0)
      return fail(PagePoolError::InvalidArgument,
                  "sequence " + std::to_string(ids[i]) + " is given " +
                      std::to_string(newTokens[i]) +
                      " new tokens; a step needs at least 1");
    needed += pagesFor(seq->length + newTokens[i]) -
              static_cast<int64_t>(seq->pages.size());
  }
  if (needed > pages.numFree())
    return fail(PagePoolError::OutOfPages,
                "out of pages: the step needs " + std::to_string(needed) +
                    " new pages of " + std::to_string(pageSize) +
                    " tokens, the pool has " + std::to_string(pages.numFree()) +
                    " free of " + std::to_string(pages.size()) +
                    " (free a sequence or create the session with more "
                    "pages)");
  plan.ids = ids;
  plan.newTokens = newTokens;
  for (size_t i = 0; i < ids.size(); ++i) {
    PagedSequence &seq = seqs[ids[i]];
    plan.oldLengths.push_back(seq.length);
    plan.oldPageCounts.push_back(static_cast<int64_t>(seq.pages.size()));
    int64_t want = pagesFor(seq.length + newTokens[i]);
    while (static_cast<int64_t>(seq.pages.size()) < want) {
      int32_t page = pages.allocate();
      assert(page >= 0 && "counted free pages ran out");
      seq.pages.push_back(page);
      plan.allocated.push_back(page);
    }
  }
  return PagePoolError::None;
}

void SequenceTable::commit(const StepPlan &plan) {
  for (size_t i = 0; i < plan.ids.size(); ++i)
    seqs[plan.ids[i]].length = plan.oldLengths[i] + plan.newTokens[i];
}

void SequenceTable::rollback(const StepPlan &plan) {
  for (size_t i = 0; i < plan.ids.size(); ++i) {
    PagedSequence &seq = seqs[plan.ids[i]];
    seq.pages.resize(plan.oldPageCounts[i]);
    seq.length = plan.oldLengths[i];
  }
  // Back in reverse order, so the free list is as it was.
  for (auto it = plan.allocated.rbegin(); it != plan.allocated.rend(); ++it)
    pages.release(*it);
}
