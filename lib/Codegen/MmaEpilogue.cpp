//===- MmaEpilogue.cpp - Results of the tensor-core GEMM
//--------------------===//
//
// How ridge-lower-mma-contractions stores a kernel's results: the
// accumulators in registers, exchanged between lane pairs so that each lane
// holds 4 consecutive elements of one row, the kernel's elementwise epilogue
// applied to them (one result, or several stored side by side), one 16-byte
// store per quad and result; or, where 16-bit results or the epilogue's
// inputs make it pay, staged through shared memory and read back as runs of
// a row (CUTLASS's epilogue), so that a 16-bit result is stored 16 bytes a
// lane too and inputs are loaded 16 bytes at a time; with split-K, each
// split's partial sums, which the last block of a tile to arrive adds in
// split order before the same epilogue.
//
//===----------------------------------------------------------------------===//

#include "AtomicMaximum.h"
#include "MmaKernelBuilder.h"
#include "SplitArrival.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ridge;

SmallVector<Value> MmaKernelBuilder::epilogueCoordinates(Value m, Value n) {
  SmallVector<Value> coords = getLoopCoordinates();
  decode(m, GemmDim::M, coords);
  decode(n, GemmDim::N, coords);
  coords.truncate(mma.getNumParallelLoops());
  if (!mma.epilogue)
    return coords;
  AffineMap read = mma.epilogue.getMatchingIndexingMap(
      mma.epilogue.getDpsInputOperand(getEpilogueInput()));
  SmallVector<Value> permuted(coords.size());
  for (unsigned i = 0; i < read.getNumResults(); ++i)
    permuted[read.getDimPosition(i)] = coords[i];
  return permuted;
}

SmallVector<Value> MmaKernelBuilder::applyEpilogue(ArrayRef<Value> values,
                                                   Value m, Value n,
                                                   const IRMapping *loaded) {
  linalg::GenericOp epilogue = mma.epilogue;
  if (!epilogue)
    return {values.front()};
  // The products' results are the accumulators in registers; the other
  // inputs are loaded at the element's (permuted) indices, unless the
  // caller loaded them.
  IRMapping mapping = loaded ? *loaded : IRMapping();
  for (auto [product, value] : llvm::zip(mma.products, values)) {
    Value acc =
        linalg::LinalgOp(product.contraction).getDpsInitOperand(0)->get();
    for (OpOperand *input : epilogue.getDpsInputOperands())
      if (input->get() == acc)
        mapping.map(epilogue.getMatchingBlockArgument(input), value);
  }
  return cloneElementResults(epilogue, epilogueCoordinates(m, n), mapping);
}

unsigned MmaKernelBuilder::getEpilogueInput() {
  Value acc = mma.products.front().contraction.getDpsInitOperand(0)->get();
  for (OpOperand *input : mma.epilogue.getDpsInputOperands())
    if (input->get() == acc)
      return input->getOperandNumber();
  llvm_unreachable("the matcher found the epilogue reading the result");
}

SmallVector<Value> MmaKernelBuilder::getResultBuffers() {
  SmallVector<Value> buffers;
  if (mma.epilogue)
    llvm::append_range(buffers, mma.epilogue.getDpsInits());
  else
    buffers.push_back(
        mma.products.front().contraction.getDpsInitOperand(0)->get());
  for (auto [buffer, copy] : llvm::zip(buffers, mma.resultCopies))
    buffer = getStoredBuffer(buffer, copy);
  return buffers;
}

Value MmaKernelBuilder::getStoredBuffer(Value buffer, memref::CopyOp copy) {
  if (!copy)
    return buffer;
  // The buffer is copied to the kernel's result argument, through a view
  // that reshapes it: store into the argument, viewed the other way.
  auto type = cast<MemRefType>(buffer.getType());
  Value target = copy.getTarget();
  Operation *view = copy.getSource().getDefiningOp();
  if (auto collapse = dyn_cast_if_present<memref::CollapseShapeOp>(view))
    return memref::ExpandShapeOp::create(b, loc, type.getShape(), target,
                                         collapse.getReassociationIndices());
  if (auto expand = dyn_cast_if_present<memref::ExpandShapeOp>(view))
    return memref::CollapseShapeOp::create(b, loc, target,
                                           expand.getReassociationIndices());
  return target;
}

