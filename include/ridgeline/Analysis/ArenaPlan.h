//===- ArenaPlan.h - Buffer offsets in one arena, from liveness -*- C++ -*-===//
//
// A GPU model's temporaries live in one device block (the arena) that the
// runtime allocates once per session; each buffer gets a fixed offset in it.
// Two buffers may share bytes when their live ranges (in program order) do
// not overlap. Finding the smallest such packing is NP-hard (dynamic storage
// allocation); this is the greedy-by-size heuristic of TFLite's arena planner
// and of XLA's heap simulator, which is within a few percent of the peak of
// simultaneously live bytes on the networks they report on.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_ARENAPLAN_H
#define RIDGELINE_ANALYSIS_ARENAPLAN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::ridge {

/// One buffer: its size and the first and last program points (inclusive)
/// at which it holds data.
struct LiveBuffer {
  uint64_t bytes = 0;
  unsigned first = 0;
  unsigned last = 0;
};

struct ArenaPlan {
  /// One offset per buffer, in the order given, each a multiple of the
  /// alignment.
  llvm::SmallVector<uint64_t> offsets;
  /// Bytes of the arena: the end of the highest placed buffer.
  uint64_t arenaBytes = 0;
  /// The most bytes (sizes rounded up to the alignment) live at one program
  /// point: no placement can use less than this.
  uint64_t peakLiveBytes = 0;
};

/// Places `buffers` in one arena: largest first, each at the lowest offset of
/// the tightest gap left by the already placed buffers whose live ranges
/// overlap its own. `alignment` must be a power of two.
ArenaPlan planArena(llvm::ArrayRef<LiveBuffer> buffers, uint64_t alignment);

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_ARENAPLAN_H
