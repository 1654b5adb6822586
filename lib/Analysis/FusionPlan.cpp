//===- FusionPlan.cpp - Fusion groups of the ridge graph ------------------===//
//
// The planner: which merges of two groups the code generator can emit as one
// kernel. What each op can be in a kernel comes from FusionOpInterface
// (RidgeInterfaces.td); whether a legal merge is worth it is the control
// function's call (FusionPolicy.cpp).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-fusion-plan"

using namespace mlir;
using namespace mlir::ridge;

StringRef mlir::ridge::stringifyFusionGroupKind(FusionRole kind) {
  switch (kind) {
  case FusionRole::Elementwise:
  case FusionRole::Layout:
    return "pointwise";
  default:
    return stringifyFusionRole(kind);
  }
}

FusionRole mlir::ridge::getFusionRole(Operation *op) {
  if (auto fusible = dyn_cast<FusionOpInterface>(op))
    return fusible.getFusionRole();
  return FusionRole::Opaque;
}

//===----------------------------------------------------------------------===//
// Group cost
//===----------------------------------------------------------------------===//

static int64_t getValueBytes(Value value) {
  return std::max<int64_t>(0, getTensorBytes(value.getType()));
}

static int64_t getNumElementsOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// Recomputes the inputs, outputs, FLOPs and bytes of `group` from its ops.
static void computeGroupCost(FusionGroup &group) {
  llvm::SmallPtrSet<Operation *, 16> members(group.ops.begin(),
                                             group.ops.end());
  group.inputs.clear();
  group.outputs.clear();
  group.flops = 0;
  group.contraction = false;
  for (Operation *op : group.ops) {
    auto costed = cast<CostOpInterface>(op);
    group.flops += std::max<int64_t>(0, costed.getFlops());
    group.contraction |= costed.isContraction();
  }
  group.bytes = getKernelBytes(
      group.ops,
      [&](OpResult result) {
        return llvm::any_of(result.getUsers(), [&](Operation *user) {
          return !members.contains(user);
        });
      },
      &group.inputs, &group.outputs);
  for (Operation *op : group.ops)
    group.bytes += getPrecisionTrafficAdjustment(op);
}

//===----------------------------------------------------------------------===//
// Planner
//===----------------------------------------------------------------------===//

namespace {
/// The greedy planner over one block.
class FusionPlanner {
public:
  FusionPlanner(Block &block, const FusionControlFn &control)
      : control(control) {
    for (Operation &op : block)
      if (isa<CostOpInterface>(op) && !isa<ConstantOp>(op)) {
        position[&op] = order.size();
        order.push_back(&op);
      }
  }

  FusionPlan run();

private:
  FusionGroup makeSingleton(Operation *op);
  /// Merges the group of `operand`'s producer into the group of its owner
  /// when legal and accepted; returns the reason otherwise.
  std::optional<std::string> tryMerge(OpOperand &operand);
  /// Why the merge of `producer` into `consumer` over `edge` cannot be one
  /// kernel, or nothing when it can; sets the merged kind and domain.
  std::optional<std::string> checkLegal(const FusionGroup &producer,
                                        const FusionGroup &consumer,
                                        OpOperand &edge, FusionGroup &merged,
                                        bool &isPrologue);
  bool createsCycle(const FusionGroup &producer, const FusionGroup &consumer);
  /// Whether a path leads from an op of `from` to an op of `to` through
  /// other groups (an op of one leads to every op of its group).
  bool reachesThroughOthers(const FusionGroup &from, const FusionGroup &to);

  const FusionControlFn &control;
  SmallVector<Operation *> order;
  DenseMap<Operation *, unsigned> position;
  /// Groups by id; merged-away groups are left empty.
  std::vector<FusionGroup> groups;
  DenseMap<Operation *, unsigned> groupOf;
  /// The latest refusal per (producer, consumer) edge.
  llvm::MapVector<std::pair<Operation *, Operation *>, std::string> refusals;
};
} // namespace