/// Whether `memref` is a buffer the kernel gets whole (a device allocation,
/// 256-byte aligned) with rows of whole 16-byte units: the 16-byte stores of
/// the epilogue are aligned.
static bool isRowAligned(Value memref, int64_t rowElements) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bytes = rowElements * type.getElementTypeBitWidth() / 8;
  // A reshaping view of a whole buffer starts where the buffer does.
  if (auto expand = memref.getDefiningOp<memref::ExpandShapeOp>())
    memref = expand.getSrc();
  else if (auto collapse = memref.getDefiningOp<memref::CollapseShapeOp>())
    memref = collapse.getSrc();
  return type.getLayout().isIdentity() && bytes % 16 == 0 &&
         (isa<BlockArgument>(memref) ||
          memref.getDefiningOp<memref::AllocOp>());
}

void MmaKernelBuilder::finishResults(ArrayRef<SmallVector<Value>> results,
                                     Value split, Value tile,
                                     const SplitKBuffers &splitBuffers,
                                     Value stagingRows, ArrayRef<Value> stages,
                                     function_ref<void()> stagesBarrier) {
  auto storeThroughEpilogue = [&](ArrayRef<SmallVector<Value>> values) {
    // Rows of the epilogue's own need no barrier.
    if (stagingRows)
      prepareEpilogueStaging(stagingRows, [] {});
    else
      prepareEpilogueStaging(stages, stagesBarrier);
    storeResults(values);
  };
  if (splitK == 1) {
    storeThroughEpilogue(results);
    return;
  }
  // This split's partial sums; those of padding (rows past m, columns past
  // n: a 7 x 7 convolution's 49 pixels in tiles of 64, 16 decode rows in
  // wgmma's 64) are neither stored nor read.
  int64_t reg = 0;
  for (ArrayRef<Value> productResults : results) {
    for (Value value : productResults) {
      auto inside = scf::IfOp::create(b, loc, isAccumulatorInside(reg),
                                      /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(inside.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, value, splitBuffers.partials,
                              getPartialIndex(tile, split, reg++));
    }
  }
  // The tile's last block adds every split's sums, its own read back too:
  // the order of the additions is the splits' whichever block is last, and
  // the accumulators need not stay live beside the sums.
  auto last =
      scf::IfOp::create(b, loc, arriveAtTile(tile, splitK, splitBuffers),
                        /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(last.thenBlock()->getTerminator());
  storeThroughEpilogue(sumPartials(splitBuffers.partials, tile));
}

SplitKBuffers MmaKernelBuilder::createSplitKBuffers(int64_t partials,
                                                    int64_t numCounters) {
  SplitKBuffers buffers;
  buffers.partials = memref::AllocOp::create(
      b, loc, MemRefType::get({partials}, b.getF32Type()));
  if (numCounters)
    buffers.counters = createArrivalCounters(b, loc, numCounters);
  return buffers;
}

void MmaKernelBuilder::deallocSplitKBuffers(const SplitKBuffers &splitBuffers) {
  for (Value buffer : {splitBuffers.partials, splitBuffers.counters})
    if (buffer)
      memref::DeallocOp::create(b, loc, buffer);
}

void MmaKernelBuilder::createAccumulatorBarrier() {
  if (tma)
    tma::createConsumerBarrier(b, loc, threads);
  else
    gpu::BarrierOp::create(b, loc);
}

Value MmaKernelBuilder::arriveAtTile(Value tile, int64_t arrivals,
                                     const SplitKBuffers &splitBuffers) {
  return createLastArrival(b, loc, tid, splitBuffers.counters, tile, arrivals,
                           splitBuffers.arrival,
                           [&] { createAccumulatorBarrier(); });
}

Value MmaKernelBuilder::isAccumulatorInside(int64_t reg) {
  // Accumulator (fragM, fragN, i) of a product is element (group + 8 (i /
  // 2), 2 (lane % 4) + i % 2) of its 16 x 8 fragment (storeResults).
  int64_t perProduct = fragsM * fragsN * 4;
  int64_t fragment = (reg % perProduct) / 4, i = reg % 4;
  int64_t fragM = fragment / fragsN, fragN = fragment % fragsN;
  Value m = add(add(add(mBase, mul(warpM, warpTileM)), div(lane, 4)),
                fragM * 16 + 8 * (i / 2));
  Value n = add(add(add(nBase, mul(warpN, warpTileN)), mul(rem(lane, 4), 2)),
                fragN * 8 + i % 2);
  return arith::AndIOp::create(b, loc, lessThan(m, mma.m), lessThan(n, mma.n));
}

int64_t MmaKernelBuilder::getEpilogueRun() {
  int64_t rowElements = mma.nLoops.back();
  if (mma.epilogue) {
    AffineMap read = mma.epilogue.getMatchingIndexingMap(
        mma.epilogue.getDpsInputOperand(getEpilogueInput()));
    unsigned last = read.getNumResults() - 1;
    if (read.getDimPosition(last) != last)
      return 0;
  }
  int64_t run = 4;
  for (Value buffer : getResultBuffers()) {
    if (!isRowAligned(buffer, rowElements))
      return 0;
    if (cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() < 32)
      run = 8;
  }
  if (rowElements % run || warpTileN % run)
    return 0;
  return run;
}

std::optional<mma::StagingLayout> MmaKernelBuilder::getEpilogueStaging() {
  int64_t run = getEpilogueRun();
  // Staging pays where the fragments' stores would fill half of each
  // sector (runs of 8: a 16-bit result) or where the epilogue reads inputs
  // (loaded 16 bytes at a time along a run, a bias once per lane): an f32
  // result alone is stored in whole sectors by the exchange (one shuffle
  // round), cheaper than staging's shared-memory round trip. A warp tile
  // of 2 fragments (16 columns) keeps the exchange too: the staging's
  // per-lane address arithmetic costs more than the shuffles it saves; so
  // does a problem smaller than the tile (a 40 x 24 product in 64 x 64
  // tiles), whose warps stage rows and columns of padding.
  if (!run || warpTileN < 32 || mma.m < tileM || mma.n < tileN ||
      (run == 4 && getRunInputs(run).empty()))
    return std::nullopt;
  return mma::selectStagingLayout(warpTileN, run);
}

/// Whether a shared buffer of `type` can hold `bytes` of staged rows: a
/// 16- or 32-bit float buffer (the staging bit-casts f32 pairs and 16-byte
/// chunks to its elements) of at least that size.
static bool holdsStaging(MemRefType type, int64_t bytes) {
  Type element = type.getElementType();
  return (element.isF32() || element.isBF16() || element.isF16()) &&
         type.getNumElements() * element.getIntOrFloatBitWidth() / 8 >= bytes;
}

int64_t MmaKernelBuilder::getDedicatedStagingBytes() {
  int64_t bytes = getEpilogueStagingBytes();
  if (!bytes)
    return 0;
  int64_t used = 0;
  for (bool isLhs : {true, false}) {
    MemRefType type = getStageBufferType(stageOperand(mma.products[0], isLhs));
    if (holdsStaging(type, bytes))
      return 0;
    used += type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }
  if (tma)
    used = getTmaSharedMemoryBytes(tileM, tileN, stages);
  if (splitK > 1)
    used += kSplitKArrivalBytes;
  return used + bytes <=
                 (tma ? kMaxTmaSharedMemoryBytes : kMaxStaticSharedMemoryBytes)
             ? bytes
             : 0;
}

MemRefType MmaKernelBuilder::getStagingBufferType(int64_t bytes) {
  return MemRefType::get(
      {bytes / 4}, b.getF32Type(), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::GPUDialect::getWorkgroupAddressSpace()));
}

int64_t MmaKernelBuilder::getEpilogueStagingBytes() {
  std::optional<mma::StagingLayout> layout = getEpilogueStaging();
  return layout ? (threads / kWarpSize) *
                      static_cast<int64_t>(mma.products.size()) *
                      layout->getBytes()
                : 0;
}

void MmaKernelBuilder::prepareEpilogueStaging(ArrayRef<Value> candidates,
                                              function_ref<void()> barrier) {
  epilogueSmem = nullptr;
  if (!getEpilogueStaging())
    return;
  for (Value candidate : candidates) {
    if (!holdsStaging(cast<MemRefType>(candidate.getType()),
                      getEpilogueStagingBytes()))
      continue;
    epilogueSmem = candidate;
    barrier();
    return;
  }
}

SmallVector<MmaKernelBuilder::RunInput>
MmaKernelBuilder::getRunInputs(int64_t run) {
  SmallVector<RunInput> inputs;
  linalg::GenericOp epilogue = mma.epilogue;
  if (!epilogue)
    return inputs;
  AffineMap read = epilogue.getMatchingIndexingMap(
      epilogue.getDpsInputOperand(getEpilogueInput()));
  unsigned innermost = read.getNumDims() - 1;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    if (epilogue.getMatchingBlockArgument(input).use_empty() ||
        llvm::any_of(mma.products, [&](const MmaProduct &product) {
          return input->get() == linalg::LinalgOp(product.contraction)
                                     .getDpsInitOperand(0)
                                     ->get();
        }))
      continue;
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0)
      continue;
    RunInput runInput{input};
    // Row-invariant: no m loop among the dims it reads (a bias).
    runInput.rowInvariant = true;
    for (unsigned i = numBatch; i < numBatch + mma.mLoops.size(); ++i)
      if (map.isFunctionOfDim(read.getDimPosition(i)))
        runInput.rowInvariant = false;
    // Contiguous along the run: read by the run's dim as its innermost
    // index only, a whole buffer with rows of whole runs.
    auto type = cast<MemRefType>(input->get().getType());
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    int64_t bytes = run * type.getElementTypeBitWidth() / 8;
    runInput.contiguous =
        last && last.getPosition() == innermost &&
        llvm::count_if(map.getResults(),
                       [&](AffineExpr expr) {
                         return expr.isFunctionOfDim(innermost);
                       }) == 1 &&
        type.getLayout().isIdentity() && type.getShape().back() % run == 0 &&
        bytes % 16 == 0 &&
        (isa<BlockArgument>(input->get()) ||
         input->get().getDefiningOp<memref::AllocOp>());
    inputs.push_back(runInput);
  }
  return inputs;
}

