//===- FlashAttention.h - Attentions with a tensor-core kernel --*- C++ -*-===//
//
// What the tensor-core attention kernel (ridge-lower-flash-attention)
// implements, read from an online attention's kOnlineAttentionAttr: the
// shape, the options, the multiply format and the strided views of Q, K, V
// (and an f32 additive mask) into the kernel's arguments. The same reader
// serves the policy (ridge-select-kernel-config gives the kernel an
// `attention_tile` only when it succeeds) and the mechanism, so the policy
// never picks the kernel for an attention the builder cannot build.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CODEGEN_FLASHATTENTION_H
#define RIDGELINE_CODEGEN_FLASHATTENTION_H

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>

namespace mlir::ridge {

/// An operand read as a strided view of a kernel argument: element
/// (b, h, row, col) at `offset + b * strides[0] + h * strides[1] +
/// row * strides[2] + col * strides[3]` of argument `arg` (its elements in
/// row-major order).
struct StridedOperand {
  unsigned arg = 0;
  int64_t offset = 0;
  SmallVector<int64_t, 4> strides;
};

struct FlashAttention {
  int64_t batch = 0, heads = 0, kvHeads = 0, queryLen = 0, keyLen = 0, dim = 0,
          valueDim = 0;
  double scale = 1.0;
  bool causal = false;
  int64_t queryOffset = 0;
  /// bf16 or f16: Q, K, V and the probabilities are rounded to it; null:
  /// f32 products.
  FloatType mmaType;
  StridedOperand query, key, value;
  /// A bias added to the scores (f32, f16 or bf16), or an i1 mask allowing
  /// keys (-inf where false); broadcast: stride 0.
  std::optional<StridedOperand> mask;
  /// A rotary embedding of Q or K in its tile loads (the fusion plan's RoPE
  /// prologue, non-interleaved over the whole head dimension): element
  /// (b, h, row, col) of the operand is x * cos - x' * sin for col < D/2
  /// and x' * sin + x * cos above, x' the element D/2 away, with cos and
  /// sin the caches' views at (b, h, row, col mod D/2) (stride 0 along h).
  struct Rotary {
    StridedOperand cos, sin;
  };
  std::optional<Rotary> queryRotary, keyRotary;
  /// A KV-cache append in the kernel (the fusion plan's decode attention
  /// over Concat(past, new) along the keys): rows from `split` on are read
  /// from `tail` at row - split, the rows before from the operand's own
  /// view; and when the concatenation is a result of the kernel too
  /// (present_key/present_value), argument `present` ([B, Hkv, Skv, D],
  /// contiguous) receives every row as it is read.
  struct Append {
    StridedOperand tail;
    int64_t split = 0;
    std::optional<unsigned> present;
  };
  std::optional<Append> keyAppend, valueAppend;
  /// The argument the result is written to, when the kernel has other
  /// results (the appends' concatenations); otherwise its last argument.
  std::optional<unsigned> resultArg;
};

/// Reads `attr` (a kOnlineAttentionAttr); fails, with `reason`, when no
/// attention kernel computes that attention: an option they lack (softcap,
/// sliding window, per-batch key lengths), or an operand that is not a
/// strided view of an argument with unit stride along its last dimension.
FailureOr<FlashAttention> readFlashAttention(DictionaryAttr attr,
                                             std::string &reason);

/// Why the tensor-core kernel does not compute `attention` (products not
/// rounded to bf16/f16, head dimensions that are not multiples of 16 up to
/// 128, a KV-cache append); nullopt when it does.
std::optional<std::string> whyNotTensorCores(const FlashAttention &attention);

/// Why the tensor-core kernel cannot multiply with sm_90a's `wgmma` (Q, K
/// and V in shared memory in the 64-byte-swizzled layout, whose rows are
/// 32-element slabs; P from registers): whyNotTensorCores, or a head
/// dimension that is not a multiple of 32; nullopt when it can.
std::optional<std::string> whyNotWgmma(const FlashAttention &attention);

/// The operands a tensor-core attention kernel stages in shared memory.
enum class AttentionOperand { Query, Key, Value };

/// Why sm_90a's TMA cannot copy operand `which` of `attention` (its kernel's
/// arguments of types `argumentTypes`): a rotary prologue computes it as it
/// is loaded, it is not stored in the multiply type, or its view is not one
/// a tensor map describes (16-byte aligned rows of unit stride, outer
/// strides of whole 16-byte units, nonzero where the extent is more than
/// one); nullopt when it can.
std::optional<std::string>
whyNotTensorMapOperand(const FlashAttention &attention, TypeRange argumentTypes,
                       AttentionOperand which);

/// Why sm_90a's TMA cannot copy the key and value tiles of `attention`, whose
/// kernel's arguments have types `argumentTypes`: whyNotWgmma, or
/// whyNotTensorMapOperand of K or V; nullopt when it can. The kernel then
/// gives a producer warp the copies (two 64-byte-swizzled boxes a tile of
/// 64-element rows) and the 4 consumer warps wait on mbarriers (warp
/// specialization). The query tile too, where TMA can copy it.
std::optional<std::string> whyNotAttentionTma(const FlashAttention &attention,
                                              TypeRange argumentTypes);

/// The dynamic shared memory of the TMA-fed kernel, in bytes: the query
/// tile, `stages` K and V tiles, a full and an empty mbarrier per stage and
/// the query tile's, and the slack that aligns them to the swizzle atom.
int64_t getAttentionTmaSharedBytes(const FlashAttention &attention,
                                   int64_t stages);

/// The static shared memory of the tensor-core kernel, in bytes: `stages`
/// K and V tiles of kAttentionKeyTile rows and, with `wgmma`, the query
/// tile of kAttentionQueryTile rows, at 2 bytes an element.
int64_t getFlashAttentionSharedBytes(const FlashAttention &attention,
                                     int64_t stages, bool wgmma);

/// Why the decode kernel (f32 arithmetic on operands and probabilities
/// rounded where the products are, a block per query row and query heads
/// of one key head, warps splitting the keys, lanes the head dimension)
/// does not compute `attention`: a
/// rotary prologue, more than kMaxDecodeQueries query rows, head dimensions
/// that are not multiples of 32 up to 128, a KV-cache append whose
/// concatenation it must write but whose last query row does not see every
/// key (causal, with a query offset short of the keys); nullopt when it
/// does.
std::optional<std::string> whyNotDecode(const FlashAttention &attention);

} // namespace mlir::ridge

#endif // RIDGELINE_CODEGEN_FLASHATTENTION_H
