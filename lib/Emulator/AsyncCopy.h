//===- AsyncCopy.h - cp.async groups in flight -----------------*- C++ -*-===//
//
// Private to the emulator: the cp.async copies of one block that have been
// issued but not yet retired by a cp.async.wait_group / wait_all, per thread
// and commit group, and which shared bytes they will write. The executor
// performs a copy when the wait that retires its group runs, not at issue,
// so code that reads a destination early sees the old bytes on hardware
// and an error here: any access to a byte with a copy in flight is one.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_ASYNCCOPY_H
#define RIDGELINE_LIB_EMULATOR_ASYNCCOPY_H

#include <cstdint>
#include <vector>

namespace ridge::emu::detail {

/// One cp.async: `bytes` at `sharedOffset`, of which the first
/// `sourceBytes` come from `source` (checked at issue) and the rest are 0.
struct PendingCopy {
  uint64_t sharedOffset = 0;
  const uint8_t *source = nullptr;
  uint32_t bytes = 0, sourceBytes = 0;
  uint32_t thread = 0; // linear index in the block
  uint32_t pc = 0;     // the cp.async instruction
};

class AsyncCopyTracker {
public:
  /// True when no copy of the block is in flight (the common case, checked
  /// before every shared access).
  bool empty() const { return inFlight == 0; }

  /// Adds `copy` to its thread's group that is not yet committed.
  void issue(const PendingCopy &copy, uint32_t numThreads,
             uint64_t sharedBytes);
  /// cp.async.commit_group: the open group of `thread` becomes its newest
  /// committed group (an empty one if it has no copies).
  void commit(uint32_t thread);
  /// cp.async.wait_group `keep`: removes the committed groups of `thread`
  /// except the `keep` most recent and returns their copies, oldest first.
  std::vector<PendingCopy> retire(uint32_t thread, uint64_t keep);
  /// A copy in flight that writes a byte of [offset, offset + bytes), or
  /// null.
  const PendingCopy *find(uint64_t offset, uint64_t bytes) const;

private:
  struct ThreadCopies {
    std::vector<PendingCopy> open;
    std::vector<std::vector<PendingCopy>> committed; // oldest first
  };
  std::vector<ThreadCopies> threads;   // allocated by the first cp.async
  std::vector<uint16_t> pendingWrites; // copies in flight per shared byte
  uint64_t inFlight = 0;
};

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_ASYNCCOPY_H