SmallVector<Value> MmaKernelBuilder::loadRunInput(const RunInput &input,
                                                  Value m, Value n,
                                                  int64_t run) {
  linalg::GenericOp epilogue = mma.epilogue;
  AffineMap map = epilogue.getMatchingIndexingMap(input.input);
  Value memref = input.input->get();
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  SmallVector<Value> values;
  if (input.contiguous) {
    // 16 bytes a load.
    int64_t width =
        std::min<int64_t>(run, 128 / element.getIntOrFloatBitWidth());
    for (int64_t first = 0; first < run; first += width) {
      Value vector = vector::LoadOp::create(
          b, loc, VectorType::get({width}, element), memref,
          evaluateMap(map, epilogueCoordinates(m, add(n, first))),
          /*nontemporal=*/false,
          llvm::MaybeAlign(width * element.getIntOrFloatBitWidth() / 8));
      for (int64_t i = 0; i < width; ++i)
        values.push_back(vector::ExtractOp::create(b, loc, vector, i));
    }
    return values;
  }
  for (int64_t i = 0; i < run; ++i)
    values.push_back(memref::LoadOp::create(
        b, loc, memref, evaluateMap(map, epilogueCoordinates(m, add(n, i)))));
  return values;
}

void MmaKernelBuilder::storeStagedResults(
    ArrayRef<SmallVector<Value>> results) {
  ElementInvariants scope(*this);
  int64_t run = getEpilogueRun();
  mma::StagingLayout layout = *getEpilogueStaging();
  int64_t productBytes = layout.getBytes();
  Value warpBytes = mul(div(tid, kWarpSize),
                        productBytes * static_cast<int64_t>(results.size()));
  SmallVector<mma::AccumulatorStaging> staging;
  for (int64_t p = 0; p < static_cast<int64_t>(results.size()); ++p)
    staging.push_back({epilogueSmem, add(warpBytes, p * productBytes), layout});
  Value warpRow = add(mBase, mul(warpM, warpTileM));
  Value warpColumn = add(nBase, mul(warpN, warpTileN));
  SmallVector<Value> buffers = getResultBuffers();
  SmallVector<Value> amaxLocals;
  if (!mma.resultAmaxes.empty())
    amaxLocals.assign(
        mma.resultAmaxes.size(),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
  Value allLanes =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0xffffffff);
  int64_t runsPerRow = warpTileN / run, runs = 16 * runsPerRow;
  // A lane's runs all start at the same column when a row's runs divide the
  // warp: row-invariant inputs (a bias) are loaded once, for the lane's
  // column (where it lies inside the result), not at every run.
  bool fixedColumn = kWarpSize % runsPerRow == 0;
  SmallVector<RunInput> runInputs = getRunInputs(run);
  SmallVector<IRMapping> preloaded(run);
  if (fixedColumn) {
    Value n = add(warpColumn, mul(rem(lane, runsPerRow), run));
    SmallVector<const RunInput *> invariantInputs;
    SmallVector<Type> types;
    for (const RunInput &input : runInputs) {
      if (!input.rowInvariant)
        continue;
      invariantInputs.push_back(&input);
      types.append(run, getElementTypeOrSelf(input.input->get().getType()));
    }
    if (!invariantInputs.empty()) {
      auto inside = scf::IfOp::create(b, loc, types, lessThan(n, mma.n),
                                      /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(inside.thenBlock());
        SmallVector<Value> values;
        for (const RunInput *input : invariantInputs)
          llvm::append_range(values, loadRunInput(*input, mBase, n, run));
        scf::YieldOp::create(b, loc, values);
        b.setInsertionPointToStart(inside.elseBlock());
        SmallVector<Value> zeros;
        for (Type type : types)
          zeros.push_back(
              arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type)));
        scf::YieldOp::create(b, loc, zeros);
      }
      for (auto [k, input] : llvm::enumerate(invariantInputs))
        for (int64_t i = 0; i < run; ++i)
          preloaded[i].map(mma.epilogue.getMatchingBlockArgument(input->input),
                           inside.getResult(k * run + i));
    }
  }
  for (int64_t fragM = 0; fragM < fragsM; ++fragM) {
    // The previous fragment row's runs have been read.
    if (fragM > 0)
      NVVM::SyncWarpOp::create(b, loc, allLanes);
    for (auto [productResults, rows] : llvm::zip(results, staging))
      rows.store(b, loc, lane,
                 ArrayRef<Value>(productResults)
                     .slice(fragM * fragsN * 4, fragsN * 4));
    NVVM::SyncWarpOp::create(b, loc, allLanes);
    for (int64_t first = 0; first < runs; first += kWarpSize) {
      Value q = add(lane, first);
      Value row = div(q, runsPerRow);
      Value column = mul(rem(fixedColumn ? lane : q, runsPerRow), run);
      Value m = add(add(warpRow, row), fragM * 16);
      Value n = add(warpColumn, column);
      // The row extent is a multiple of the run: a run is inside or
      // outside together.
      Value inside =
          arith::AndIOp::create(b, loc, lessThan(m, mma.m), lessThan(n, mma.n));
      if (runs - first < kWarpSize)
        inside = arith::AndIOp::create(b, loc, inside, lessThan(q, runs));
      amaxLocals = createGuardedStores(
          b, loc, inside, amaxLocals, [&](SmallVectorImpl<Value> &locals) {
            // elements[i][p]: element i of the run, product p.
            SmallVector<SmallVector<Value>> elements(run);
            for (const mma::AccumulatorStaging &rows : staging)
              for (auto [i, value] :
                   llvm::enumerate(rows.load(b, loc, row, column, run)))
                elements[i].push_back(value);
            // The run's other inputs: the preloaded, and those stored
            // along the run, 16 bytes a load.
            SmallVector<IRMapping> loaded(preloaded);
            for (const RunInput &input : runInputs) {
              if ((fixedColumn && input.rowInvariant) || !input.contiguous)
                continue;
              for (auto [i, value] :
                   llvm::enumerate(loadRunInput(input, m, n, run)))
                loaded[i].map(
                    mma.epilogue.getMatchingBlockArgument(input.input), value);
            }
            storeEpilogueRun(elements, m, n, loaded, buffers, locals);
          });
    }
  }
  // Every lane of the block's warps reaches here (the guards have no
  // barriers or shuffles inside): one atomic per warp and amax.
  for (auto [amax, local] : llvm::zip(mma.resultAmaxes, amaxLocals))
    createWarpMaxIntoBuffer(b, loc, local, lane, getAmaxBuffer(amax));
}