FusionGroup FusionPlanner::makeSingleton(Operation *op) {
  FusionGroup group;
  group.ops.push_back(op);
  // A group's kind is its anchor's role; elementwise and layout ops make a
  // pointwise group, views a view group, and neither is an anchor.
  FusionRole role = getFusionRole(op);
  switch (role) {
  case FusionRole::View:
  case FusionRole::Elementwise:
    group.kind = role;
    break;
  case FusionRole::Layout:
    group.kind = FusionRole::Elementwise;
    break;
  case FusionRole::Reduction:
  case FusionRole::Contraction:
  case FusionRole::Movement:
  case FusionRole::Opaque:
  case FusionRole::Attention:
    group.kind = role;
    group.anchor = op;
    break;
  }
  int64_t resultElements = 0;
  for (Value result : op->getResults())
    resultElements = std::max(resultElements, getNumElementsOf(result));
  group.domain = resultElements;
  if (group.kind == FusionRole::Reduction) {
    // The iteration space is the reduced input; the op states its rows
    // (softmax and the norms reduce their last axes in place).
    group.domain = getNumElementsOf(op->getOperand(0));
    FailureOr<int64_t> rows = cast<FusionOpInterface>(op).getReductionRows();
    group.rows = succeeded(rows) ? *rows : 0;
  }
  computeGroupCost(group);
  return group;
}

bool FusionPlanner::reachesThroughOthers(const FusionGroup &from,
                                         const FusionGroup &to) {
  llvm::SmallPtrSet<Operation *, 32> inEither;
  inEither.insert(from.ops.begin(), from.ops.end());
  inEither.insert(to.ops.begin(), to.ops.end());
  // Ops come in topological order: nothing after the last op of `to` leads
  // into it (and such ops may not be planned yet).
  unsigned limit = 0;
  for (Operation *op : to.ops)
    limit = std::max(limit, position.lookup(op));
  auto isCandidate = [&](Operation *op) {
    auto it = position.find(op);
    return it != position.end() && it->second <= limit &&
           !inEither.contains(op);
  };
  SmallVector<Operation *> worklist;
  for (Operation *op : from.ops)
    llvm::append_range(worklist,
                       llvm::make_filter_range(op->getUsers(), isCandidate));
  // A group runs as one kernel: a path that enters it at one op leaves it at
  // any other (from a reshape to the mul it feeds, although the mul reads
  // nothing of the path).
  llvm::SmallPtrSet<Operation *, 32> visited;
  while (!worklist.empty()) {
    Operation *entry = worklist.pop_back_val();
    if (visited.contains(entry))
      continue;
    ArrayRef<Operation *> members(entry);
    auto group = groupOf.find(entry);
    if (group != groupOf.end())
      members = groups[group->second].ops;
    for (Operation *op : members) {
      if (!visited.insert(op).second)
        continue;
      for (Operation *user : op->getUsers()) {
        if (llvm::is_contained(to.ops, user))
          return true;
        if (isCandidate(user) && !visited.contains(user))
          worklist.push_back(user);
      }
    }
  }
  return false;
}

bool FusionPlanner::createsCycle(const FusionGroup &producer,
                                 const FusionGroup &consumer) {
  // A path from one group to the other through a third group would make the
  // merged group depend on itself. Both directions: the consumer's group may
  // hold ops (earlier merged producers) that feed a group that feeds the
  // producer's.
  return reachesThroughOthers(producer, consumer) ||
         reachesThroughOthers(consumer, producer);
}

std::string mlir::ridge::describeFusionOp(Operation *op) {
  OnnxNodeRef node = getOnnxNode(op->getLoc());
  std::string text = op->getName().getStringRef().str();
  if (!node.name.empty())
    text += " ('" + node.name.str() + "')";
  return text;
}

