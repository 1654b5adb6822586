//===- MmaFragments.cpp - Shared-memory tiles and mma.sync fragments ------===//

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::ridge;

static Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}
static Value add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return arith::AddIOp::create(b, loc, lhs, rhs);
}
static Value mul(OpBuilder &b, Location loc, Value lhs, int64_t rhs) {
  return arith::MulIOp::create(b, loc, lhs, index(b, loc, rhs));
}
static Value div(OpBuilder &b, Location loc, Value lhs, int64_t rhs) {
  return arith::DivUIOp::create(b, loc, lhs, index(b, loc, rhs));
}
static Value rem(OpBuilder &b, Location loc, Value lhs, int64_t rhs) {
  return arith::RemUIOp::create(b, loc, lhs, index(b, loc, rhs));
}

/// The XOR pattern of a group of `groupChunks` chunks (8, 4 or 2) for row
/// `row`, or null for a group that is not swizzled.
static Value getSwizzlePattern(OpBuilder &b, Location loc, Value row,
                               int64_t groupChunks, mma::SwizzleReads reads) {
  if (reads == mma::SwizzleReads::ChunkPairOf4Rows) {
    // Chunk pairs: a warp reads pair p of rows r..r+3 (r a multiple of 4).
    // Rows of 8 chunks or more start on the same bank, so the 4 rows take
    // the 4 pairs of a line (pattern 2 (r % 4)); rows of 4 share a line two
    // by two, so rows r and r + 2 take different pairs; rows of 2 chunks
    // are read whole, 4 of them a line.
    if (groupChunks == 8)
      return mul(b, loc, rem(b, loc, row, 4), 2);
    if (groupChunks == 4)
      return mul(b, loc, rem(b, loc, div(b, loc, row, 2), 2), 2);
    return Value();
  }
  if (groupChunks == 8)
    return rem(b, loc, row, 8);
  if (groupChunks == 4)
    return rem(b, loc, div(b, loc, row, 2), 4);
  if (groupChunks == 2)
    return rem(b, loc, div(b, loc, row, 4), 2);
  return Value();
}

Value mma::getSwizzledOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                             int64_t rowElements, int64_t chunkElements,
                             SwizzleReads reads) {
  // Rows of 8 chunks or more swizzle each whole group of 8; the chunks past
  // the last whole group (a row of 12: chunks 8-11) swizzle among
  // themselves, so that no chunk leaves its row.
  int64_t chunks = rowElements / chunkElements;
  int64_t whole = chunks / 8 * 8, tail = chunks - whole;
  auto swizzle = [&](Value inGroup, int64_t groupChunks) -> Value {
    Value pattern = getSwizzlePattern(b, loc, row, groupChunks, reads);
    return pattern ? arith::XOrIOp::create(b, loc, inGroup, pattern).getResult()
                   : inGroup;
  };
  Value physical;
  if (whole == 0) {
    physical = swizzle(chunk, chunks);
  } else {
    Value group = mul(b, loc, div(b, loc, chunk, 8), 8);
    physical = add(b, loc, group, swizzle(rem(b, loc, chunk, 8), 8));
    if (tail) {
      Value start = index(b, loc, whole);
      Value inTail =
          add(b, loc, start,
              swizzle(arith::SubIOp::create(b, loc, chunk, start), tail));
      Value isTail = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           chunk, start);
      physical = arith::SelectOp::create(b, loc, isTail, inTail, physical);
    }
  }
  return add(b, loc, mul(b, loc, row, rowElements),
             mul(b, loc, physical, chunkElements));
}

Value mma::packPair(OpBuilder &b, Location loc, Value pair, Type mmaType) {
  if (mmaType.isF16())
    return pair;
  auto wordType = VectorType::get({1}, b.getI32Type());
  Value word = vector::BitCastOp::create(b, loc, wordType, pair);
  return vector::ExtractOp::create(b, loc, word, 0);
}

/// The tf32 of f32 `value`: `cvt.rna.tf32.f32`, the register mma.sync
/// takes.
static Value roundToTf32(OpBuilder &b, Location loc, Value value) {
  return NVVM::ConvertFloatToTF32Op::create(b, loc, b.getI32Type(), value,
                                            NVVM::FPRoundingMode::RNA,
                                            NVVM::SaturationMode::NONE,
                                            /*relu=*/false);
}

