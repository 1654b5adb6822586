//===- MmaGemv.cpp - The bandwidth path of skinny contractions -----------===//
//
// A contraction whose m or n is at most 16 (a decode step, a classifier
// head, a router's expert logits) is memory-bound on the roofline: each
// element of its large operand is used at most 16 times. The `gemv` config
// of ridge-select-kernel-config builds it without tensor cores, in the
// form getGemvForm names. A weight stored k-contiguous ([N, K]): one warp
// per output column, each lane reads 16 bytes of the weight row and of each
// activation row, fma, a shuffle reduction per row, and lane 0 applies the
// epilogue and stores. A weight stored n-contiguous ([K, N], a MatMul's):
// each lane owns the columns of 16 bytes, a warp a share of k whose rows it
// loads several at a time (the bytes in flight that set a streaming
// kernel's speed), and the shares' partial sums are added in order by the
// last block of the column group to finish (`gemv_split_k`). Tall and
// skinny (n at most 16 below a larger m): one warp per row of A, the
// operand whose bytes set the time, all n columns of it, B read from the
// caches. Operands are f32, or f16/bf16 as stored (8 elements a 16-byte
// piece): their products are exact in f32, which accumulates, as on the
// tensor cores.
//
//===----------------------------------------------------------------------===//

#include "AtomicMaximum.h"
#include "MmaKernelBuilder.h"
#include "SplitArrival.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ridge;