// A tiled attention's tile loads stage Q once and K and V once per query
// tile.
bool mlir::ridge::isTiledAttention(AttentionOp op) {
  // Rounded products: the policy's format for f32 operands, or a
  // half-precision model's own.
  auto precision = op->getAttrOfType<StringAttr>(kPrecisionAttr);
  bool rounded = (precision && (precision.getValue() == "bf16" ||
                                precision.getValue() == "fp16")) ||
                 !op.getQuery().getType().getElementType().isF32();
  if (!rounded || !op.isOnlineSoftmaxForm() ||
      op.getSoftcap().convertToDouble() > 0 ||
      static_cast<int64_t>(op.getLeftWindow()) >= 0 ||
      static_cast<int64_t>(op.getRightWindow()) >= 0 || op.getNonpadKvSeqlen())
    return false;
  for (Value operand : {op.getQuery(), op.getValue()}) {
    int64_t dim = cast<RankedTensorType>(operand.getType()).getDimSize(3);
    if (dim % 16 != 0 || dim < 16 || dim > 128)
      return false;
  }
  return true;
}

/// Whether `producer` is a rotary embedding that the tiled attention of
/// `consumer` can take as the prologue of `operand` (its query or key): the
/// tile loads rotate each chunk of 8 elements with its partner chunk D/2
/// away and the caches' entries, so the embedding must rotate the whole
/// head dimension in halves (non-interleaved) with [B, S, D/2] caches.
static bool isRotaryPrologue(const FusionGroup &producer,
                             const FusionGroup &consumer, OpOperand &operand) {
  auto rotary = dyn_cast_if_present<RotaryEmbeddingOp>(producer.anchor);
  auto attention = dyn_cast_if_present<AttentionOp>(consumer.anchor);
  if (!rotary || !attention || producer.ops.size() != 1 ||
      operand.get() != rotary.getResult() ||
      (operand.get() != attention.getQuery() &&
       operand.get() != attention.getKey()) ||
      !isTiledAttention(attention) || rotary.getPositionIds() ||
      rotary.getInterleaved())
    return false;
  return rotary.getRotaryEmbeddingDim() == rotary.getType().getDimSize(3);
}

bool mlir::ridge::isDecodeAttention(AttentionOp op) {
  if (!op.isOnlineSoftmaxForm() || op.getSoftcap().convertToDouble() > 0 ||
      static_cast<int64_t>(op.getLeftWindow()) >= 0 ||
      static_cast<int64_t>(op.getRightWindow()) >= 0 || op.getNonpadKvSeqlen())
    return false;
  if (op.getQuery().getType().getDimSize(2) > kMaxDecodeQueries)
    return false;
  for (Value operand : {op.getQuery(), op.getValue()}) {
    int64_t dim = cast<RankedTensorType>(operand.getType()).getDimSize(3);
    if (dim % 32 != 0 || dim > 128)
      return false;
  }
  return true;
}

/// Whether `producer` ends in a KV-cache append that the attention of
/// `consumer` reads as its key or value and the graph also returns (a
/// decode step's present_key/present_value = Concat(past, new) along the
/// sequence).
static bool isKvCacheAppend(const FusionGroup &producer,
                            const FusionGroup &consumer, OpOperand &operand) {
  auto attention = dyn_cast_if_present<AttentionOp>(consumer.anchor);
  auto concat = operand.get().getDefiningOp<ConcatOp>();
  if (!attention || !concat || concat != producer.getSink() ||
      operand.getOwner() != attention.getOperation() ||
      (operand.get() != attention.getKey() &&
       operand.get() != attention.getValue()) ||
      concat.getAxis() != 2 || concat.getInputs().size() != 2)
    return false;
  return llvm::all_of(operand.get().getUsers(), [&](Operation *user) {
    return llvm::is_contained(consumer.ops, user) ||
           user->hasTrait<OpTrait::ReturnLike>();
  });
}