void MmaKernelBuilder::storeEpilogueRun(ArrayRef<SmallVector<Value>> elements,
                                        Value m, Value n,
                                        ArrayRef<IRMapping> loaded,
                                        ArrayRef<Value> buffers,
                                        SmallVectorImpl<Value> &locals) {
  int64_t run = elements.size();
  // values[r][i]: result r of run element i.
  SmallVector<SmallVector<Value>> values(buffers.size());
  for (int64_t i = 0; i < run; ++i)
    for (auto [r, value] : llvm::enumerate(applyEpilogue(
             elements[i], m, add(n, i), loaded.empty() ? nullptr : &loaded[i])))
      values[r].push_back(value);
  SmallVector<Value> coords = epilogueCoordinates(m, n);
  for (auto [r, buffer, stored] : llvm::enumerate(buffers, values)) {
    auto bufferType = cast<MemRefType>(buffer.getType());
    int64_t bits = bufferType.getElementTypeBitWidth();
    // At most 16 bytes a store: a run of 8 f32 is two.
    int64_t width = std::min<int64_t>(run, 128 / bits);
    auto vectorType = VectorType::get({width}, bufferType.getElementType());
    bool aligned = isRowAligned(buffer, mma.nLoops.back());
    for (int64_t offset = 0; offset < run; offset += width) {
      SmallVector<Value> at(coords);
      at.back() = add(at.back(), offset);
      Value vector = vector::FromElementsOp::create(
          b, loc, vectorType, ArrayRef<Value>(stored).slice(offset, width));
      vector::StoreOp::create(b, loc, vector, buffer, at,
                              /*nontemporal=*/false,
                              aligned ? llvm::MaybeAlign(width * bits / 8)
                                      : llvm::MaybeAlign());
    }
    foldStoredMagnitudes(locals, r, stored);
  }
}

