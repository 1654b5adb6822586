//===- FlashAttention.cpp - Attentions with a tensor-core kernel ----------===//

#include "ridgeline/Codegen/FlashAttention.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <tuple>

using namespace mlir;
using namespace mlir::ridge;

FailureOr<FlashAttention> mlir::ridge::readFlashAttention(DictionaryAttr attr,
                                                          std::string &reason) {
  auto fail = [&](const Twine &why) {
    reason = why.str();
    return failure();
  };
  if (!attr)
    return fail(Twine("no '") + kOnlineAttentionAttr + "'");
  auto shape = attr.getAs<DenseI64ArrayAttr>("shape");
  auto scale = attr.getAs<FloatAttr>("scale");
  auto causal = attr.getAs<BoolAttr>("causal");
  auto offset = attr.getAs<IntegerAttr>("query_offset");
  if (!shape || shape.size() != 7 || !scale || !causal || !offset)
    return fail(Twine("'") + kOnlineAttentionAttr +
                "' needs 'shape' (7 extents), 'scale', 'causal' and "
                "'query_offset'");
  if (auto unsupported = attr.getAs<ArrayAttr>("unsupported")) {
    SmallVector<StringRef> names;
    for (Attribute name : unsupported)
      if (auto text = dyn_cast<StringAttr>(name))
        names.push_back(text.getValue());
    return fail("the tensor-core kernel lacks: " + llvm::join(names, ", "));
  }
  FlashAttention attention;
  attention.batch = shape[0];
  attention.heads = shape[1];
  attention.kvHeads = shape[2];
  attention.queryLen = shape[3];
  attention.keyLen = shape[4];
  attention.dim = shape[5];
  attention.valueDim = shape[6];
  attention.scale = scale.getValueAsDouble();
  attention.causal = causal.getValue();
  attention.queryOffset = offset.getInt();
  if (auto roundTo = attr.getAs<TypeAttr>("round_to")) {
    auto mmaType = dyn_cast<FloatType>(roundTo.getValue());
    if (!mmaType || !(mmaType.isBF16() || mmaType.isF16()))
      return fail("its products are rounded to a format no attention kernel "
                  "multiplies (bf16 or f16)");
    attention.mmaType = mmaType;
  }
  if (attention.kvHeads <= 0 || attention.heads % attention.kvHeads != 0)
    return fail("query heads are not a multiple of key heads");
  auto read = [&](StringRef name, StridedOperand &operand,
                  bool unitInner) -> LogicalResult {
    auto view = attr.getAs<DenseI64ArrayAttr>(name);
    if (!view || view.size() != 6 || view[0] < 0 || view[1] < 0)
      return fail("'" + name + "' is not {argument, offset, 4 strides}");
    if (unitInner && view[5] != 1)
      return fail("'" + name + "' is not contiguous along its last dimension");
    operand.arg = view[0];
    operand.offset = view[1];
    operand.strides.assign(view.asArrayRef().begin() + 2,
                           view.asArrayRef().end());
    return success();
  };
  if (failed(read("q", attention.query, true)) ||
      failed(read("k", attention.key, true)) ||
      failed(read("v", attention.value, true)))
    return failure();
  for (auto [name, rotary] :
       {std::pair<StringRef, std::optional<FlashAttention::Rotary> *>{
            "q", &attention.queryRotary},
        {"k", &attention.keyRotary}}) {
    std::string cos = (name + "_cos").str(), sin = (name + "_sin").str();
    if (!attr.get(cos) && !attr.get(sin))
      continue;
    rotary->emplace();
    if (failed(read(cos, (*rotary)->cos, true)) ||
        failed(read(sin, (*rotary)->sin, true)))
      return failure();
  }
  if (attr.get("mask")) {
    attention.mask.emplace();
    if (failed(read("mask", *attention.mask, false)))
      return failure();
  }
  auto argument = [&](StringRef name,
                      std::optional<unsigned> &index) -> LogicalResult {
    if (!attr.get(name))
      return success();
    auto value = attr.getAs<IntegerAttr>(name);
    if (!value || value.getInt() < 0)
      return fail("'" + name + "' is not an argument number");
    index = value.getInt();
    return success();
  };
  for (auto [name, append] :
       {std::pair<StringRef, std::optional<FlashAttention::Append> *>{
            "k", &attention.keyAppend},
        {"v", &attention.valueAppend}}) {
    std::string tail = (name + "_tail").str(), split = (name + "_split").str();
    if (!attr.get(tail))
      continue;
    append->emplace();
    auto at = attr.getAs<IntegerAttr>(split);
    if (!at || at.getInt() <= 0 || at.getInt() >= attention.keyLen)
      return fail("'" + split + "' is not a row inside the keys");
    (*append)->split = at.getInt();
    if (failed(read(tail, (*append)->tail, true)) ||
        failed(argument((name + "_present").str(), (*append)->present)))
      return failure();
  }
  if (failed(argument("result", attention.resultArg)))
    return failure();
  return attention;
}

std::optional<std::string>
mlir::ridge::whyNotTensorCores(const FlashAttention &attention) {
  if (attention.keyAppend || attention.valueAppend)
    return std::string("its keys or values are a KV-cache concatenation, "
                       "which the decode kernel reads");
  if (!attention.mmaType)
    return std::string("its products are not rounded to bf16 or f16 (fp32 "
                       "requested, or memory-bound: ridge-select-precision)");
  for (int64_t extent : {attention.dim, attention.valueDim})
    if (extent % 16 != 0 || extent < 16 || extent > 128)
      return ("head dimension " + Twine(extent) +
              " is not a multiple of 16 from 16 to 128")
          .str();
  return std::nullopt;
}

