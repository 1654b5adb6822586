//===- AsyncCopy.cpp - cp.async groups in flight --------------------------===//

#include "AsyncCopy.h"

#include <cstddef>

using namespace ridge::emu::detail;

void AsyncCopyTracker::issue(const PendingCopy &copy, uint32_t numThreads,
                             uint64_t sharedBytes) {
  if (threads.empty()) {
    threads.resize(numThreads);
    pendingWrites.assign(sharedBytes, 0);
  }
  threads[copy.thread].open.push_back(copy);
  for (uint64_t byte = 0; byte < copy.bytes; ++byte)
    ++pendingWrites[copy.sharedOffset + byte];
  ++inFlight;
}

void AsyncCopyTracker::commit(uint32_t thread) {
  if (threads.empty())
    return; // No copy was ever issued: every group is empty.
  ThreadCopies &copies = threads[thread];
  copies.committed.push_back(std::move(copies.open));
  copies.open.clear();
}

std::vector<PendingCopy> AsyncCopyTracker::retire(uint32_t thread,
                                                  uint64_t keep) {
  std::vector<PendingCopy> retired;
  if (threads.empty())
    return retired;
  auto &groups = threads[thread].committed;
  if (groups.size() <= keep)
    return retired;
  std::size_t count = groups.size() - keep;
  for (std::size_t g = 0; g < count; ++g)
    for (const PendingCopy &copy : groups[g]) {
      retired.push_back(copy);
      for (uint64_t byte = 0; byte < copy.bytes; ++byte)
        --pendingWrites[copy.sharedOffset + byte];
      --inFlight;
    }
  groups.erase(groups.begin(), groups.begin() + count);
  return retired;
}

const PendingCopy *AsyncCopyTracker::find(uint64_t offset,
                                          uint64_t bytes) const {
  if (inFlight == 0)
    return nullptr;
  bool any = false;
  for (uint64_t byte = offset; byte < offset + bytes && !any; ++byte)
    any = byte < pendingWrites.size() && pendingWrites[byte] != 0;
  if (!any)
    return nullptr;
  // Rare (an error follows): search the copies for the one that covers it.
  auto covers = [&](const PendingCopy &copy) {
    return copy.sharedOffset < offset + bytes &&
           offset < copy.sharedOffset + copy.bytes;
  };
  for (const ThreadCopies &copies : threads) {
    for (const PendingCopy &copy : copies.open)
      if (covers(copy))
        return &copy;
    for (const auto &group : copies.committed)
      for (const PendingCopy &copy : group)
        if (covers(copy))
          return &copy;
  }
  return nullptr;
}