/// Why the decode attention kernel cannot take the KV-cache append of
/// `producer` (isKvCacheAppend); nullopt when it can. The kernel reads the
/// past keys and the new ones where they are and writes each key it reads
/// to the concatenation as well, which reads the cache once where a kernel
/// of its own would read it twice (once to copy, once more in the
/// attention). The new keys must be moved only (a head split), so that it
/// reads them as strided views, and the block that writes (the last query
/// row's) must see every key.
static std::optional<std::string>
whyNotDecodeAppend(const FusionGroup &producer, AttentionOp attention) {
  if (producer.flops != 0)
    return std::string("a KV-cache append joins the attention only when its "
                       "new keys are moved, not computed");
  if (!isDecodeAttention(attention))
    return "a KV-cache append joins only a decode attention (at most " +
           std::to_string(kMaxDecodeQueries) +
           " query rows, head dimensions multiples of 32 up to 128), whose "
           "kernel writes it as it reads the keys";
  int64_t queryLen = attention.getQuery().getType().getDimSize(2);
  int64_t keyLen = attention.getKey().getType().getDimSize(2);
  if (attention.getIsCausal() &&
      static_cast<int64_t>(attention.getQueryOffset()) + queryLen < keyLen)
    return std::string("a KV-cache append joins a causal attention only when "
                       "its last query row sees every key");
  return std::nullopt;
}