/// loadFragmentBlock of a tf32 MN-major tile (k x (m|n)): register i is
/// matrix i of the x4 (row half and k half as there), the lane's word of it
/// element (m|n = rowOffset + 8 rowHalf + lane / 4, k = 8 kStep + 4 kHalf +
/// lane % 4).
static SmallVector<Value> loadTf32MnMajorBlock(OpBuilder &b, Location loc,
                                               const mma::FragmentBlock &block,
                                               Value lane, Value rowOffset,
                                               int64_t kStep,
                                               bool rowHalfMinor) {
  int64_t chunkElements = mma::getChunkElements(block.mmaType);
  Value group = div(b, loc, lane, 4), inGroup = rem(b, loc, lane, 4);
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    int64_t rowHalf = rowHalfMinor ? i % 2 : i / 2;
    int64_t kHalf = rowHalfMinor ? i / 2 : i % 2;
    Value row = add(b, loc, inGroup, index(b, loc, kStep * 8 + kHalf * 4));
    Value column =
        add(b, loc, add(b, loc, rowOffset, index(b, loc, rowHalf * 8)), group);
    Value offset = add(b, loc, block.stageOffset,
                       add(b, loc,
                           mma::getSwizzledOffset(
                               b, loc, row, div(b, loc, column, chunkElements),
                               block.rowElements, chunkElements,
                               mma::SwizzleReads::ChunkPairOf4Rows),
                           rem(b, loc, column, chunkElements)));
    Value word = memref::LoadOp::create(b, loc, block.smem, ValueRange{offset});
    registers.push_back(roundToTf32(b, loc, word));
  }
  return registers;
}

SmallVector<Value> mma::loadFragmentBlock(OpBuilder &b, Location loc,
                                          const FragmentBlock &block,
                                          Value lane, Value rowOffset,
                                          int64_t kStep, bool rowHalfMinor) {
  bool tf32 = block.mmaType.isTF32();
  if (tf32 && !block.kContiguous)
    return loadTf32MnMajorBlock(b, loc, block, lane, rowOffset, kStep,
                                rowHalfMinor);
  int64_t chunkElements = getChunkElements(block.mmaType);
  // ldmatrix x4: lanes 8i..8i+7 give the row addresses of matrix i, the
  // (row half, k half) 8 x 8 block of the 16 x 16 block. A's registers
  // a0..a3 take the row half as the minor index (i % 2); B's b0, b1 of two
  // 8-wide fragments the k half.
  Value quarter = div(b, loc, lane, 8), rowInMatrix = rem(b, loc, lane, 8);
  Value rowHalf =
      rowHalfMinor ? rem(b, loc, quarter, 2) : div(b, loc, quarter, 2);
  Value kHalf =
      rowHalfMinor ? div(b, loc, quarter, 2) : rem(b, loc, quarter, 2);
  Value row, chunk;
  if (block.kContiguous) {
    // Stored (m|n) x k: rows m|n, chunks along k.
    row = add(b, loc, add(b, loc, rowOffset, mul(b, loc, rowHalf, 8)),
              rowInMatrix);
    chunk = add(b, loc, kHalf, index(b, loc, kStep * 2));
  } else {
    // Stored k x (m|n): rows k, chunks along m|n; the transposing ldmatrix.
    row = add(b, loc, add(b, loc, mul(b, loc, kHalf, 8), rowInMatrix),
              index(b, loc, kStep * 16));
    chunk = add(b, loc, div(b, loc, rowOffset, 8), rowHalf);
  }
  Value offset = add(
      b, loc, block.stageOffset,
      getSwizzledOffset(b, loc, row, chunk, block.rowElements, chunkElements));
  // A register holds 2 bf16/f16 or one f32 (tf32's 8 x 4 matrices are the
  // 8 x 8 ones of 16-bit halves: the lane's word is its k element).
  Type staged = tf32 ? Type(b.getF32Type()) : block.mmaType;
  auto resultType = VectorType::get({4, tf32 ? 1 : 2}, staged);
  Value matrix = nvgpu::LdMatrixOp::create(
      b, loc, resultType, block.smem, ValueRange{offset},
      b.getBoolAttr(!block.kContiguous), b.getI32IntegerAttr(4));
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    Value pair = vector::ExtractOp::create(b, loc, matrix, i);
    registers.push_back(
        tf32 ? roundToTf32(b, loc, vector::ExtractOp::create(b, loc, pair, 0))
             : packPair(b, loc, pair, block.mmaType));
  }
  return registers;
}

/// The word of (row, column) in `layout`.
static int64_t getStagedWord(const mma::StagingLayout &layout, int64_t row,
                             int64_t column) {
  int64_t chunk = column / 4;
  chunk ^= (chunk / 8) % 2;
  chunk ^= ((row / layout.rowPeriod) % layout.rowCycle) * layout.rowXor;
  return row * layout.rowWords + chunk * 4 + column % 4;
}

