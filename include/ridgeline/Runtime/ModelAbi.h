/*===- ModelAbi.h - The C interface of a compiled Ridgeline model -*- C -*-===//
 *
 * The one definition of the model ABI, shared by the producer (ridgec's
 * ridge-attach-model-abi and ridge-emit-model-abi passes, which emit the
 * descriptor below as constant data) and the consumer (libridge_runtime,
 * which reads it without parsing anything). Plain C99 so that any host
 * program can include it.
 *
 * A compiled model is a shared object exporting two functions:
 *
 *   const struct ridge_model_desc *ridge_model_describe(void);
 *   void ridge_model_run(void **buffers);
 *
 * `buffers` holds one pointer per tensor, in the descriptor's order (all
 * inputs, then all outputs), each to dense row-major data of the tensor's
 * dtype and dims: host memory for target "cpu", device memory for GPU
 * targets. Every pointer reachable from the descriptor refers to data
 * inside the model and stays valid until the model is unloaded; all of it
 * is constant except the weight regions below.
 *
 * A model compiled with its weights kept beside it (ridgec
 * --weights=external) names a weights file in its folder. Whoever loads the
 * model maps that file (read-only) and, before the first ridge_model_run,
 * stores into each ridge_weight_desc's `address` slot a pointer to that
 * weight's bytes in the file; the mapping must outlive the model's use. The
 * file starts with a ridge_weights_header whose `fingerprint` and
 * `data_bytes` must equal the descriptor's, so that a weights file of
 * another compile is refused.
 *
 * A GPU model keeps nothing in device memory of its own. Its run takes
 * three more pointers after the outputs: the device weights block
 * (device_weights_bytes, holding each ridge_device_weight_desc's bytes at
 * its offset; the loader uploads them once, before the first run), the
 * arena (arena_bytes of device memory for the temporaries, whose offsets
 * the compiler planned from their live ranges, its first
 * arena_zeroed_bytes zero before the first run; the same arena must not be
 * used by two runs at once) and the CUstream the run issues its work on.
 * The run returns once the work is issued: the caller synchronizes the
 * stream. Either block may be NULL when its size is 0.
 *
 * The compiler emits these structs as LLVM globals with the same layout as
 * the C declarations on x86-64 (lib/Target/EmitModelAbi.cpp); the
 * runtime pins the layout with static_asserts (lib/Runtime/Model.cpp).
 *
 *===----------------------------------------------------------------------===*/

