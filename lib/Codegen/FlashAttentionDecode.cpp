//===- FlashAttentionDecode.cpp - The decode attention kernel -------------===//
//
// FlashAttentionBuilder::buildDecode: the kernel of an attention of a few
// query rows over a long cache (`attention_decode`), described in
// LowerFlashAttention.cpp's header.
//
//===----------------------------------------------------------------------===//

#include "FlashAttentionBuilder.h"
#include "SplitArrival.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::flash;

LogicalResult FlashAttentionBuilder::buildDecode(ArrayRef<BlockArgument> args,
                                                 Value out) {
  if (failed(bindOperands(args)))
    return failure();
  int64_t group = fa.heads / fa.kvHeads;
  if (group % decodeHeads != 0)
    return emitError(loc) << "'attention_decode_heads' " << decodeHeads
                          << " does not divide the " << group
                          << " query heads of a key head";
  outElement =
      cast<FloatType>(cast<MemRefType>(out.getType()).getElementType());
  MLIRContext *context = b.getContext();
  Value one = index(1);
  int64_t partialRow = getPartialRow();
  int64_t keysPerSplit = llvm::divideCeil(fa.keyLen, splits);
  int64_t dimPerLane = fa.dim / kWarpSize,
          valuePerLane = fa.valueDim / kWarpSize;
  Value partials = allocatePartials();
  // With splits, the blocks of one (query row, heads, batch) arrive at a
  // counter of their own, and the last of them combines the rows
  // (SplitArrival.h): one launch.
  int64_t headGroups = fa.heads / decodeHeads * fa.queryLen;
  Value counters;
  if (splits > 1)
    counters = createArrivalCounters(b, loc, headGroups * fa.batch);
  // Each warp's maximum, sum and O of each of the block's heads, for the
  // block's combine: a lane's e-th element of O at lane + 32 e whatever
  // column it holds (every warp's lane holds the same ones), so that a
  // warp's stores and loads touch 32 banks.
  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto smemType =
      MemRefType::get({warps * decodeHeads * partialRow}, b.getF32Type(),
                      MemRefLayoutAttrInterface(), workgroup);
  // A block per (split, decodeHeads query heads of one key head and one
  // query row, batch).
  SmallVector<Type> attributions{smemType};
  if (splits > 1)
    attributions.push_back(getArrivalVerdictType(context));
  auto launch = gpu::LaunchOp::create(
      b, loc, index(splits), index(headGroups), index(fa.batch), index(threads),
      one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), attributions);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value smem = launch.getWorkgroupAttributions()[0];
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  warp = div(tid, kWarpSize);
  Value split = blockIds.x;
  head = mul(div(blockIds.y, fa.queryLen), decodeHeads);
  Value row = rem(blockIds.y, fa.queryLen);
  batchIndex = blockIds.z;
  kvHead = group == 1 ? head : div(head, group);
  // The block's query heads (all of one key head).
  SmallVector<Value> heads;
  for (int64_t p = 0; p < decodeHeads; ++p)
    heads.push_back(add(head, p));
  const double log2e = 1.4426950408889634;
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zeroF = f32(0.0);

  // A lane's elements of a row: d / 32 consecutive ones (d = lane * d / 32
  // + e), read as one vector where every row of the operands starts on such
  // a piece (a 16-byte load of an f32 row of 128, 8 bytes of f16: a quarter
  // of the load instructions of one element each), otherwise d = lane +
  // 32 e. Q and K share theirs (the dot product is per lane), V and O
  // theirs.
  bool keyPieces = dimPerLane > 1 && isPieceAligned(query, dimPerLane) &&
                   isPieceAligned(key, dimPerLane) &&
                   (!fa.keyAppend || isPieceAligned(keyTail, dimPerLane));
  bool valuePieces =
      valuePerLane > 1 && isPieceAligned(value, valuePerLane) &&
      (!fa.valueAppend || isPieceAligned(valueTail, valuePerLane));
  auto column = [&](int64_t e, int64_t perLane, bool pieces) {
    return pieces ? add(mul(lane, perLane), e) : add(lane, e * kWarpSize);
  };
  // A lane's elements of a row (of `perLane`, in pieces or not) into
  // `buffer` at the indices `at` gives for a column: one aligned vector
  // store of the piece, or one store each.
  auto storeLaneRow = [&](ArrayRef<Value> elements, Value buffer,
                          function_ref<SmallVector<Value>(Value)> at,
                          int64_t perLane, bool pieces) {
    if (!pieces) {
      for (auto [e, element] : llvm::enumerate(elements))
        memref::StoreOp::create(b, loc, element, buffer,
                                at(column(e, perLane, /*pieces=*/false)));
      return;
    }
    Type element = elements.front().getType();
    vector::StoreOp::create(
        b, loc,
        vector::FromElementsOp::create(
            b, loc, VectorType::get({perLane}, element), elements),
        buffer, at(column(0, perLane, /*pieces=*/true)),
        /*nontemporal=*/false,
        llvm::MaybeAlign(perLane * element.getIntOrFloatBitWidth() / 8));
  };
  // The lane's elements of row `row` of a key or value operand, as stored.
  auto loadLaneRow = [&](const GlobalOperand &operand,
                         const std::optional<FlashAttention::Append> &append,
                         const GlobalOperand &tail, Value headIndex,
                         Value rowIndex, bool isKey) {
    int64_t perLane = isKey ? dimPerLane : valuePerLane;
    bool pieces = isKey ? keyPieces : valuePieces;
    if (pieces)
      return loadStoredPiece(operand, append, tail, headIndex, rowIndex,
                             column(0, perLane, true), perLane);
    SmallVector<Value> elements;
    for (int64_t e = 0; e < perLane; ++e)
      elements.push_back(loadStoredPiece(operand, append, tail, headIndex,
                                         rowIndex, column(e, perLane, false),
                                         1)[0]);
    return elements;
  };

  // Each head's query row: this lane's elements, scaled.
  SmallVector<SmallVector<Value>> queryElements(decodeHeads);
  for (int64_t p = 0; p < decodeHeads; ++p)
    for (Value element : loadLaneRow(query, std::nullopt, query, heads[p], row,
                                     /*isKey=*/true))
      queryElements[p].push_back(
          arith::MulFOp::create(b, loc, roundToProducts(extendToF32(element)),
                                f32(fa.scale * log2e)));
  // The block of each key head's first query head and last query row
  // writes the KV-cache concatenations (whyNotDecode: that row sees every
  // key), each split its own keys, as it reads them.
  Value writesAppend;
  if (keyPresent || valuePresent) {
    Value firstOfGroup =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                              rem(head, fa.heads / fa.kvHeads), index(0));
    Value lastRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, row,
                                          index(fa.queryLen - 1));
    writesAppend = arith::AndIOp::create(b, loc, firstOfGroup, lastRow);
  }
  // This split's keys, up to the row's causal limit.
  Value begin = mul(split, keysPerSplit);
  Value end = arith::MinSIOp::create(b, loc, index(fa.keyLen),
                                     add(begin, keysPerSplit));
  if (fa.causal)
    end = arith::MinSIOp::create(b, loc, end, add(row, fa.queryOffset + 1));
  // Each head's running maximum, sum and O.
  int64_t stateSize = 2 + valuePerLane;
  SmallVector<Value> inits;
  for (int64_t p = 0; p < decodeHeads; ++p) {
    inits.append({negInf, zeroF});
    inits.append(valuePerLane, zeroF);
  }
  // Warp w takes the runs of decodeKeys keys at begin + (i * warps + w) *
  // decodeKeys.
  auto loop = scf::ForOp::create(b, loc, add(begin, mul(warp, decodeKeys)), end,
                                 index(warps * decodeKeys), inits);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    // Every key's K and V elements (and mask entry) of the run are loaded
    // before the first is used: the bytes the warp keeps in flight. Keys of
    // the run past the split's end read the last key and score -inf.
    Value last = arith::SubIOp::create(b, loc, end, one);
    SmallVector<Value> rows, inRange;
    SmallVector<SmallVector<Value>> keys(decodeKeys), values(decodeKeys);
    // [head][key] of the run.
    SmallVector<SmallVector<Value>> biases(decodeHeads);
    for (int64_t u = 0; u < decodeKeys; ++u) {
      Value j = add(first, u);
      inRange.push_back(u == 0 ? Value() : lessThan(j, end));
      rows.push_back(u == 0 ? j : arith::MinSIOp::create(b, loc, j, last));
      keys[u] = loadLaneRow(key, fa.keyAppend, keyTail, kvHead, rows[u],
                            /*isKey=*/true);
      values[u] = loadLaneRow(value, fa.valueAppend, valueTail, kvHead, rows[u],
                              /*isKey=*/false);
      if (fa.mask)
        for (int64_t p = 0; p < decodeHeads; ++p)
          biases[p].push_back(
              loadElement(mask, elementIndex(mask, heads[p], row, rows[u])));
    }
    // The run's keys into the concatenations, as read (past the split's
    // end: not at all).
    if (writesAppend) {
      for (int64_t u = 0; u < decodeKeys; ++u) {
        Value cond =
            inRange[u] ? arith::AndIOp::create(b, loc, writesAppend, inRange[u])
                             .getResult()
                       : writesAppend;
        auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard ifGuard(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        for (auto [present, loaded, cols, pieces] :
             {std::tuple(keyPresent, &keys[u], fa.dim, keyPieces),
              std::tuple(valuePresent, &values[u], fa.valueDim, valuePieces)}) {
          if (!present)
            continue;
          // (A row of the concatenation starts on a multiple of its cols:
          // a piece is aligned.)
          int64_t rowCols = cols;
          storeLaneRow(
              *loaded, present,
              [&](Value col) -> SmallVector<Value> {
                return {presentIndex(kvHead, rows[u], col, rowCols)};
              },
              rowCols / kWarpSize, pieces);
        }
      }
    }
    for (auto *loaded : {&keys, &values})
      for (SmallVector<Value> &run : *loaded)
        for (Value &element : run)
          element = extendToF32(element);
    // Each head's score of each key of the run.
    SmallVector<SmallVector<Value>> scores(decodeHeads);
    for (int64_t p = 0; p < decodeHeads; ++p)
      for (int64_t u = 0; u < decodeKeys; ++u) {
        Value t = zeroF;
        for (int64_t e = 0; e < dimPerLane; ++e)
          t = math::FmaOp::create(b, loc, queryElements[p][e],
                                  roundToProducts(keys[u][e]), t);
        scores[p].push_back(t);
      }
    // The dot products over the warp's lanes, the runs' and heads'
    // shuffles interleaved.
    Value width =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
    for (int64_t offset = 1; offset < kWarpSize; offset *= 2) {
      Value lanes =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      for (SmallVector<Value> &headScores : scores)
        for (Value &t : headScores)
          t = arith::AddFOp::create(
              b, loc, t,
              gpu::ShuffleOp::create(b, loc, t, lanes, width,
                                     gpu::ShuffleMode::XOR)
                  .getShuffleResult());
    }
    SmallVector<Value> results;
    for (int64_t p = 0; p < decodeHeads; ++p) {
      ValueRange state = carried.slice(p * stateSize, stateSize);
      Value next = state[0];
      for (int64_t u = 0; u < decodeKeys; ++u) {
        Value &t = scores[p][u];
        if (fa.mask)
          t = addBiasLog2(biases[p][u], t);
        if (inRange[u])
          t = arith::SelectOp::create(b, loc, inRange[u], t, negInf);
        next = arith::MaximumFOp::create(b, loc, next, t);
      }
      // One rescale per run: the running maximum, sum and O move to the
      // run's maximum once, then each key adds its probability.
      Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              next, negInf);
      Value shift = arith::SelectOp::create(b, loc, allMasked, zeroF, next);
      Value correction = exp2(arith::SubFOp::create(b, loc, state[0], shift));
      Value sum = arith::MulFOp::create(b, loc, state[1], correction);
      SmallVector<Value> acc;
      for (int64_t e = 0; e < valuePerLane; ++e)
        acc.push_back(arith::MulFOp::create(b, loc, state[2 + e], correction));
      // P summed as computed, rounded (with V) where the products are.
      for (int64_t u = 0; u < decodeKeys; ++u) {
        Value prob = exp2(arith::SubFOp::create(b, loc, scores[p][u], shift));
        sum = arith::AddFOp::create(b, loc, sum, prob);
        Value rounded = roundToProducts(prob);
        for (int64_t e = 0; e < valuePerLane; ++e)
          acc[e] = math::FmaOp::create(b, loc, rounded,
                                       roundToProducts(values[u][e]), acc[e]);
      }
      results.append({next, sum});
      llvm::append_range(results, acc);
    }
    scf::YieldOp::create(b, loc, results);
  }
  // Each warp's state of each head to shared memory (warp w's of head p
  // at (w * heads + p) rows); warp 0 combines the 4 of each head.
  ResultRange state = loop.getResults();
  auto slotRow = [&](Value w, int64_t p) {
    return mul(add(mul(w, decodeHeads), p), partialRow);
  };
  Value firstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));
  for (int64_t p = 0; p < decodeHeads; ++p) {
    ValueRange headState = state.slice(p * stateSize, stateSize);
    Value warpStart = slotRow(warp, p);
    for (int64_t e = 0; e < valuePerLane; ++e)
      memref::StoreOp::create(
          b, loc, headState[2 + e], smem,
          ValueRange{add(warpStart, add(lane, e * kWarpSize))});
    auto ifOp = scf::IfOp::create(b, loc, firstLane, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, headState[0], smem,
                            ValueRange{add(warpStart, fa.valueDim)});
    memref::StoreOp::create(b, loc, headState[1], smem,
                            ValueRange{add(warpStart, fa.valueDim + 1)});
  }
  gpu::BarrierOp::create(b, loc);
  auto firstWarp = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp, index(0)),
      /*withElseRegion=*/false);
  b.setInsertionPoint(firstWarp.thenBlock()->getTerminator());
  for (int64_t p = 0; p < decodeHeads; ++p) {
    auto slot = [&](int64_t w, Value column) -> Value {
      return memref::LoadOp::create(
          b, loc, smem, ValueRange{add(slotRow(index(w), p), column)});
    };
    Value blockMax = negInf;
    for (int64_t w = 0; w < warps; ++w)
      blockMax = arith::MaximumFOp::create(b, loc, blockMax,
                                           slot(w, index(fa.valueDim)));
    Value allEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           blockMax, negInf);
    Value shift = arith::SelectOp::create(b, loc, allEmpty, zeroF, blockMax);
    SmallVector<Value> weights;
    Value sum = zeroF;
    for (int64_t w = 0; w < warps; ++w) {
      weights.push_back(exp2(
          arith::SubFOp::create(b, loc, slot(w, index(fa.valueDim)), shift)));
      sum = math::FmaOp::create(b, loc, weights.back(),
                                slot(w, index(fa.valueDim + 1)), sum);
    }
    SmallVector<Value> outputs;
    for (int64_t e = 0; e < valuePerLane; ++e) {
      Value at = add(lane, e * kWarpSize);
      Value acc = zeroF;
      for (int64_t w = 0; w < warps; ++w)
        acc = math::FmaOp::create(b, loc, weights[w], slot(w, at), acc);
      outputs.push_back(acc);
    }
    if (splits == 1) {
      Value empty =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zeroF);
      Value inverse = arith::SelectOp::create(
          b, loc, empty, zeroF, arith::DivFOp::create(b, loc, f32(1.0), sum));
      SmallVector<Value> normalized;
      for (Value output : outputs)
        normalized.push_back(
            toResult(arith::MulFOp::create(b, loc, output, inverse)));
      storeLaneRow(
          normalized, out,
          [&](Value col) -> SmallVector<Value> {
            return {batchIndex, heads[p], row, col};
          },
          valuePerLane, valuePieces);
      continue;
    }
    // The split's partial row: O (relative to the block maximum), the
    // maximum, the sum.
    Value rowIndex = add(
        mul(add(mul(add(mul(split, fa.batch), batchIndex), fa.heads), heads[p]),
            fa.queryLen),
        row);
    Value rowStart = mul(rowIndex, partialRow);
    storeLaneRow(
        outputs, partials,
        [&](Value col) -> SmallVector<Value> { return {add(rowStart, col)}; },
        valuePerLane, valuePieces);
    auto firstLaneIf =
        scf::IfOp::create(b, loc, firstLane, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(firstLaneIf.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, blockMax, partials,
                            ValueRange{add(rowStart, fa.valueDim)});
    memref::StoreOp::create(b, loc, sum, partials,
                            ValueRange{add(rowStart, fa.valueDim + 1)});
  }
  if (splits == 1) {
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
    return success();
  }
  b.setInsertionPointToEnd(&launch.getBody().front());
  // The last split's block: a thread a query head combines its row.
  Value last = createLastArrival(b, loc, tid, counters,
                                 add(mul(blockIds.z, headGroups), blockIds.y),
                                 splits, launch.getWorkgroupAttributions()[1],
                                 [&] { gpu::BarrierOp::create(b, loc); });
  auto lastIf = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
  b.setInsertionPoint(lastIf.thenBlock()->getTerminator());
  auto headIf = scf::IfOp::create(b, loc, lessThan(tid, index(decodeHeads)),
                                  /*withElseRegion=*/false);
  b.setInsertionPoint(headIf.thenBlock()->getTerminator());
  combineRow(
      partials, out,
      add(mul(add(mul(batchIndex, fa.heads), add(head, tid)), fa.queryLen),
          row));
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointAfter(launch);
  memref::DeallocOp::create(b, loc, partials);
  memref::DeallocOp::create(b, loc, counters);
  return success();
}