std::optional<std::string>
FusionPlanner::checkLegal(const FusionGroup &producer,
                          const FusionGroup &consumer, OpOperand &operand,
                          FusionGroup &merged, bool &isPrologue) {
  isPrologue = false;
  Value edge = operand.get();
  FusionRole p = producer.kind, c = consumer.kind;
  if (isRotaryPrologue(producer, consumer, operand)) {
    for (Operation *user : edge.getUsers())
      if (!llvm::is_contained(consumer.ops, user))
        return "a prologue must feed only the attention, but " +
               describeFusionOp(user) + " also reads it";
    merged.kind = c;
    merged.anchor = consumer.anchor;
    merged.domain = consumer.domain;
    merged.rows = consumer.rows;
    isPrologue = true;
    return std::nullopt;
  }
  if (isKvCacheAppend(producer, consumer, operand)) {
    if (std::optional<std::string> why =
            whyNotDecodeAppend(producer, cast<AttentionOp>(consumer.anchor)))
      return why;
    // Not a prologue: the kernel stores the concatenation, one more result.
    merged.kind = c;
    merged.anchor = consumer.anchor;
    merged.domain = consumer.domain;
    merged.rows = consumer.rows;
    return std::nullopt;
  }
  if (p == FusionRole::Opaque)
    return describeFusionOp(producer.anchor) + " runs as a kernel of its own";
  if (c == FusionRole::Opaque)
    return describeFusionOp(consumer.anchor) + " runs as a kernel of its own";
  if (edge.getDefiningOp() != producer.getSink())
    return "the producer's kernel already ends in " +
           describeFusionOp(producer.getSink());

  merged.kind = c;
  merged.anchor = consumer.anchor;
  merged.domain = consumer.domain;
  merged.rows = consumer.rows;
  auto takeProducer = [&] {
    merged.kind = p;
    merged.anchor = producer.anchor;
    merged.domain = producer.domain;
    merged.rows = producer.rows;
  };
  std::string differentSpace = "the iteration spaces differ (" +
                               std::to_string(producer.domain) + " vs " +
                               std::to_string(consumer.domain) + " elements)";

  // The attention's loop writes its [B, H, Sq, Dv] result itself; a view of
  // it inside the kernel would leave a copy to the kernel's result.
  if (p == FusionRole::Attention && c == FusionRole::View)
    return describeFusionOp(producer.anchor) +
           " writes its result in its own layout";
  if (p == FusionRole::View || c == FusionRole::View) {
    if (c == FusionRole::View)
      takeProducer();
    if (p == FusionRole::View && c == FusionRole::View)
      merged.domain = std::max(producer.domain, consumer.domain);
    return std::nullopt;
  }
  switch (p) {
  case FusionRole::Elementwise:
    switch (c) {
    case FusionRole::Elementwise:
      // Broadcast producers are recomputed per consumer element.
      if (producer.domain > consumer.domain ||
          consumer.domain % std::max<int64_t>(1, producer.domain) != 0)
        return differentSpace;
      return std::nullopt;
    case FusionRole::Reduction:
      if (producer.domain != consumer.domain &&
          producer.domain != consumer.rows)
        return differentSpace;
      return std::nullopt;
    case FusionRole::Contraction: {
      // An input of an epilogue op is read like any pointwise operand.
      if (operand.getOwner() != consumer.anchor) {
        if (producer.domain > consumer.domain ||
            consumer.domain % std::max<int64_t>(1, producer.domain) != 0)
          return differentSpace;
        return std::nullopt;
      }
      // A prologue is recomputed wherever the contraction reads its operand;
      // only a producer nothing else reads can be folded in.
      for (Operation *user : edge.getUsers())
        if (!llvm::is_contained(consumer.ops, user))
          return "a prologue must feed only the contraction, but " +
                 describeFusionOp(user) + " also reads it";
      if (llvm::any_of(producer.ops, [](Operation *op) {
            return getFusionRole(op) == FusionRole::Reduction;
          }))
        return "only elementwise prologues fold into a contraction";
      isPrologue = true;
      return std::nullopt;
    }
    case FusionRole::Movement:
      return "only elementwise epilogues join " +
             describeFusionOp(consumer.anchor);
    case FusionRole::Attention:
      // The attention reads each operand element where it needs it (once
      // per query row), so a prologue is recomputed per read and must feed
      // nothing outside the kernel.
      for (Operation *user : edge.getUsers())
        if (!llvm::is_contained(consumer.ops, user))
          return "a prologue must feed only the attention, but " +
                 describeFusionOp(user) + " also reads it";
      isPrologue = true;
      return std::nullopt;
    default:
      break;
    }
    break;
  case FusionRole::Reduction:
    takeProducer();
    switch (c) {
    case FusionRole::Elementwise:
      if (consumer.domain != producer.domain &&
          consumer.domain != producer.rows)
        return differentSpace;
      // A row kernel writes each row where the reduction leaves it; an
      // epilogue that moves elements (a transpose, a concat) makes its
      // loop run over the moved elements instead, recomputing the row's
      // reduction for each one (bert_tiny's LayerNorm + Transpose: 0.66 of
      // 0.93 ms on an H200, for 131 kB of traffic saved).
      for (Operation *op : consumer.ops)
        if (getFusionRole(op) == FusionRole::Layout)
          return "a row-reduction kernel writes its rows in place; " +
                 describeFusionOp(op) +
                 " would recompute each row per "
                 "element it moves";
      return std::nullopt;
    case FusionRole::Reduction:
      if (producer.domain != consumer.domain || producer.rows != consumer.rows)
        return "the reductions run over different rows";
      return std::nullopt;
    case FusionRole::Contraction:
      return "only elementwise prologues fold into a contraction";
    case FusionRole::Movement:
      return "only elementwise epilogues join " +
             describeFusionOp(consumer.anchor);
    default:
      break;
    }
    break;
  case FusionRole::Contraction:
    takeProducer();
    switch (c) {
    case FusionRole::Elementwise:
      if (consumer.domain != producer.domain)
        return differentSpace;
      // A tensor-core kernel's epilogue writes each accumulator fragment
      // once, in one layout; a transposed copy beside the result read
      // elsewhere (a channels-last activation that a graph output also
      // reads channels-second) would send the whole kernel to the SIMT
      // path. The transpose runs in its own kernel or its reader's.
      if (getTensorCoreMultiplyType(producer.anchor))
        for (Operation *op : consumer.ops)
          if (getFusionRole(op) == FusionRole::Layout &&
              llvm::any_of(edge.getUsers(), [&](Operation *user) {
                return !llvm::is_contained(consumer.ops, user);
              }))
            return "a tensor-core kernel writes its result in one layout; " +
                   describeFusionOp(op) +
                   " would write a second beside the one read elsewhere";
      return std::nullopt;
    case FusionRole::Reduction:
      return "a reduction over a contraction's output needs whole rows of it";
    case FusionRole::Contraction:
      // Two contractions summed in one epilogue (a residual block's
      // shortcut convolution) share the output tile: each output element
      // runs both dot products. Feeding one into the other's operand would
      // recompute it per use.
      if (operand.getOwner() == consumer.anchor)
        return "a contraction cannot be the prologue of another";
      // Nor through another edge of the merge: a residual block whose
      // shortcut is the convolution's own input (conv -> relu -> conv, relu
      // -> add) would fold the first convolution into the second's operand.
      for (Value anchorOperand : consumer.anchor->getOperands())
        if (Operation *def = anchorOperand.getDefiningOp();
            def && llvm::is_contained(producer.ops, def))
          return "a contraction cannot be the prologue of another";
      if (producer.domain != consumer.domain)
        return differentSpace;
      merged.kind = FusionRole::Contraction;
      merged.anchor = consumer.anchor;
      return std::nullopt;
    case FusionRole::Movement:
      return "only elementwise epilogues join " +
             describeFusionOp(consumer.anchor);
    default:
      break;
    }
    break;
  case FusionRole::Attention:
    return describeFusionOp(producer.anchor) +
           " writes its result from its own loop and takes no epilogue";
  case FusionRole::Movement:
    takeProducer();
    if (c == FusionRole::Elementwise) {
      if (consumer.domain != producer.domain)
        return differentSpace;
      return std::nullopt;
    }
    return "only elementwise epilogues join " +
           describeFusionOp(producer.anchor);
  default:
    break;
  }
  if (c == FusionRole::Attention)
    return "the producer's kernel is a " + stringifyFusionGroupKind(p).str() +
           " kernel; only layout and elementwise prologues fold into an "
           "attention";
  return std::string("these ops cannot share a kernel");
}