#ifndef RIDGELINE_RUNTIME_MODELABI_H
#define RIDGELINE_RUNTIME_MODELABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the descriptor layout below. Bumped on every incompatible
 * change; the runtime refuses any other version. (Version 1 was the text
 * manifest returned by the former `ridge_model_manifest()`; version 3 added
 * the weights file; version 4 the device blocks of GPU models; version 5 the
 * arena's zeroed bytes.) */
#define RIDGE_MODEL_ABI_VERSION 5

/* The element types, as one table: X(ENUMERATOR, value, name, bytes).
 * `value` is the number stored in ridge_tensor_desc.dtype and never changes;
 * `name` is the spelling tools print ("f32"); `bytes` is the storage size of
 * one element. I1 is ONNX bool, stored as one byte per element. Unsigned
 * types are distinct from signed ones because ONNX keeps the difference.
 * The F8 types are ONNX's float8 formats (one byte: sign, exponent,
 * mantissa), named as MLIR names them; FNUZ ones have no negative zero and
 * no infinity, and 0x80 is their only NaN. */
#define RIDGE_DTYPE_TABLE(X)                                                   \
  X(F16, 1, "f16", 2)                                                          \
  X(BF16, 2, "bf16", 2)                                                        \
  X(F32, 3, "f32", 4)                                                          \
  X(F64, 4, "f64", 8)                                                          \
  X(I1, 5, "i1", 1)                                                            \
  X(I8, 6, "i8", 1)                                                            \
  X(I16, 7, "i16", 2)                                                          \
  X(I32, 8, "i32", 4)                                                          \
  X(I64, 9, "i64", 8)                                                          \
  X(U8, 10, "u8", 1)                                                           \
  X(U16, 11, "u16", 2)                                                         \
  X(U32, 12, "u32", 4)                                                         \
  X(U64, 13, "u64", 8)                                                         \
  X(F8E4M3FN, 14, "f8E4M3FN", 1)                                               \
  X(F8E4M3FNUZ, 15, "f8E4M3FNUZ", 1)                                           \
  X(F8E5M2, 16, "f8E5M2", 1)                                                   \
  X(F8E5M2FNUZ, 17, "f8E5M2FNUZ", 1)

/* Element type of a tensor. 0 is not a type, so a zero-filled descriptor
 * is rejected rather than read as some default. */
enum ridge_dtype {
  RIDGE_DTYPE_INVALID = 0,
#define RIDGE_DTYPE_ENUMERATOR(e, value, name, bytes) RIDGE_DTYPE_##e = value,
  RIDGE_DTYPE_TABLE(RIDGE_DTYPE_ENUMERATOR)
#undef RIDGE_DTYPE_ENUMERATOR
};

/* Bytes per element of `dtype`; 0 for a value that is not a ridge_dtype. */
static inline size_t ridge_dtype_size(uint32_t dtype) {
  switch (dtype) {
#define RIDGE_DTYPE_SIZE_CASE(e, value, name, bytes)                           \
  case value:                                                                  \
    return bytes;
    RIDGE_DTYPE_TABLE(RIDGE_DTYPE_SIZE_CASE)
#undef RIDGE_DTYPE_SIZE_CASE
  default:
    return 0;
  }
}

/* Spelling of `dtype` ("f32", "i1", ...); NULL for a value that is not a
 * ridge_dtype. */
static inline const char *ridge_dtype_name(uint32_t dtype) {
  switch (dtype) {
#define RIDGE_DTYPE_NAME_CASE(e, value, name, bytes)                           \
  case value:                                                                  \
    return name;
    RIDGE_DTYPE_TABLE(RIDGE_DTYPE_NAME_CASE)
#undef RIDGE_DTYPE_NAME_CASE
  default:
    return NULL;
  }
}

/* One graph input or output. 24 bytes on x86-64, no padding. */
struct ridge_tensor_desc {
  /* The ONNX name, verbatim (spaces and punctuation included), NUL
   * terminated. Never NULL. Unique among the inputs and among the outputs;
   * an input and an output may share a name. */
  const char *name;
  /* A ridge_dtype value. */
  uint32_t dtype;
  /* Number of dims; 0 for a scalar. */
  uint32_t rank;
  /* `rank` static dims, outermost first, each >= 0 (0 makes the tensor
   * empty). NULL when rank is 0. */
  const int64_t *dims;
};

/* One weight kept in the weights file. 32 bytes on x86-64, no padding. */
struct ridge_weight_desc {
  /* The initializer's name (as the IR's dense_resource key), NUL
   * terminated. Never NULL. */
  const char *name;
  /* The slot, inside the model, from which the model reads the weight's
   * address: NULL until the loader stores a pointer to the weight's
   * `bytes` bytes there (64-byte aligned when the file is mapped at a page
   * boundary). */
  const void **address;
  /* The weight's bytes in the weights file: [offset, offset + bytes). */
  uint64_t offset;
  uint64_t bytes;
};

/* One weight of a GPU model's device weights block. 32 bytes on x86-64. */
struct ridge_device_weight_desc {
  /* The weight's name (its initializer's, or the constant's symbol), NUL
   * terminated. Never NULL. */
  const char *name;
  /* A pointer to the weight's host address: a constant inside the model for
   * a weight it embeds, the weight's `address` slot (see ridge_weight_desc)
   * for one in the weights file, which is only valid once the file is
   * mapped. */
  const void *const *source;
  /* Where its `bytes` bytes go in the device weights block. */
  uint64_t offset;
  uint64_t bytes;
};

/* The first bytes of a weights file. 32 bytes. */
#define RIDGE_WEIGHTS_MAGIC "RIDGEWTS"
#define RIDGE_WEIGHTS_VERSION 1
struct ridge_weights_header {
  /* RIDGE_WEIGHTS_MAGIC, without its NUL. */
  char magic[8];
  /* RIDGE_WEIGHTS_VERSION. */
  uint32_t version;
  uint32_t reserved;
  /* A hash of the weights' bytes and offsets (xxh3), the same number the
   * model's descriptor holds. */
  uint64_t fingerprint;
  /* Bytes of the file, header included. */
  uint64_t data_bytes;
};

/* The whole model. 112 bytes on x86-64: 4 bytes of padding follow
 * abi_version, num_weights and num_device_weights. */
struct ridge_model_desc {
  /* RIDGE_MODEL_ABI_VERSION of the compiler that built the model. */
  uint32_t abi_version;
  /* "cpu" or an NVIDIA architecture "sm_<major><minor>[a]" ("sm_90a"),
   * NUL terminated. Decides where ridge_model_run's buffers live. */
  const char *target;
  /* Graph inputs (may be 0) and graph outputs (at least 1). */
  uint32_t num_inputs;
  uint32_t num_outputs;
  /* num_inputs + num_outputs tensors: the inputs in graph order, then the
   * outputs in graph order, matching ridge_model_run's buffers. */
  const struct ridge_tensor_desc *tensors;
  /* The weights file, a file name in the model's folder, NUL terminated;
   * NULL when num_weights is 0. */
  const char *weights_file;
  /* Weights to copy from it before the first run (0: none). */
  uint32_t num_weights;
  const struct ridge_weight_desc *weights;
  /* The ridge_weights_header fields the file must carry; 0 without one. */
  uint64_t weights_fingerprint;
  uint64_t weights_bytes;
  /* GPU models (0 and NULL for "cpu"): bytes of the device weights block
   * and of the arena a run takes, and the most bytes of temporaries live at
   * once (the arena's lower bound, for reports). */
  uint64_t device_weights_bytes;
  uint64_t arena_bytes;
  uint64_t peak_live_bytes;
  /* The weights to upload into the device weights block. */
  uint32_t num_device_weights;
  const struct ridge_device_weight_desc *device_weights;
  /* The arena's first arena_zeroed_bytes (at most arena_bytes) must be zero
   * before the first run, and every run leaves them zero: the tile counters
   * of split-K kernels, whose last block of a tile sets its counter back.
   * The loader zeroes them once, when it allocates the arena. */
  uint64_t arena_zeroed_bytes;
};

/* Entry points a model exports. */
const struct ridge_model_desc *ridge_model_describe(void);
void ridge_model_run(void **buffers);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RIDGELINE_RUNTIME_MODELABI_H */
