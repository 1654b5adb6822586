//===- KernelConfigPolicy.h - Shared pieces of the config policy -*- C++
//-*-===//
//
// What the policy files of ridge-select-kernel-config share: the constants
// of the GPU model they price kernels by, the ranges `ridge.kernel_config`
// accepts, and the bandwidth path's policy (GemvConfig.cpp), which
// selectKernelConfig (KernelConfig.cpp) calls. Private to lib/Codegen.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_KERNELCONFIGPOLICY_H
#define RIDGELINE_LIB_CODEGEN_KERNELCONFIGPOLICY_H

#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/MmaContraction.h"

#include <cstdint>

namespace mlir::ridge::config_policy {

inline constexpr int64_t kWarpSize = 32;
/// Warps a row kernel's block holds at most: 256 threads, enough to hide
/// latency without starving the SM of blocks.
inline constexpr int64_t kMaxWarpsPerBlock = 8;
/// Elements per lane of the wide layout: 16 bytes of f32.
inline constexpr int64_t kWideVector = 4;

/// The decode kernel streams K and V once; its speed is the bytes it keeps
/// in flight. By Little's law a GPU's bandwidth needs bandwidth x latency
/// bytes in flight: at a loaded DRAM latency of about a microsecond, 25 KB
/// per SM on an H100, 31 KB on an H200. One key per warp at a time (4 warps
/// x 2 blocks an SM x 512 bytes of K and V at d = 64: 4 KB) ran at
/// 0.12-0.16 of an H200's copy bandwidth, as the law predicts.
inline constexpr double kLoadedMemoryLatencySeconds = 1e-6;

/// Shares of k of a GEMV (the column and tall-skinny forms), at most.
inline constexpr int64_t kMaxGemvSplitK = 256;
/// 16-byte pieces of A a lane of the tall-skinny GEMV loads before its
/// first fma, over all its rows: a warp's 2 KiB in flight, what sets a
/// streaming kernel's speed (Little's law, as for the column form).
inline constexpr int64_t kTallSkinnyPiecesInFlight = 4;
/// Rows of A a warp of the tall-skinny GEMV computes at most.
inline constexpr int64_t kMaxGemvRowsPerWarp = 4;
/// Sums a lane of the tall-skinny GEMV keeps: rows times columns.
inline constexpr int64_t kMaxTallSkinnySums = 32;
/// Warps per SM the tall-skinny GEMV keeps before a warp takes more rows:
/// each keeps 2 KiB of A in flight, so 16 keep 32 KiB an SM, what an
/// A100's or H100's bandwidth needs at a microsecond of loaded latency.
inline constexpr int64_t kTallSkinnyWarpsPerSm = 16;
/// Warps a block of the column GEMV.
inline constexpr int64_t kGemvColumnWarps = 4;

/// The bandwidth path's config of `mma`, whose form is `form`
/// (getGemvForm): warps a block, vector width, and the form's own fields
/// (gemv_split_k, gemv_rows_per_warp). docs/kernel-config.md.
void selectGemvConfig(const MmaContraction &mma, GemvForm form,
                      const TargetSpec &target, KernelConfig &config);

} // namespace mlir::ridge::config_policy

#endif // RIDGELINE_LIB_CODEGEN_KERNELCONFIGPOLICY_H
