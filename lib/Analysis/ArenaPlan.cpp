//===- ArenaPlan.cpp - Offsets of buffers in one arena, from liveness -----===//

#include "ridgeline/Analysis/ArenaPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace mlir::ridge;

ArenaPlan mlir::ridge::planArena(llvm::ArrayRef<LiveBuffer> buffers,
                                 uint64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  auto rounded = [&](uint64_t bytes) {
    return llvm::alignTo(bytes, alignment);
  };

  // Largest first; among equals, the earlier-born first, then the first
  // given: a total order, so the plan is the same on every host.
  auto order = llvm::to_vector(
      llvm::seq<unsigned>(0, static_cast<unsigned>(buffers.size())));
  llvm::sort(order, [&](unsigned a, unsigned b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    if (buffers[a].first != buffers[b].first)
      return buffers[a].first < buffers[b].first;
    return a < b;
  });

  struct Placed {
    uint64_t begin, end;
    unsigned first, last;
  };
  llvm::SmallVector<Placed> placed;
  llvm::SmallVector<std::pair<uint64_t, uint64_t>> busy;
  for (unsigned index : order) {
    const LiveBuffer &buffer = buffers[index];
    uint64_t size = rounded(buffer.bytes);
    if (size == 0)
      continue; // Empty buffers take no bytes; offset 0 is as good as any.
    // The byte ranges of the placed buffers live at the same time.
    busy.clear();
    for (const Placed &other : placed)
      if (other.first <= buffer.last && buffer.first <= other.last)
        busy.push_back({other.begin, other.end});
    llvm::sort(busy);
    // The tightest gap that fits; past the last busy range otherwise.
    uint64_t best = UINT64_MAX, bestGap = UINT64_MAX, cursor = 0;
    for (auto [begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size &&
          begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == UINT64_MAX)
      best = cursor;
    plan.offsets[index] = best;
    placed.push_back({best, best + size, buffer.first, buffer.last});
    plan.arenaBytes = std::max(plan.arenaBytes, best + size);
  }

  // Peak of live bytes: a sweep over births (+) and deaths (-) in program
  // order; a buffer dies after its last point.
  std::map<unsigned, int64_t> delta;
  for (const LiveBuffer &buffer : buffers) {
    delta[buffer.first] += static_cast<int64_t>(rounded(buffer.bytes));
    delta[buffer.last + 1] -= static_cast<int64_t>(rounded(buffer.bytes));
  }
  int64_t live = 0;
  for (auto [point, change] : delta) {
    live += change;
    plan.peakLiveBytes =
        std::max(plan.peakLiveBytes, static_cast<uint64_t>(live));
  }
  return plan;
}