void MmaKernelBuilder::storeGemvOutputs(
    ArrayRef<std::tuple<Value, Value, Value>> outputs) {
  SmallVector<Value> buffers = getResultBuffers();
  // The max |x| per result amax of what this thread stores, one atomic
  // each.
  SmallVector<Value> amaxLocals(
      mma.resultAmaxes.size(),
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
  for (auto [sum, m, n] : outputs) {
    SmallVector<Value> coords = epilogueCoordinates(m, n);
    for (auto [r, value] : llvm::enumerate(applyEpilogue(sum, m, n))) {
      memref::StoreOp::create(b, loc, value, buffers[r], coords);
      foldStoredMagnitudes(amaxLocals, r, value);
    }
  }
  for (auto [amax, local] : llvm::zip(mma.resultAmaxes, amaxLocals))
    createAtomicMaxOfBits(b, loc, local, getAmaxBuffer(amax));
}

Value MmaKernelBuilder::sumOverWarp(Value value) {
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  for (int64_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Value offset32 =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
    Value other = gpu::ShuffleOp::create(b, loc, value, offset32, width,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::AddFOp::create(b, loc, value, other);
  }
  return value;
}

/// `value` (an f32, f16 or bf16 element) as the f32 the GEMV accumulates.
static Value extendToF32(OpBuilder &b, Location loc, Value value) {
  Type f32 = b.getF32Type();
  if (value.getType() == f32)
    return value;
  return arith::ExtFOp::create(b, loc, f32, value);
}

/// An element of `operand` as the f32 the GEMV multiplies: an f32 the
/// contraction's body rounds (multiplied in bf16/f16) rounded as the body
/// rounds it, then widened, so the products are the CPU build's.
static Value widenAsMultiplied(OpBuilder &b, Location loc, Value element,
                               const MmaOperand &operand) {
  if (element.getType().isF32() && !operand.mmaType.isF32())
    element = arith::TruncFOp::create(b, loc, operand.mmaType, element);
  return extendToF32(b, loc, element);
}

/// A piece of `piece` elements of `operand` as stored: 16 bytes, or 32 of
/// an f32 operand multiplied in bf16/f16 (a piece holds 8 elements, the
/// 16 bytes of the narrow operand beside it).
static VectorType getPieceType(const MmaOperand &operand, int64_t piece) {
  return VectorType::get({piece}, operand.elementType);
}

/// The GEMV's activation rows (A) and weight (B), read where they are
/// stored: no staging, so only the fields operandIndices reads are set.
static std::pair<StagedOperand, StagedOperand>
getGemvOperands(const MmaProduct &product) {
  StagedOperand a{}, w{};
  a.operand = &product.lhs;
  a.isLhs = true;
  a.source = product.lhs.value;
  w.operand = &product.rhs;
  w.isLhs = false;
  w.source = product.rhs.value;
  return {a, w};
}

LogicalResult MmaKernelBuilder::buildGemv() {
  std::optional<GemvForm> form = getGemvForm(mma);
  if (!form)
    return emitError(loc, "kernel configured for the bandwidth path ('gemv') "
                          "is not a skinny contraction of f32, f16 or bf16 "
                          "operands it reads (docs/kernel-config.md)");
  // A config written by hand (ridge-opt) may ask for what the form does
  // not do: said, not ignored.
  if (gemvRowsPerWarp > 1 && *form != GemvForm::TallSkinny)
    return emitError(loc, "'gemv_rows_per_warp' applies to the tall-skinny "
                          "bandwidth path (n at most 16 below a larger m), "
                          "not to this contraction's");
  if (gemvSplitK > 1 && *form == GemvForm::KContiguousWeight)
    return emitError(loc, "'gemv_split_k' applies to the column and "
                          "tall-skinny bandwidth paths, not to a k-contiguous "
                          "weight's");
  if (*form == GemvForm::NContiguousWeight)
    return buildGemvColumns();
  if (*form == GemvForm::TallSkinny)
    return buildGemvTallSkinny();
  const MmaProduct &only = mma.products.front();
  product = &only;
  const int64_t batchCount = mma.getBatchCount();
  // 16 bytes of k a lane a step: 4 f32 or 8 f16/bf16.
  const int64_t piece = only.rhs.getChunkElements();
  for (const MmaContraction::ResultAmax &amax : mma.resultAmaxes)
    createZeroingLaunch(b, loc, getAmaxBuffer(amax));
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(mma.n, gemvWarps)), one, index(batchCount),
      index(gemvWarps * kWarpSize), one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  Value n = add(mul(blockIds.x, gemvWarps), div(tid, kWarpSize));
  setBatchIndices(blockIds.z);
  // Every lane of a warp past the last column still takes part in the
  // shuffles: it reads the last column and does not store.
  Value column = minimum(n, mma.n - 1);
  auto [a, w] = getGemvOperands(only);
  VectorType weightPieceType = getPieceType(only.rhs, piece);
  VectorType rowPieceType = getPieceType(only.lhs, piece);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  // A gathered row whose pieces are whole chunks of consecutive elements
  // (a class token picked by a Gather) is read a piece at a time, as the
  // tensor-core kernels read such chunks: the lanes' loads are then 16
  // consecutive bytes each, not 4 bytes 16 apart.
  const MmaOperand &rows = only.lhs;
  bool rowPieces = rows.gathered && rows.chunkedGather &&
                   piece % rows.getChunkElements() == 0 &&
                   product->kLoops.back() % piece == 0;
  ChunkComputation rowComputation;
  if (rowPieces && rows.chunkLoad)
    rowComputation = splitChunkComputation(rows);
  SmallVector<Value> init(mma.m, zero);
  auto loop = scf::ForOp::create(b, loc, mul(lane, piece), index(only.k),
                                 index(kWarpSize * piece), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value weights = vector::LoadOp::create(
        b, loc, weightPieceType, w.source, operandIndices(w, column, k),
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    SmallVector<Value> sums;
    for (int64_t m = 0; m < mma.m; ++m) {
      // The row's piece: one 16-byte load, or (a gathered row, such as a
      // class token picked by a Gather) element by element.
      Value row;
      if (!only.lhs.gathered) {
        row = vector::LoadOp::create(
            b, loc, rowPieceType, a.source, operandIndices(a, index(m), k),
            /*nontemporal=*/false, llvm::MaybeAlign(16));
      } else if (rowPieces) {
        SmallVector<Value> coords = getLoopCoordinates();
        decode(index(m), GemmDim::M, coords);
        decode(k, GemmDim::K, coords);
        GatheredChunk chunk;
        locateChunkAt(rows, coords, rowComputation, chunk);
        row = loadGatheredChunk(rows, chunk, rowComputation, piece);
      } else {
        SmallVector<Value> elements;
        for (int64_t i = 0; i < piece; ++i) {
          SmallVector<Value> coords = getLoopCoordinates();
          decode(index(m), GemmDim::M, coords);
          decode(add(k, i), GemmDim::K, coords);
          elements.push_back(gatherElement(only.lhs, coords));
        }
        row = vector::FromElementsOp::create(b, loc, rowPieceType, elements);
      }
      Value sum = loop.getRegionIterArgs()[m];
      for (int64_t i = 0; i < piece; ++i) {
        Value x = widenAsMultiplied(
            b, loc, vector::ExtractOp::create(b, loc, row, i), only.lhs);
        Value y = widenAsMultiplied(
            b, loc, vector::ExtractOp::create(b, loc, weights, i), only.rhs);
        sum = math::FmaOp::create(b, loc, x, y, sum);
      }
      sums.push_back(sum);
    }
    scf::YieldOp::create(b, loc, sums);
  }
  SmallVector<Value> results;
  for (Value sum : loop.getResults())
    results.push_back(sumOverWarp(sum));
  Value store = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0)),
      lessThan(n, mma.n));
  auto storeIf = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(storeIf.thenBlock()->getTerminator());
    // Lane 0 stores the whole column.
    SmallVector<std::tuple<Value, Value, Value>> outputs;
    for (int64_t m = 0; m < mma.m; ++m)
      outputs.emplace_back(results[m], index(m), n);
    storeGemvOutputs(outputs);
  }
  gpu::TerminatorOp::create(b, loc);
  return success();
}