/// The bank conflicts of `layout`: the extra wavefronts of each phase, a
/// phase needing as many as the most distinct words it touches in one bank.
static int64_t countStagingConflicts(const mma::StagingLayout &layout,
                                     int64_t columns, int64_t run) {
  int64_t conflicts = 0;
  auto countPhase = [&](ArrayRef<std::pair<int64_t, int64_t>> accesses) {
    // (first word, words) per lane.
    std::map<int64_t, std::set<int64_t>> banks;
    for (auto [word, words] : accesses)
      for (int64_t w = word; w < word + words; ++w)
        banks[w % 32].insert(w);
    int64_t most = 1;
    for (auto &bank : banks)
      most = std::max<int64_t>(most, bank.second.size());
    conflicts += most - 1;
  };
  // The fragments' writes: a pair (8 bytes) a lane, half warp by half warp.
  for (int64_t fragment = 0; fragment < columns / 8; ++fragment)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t phase = 0; phase < 2; ++phase) {
        SmallVector<std::pair<int64_t, int64_t>> accesses;
        for (int64_t lane = 16 * phase; lane < 16 * phase + 16; ++lane)
          accesses.push_back({getStagedWord(layout, lane / 4 + 8 * half,
                                            8 * fragment + 2 * (lane % 4)),
                              2});
        countPhase(accesses);
      }
  // The runs' reads: 16 bytes a lane, quarter warp by quarter warp.
  int64_t runsPerRow = columns / run, runs = 16 * runsPerRow;
  for (int64_t first = 0; first < runs; first += 32)
    for (int64_t offset = 0; offset < run; offset += 4)
      for (int64_t phase = 0; phase < 4; ++phase) {
        SmallVector<std::pair<int64_t, int64_t>> accesses;
        for (int64_t q = first + 8 * phase;
             q < std::min(first + 8 * phase + 8, runs); ++q)
          accesses.push_back({getStagedWord(layout, q / runsPerRow,
                                            (q % runsPerRow) * run + offset),
                              4});
        countPhase(accesses);
      }
  return conflicts;
}

std::optional<mma::StagingLayout> mma::selectStagingLayout(int64_t columns,
                                                           int64_t run) {
  if (columns % 8 || run % 4)
    return std::nullopt;
  // Padding first: a row XOR costs each lane more address arithmetic than
  // the words of padding cost shared memory.
  for (int64_t rowWords = columns; rowWords < columns + 36; rowWords += 4)
    if (StagingLayout layout{rowWords};
        countStagingConflicts(layout, columns, run) == 0)
      return layout;
  // Row XORs that keep every chunk in its row (a power-of-2 count).
  int64_t chunks = columns / 4;
  if (!llvm::isPowerOf2_64(chunks))
    return std::nullopt;
  for (int64_t rowWords = columns; rowWords < columns + 36; rowWords += 4)
    for (int64_t period : {1, 2, 4, 8})
      for (int64_t cycle : {2, 4, 8})
        for (int64_t rowXor : {1, 2, 4})
          if (StagingLayout layout{rowWords, period, cycle, rowXor};
              (cycle - 1) * rowXor < chunks &&
              countStagingConflicts(layout, columns, run) == 0)
            return layout;
  return std::nullopt;
}

Value mma::AccumulatorStaging::getElementOffset(OpBuilder &b, Location loc,
                                                Value row, Value column) const {
  Value chunk = div(b, loc, column, 4);
  chunk = arith::XOrIOp::create(b, loc, chunk,
                                rem(b, loc, div(b, loc, chunk, 8), 2));
  if (layout.rowXor)
    chunk = arith::XOrIOp::create(
        b, loc, chunk,
        mul(b, loc,
            rem(b, loc, div(b, loc, row, layout.rowPeriod), layout.rowCycle),
            layout.rowXor));
  Value word = add(b, loc, mul(b, loc, row, layout.rowWords),
                   add(b, loc, mul(b, loc, chunk, 4), rem(b, loc, column, 4)));
  int64_t smemBytes =
      cast<MemRefType>(smem.getType()).getElementTypeBitWidth() / 8;
  return div(b, loc, add(b, loc, byteOffset, mul(b, loc, word, 4)), smemBytes);
}

