//===- Ridge.h - The ridge graph dialect --------------------------*- C++
//-*-===//
//
// Public header of the `ridge` dialect: ops, the cost and fusion interfaces,
// and shape helpers shared by the importer, the verifiers and the lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DIALECT_RIDGE_IR_RIDGE_H
#define RIDGELINE_DIALECT_RIDGE_IR_RIDGE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ridge {

//===----------------------------------------------------------------------===//
// Attribute names shared by the stages
//===----------------------------------------------------------------------===//

/// Argument/result attribute holding the ONNX name of a graph input/output
/// (set by the importer, read by ridge-attach-model-abi).
inline constexpr llvm::StringLiteral kOnnxNameAttr = "ridge.onnx_name";

/// Attribute marking a function outlined from a fusion group; its value is
/// the group's kind (set by ridge-outline-fusion-groups, read by codegen).
inline constexpr llvm::StringLiteral kKernelAttr = "ridge.kernel";

/// Module attribute describing the model's inputs and outputs for the
/// runtime (ridge-attach-model-abi; lowered by ridge-emit-model-abi).
inline constexpr llvm::StringLiteral kModelAbiAttr = "ridge.model_abi";

/// Module attribute of a GPU model describing the two device blocks its
/// @main takes after its tensors (ridge-plan-device-memory; lowered into the
/// descriptor by ridge-emit-model-abi): {weights_bytes, arena_bytes,
/// peak_live_bytes, zeroed_bytes, weights = [{global, offset, bytes}, ...]}.
/// The arena's first zeroed_bytes must be zero before the first run, and
/// every run leaves them zero (the buffers marked kKeptZeroAttr).
inline constexpr llvm::StringLiteral kDeviceMemoryAttr = "ridge.device_memory";

/// Unit attribute of a host allocation (memref.alloc, then gpu.alloc) that
/// is zeroed by a memset right after it and that every kernel using it
/// leaves zero again, as split-K's tile counters: ridge-plan-device-memory
/// may place it in arena bytes the session zeroes once, and drop the
/// memset from every run.
inline constexpr llvm::StringLiteral kKeptZeroAttr = "ridge.kept_zero";

/// Attribute of a contraction (ridge.matmul, ridge.gemm, ridge.conv) naming
/// the format its f32 operands are rounded to before they are multiplied:
/// "bf16", "fp16" (set by ridge-select-precision, read by the graph-to-linalg
/// lowering). Absent: the operands are multiplied in their own type.
inline constexpr llvm::StringLiteral kPrecisionAttr = "ridge.precision";

/// Unit attribute of the ridge.cast ops ridge-narrow-kernel-boundaries
/// inserts: a kernel's result rounded to the format its readers multiply
/// in, and each reader's widening of it. The fusion plan's per-node traffic
/// leaves them out (one kernel per node would have none).
inline constexpr llvm::StringLiteral kBoundaryCastAttr = "ridge.boundary_cast";

/// Keys per step of a rounded online attention (a ridge.attention with a
/// kPrecisionAttr): the probabilities of a tile of this many keys are taken
/// relative to the running maximum after the tile and rounded to the
/// multiply format, as the tensor-core kernel's key tile computes them, so
/// that the CPU build of the same attention rounds the same numbers.
inline constexpr int64_t kAttentionKeyTile = 64;
/// Query rows per block of the tensor-core attention kernel (one warpgroup
/// of 4 warps of 16 rows): it stages each K/V tile once per such tile.
inline constexpr int64_t kAttentionQueryTile = 64;

/// Query rows up to which an f32 attention has an IO-aware GPU kernel (the
/// decode kernel: warps over keys, each key read once per row, the rows of
/// a head in neighbouring blocks so that L2 serves the rereads); past it,
/// an unrounded attention runs the SIMT online loop, one thread per query
/// row, which reads the keys and values once per row. 15 is one below the
/// tensor-core minimum of 16 (PrecisionPolicy.h's kMinTensorCoreDim): the
/// few query rows of a decode step, or of speculative decoding's draft
/// tokens, always have one of the two kernels. The precision policy prices
/// the SIMT loop past it, the kernel config picks the decode kernel by it.
inline constexpr int64_t kMaxDecodeQueries = 15;

/// Attribute of the scf.forall of an online attention (set by the
/// graph-to-linalg lowering, moved to the kernel function by
/// ridge-select-kernel-config): the attention's shape and options and, when
/// Q, K, V (and a float mask) are strided views of kernel arguments, each
/// operand's argument, offset and strides; what the tensor-core attention
/// kernel is built from (docs/attention.md).
inline constexpr llvm::StringLiteral kOnlineAttentionAttr =
    "ridge.online_attention";