LogicalResult MmaKernelBuilder::buildGemvTallSkinny() {
  const MmaProduct &only = mma.products.front();
  product = &only;
  const int64_t batchCount = mma.getBatchCount();
  // 16 bytes of a row of A a lane a step: 4 f32 or 8 f16/bf16.
  const int64_t piece = only.lhs.getChunkElements();
  const int64_t warpPieces = kWarpSize * piece;
  const int64_t rows = gemvRowsPerWarp, n = mma.n, shares = gemvSplitK;
  // A share's k: whole pieces, so that no piece straddles two shares.
  const int64_t kPerShare =
      llvm::alignTo(llvm::divideCeil(only.k, shares), piece);
  // The pieces of A a lane loads before its first fma (the few columns of
  // B it reads between them hit the caches).
  const int64_t inFlight = getTallSkinnyPiecesInFlight(rows, kPerShare, piece);
  const MmaOperand &rhs = only.rhs;
  // B read 16 bytes at a time: along k ([N, K]) or along n ([K, N] whose
  // rows are whole pieces); element by element otherwise.
  bool rhsAlongK = !rhs.gathered && (rhs.kContiguous || rhs.collapsedK);
  bool rhsAlongN = !rhs.gathered && !rhsAlongK && rhs.rowsAfterK;
  for (const MmaContraction::ResultAmax &amax : mma.resultAmaxes)
    createZeroingLaunch(b, loc, getAmaxBuffer(amax));
  // The shares' partial sums, [share, batch, m, n], when k is split, and
  // a counter per block of rows and batch index: its shares' blocks arrive
  // at it.
  int64_t rowBlocks = llvm::divideCeil(mma.m, gemvWarps * rows);
  SplitKBuffers splitBuffers;
  SmallVector<Type> attributions;
  if (shares > 1) {
    splitBuffers = createSplitKBuffers(shares * batchCount * mma.m * n,
                                       rowBlocks * batchCount);
    attributions.push_back(getArrivalVerdictType(b.getContext()));
  }
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(rowBlocks), index(shares), index(batchCount),
      index(gemvWarps * kWarpSize), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), attributions);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  Value firstRow =
      mul(add(mul(blockIds.x, gemvWarps), div(tid, kWarpSize)), rows);
  setBatchIndices(blockIds.z);
  // The share's k: [kBegin, kEnd), empty past the last share.
  Value kBegin = minimum(mul(blockIds.y, kPerShare), only.k);
  Value kEnd = minimum(add(kBegin, kPerShare), only.k);
  // The warp's rows; rows past the last read the last one and store
  // nothing.
  SmallVector<Value> rowIds, readRows;
  for (int64_t r = 0; r < rows; ++r) {
    rowIds.push_back(add(firstRow, r));
    readRows.push_back(minimum(rowIds.back(), mma.m - 1));
  }
  auto [a, w] = getGemvOperands(only);
  collapseKDims(a);
  collapseKDims(w);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  auto load = [&](const StagedOperand &staged, Value rowCoord, Value k) {
    return vector::LoadOp::create(b, loc, getPieceType(*staged.operand, piece),
                                  staged.source,
                                  operandIndices(staged, rowCoord, k),
                                  /*nontemporal=*/false, llvm::MaybeAlign(16));
  };
  // sums[r * n + c]: row r, column c.
  SmallVector<Value> init(rows * n, zero);
  auto loop = scf::ForOp::create(b, loc, add(kBegin, mul(lane, piece)), kEnd,
                                 index(warpPieces * inFlight), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = loop.getInductionVar();
    // The rows' pieces first: the bytes in flight. Pieces past the end of
    // the share read its last piece and count 0.
    Value lastPiece = arith::SubIOp::create(b, loc, kEnd, index(piece));
    SmallVector<Value> valid, kReads;
    SmallVector<SmallVector<Value>> pieces(inFlight);
    for (int64_t u = 0; u < inFlight; ++u) {
      Value k = add(first, u * warpPieces);
      valid.push_back(u == 0 ? Value() : lessThan(k, kEnd));
      kReads.push_back(
          u == 0 ? k : Value(arith::MinUIOp::create(b, loc, k, lastPiece)));
      for (int64_t r = 0; r < rows; ++r)
        pieces[u].push_back(load(a, readRows[r], kReads[u]));
    }
    SmallVector<Value> sums(loop.getRegionIterArgs());
    for (int64_t u = 0; u < inFlight; ++u) {
      // xs[r * piece + i]: row r's element i of the piece, widened.
      SmallVector<Value> xs;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < piece; ++i) {
          Value x = widenAsMultiplied(
              b, loc, vector::ExtractOp::create(b, loc, pieces[u][r], i),
              only.lhs);
          if (valid[u])
            x = arith::SelectOp::create(b, loc, valid[u], x, zero);
          xs.push_back(x);
        }
      }
      // B at (k + i, c), used by every row as soon as it is loaded (what
      // a loaded value waits for is its own fmas, not the other columns').
      auto multiply = [&](int64_t i, int64_t c, Value weight) {
        Value y = widenAsMultiplied(b, loc, weight, rhs);
        for (int64_t r = 0; r < rows; ++r)
          sums[r * n + c] = math::FmaOp::create(b, loc, xs[r * piece + i], y,
                                                sums[r * n + c]);
      };
      for (int64_t c = 0; rhsAlongK && c < n; ++c) {
        Value column = load(w, index(c), kReads[u]);
        for (int64_t i = 0; i < piece; ++i)
          multiply(i, c, vector::ExtractOp::create(b, loc, column, i));
      }
      for (int64_t i = 0; !rhsAlongK && i < piece; ++i) {
        Value k = add(kReads[u], i);
        for (int64_t c = 0; c < n; c += rhsAlongN ? piece : 1) {
          if (rhsAlongN) {
            Value columns = load(w, index(c), k);
            for (int64_t j = 0; j < piece; ++j)
              multiply(i, c + j, vector::ExtractOp::create(b, loc, columns, j));
          } else if (!rhs.gathered) {
            multiply(i, c,
                     memref::LoadOp::create(b, loc, w.source,
                                            operandIndices(w, index(c), k)));
          } else {
            SmallVector<Value> coords = getLoopCoordinates();
            decode(index(c), GemmDim::N, coords);
            decode(k, GemmDim::K, coords);
            multiply(i, c, gatherElement(rhs, coords));
          }
        }
      }
    }
    scf::YieldOp::create(b, loc, sums);
  }
  // Every lane ends with all the sums; lane c applies the epilogue to
  // column c of each row and stores it: a row's n outputs are one
  // coalesced store.
  SmallVector<Value> mine(rows);
  for (auto [flat, partial] : llvm::enumerate(loop.getResults())) {
    int64_t r = flat / n, c = flat % n;
    Value sum = sumOverWarp(partial);
    Value isMine =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(c));
    mine[r] =
        c == 0 ? sum
               : Value(arith::SelectOp::create(b, loc, isMine, sum, mine[r]));
  }
  Value storingLane = lessThan(lane, n);
  for (int64_t r = 0; r < rows; ++r) {
    Value store =
        arith::AndIOp::create(b, loc, storingLane, lessThan(rowIds[r], mma.m));
    auto storeIf = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(storeIf.thenBlock()->getTerminator());
    if (shares == 1) {
      storeGemvOutputs({std::make_tuple(mine[r], rowIds[r], lane)});
      continue;
    }
    // The share's partial sum of (row, lane), the row's n in a run.
    Value at =
        add(mul(add(mul(add(mul(blockIds.y, batchCount), blockIds.z), mma.m),
                    rowIds[r]),
                n),
            lane);
    memref::StoreOp::create(b, loc, mine[r], splitBuffers.partials, at);
  }
  b.setInsertionPointToEnd(&launch.getBody().front());
  if (shares > 1) {
    splitBuffers.arrival = launch.getWorkgroupAttributions()[0];
    combineGemvShares(splitBuffers, shares, batchCount,
                      add(mul(blockIds.z, rowBlocks), blockIds.x), shares,
                      blockIds.z, mul(blockIds.x, gemvWarps * rows),
                      gemvWarps * rows, index(0), n);
  }
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointAfter(launch);
  deallocSplitKBuffers(splitBuffers);
  return success();
}