void mma::AccumulatorStaging::store(OpBuilder &b, Location loc, Value lane,
                                    ArrayRef<Value> accumulators) const {
  Type element = cast<MemRefType>(smem.getType()).getElementType();
  auto pairType = VectorType::get({2}, b.getF32Type());
  // A pair as stored: 8 bytes of smem's elements.
  auto storedType =
      VectorType::get({64 / element.getIntOrFloatBitWidth()}, element);
  Value group = div(b, loc, lane, 4);
  Value pairColumn = mul(b, loc, rem(b, loc, lane, 4), 2);
  for (int64_t fragment = 0; 4 * fragment < (int64_t)accumulators.size();
       ++fragment) {
    for (int64_t half = 0; half < 2; ++half) {
      Value pair = vector::FromElementsOp::create(
          b, loc, pairType, accumulators.slice(4 * fragment + 2 * half, 2));
      if (!element.isF32())
        pair = vector::BitCastOp::create(b, loc, storedType, pair);
      Value offset = getElementOffset(
          b, loc, add(b, loc, group, index(b, loc, 8 * half)),
          add(b, loc, pairColumn, index(b, loc, 8 * fragment)));
      vector::StoreOp::create(b, loc, pair, smem, offset,
                              /*nontemporal=*/false, llvm::MaybeAlign(8));
    }
  }
}

SmallVector<Value> mma::AccumulatorStaging::load(OpBuilder &b, Location loc,
                                                 Value row, Value column,
                                                 int64_t count) const {
  Type element = cast<MemRefType>(smem.getType()).getElementType();
  int64_t perChunk = 128 / element.getIntOrFloatBitWidth();
  auto quadType = VectorType::get({4}, b.getF32Type());
  SmallVector<Value> values;
  for (int64_t first = 0; first < count; first += 4) {
    Value chunk = vector::LoadOp::create(
        b, loc, VectorType::get({perChunk}, element), smem,
        getElementOffset(b, loc, row,
                         add(b, loc, column, index(b, loc, first))),
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    if (!element.isF32())
      chunk = vector::BitCastOp::create(b, loc, quadType, chunk);
    for (int64_t i = 0; i < 4; ++i)
      values.push_back(vector::ExtractOp::create(b, loc, chunk, i));
  }
  return values;
}

SmallVector<Value> mma::createMma(OpBuilder &b, Location loc, ValueRange a,
                                  ValueRange bFragment, ValueRange c,
                                  Type mmaType) {
  Type f32 = b.getF32Type();
  auto type = mmaType.isBF16()   ? NVVM::MMATypes::bf16
              : mmaType.isTF32() ? NVVM::MMATypes::tf32
                                 : NVVM::MMATypes::f16;
  int64_t k = mmaType.isTF32() ? 8 : 16;
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, a, bFragment, c, ArrayRef<int64_t>{16, 8, k},
      std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> results;
  for (int64_t i = 0; i < 4; ++i)
    results.push_back(LLVM::ExtractValueOp::create(b, loc, op, i));
  return results;
}

Value mma::getSlabOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                         int64_t rows) {
  Value slab = div(b, loc, chunk, kSlabChunks);
  Value inSlab = rem(b, loc, chunk, kSlabChunks);
  Value physical = arith::XOrIOp::create(b, loc, inSlab,
                                         rem(b, loc, div(b, loc, row, 2), 4));
  return add(b, loc,
             add(b, loc, mul(b, loc, slab, rows * kSlabChunks * kChunk),
                 mul(b, loc, row, kSlabChunks * kChunk)),
             mul(b, loc, physical, kChunk));
}

std::pair<Value, Value> mma::getSlabChunkPosition(OpBuilder &b, Location loc,
                                                  Value q, int64_t rows,
                                                  int64_t chunksPerRow) {
  if (chunksPerRow <= kSlabChunks)
    return {div(b, loc, q, chunksPerRow), rem(b, loc, q, chunksPerRow)};
  int64_t slabChunks = rows * kSlabChunks;
  Value slab = div(b, loc, q, slabChunks);
  Value inSlab = rem(b, loc, q, slabChunks);
  return {div(b, loc, inSlab, kSlabChunks),
          add(b, loc, rem(b, loc, inSlab, kSlabChunks),
              mul(b, loc, slab, kSlabChunks))};
}

Value mma::getWgmmaDescriptor(OpBuilder &b, Location loc, Value smem,
                              Value byteOffset, int64_t leadingBytes,
                              int64_t strideBytes, int64_t swizzleBytes) {
  assert((swizzleBytes == 64 || swizzleBytes == 128) &&
         "the 64- or 128-byte swizzle");
  Type i64 = b.getI64Type();
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  Value address = arith::IndexCastUIOp::create(
      b, loc, i64, arith::AddIOp::create(b, loc, base, byteOffset));
  auto constant = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  // Bits 0-13: start address >> 4; 16-29: LBO >> 4; 32-45: SBO >> 4;
  // 62-63: the layout (1: 128-byte swizzle, 2: 64-byte swizzle).
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, constant(0x3ffff)),
      constant(4));
  uint64_t fixed = (uint64_t(leadingBytes >> 4) & 0x3fff) << 16 |
                   (uint64_t(strideBytes >> 4) & 0x3fff) << 32 |
                   uint64_t(swizzleBytes == 128 ? 1 : 2) << 62;
  return arith::OrIOp::create(b, loc, start,
                              constant(static_cast<int64_t>(fixed)));
}