std::optional<std::string>
mlir::ridge::whyNotWgmma(const FlashAttention &attention) {
  if (std::optional<std::string> why = whyNotTensorCores(attention))
    return why;
  for (int64_t extent : {attention.dim, attention.valueDim})
    if (extent % 32 != 0)
      return ("head dimension " + Twine(extent) +
              " is not a multiple of 32 (whole 64-byte slabs)")
          .str();
  return std::nullopt;
}

std::optional<std::string>
mlir::ridge::whyNotTensorMapOperand(const FlashAttention &attention,
                                    TypeRange argumentTypes,
                                    AttentionOperand which) {
  bool isQuery = which == AttentionOperand::Query;
  bool isKey = which == AttentionOperand::Key;
  const StridedOperand &view = isQuery ? attention.query
                               : isKey ? attention.key
                                       : attention.value;
  StringRef name = isQuery ? "query" : isKey ? "key" : "value";
  if ((isQuery && attention.queryRotary) || (isKey && attention.keyRotary))
    return ("its " + name + " is rotated as it is loaded (a rotary prologue)")
        .str();
  std::array<int64_t, 4> extents = {
      attention.batch, isQuery ? attention.heads : attention.kvHeads,
      isQuery ? attention.queryLen : attention.keyLen,
      which == AttentionOperand::Value ? attention.valueDim : attention.dim};
  auto type = view.arg < argumentTypes.size()
                  ? dyn_cast<ShapedType>(argumentTypes[view.arg])
                  : ShapedType();
  if (!type || type.getElementType() != attention.mmaType)
    return ("its " + name +
            " is not stored in the multiply type (TMA copies it as stored)")
        .str();
  // 2-byte elements: 8 to a 16-byte unit.
  constexpr int64_t kUnit = 8;
  bool described = view.offset % kUnit == 0 && view.strides[3] == 1;
  for (unsigned d = 0; d < 3; ++d)
    described &= extents[d] == 1 || view.strides[d] == 0 ||
                 (view.strides[d] > 0 && view.strides[d] % kUnit == 0);
  // The rows are the boxes' second dimension: they must advance.
  described &= extents[2] == 1 || view.strides[2] != 0;
  if (!described)
    return ("its " + name +
            " view is not one a tensor map describes (a 16-byte aligned "
            "start, unit stride along the head dimension, outer strides "
            "of whole 16-byte units)")
        .str();
  return std::nullopt;
}

std::optional<std::string>
mlir::ridge::whyNotAttentionTma(const FlashAttention &attention,
                                TypeRange argumentTypes) {
  if (std::optional<std::string> why = whyNotWgmma(attention))
    return why;
  for (AttentionOperand which :
       {AttentionOperand::Key, AttentionOperand::Value})
    if (std::optional<std::string> why =
            whyNotTensorMapOperand(attention, argumentTypes, which))
      return why;
  return std::nullopt;
}

int64_t mlir::ridge::getAttentionTmaSharedBytes(const FlashAttention &attention,
                                                int64_t stages) {
  // A full and an empty barrier per stage, and the query tile's pair.
  constexpr int64_t kAlignmentSlack = 1024, kMbarrierBytes = 8;
  return kAlignmentSlack + 2 * kMbarrierBytes +
         2 * (kAttentionQueryTile * attention.dim +
              stages * kAttentionKeyTile *
                  (attention.dim + attention.valueDim)) +
         2 * stages * kMbarrierBytes;
}

int64_t
mlir::ridge::getFlashAttentionSharedBytes(const FlashAttention &attention,
                                          int64_t stages, bool wgmma) {
  int64_t elements =
      stages * kAttentionKeyTile * (attention.dim + attention.valueDim);
  if (wgmma)
    elements += kAttentionQueryTile * attention.dim;
  return 2 * elements;
}

std::optional<std::string>
mlir::ridge::whyNotDecode(const FlashAttention &attention) {
  if (attention.queryRotary || attention.keyRotary)
    return std::string("its query or key is rotated as it is read (a rotary "
                       "prologue), which only the tensor-core kernel does");
  if (attention.queryLen > kMaxDecodeQueries)
    return ("" + Twine(attention.queryLen) + " query rows, more than " +
            Twine(kMaxDecodeQueries))
        .str();
  for (int64_t extent : {attention.dim, attention.valueDim})
    if (extent % 32 != 0 || extent > 128)
      return ("head dimension " + Twine(extent) +
              " is not a multiple of 32 up to 128")
          .str();
  // The block of each key head's first query head and last query row
  // writes the concatenation as it reads the keys; under a causal mask it
  // reads keys up to its position only.
  bool writesAppend = (attention.keyAppend && attention.keyAppend->present) ||
                      (attention.valueAppend && attention.valueAppend->present);
  if (writesAppend && attention.causal &&
      attention.queryOffset + attention.queryLen < attention.keyLen)
    return ("its last query row sees " +
            Twine(attention.queryOffset + attention.queryLen) + " of " +
            Twine(attention.keyLen) +
            " keys, so no block reads every key of the KV-cache "
            "concatenation it writes")
        .str();
  return std::nullopt;
}