LogicalResult MmaKernelBuilder::buildGemvColumns() {
  const MmaProduct &only = mma.products.front();
  product = &only;
  const int64_t batchCount = mma.getBatchCount();
  // A lane's columns: 16 bytes of a weight row, 4 f32 or 8 f16/bf16.
  const int64_t piece = only.rhs.getChunkElements();
  const int64_t warpColumns = piece * kWarpSize;
  int64_t rowsInFlight = getGemvColumnRowsInFlight(mma.m);
  int64_t shares = gemvSplitK;
  int64_t kPerShare =
      llvm::alignTo(llvm::divideCeil(only.k, shares), rowsInFlight);
  int64_t groups = llvm::divideCeil(mma.n, warpColumns);
  for (const MmaContraction::ResultAmax &amax : mma.resultAmaxes)
    createZeroingLaunch(b, loc, getAmaxBuffer(amax));
  Type f32 = b.getF32Type();
  // The shares' partial sums, [share, batch, m, n], when k is split; the
  // blocks of a column group's shares (a warp a share) arrive at a counter
  // per group and batch index, where there are several.
  int64_t shareBlocks = llvm::divideCeil(shares, gemvWarps);
  SplitKBuffers splitBuffers;
  SmallVector<Type> attributions;
  if (shares > 1) {
    splitBuffers =
        createSplitKBuffers(shares * batchCount * mma.m * mma.n,
                            shareBlocks > 1 ? groups * batchCount : 0);
    if (shareBlocks > 1)
      attributions.push_back(getArrivalVerdictType(b.getContext()));
  }
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(groups), index(shareBlocks), index(batchCount),
      index(gemvWarps * kWarpSize), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), attributions);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    tid = launch.getThreadIds().x;
    lane = rem(tid, kWarpSize);
    Value share = add(mul(blockIds.y, gemvWarps), div(tid, kWarpSize));
    setBatchIndices(blockIds.z);
    // The lane's columns; lanes past the last group read the last piece's
    // columns and store nothing.
    Value column = add(mul(blockIds.x, warpColumns), mul(lane, piece));
    Value inside = lessThan(column, mma.n);
    Value readColumn = minimum(column, mma.n - piece);
    auto [a, w] = getGemvOperands(only);
    VectorType pieceType = getPieceType(only.rhs, piece);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value kBegin = minimum(mul(share, kPerShare), only.k);
    Value kEnd = minimum(add(kBegin, kPerShare), only.k);
    Value kLast = arith::SubIOp::create(b, loc, kEnd, one);
    SmallVector<Value> init(mma.m * piece, zero);
    auto loop =
        scf::ForOp::create(b, loc, kBegin, kEnd, index(rowsInFlight), init);
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value first = loop.getInductionVar();
      // Every row's weight piece and activations first: the bytes in
      // flight. Rows past the share's end read its last row and count 0.
      SmallVector<Value> weights, valid;
      SmallVector<SmallVector<Value>> rows(rowsInFlight);
      for (int64_t u = 0; u < rowsInFlight; ++u) {
        Value k = add(first, u);
        valid.push_back(u == 0 ? Value() : lessThan(k, kEnd));
        Value kRead =
            u == 0 ? k : Value(arith::MinUIOp::create(b, loc, k, kLast));
        weights.push_back(vector::LoadOp::create(
            b, loc, pieceType, w.source, operandIndices(w, readColumn, kRead),
            /*nontemporal=*/false, llvm::MaybeAlign(16)));
        for (int64_t m = 0; m < mma.m; ++m) {
          if (!only.lhs.gathered) {
            rows[u].push_back(widenAsMultiplied(
                b, loc,
                memref::LoadOp::create(b, loc, a.source,
                                       operandIndices(a, index(m), kRead)),
                only.lhs));
            continue;
          }
          SmallVector<Value> coords = getLoopCoordinates();
          decode(index(m), GemmDim::M, coords);
          decode(kRead, GemmDim::K, coords);
          rows[u].push_back(widenAsMultiplied(
              b, loc, gatherElement(only.lhs, coords), only.lhs));
        }
      }
      SmallVector<Value> sums(loop.getRegionIterArgs());
      for (int64_t u = 0; u < rowsInFlight; ++u) {
        for (int64_t m = 0; m < mma.m; ++m) {
          Value x = rows[u][m];
          if (valid[u])
            x = arith::SelectOp::create(b, loc, valid[u], x, zero);
          for (int64_t c = 0; c < piece; ++c)
            sums[m * piece + c] = math::FmaOp::create(
                b, loc, x,
                widenAsMultiplied(
                    b, loc, vector::ExtractOp::create(b, loc, weights[u], c),
                    only.rhs),
                sums[m * piece + c]);
        }
      }
      scf::YieldOp::create(b, loc, sums);
    }
    ResultRange sums = loop.getResults();
    Value store =
        arith::AndIOp::create(b, loc, inside, lessThan(share, shares));
    auto storeIf = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(storeIf.thenBlock()->getTerminator());
    Value partials = splitBuffers.partials;
    if (shares > 1) {
      // The share's partial sums, f32 stored 16 bytes at a time.
      auto partialType = VectorType::get({4}, f32);
      for (int64_t m = 0; m < mma.m; ++m) {
        Value rowStart =
            add(mul(add(mul(add(mul(share, batchCount), blockIds.z), mma.m), m),
                    mma.n),
                column);
        for (int64_t c = 0; c < piece; c += 4) {
          Value partial = vector::FromElementsOp::create(
              b, loc, partialType, sums.slice(m * piece + c, 4));
          vector::StoreOp::create(b, loc, partial, partials,
                                  ValueRange{add(rowStart, c)},
                                  /*nontemporal=*/false, llvm::MaybeAlign(16));
        }
      }
    } else {
      SmallVector<std::tuple<Value, Value, Value>> outputs;
      for (int64_t m = 0; m < mma.m; ++m)
        for (int64_t c = 0; c < piece; ++c)
          outputs.emplace_back(sums[m * piece + c], index(m), add(column, c));
      storeGemvOutputs(outputs);
    }
    b.setInsertionPointToEnd(&launch.getBody().front());
    if (shares > 1) {
      if (shareBlocks > 1)
        splitBuffers.arrival = launch.getWorkgroupAttributions()[0];
      combineGemvShares(splitBuffers, shares, batchCount,
                        add(mul(blockIds.z, groups), blockIds.x), shareBlocks,
                        blockIds.z, index(0), mma.m,
                        mul(blockIds.x, warpColumns), warpColumns);
    }
    gpu::TerminatorOp::create(b, loc);
  }
  deallocSplitKBuffers(splitBuffers);
  return success();
}

