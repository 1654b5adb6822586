//===- FusionPlan.h - Fusion groups of the ridge graph ----------*- C++ -*-===//
//
// Decides which graph ops share a kernel. Two parts, kept apart as upstream's
// ElementwiseOpFusion keeps its control function apart from its patterns:
//
//  * the planner (mechanism) walks the graph in program order and offers each
//    producer->consumer edge as a merge of two groups, after checking what the
//    code generator can emit as one kernel: role compatibility (a pointwise
//    chain, a row reduction with the ops around it, a contraction with its
//    epilogue and simple prologues, a data-movement op with its epilogue),
//    matching iteration spaces, one sink per group, no cycles;
//  * the control function (policy) accepts or refuses each legal merge from
//    the roofline: the bytes the merge saves against the FLOPs it recomputes,
//    whether the consumer is compute-bound, and whether the kernel still fits
//    the GPU's shared memory and a register budget.
//
// Every edge left between two groups keeps the reason it was refused, which
// the report prints next to the kernels.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_FUSIONPLAN_H
#define RIDGELINE_ANALYSIS_FUSIONPLAN_H

#include "ridgeline/Analysis/Roofline.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::ridge {

/// Attribute recording, on a consumer op, the operands that stayed kernel
/// boundaries and why (ridge-form-fusion-groups{record-unfused}).
inline constexpr llvm::StringLiteral kUnfusedAttr = "ridge.unfused";

/// What `op` can be inside a kernel: its FusionOpInterface role (the
/// FusionRole enum and the roles are documented in RidgeInterfaces.td), or
/// Opaque for an op without the interface.
FusionRole getFusionRole(Operation *op);

/// "ridge.matmul ('/h.0/c_fc/MatMul')": an op and the ONNX node behind it,
/// for fusion remarks and reasons.
std::string describeFusionOp(Operation *op);

/// The name of a group's kind, as `ridge.fusion_group ... kind` and the
/// report print it: "pointwise" for Elementwise (a group of elementwise and
/// layout ops), otherwise the role's name ("reduction", "view", ...).
StringRef stringifyFusionGroupKind(FusionRole kind);

/// One fusion group: the ops of one kernel.
struct FusionGroup {
  unsigned id = 0;
  /// The role of the anchor (Reduction, Contraction, Movement, Opaque);
  /// Elementwise for a pointwise group (elementwise and layout ops around
  /// no anchor) and View for views only. Never Layout.
  FusionRole kind = FusionRole::Elementwise;
  /// Member ops in program order; the last one is the sink.
  SmallVector<Operation *> ops;
  /// The contraction, reduction or movement op the group is built around.
  Operation *anchor = nullptr;
  /// Elements of the iteration space: the anchor's output (contraction,
  /// movement), the reduced input (reduction) or the largest result.
  int64_t domain = 0;
  /// Reductions: the number of rows (elements of the reduced result).
  int64_t rows = 0;
  /// Cost of the group run as one kernel: external inputs read once (a
  /// sliced or gathered input only for what is read), results used outside
  /// written once.
  int64_t flops = 0;
  int64_t bytes = 0;
  bool contraction = false;
  /// Values read from outside the group, and group values used outside it.
  SmallVector<Value> inputs;
  SmallVector<Value> outputs;
  /// Kernel name, e.g. "k3_matmul".
  std::string name;

  Operation *getSink() const { return ops.back(); }
  /// A group that moves no bytes and does no work (views only) is no kernel.
  bool isKernel() const { return bytes > 0 || flops > 0; }
};

/// An edge between two groups, and why it was not fused.
struct UnfusedEdge {
  Operation *producer = nullptr;
  Operation *consumer = nullptr;
  std::string reason;
};

/// On an op matched from several ONNX nodes (ridge-match-attention,
/// ridge-match-gelu): the bytes those nodes move run one kernel each, as
/// exported. The plan of one kernel per ONNX node counts them instead of the
/// matched op's own.
inline constexpr llvm::StringLiteral kPerNodeBytesAttr = "ridge.per_node_bytes";