void MmaKernelBuilder::storeResults(ArrayRef<SmallVector<Value>> results) {
  if (epilogueSmem) {
    storeStagedResults(results);
    return;
  }
  ElementInvariants scope(*this);
  // Accumulator (fragM, fragN, i) is element (group + 8 (i / 2),
  // 2 * (lane % 4) + i % 2) of its 16 x 8 fragment. Lanes 2j and 2j + 1
  // swap halves (shfl.bfly 1): the even lane then holds row `group`,
  // columns 4 (j % 2) .. + 3, the odd lane row `group + 8`, the same columns.
  Value group = div(lane, 4);
  Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    rem(lane, 2), index(1));
  Value quadColumn = mul(div(rem(lane, 4), 2), 4);
  Value rowOffset = arith::SelectOp::create(b, loc, odd, index(8), index(0));
  Value warpRow = add(mBase, mul(warpM, warpTileM));
  Value warpColumn = add(nBase, mul(warpN, warpTileN));
  SmallVector<Value> buffers = getResultBuffers();
  // Quads of 4 consecutive n stay in one row of the result when its
  // innermost extent is a multiple of 4 (one vector store); otherwise (a
  // 7 x 7 convolution output) each element is stored on its own.
  int64_t rowElements = mma.nLoops.back();
  bool quadStores = rowElements % 4 == 0;
  // An epilogue that permutes the result keeps quads together only when the
  // innermost loop stays innermost.
  if (mma.epilogue) {
    AffineMap read = mma.epilogue.getMatchingIndexingMap(
        mma.epilogue.getDpsInputOperand(getEpilogueInput()));
    unsigned last = read.getNumResults() - 1;
    quadStores &= read.getDimPosition(last) == last;
  }
  Value one32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  Value width32 =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  // The thread's max |x| of what it stores, per result amax: each bounds
  // guard yields them updated by its stores (createGuardedStores).
  SmallVector<Value> amaxLocals;
  if (!mma.resultAmaxes.empty())
    amaxLocals.assign(
        mma.resultAmaxes.size(),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
  for (int64_t fragM = 0; fragM < fragsM; ++fragM) {
    for (int64_t fragN = 0; fragN < fragsN; ++fragN) {
      // quads[i][p]: element i of the quad, product p.
      SmallVector<SmallVector<Value>> quads(4);
      for (ArrayRef<Value> productResults : results) {
        ArrayRef<Value> c =
            productResults.slice((fragM * fragsN + fragN) * 4, 4);
        Value sent[2], received[2];
        for (int64_t i = 0; i < 2; ++i) {
          sent[i] = arith::SelectOp::create(b, loc, odd, c[i], c[2 + i]);
          received[i] = gpu::ShuffleOp::create(b, loc, sent[i], one32, width32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
        }
        for (int64_t i = 0; i < 4; ++i) {
          Value even = i < 2 ? c[i] : received[i - 2];
          Value oddValue = i < 2 ? received[i] : c[i];
          quads[i].push_back(
              arith::SelectOp::create(b, loc, odd, oddValue, even));
        }
      }
      Value m = add(add(add(warpRow, group), rowOffset), fragM * 16);
      Value n = add(add(warpColumn, quadColumn), fragN * 8);
      if (!quadStores) {
        for (int64_t i = 0; i < 4; ++i) {
          Value column = add(n, i);
          Value inside = arith::AndIOp::create(b, loc, lessThan(m, mma.m),
                                               lessThan(column, mma.n));
          amaxLocals = createGuardedStores(
              b, loc, inside, amaxLocals, [&](SmallVectorImpl<Value> &locals) {
                SmallVector<Value> coords = epilogueCoordinates(m, column);
                for (auto [r, value] :
                     llvm::enumerate(applyEpilogue(quads[i], m, column))) {
                  memref::StoreOp::create(b, loc, value, buffers[r], coords);
                  foldStoredMagnitudes(locals, r, value);
                }
              });
        }
        continue;
      }
      // n is a multiple of 4 and so is the extent: the quad is inside or
      // outside together.
      Value inside =
          arith::AndIOp::create(b, loc, lessThan(m, mma.m), lessThan(n, mma.n));
      amaxLocals = createGuardedStores(
          b, loc, inside, amaxLocals, [&](SmallVectorImpl<Value> &locals) {
            storeEpilogueRun(quads, m, n, /*loaded=*/{}, buffers, locals);
          });
    }
  }
  // Every lane of the block's warps reaches here (the guards have no
  // barriers or shuffles inside): one atomic per warp and amax.
  for (auto [amax, local] : llvm::zip(mma.resultAmaxes, amaxLocals))
    createWarpMaxIntoBuffer(b, loc, local, lane, getAmaxBuffer(amax));
}

void MmaKernelBuilder::foldStoredMagnitudes(SmallVectorImpl<Value> &locals,
                                            unsigned r,
                                            ArrayRef<Value> stored) {
  for (auto [amax, local] : llvm::zip(mma.resultAmaxes, locals)) {
    if (amax.result != r)
      continue;
    for (Value value : stored)
      local = arith::MaximumFOp::create(b, loc, local,
                                        math::AbsFOp::create(b, loc, value));
  }
}

Value MmaKernelBuilder::getPartialIndex(Value tile, Value split, int64_t reg) {
  int64_t numResults =
      static_cast<int64_t>(mma.products.size()) * fragsM * fragsN * 4;
  Value slot = add(mul(add(mul(tile, splitK), split), numResults), reg);
  return add(mul(slot, threads), tid);
}

SmallVector<SmallVector<Value>> MmaKernelBuilder::sumPartials(Value partials,
                                                              Value tile) {
  int64_t numResults =
      static_cast<int64_t>(mma.products.size()) * fragsM * fragsN * 4;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  // Padding was not stored (finishResults), and is not read either: which
  // accumulators lie inside is the same for every split.
  SmallVector<Value> inside;
  for (int64_t reg = 0; reg < numResults; ++reg)
    inside.push_back(isAccumulatorInside(reg));
  auto loadPartials = [&](Value split) {
    SmallVector<Value> values;
    for (int64_t reg = 0; reg < numResults; ++reg) {
      auto partial = scf::IfOp::create(b, loc, b.getF32Type(), inside[reg],
                                       /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(partial.thenBlock());
      scf::YieldOp::create(
          b, loc,
          ValueRange{memref::LoadOp::create(
              b, loc, partials, getPartialIndex(tile, split, reg))});
      b.setInsertionPointToStart(partial.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{zero});
      values.push_back(partial.getResult(0));
    }
    return values;
  };
  // Split 0's sums, then each other split's added to them.
  auto loop = scf::ForOp::create(b, loc, index(1), index(splitK), index(1),
                                 loadPartials(index(0)));
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> sums;
    for (auto [sum, partial] : llvm::zip_equal(
             loop.getRegionIterArgs(), loadPartials(loop.getInductionVar())))
      sums.push_back(arith::AddFOp::create(b, loc, sum, partial));
    scf::YieldOp::create(b, loc, sums);
  }
  SmallVector<SmallVector<Value>> results(mma.products.size());
  int64_t perProduct = numResults / static_cast<int64_t>(mma.products.size());
  for (int64_t reg = 0; reg < numResults; ++reg)
    results[reg / perProduct].push_back(loop.getResult(reg));
  return results;
}
