//===- PagePool.h - KV-cache pages and their sequences ---------*- C++ -*-===//
//
// The bookkeeping of a serving session (Session.h): a pool of fixed-size
// KV-cache pages with reference counts, and the sequences that own them. A
// sequence of length L holds ceil(L / S) pages (S: the page size), its
// logical page p being pool page pages[p]. Forking a sequence shares its
// full pages (their counts go up) and gives the child a fresh page for the
// parent's partially filled last page, which the caller copies: only full
// pages are ever shared, so appending to either sequence never writes a page
// that the other reads. Freeing a sequence drops its pages' counts and
// returns those that reach zero.
//
// A step is planned first (every id known, the pages it needs free), then
// committed (the lengths advance) or rolled back (its new pages go back), so
// that a failed step changes nothing. Pure C++: no LLVM or MLIR, so that its
// unit tests build in seconds.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKC_SESSION_PAGEPOOL_H
#define BLOCKC_SESSION_PAGEPOOL_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blockc {

/// Why a page-pool operation failed.
enum class PagePoolError { None, UnknownSequence, OutOfPages, InvalidArgument };

/// A pool of `numPages` pages with reference counts. Free pages are handed
/// out last freed first, so a pool that has served a while hands out pages
/// in no particular order.
class PageAllocator {
public:
  explicit PageAllocator(int64_t numPages);
  int64_t size() const { return static_cast<int64_t>(counts.size()); }
  int64_t numFree() const { return static_cast<int64_t>(freeList.size()); }
  /// A free page with count 1, or -1 when none is free.
  int32_t allocate();
  /// One more holder of `page` (in use).
  void retain(int32_t page);
  /// One holder fewer; returns whether `page` became free.
  bool release(int32_t page);
  int32_t refCount(int32_t page) const { return counts[page]; }

private:
  std::vector<int32_t> counts;
  std::vector<int32_t> freeList;
};

/// One sequence: its cached tokens and its pages, in logical order.
struct PagedSequence {
  int64_t length = 0;
  std::vector<int32_t> pages;
};

/// What a fork asks the caller to copy: the parent's partially filled last
/// page `from` into the child's page `to` (none when the parent's length
/// is a multiple of the page size: -1).
struct PageCopy {
  int32_t from = -1, to = -1;
};

/// A step in progress: the sequences it advances (in the step's order),
/// their new tokens, and the pages allocated for them.
struct StepPlan {
  std::vector<int64_t> ids;
  std::vector<int64_t> newTokens;
  /// For each sequence: its length and page count before the step.
  std::vector<int64_t> oldLengths, oldPageCounts;
  /// Pages allocated by plan(), returned by rollback().
  std::vector<int32_t> allocated;
};

/// The sequences of one session over one page pool.
class SequenceTable {
public:
  SequenceTable(int64_t pageSize, int64_t numPages);

  int64_t getPageSize() const { return pageSize; }
  const PageAllocator &getPages() const { return pages; }
  /// The last error's message (set by every failing call).
  const std::string &getError() const { return error; }

  /// A new empty sequence (no pages); returns its id (ids are never reused).
  int64_t add();
  /// A new sequence sharing `parent`'s cached tokens: its full pages shared,
  /// a fresh copy of its partial last page (`copy` says which to copy).
  /// Fails (nothing changed) for an unknown parent or when no page is free
  /// for the copy. Returns the child's id, or -1.
  int64_t fork(int64_t parent, PageCopy &copy, PagePoolError &why);
  /// Frees `id`: its pages' counts drop and pages reaching zero go back to
  /// the pool. Fails for an unknown id.
  PagePoolError free(int64_t id);

  /// The sequence `id`, or null.
  const PagedSequence *lookup(int64_t id) const;
  int64_t numSequences() const { return static_cast<int64_t>(seqs.size()); }
  /// The ids of every live sequence, ascending.
  std::vector<int64_t> ids() const;

  /// Plans a step appending newTokens[i] tokens to sequence ids[i]: checks
  /// that every id is known and appears once and that every count is
  /// positive, then allocates the pages the new tokens need (all or none).
  /// On success the sequences' page lists include the new pages but their
  /// lengths are unchanged until commit().
  PagePoolError plan(const std::vector<int64_t> &ids,
                     const std::vector<int64_t> &newTokens, StepPlan &plan);
  /// The step ran: each sequence's length grows by its new tokens.
  void commit(const StepPlan &plan);
  /// The step failed: the planned pages go back and every sequence is as
  /// before plan().
  void rollback(const StepPlan &plan);

  /// Pages a sequence of `length` tokens holds.
  int64_t pagesFor(int64_t length) const {
    return (length + pageSize - 1) / pageSize;
  }

private:
  PagePoolError fail(PagePoolError why, std::string message);

  int64_t pageSize;
  PageAllocator pages;
  std::map<int64_t, PagedSequence> seqs;
  int64_t nextId = 0;
  std::string error;
};

} // namespace blockc

#endif // BLOCKC_SESSION_PAGEPOOL_H