/// Modeled device-memory traffic of the whole graph under three plans.
struct FusionTraffic {
  /// One kernel per ONNX node.
  int64_t perNodeBytes = 0;
  /// One kernel per fusion group (this plan).
  int64_t fusedBytes = 0;
  /// Graph inputs, weights and outputs, each touched once (a weight only
  /// gathered from, such as an embedding table: the rows gathered).
  int64_t lowerBoundBytes = 0;
  /// Bytes of the constants (weights) the graph reads.
  int64_t weightsBytes = 0;
  /// Of those, the bytes the kernels read: a table only gathered from (an
  /// embedding) counts the rows gathered, as the traffic above does. The
  /// activation traffic is the traffic less these.
  int64_t weightsReadBytes = 0;
  /// Matched attentions: how many, the bytes their kernels move (O(L d):
  /// the scores stay on chip), and the bytes of their exported chains run
  /// one kernel per node (O(L^2): the scores written and read per node).
  int64_t numAttentions = 0;
  int64_t attentionBytes = 0;
  int64_t attentionExportedBytes = 0;
};

/// A candidate merge as the control function sees it.
struct FusionCandidate {
  const FusionGroup &producer;
  const FusionGroup &consumer;
  /// The merged group, with its cost.
  const FusionGroup &merged;
  /// The value carried by the edge and its bytes.
  Value edge;
  int64_t edgeBytes = 0;
  /// Bytes the merge saves (the edge's write when nothing else reads it, and
  /// its read by the consumer).
  int64_t savedBytes = 0;
  /// FLOPs the merge repeats: a producer folded into a contraction's operand
  /// or broadcast into a larger consumer is computed more than once.
  int64_t recomputedFlops = 0;
  /// The producer becomes a prologue of the consumer's contraction.
  bool isPrologue = false;
  /// Rows of a reduction group that the kernel keeps in shared memory.
  int64_t rowBytes = 0;
};

/// The verdict of the control function; `reason` says why not.
struct FusionDecision {
  bool fuse = false;
  std::string reason;
  static FusionDecision accept() { return {true, ""}; }
  static FusionDecision reject(std::string reason) {
    return {false, std::move(reason)};
  }
};

using FusionControlFn = std::function<FusionDecision(const FusionCandidate &)>;

/// Limits of the default control function.
struct FusionLimits {
  /// Distinct tensors a kernel reads or writes; each costs address registers
  /// and a kernel parameter.
  int64_t maxKernelOperands = 24;
  /// Ops in one kernel; bounds register pressure of deep chains.
  int64_t maxKernelOps = 64;
};

/// Takes every legal merge: the planner's legality alone.
FusionControlFn makeAllLegalFusionControl();
/// Refuses every merge: one kernel per graph op (`--fusion=false`).
FusionControlFn makeNeverFusionControl();

/// The roofline-driven policy: fuse when the merge saves bytes and does not
/// repeat more work than it saves, never add a prologue to a compute-bound
/// contraction, and keep each kernel within shared memory and the limits.
FusionControlFn makeRooflineFusionControl(const RooflineModel &model,
                                          FusionLimits limits = {});

struct FusionPlan {
  std::vector<FusionGroup> groups;
  SmallVector<UnfusedEdge> unfused;
  DenseMap<Operation *, unsigned> groupOf;

  /// Groups that are kernels (see FusionGroup::isKernel).
  unsigned getNumKernels() const;
  /// ONNX node names of a group's ops, in program order, without repeats.
  static SmallVector<std::string> getNodeNames(const FusionGroup &group);
};

/// Modeled traffic of the graph in `block` as grouped: each
/// `ridge.fusion_group` one kernel, each other op that moves data one too.
FusionTraffic computeFusionTraffic(Block &block);

/// Plans the fusion groups of the graph ops (CostOpInterface ops other than
/// constants) directly in `block`.
FusionPlan planFusion(Block &block, const FusionControlFn &control);

/// Whether `op` runs as the tiled tensor-core attention kernel (the
/// precision policy rounds its products to bf16/f16, its head dimensions
/// are multiples of 16 up to 128, and it has no option that kernel lacks;
/// Codegen's whyNotTensorCores is the kernel's own check).
bool isTiledAttention(AttentionOp op);

/// Whether `op` runs as the decode attention kernel (at most
/// kMaxDecodeQueries query rows, head dimensions multiples of 32 up to 128,
/// no option it lacks; Codegen's whyNotDecode is the kernel's own check).
bool isDecodeAttention(AttentionOp op);

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_FUSIONPLAN_H