std::optional<std::string> FusionPlanner::tryMerge(OpOperand &operand) {
  Operation *consumerOp = operand.getOwner();
  Operation *producerOp = operand.get().getDefiningOp();
  unsigned producerId = groupOf.lookup(producerOp);
  unsigned consumerId = groupOf.lookup(consumerOp);
  if (producerId == consumerId)
    return std::nullopt;
  const FusionGroup &producer = groups[producerId];
  const FusionGroup &consumer = groups[consumerId];

  FusionGroup merged;
  bool isPrologue = false;
  if (std::optional<std::string> why =
          checkLegal(producer, consumer, operand, merged, isPrologue))
    return why;
  if (createsCycle(producer, consumer))
    return std::string("fusing would create a cycle through another kernel");

  merged.ops.append(producer.ops.begin(), producer.ops.end());
  merged.ops.append(consumer.ops.begin(), consumer.ops.end());
  llvm::sort(merged.ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  computeGroupCost(merged);

  FusionCandidate candidate{producer, consumer, merged, operand.get()};
  candidate.edgeBytes = getValueBytes(operand.get());
  candidate.savedBytes = producer.bytes + consumer.bytes - merged.bytes;
  candidate.isPrologue = isPrologue;
  auto attention = dyn_cast_if_present<AttentionOp>(consumer.anchor);
  if (isPrologue && attention &&
      isa_and_present<RotaryEmbeddingOp>(producer.anchor)) {
    // The tiled kernel stages Q once and each K tile once per query tile
    // of each query head that reads it: the rotation runs per staging.
    int64_t stagings = 1;
    if (operand.get() != attention.getQuery()) {
      auto query = cast<RankedTensorType>(attention.getQuery().getType());
      auto key = cast<RankedTensorType>(attention.getKey().getType());
      stagings =
          llvm::divideCeil(query.getDimSize(2), kAttentionQueryTile) *
          (query.getDimSize(1) / std::max<int64_t>(1, key.getDimSize(1)));
    }
    candidate.recomputedFlops = producer.flops * (stagings - 1);
  } else if (isPrologue) {
    // Each element of the operand is read once per multiply-add that uses
    // it: recomputed (uses - 1) times by a kernel without operand tiling.
    int64_t macs = std::max<int64_t>(
        0, cast<CostOpInterface>(consumer.anchor).getFlops() / 2);
    int64_t elements = std::max<int64_t>(1, getNumElementsOf(operand.get()));
    candidate.recomputedFlops = producer.flops * (macs / elements - 1);
  } else if (producer.kind == FusionRole::Elementwise &&
             merged.domain > producer.domain && producer.domain > 0) {
    candidate.recomputedFlops =
        producer.flops * (merged.domain / producer.domain - 1);
  }
  if (merged.kind == FusionRole::Reduction && merged.rows > 0)
    candidate.rowBytes =
        merged.domain / merged.rows *
        getElementByteWidth(
            cast<RankedTensorType>(merged.anchor->getOperand(0).getType())
                .getElementType());

  FusionDecision decision = control(candidate);
  LLVM_DEBUG(llvm::dbgs() << "merge " << describeFusionOp(producerOp) << " -> "
                          << describeFusionOp(consumerOp) << ": "
                          << (decision.fuse ? "yes" : decision.reason) << "\n");
  if (!decision.fuse)
    return decision.reason;

  // The consumer's group absorbs the producer's.
  merged.id = consumerId;
  for (Operation *op : producer.ops)
    groupOf[op] = consumerId;
  groups[producerId].ops.clear();
  groups[consumerId] = std::move(merged);
  return std::nullopt;
}

FusionPlan FusionPlanner::run() {
  for (Operation *op : order) {
    unsigned id = groups.size();
    groups.push_back(makeSingleton(op));
    groups.back().id = id;
    groupOf[op] = id;
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *producer = operand.get().getDefiningOp();
      if (!producer || !position.count(producer))
        continue;
      if (std::optional<std::string> why = tryMerge(operand))
        refusals[{producer, op}] = *why;
    }
  }

  FusionPlan plan;
  for (FusionGroup &group : groups) {
    if (group.ops.empty())
      continue;
    group.id = plan.groups.size();
    plan.groups.push_back(std::move(group));
  }
  for (FusionGroup &group : plan.groups) {
    for (Operation *op : group.ops)
      plan.groupOf[op] = group.id;
    StringRef kind = stringifyFusionGroupKind(group.kind);
    if (group.anchor && group.kind != FusionRole::Reduction &&
        group.kind != FusionRole::Elementwise)
      kind = group.anchor->getName().stripDialect();
    group.name = ("k" + Twine(group.id) + "_" + kind).str();
  }
  for (auto &[edge, reason] : refusals) {
    auto [producer, consumer] = edge;
    if (plan.groupOf.lookup(producer) != plan.groupOf.lookup(consumer))
      plan.unfused.push_back({producer, consumer, reason});
  }

  return plan;
}