namespace detail {
/// Bytes of every ranked-tensor operand and result, each counted once; -1 if
/// any of them has a dynamic shape.
int64_t sumOperandAndResultBytes(Operation *op);
} // namespace detail

/// Storage size of one element of `type` in device memory (i1 is a byte).
int64_t getElementByteWidth(Type type);

/// Bytes of a statically shaped tensor, or -1 when the shape is dynamic.
int64_t getTensorBytes(Type type);

/// Numpy/ONNX multidirectional broadcast of two shapes; failure when
/// incompatible. Dynamic dims broadcast against 1 or themselves.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// Device-memory bytes of `ops` run as one kernel: each value they read from
/// outside the set is read once (through a slice or a gather, only the
/// elements read), each value `isLiveOut` says is needed outside is written
/// once (a view handed out writes the value it views, once, or nothing when
/// that is an input of the set).
/// The values are collected in `inputs` and `outputs` when given.
int64_t getKernelBytes(ArrayRef<Operation *> ops,
                       function_ref<bool(OpResult)> isLiveOut,
                       SmallVectorImpl<Value> *inputs = nullptr,
                       SmallVectorImpl<Value> *outputs = nullptr);

/// The ONNX node an op was imported from. The importer gives every op the
/// location `NameLoc(node name, FusedLoc<op type>[file])`: the name stays the
/// outermost part so diagnostics show it, and the op type rides along as the
/// fused location's metadata so that reports can name it without the model.
struct OnnxNodeRef {
  StringRef name;
  StringRef opType;
};

/// The location of ONNX node `name` of type `opType` in `file`.
Location getOnnxNodeLoc(MLIRContext *context, StringRef name, StringRef opType,
                        Location file);

/// The ONNX node behind `loc`, looking through fused and call-site
/// locations; empty fields when `loc` names no node or no op type.
OnnxNodeRef getOnnxNode(Location loc);

/// The location of an op matched from several ONNX nodes (an attention
/// chain): it is named after `name` with op type `opType` (what the report
/// shows) and keeps the nodes' locations (what a kernel lists).
Location getMatchedNodesLoc(MLIRContext *context, StringRef name,
                            StringRef opType, ArrayRef<Location> nodes);

/// The node locations `loc` stands for: the nodes of a matched op, or `loc`.
SmallVector<Location> getOnnxNodeLocs(Location loc);
} // namespace mlir::ridge

#include "ridgeline/Dialect/Ridge/IR/RidgeEnums.h.inc"

namespace mlir::ridge {
/// Marker traits of the fusion roles that do not depend on an op's
/// attributes. Each comes with FusionOpInterface in a trait list of
/// RidgeInterfaces.td (Ridge_ViewFusion, ...); the interface's default
/// getFusionRole() reads them.
namespace FusionTrait {
template <typename ConcreteType>
class ViewFusion : public ::mlir::OpTrait::TraitBase<ConcreteType, ViewFusion> {
};
template <typename ConcreteType>
class ElementwiseFusion
    : public ::mlir::OpTrait::TraitBase<ConcreteType, ElementwiseFusion> {};
template <typename ConcreteType>
class LayoutFusion
    : public ::mlir::OpTrait::TraitBase<ConcreteType, LayoutFusion> {};
template <typename ConcreteType>
class ContractionFusion
    : public ::mlir::OpTrait::TraitBase<ConcreteType, ContractionFusion> {};
template <typename ConcreteType>
class MovementFusion
    : public ::mlir::OpTrait::TraitBase<ConcreteType, MovementFusion> {};
} // namespace FusionTrait

namespace detail {
/// The role `ConcreteOp`'s fusion role trait gives it; Opaque without one.
template <typename ConcreteOp> constexpr FusionRole getFusionRoleFromTraits() {
  if constexpr (ConcreteOp::template hasTrait<FusionTrait::ViewFusion>())
    return FusionRole::View;
  else if constexpr (ConcreteOp::template hasTrait<
                         FusionTrait::ElementwiseFusion>())
    return FusionRole::Elementwise;
  else if constexpr (ConcreteOp::template hasTrait<FusionTrait::LayoutFusion>())
    return FusionRole::Layout;
  else if constexpr (ConcreteOp::template hasTrait<
                         FusionTrait::ContractionFusion>())
    return FusionRole::Contraction;
  else if constexpr (ConcreteOp::template hasTrait<
                         FusionTrait::MovementFusion>())
    return FusionRole::Movement;
  else
    return FusionRole::Opaque;
}
} // namespace detail
} // namespace mlir::ridge

#include "ridgeline/Dialect/Ridge/IR/RidgeInterfaces.h.inc"
#include "ridgeline/Dialect/Ridge/IR/RidgeOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "ridgeline/Dialect/Ridge/IR/RidgeOps.h.inc"

#endif // RIDGELINE_DIALECT_RIDGE_IR_RIDGE_H