void MmaKernelBuilder::combineGemvShares(const SplitKBuffers &splitBuffers,
                                         int64_t shares, int64_t batchCount,
                                         Value region, int64_t arrivals,
                                         Value batch, Value mBegin,
                                         int64_t rows, Value nBegin,
                                         int64_t columns) {
  Value last;
  if (arrivals > 1) {
    last = arriveAtTile(region, arrivals, splitBuffers);
  } else {
    // The region's shares are this block's warps: its barrier orders
    // their partial sums before the reads.
    createAccumulatorBarrier();
    last = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  }
  auto lastIf = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(lastIf.thenBlock()->getTerminator());
  // The region's outputs, the block's threads taking them in turn (a row's
  // columns on consecutive threads: coalesced reads of each share).
  int64_t outputs = batchCount * mma.m * mma.n;
  auto loop = scf::ForOp::create(b, loc, tid, index(rows * columns),
                                 index(gemvWarps * kWarpSize));
  b.setInsertionPointToStart(loop.getBody());
  Value m = add(mBegin, div(loop.getInductionVar(), columns));
  Value n = add(nBegin, rem(loop.getInductionVar(), columns));
  auto inside = scf::IfOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, lessThan(m, mma.m), lessThan(n, mma.n)),
      /*withElseRegion=*/false);
  b.setInsertionPoint(inside.thenBlock()->getTerminator());
  Value flat = add(mul(add(mul(batch, mma.m), m), mma.n), n);
  // Share 0's sum, then each other share's added to it, in order.
  Value sum = memref::LoadOp::create(b, loc, splitBuffers.partials, flat);
  for (int64_t s = 1; s < shares; ++s)
    sum = arith::AddFOp::create(
        b, loc, sum,
        memref::LoadOp::create(b, loc, splitBuffers.partials,
                               ValueRange{add(flat, s * outputs)}));
  storeGemvOutputs({std::make_tuple(sum, m, n)});
}