unsigned FusionPlan::getNumKernels() const {
  return llvm::count_if(groups,
                        [](const FusionGroup &g) { return g.isKernel(); });
}

SmallVector<std::string> FusionPlan::getNodeNames(const FusionGroup &group) {
  SmallVector<std::string> names;
  llvm::StringSet<> seen;
  for (Operation *op : group.ops) {
    // An op matched from several nodes (an attention chain) lists them all.
    for (Location location : getOnnxNodeLocs(op->getLoc())) {
      OnnxNodeRef node = getOnnxNode(location);
      std::string name = node.name.empty() ? op->getName().getStringRef().str()
                                           : node.name.str();
      if (seen.insert(name).second)
        names.push_back(name);
    }
  }
  return names;
}

FusionTraffic mlir::ridge::computeFusionTraffic(Block &block) {
  // The graph ops, including those inside fusion groups; each group is one
  // kernel, and so is each op outside a group that moves data.
  SmallVector<Operation *> order;
  FusionTraffic traffic;
  block.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto group = dyn_cast<FusionGroupOp>(op)) {
      traffic.fusedBytes += std::max<int64_t>(0, group.getMinBytes()) +
                            getPrecisionTrafficAdjustment(group);
      return WalkResult::advance();
    }
    // A cast at a narrowed kernel boundary exists only between kernels:
    // one kernel per node has none.
    if (isa<CostOpInterface>(op) && !isa<ConstantOp>(op) &&
        !op->hasAttr(kBoundaryCastAttr)) {
      order.push_back(op);
      if (!op->getParentOfType<FusionGroupOp>())
        traffic.fusedBytes +=
            std::max<int64_t>(0, cast<CostOpInterface>(op).getMinBytes()) +
            getPrecisionTrafficAdjustment(op);
    }
    return WalkResult::advance();
  });

  llvm::MapVector<StringRef, FusionGroup> byNode;
  for (Operation *op : order) {
    // A matched op counts as the nodes it was matched from, run one kernel
    // each.
    if (auto asExported = op->getAttrOfType<IntegerAttr>(kPerNodeBytesAttr)) {
      traffic.perNodeBytes += asExported.getInt();
      if (!isa<AttentionOp>(op))
        continue;
      ++traffic.numAttentions;
      traffic.attentionBytes +=
          std::max<int64_t>(0, cast<CostOpInterface>(op).getMinBytes());
      traffic.attentionExportedBytes += asExported.getInt();
      continue;
    }
    OnnxNodeRef node = getOnnxNode(op->getLoc());
    StringRef key =
        node.name.empty() ? op->getName().getStringRef() : node.name;
    byNode[key].ops.push_back(op);
  }
  for (auto &[name, group] : byNode) {
    computeGroupCost(group);
    traffic.perNodeBytes += group.bytes;
  }
  llvm::DenseSet<Value> counted;
  for (Operation *op : order)
    for (Value operand : op->getOperands()) {
      bool isGraphInput = isa<BlockArgument>(operand) &&
                          cast<BlockArgument>(operand).getOwner() == &block;
      bool isWeight = isa_and_present<ConstantOp>(operand.getDefiningOp());
      if ((!isGraphInput && !isWeight) || !counted.insert(operand).second)
        continue;
      int64_t bytes = getValueBytes(operand);
      // A weight that every reader stores narrow (getCompileTimeWeightType)
      // exists in the compiled model only as that copy.
      if (isWeight && bytes > 0) {
        Type stored;
        for (OpOperand &use : operand.getUses()) {
          stored = getCompileTimeWeightType(use.getOwner(), operand);
          if (!stored)
            break;
        }
        if (stored)
          bytes =
              bytes /
              getElementTypeOrSelf(operand.getType()).getIntOrFloatBitWidth() *
              stored.getIntOrFloatBitWidth();
      }
      // A table only gathered from (an embedding) is touched at the rows
      // the gathers read, as GatherOp's cost counts it.
      int64_t touched = bytes;
      if (isWeight && llvm::all_of(operand.getUses(), [](OpOperand &use) {
            return isa<GatherOp>(use.getOwner()) && use.getOperandNumber() == 0;
          })) {
        int64_t gathered = 0;
        for (Operation *user : operand.getUsers())
          gathered += getValueBytes(user->getResult(0));
        touched = std::min(bytes, gathered);
      }
      traffic.lowerBoundBytes += touched;
      if (isWeight) {
        traffic.weightsBytes += bytes;
        traffic.weightsReadBytes += touched;
      }
    }
  if (!block.empty() && block.mightHaveTerminator())
    for (Value result : block.getTerminator()->getOperands())
      if (counted.insert(result).second)
        traffic.lowerBoundBytes += getValueBytes(result);
  return traffic;
}

FusionPlan mlir::ridge::planFusion(Block &block,
                                   const FusionControlFn &control) {
  return FusionPlanner(block, control).run();
}