/// A 16-bit pair register as the i32 inline PTX takes ("r").
static Value asWord(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isInteger(32))
    return value;
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), value);
}

Value mma::createWgmmaShared(OpBuilder &b, Location loc, Value descA,
                             Value descB, Value packed, int64_t n, int64_t k,
                             Type mmaType, bool fresh, bool transposeA,
                             bool transposeB) {
  MLIRContext *context = b.getContext();
  auto type = NVVM::WGMMATypesAttr::get(
      context, mmaType.isBF16()                 ? NVVM::WGMMATypes::bf16
               : isa<Float8E4M3FNType>(mmaType) ? NVVM::WGMMATypes::e4m3
                                                : NVVM::WGMMATypes::f16);
  // A: row = K-major; B: col = K-major (the transposes are for MN-major
  // operands).
  auto layout = [&](bool columns) {
    return NVVM::MMALayoutAttr::get(context, columns ? NVVM::MMALayout::col
                                                     : NVVM::MMALayout::row);
  };
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, packed.getType(), packed, descA, descB,
      NVVM::MMAShapeAttr::get(context, 64, n, k), type, type,
      NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(context, fresh ? NVVM::WGMMAScaleOut::zero
                                                  : NVVM::WGMMAScaleOut::one),
      NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one),
      layout(transposeA), layout(!transposeB), NVVM::MMAIntOverflowAttr());
}

SmallVector<Value> mma::createWgmmaRegisterA(OpBuilder &b, Location loc,
                                             ValueRange a, Value descB,
                                             ValueRange acc, int64_t n,
                                             Type mmaType, bool transposeB) {
  int64_t count = static_cast<int64_t>(acc.size());
  assert(count == n / 2 && a.size() == 4 && "wgmma m64nNk16 operands");
  bool tf32 = mmaType.isTF32();
  assert((!tf32 || !transposeB) && "wgmma reads tf32 only K-major");
  // d: $0 .. $count-1 (tied to the inputs of the same number), a: the next
  // 4, b: the descriptor; scale-d 1 (accumulate), A and B not negated.
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + (tf32 ? "k8" : "k16") + ".f32." +
                     (mmaType.isBF16() ? "bf16.bf16"
                      : tf32           ? "tf32.tf32"
                                       : "f16.f16") +
                     " {";
  SmallVector<std::string> constraints;
  for (int64_t i = 0; i < count; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints.push_back("=f");
  }
  text += "}, {";
  for (int64_t i = 0; i < 4; ++i)
    text += (i ? ", $" : "$") + std::to_string(2 * count + i);
  // tf32 takes no transpose operand.
  text += "}, $" + std::to_string(2 * count + 4) + ", p, 1, 1" +
          (tf32         ? ""
           : transposeB ? ", 1"
                        : ", 0") +
          ";\n}";
  SmallVector<Value> operands(acc.begin(), acc.end());
  for (int64_t i = 0; i < count; ++i)
    constraints.push_back(std::to_string(i));
  for (Value reg : a) {
    operands.push_back(asWord(b, loc, reg));
    constraints.push_back("r");
  }
  operands.push_back(descB);
  constraints.push_back("l");
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(count, b.getF32Type()));
  auto op = LLVM::InlineAsmOp::create(
      b, loc, resultType, operands, text, llvm::join(constraints, ","),
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      /*asm_dialect=*/LLVM::AsmDialectAttr(),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> results;
  for (int64_t i = 0; i < count; ++i)
    results.push_back(
        LLVM::ExtractValueOp::create(b, loc, op->getResult(0), i));
  return results;
}

SmallVector<Value> mma::pinRegisters(OpBuilder &b, Location loc,
                                     ValueRange values) {
  SmallVector<Value> pinned;
  for (Value value : values) {
    if (!value.getType().isF32())
      value = asWord(b, loc, value);
    auto op = LLVM::InlineAsmOp::create(
        b, loc, value.getType(), ValueRange{value}, "",
        value.getType().isF32() ? "=f,0" : "=r,0",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
        ArrayAttr());
    pinned.push_back(op->getResult(0));
  }
  return pinned;
}
