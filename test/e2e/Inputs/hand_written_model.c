/* A model written by hand against ModelAbi.h (C99), for
 * model-abi-errors.test. -DABI_VERSION=, -DDTYPE= and -DOLD_MANIFEST break
 * it in the ways the runtime must refuse. -DWEIGHTS gives it a weight in
 * the weights file hand.weights (fingerprint 42, 80 bytes, the weight's 16
 * at 64); -DWEIGHT_OFFSET= and -DWEIGHTS_FILE= move it where the runtime
 * must refuse it. */
#include "ridgeline/Runtime/ModelAbi.h"

#ifndef ABI_VERSION
#define ABI_VERSION RIDGE_MODEL_ABI_VERSION
#endif
#ifndef DTYPE
#define DTYPE RIDGE_DTYPE_F32
#endif
#ifndef WEIGHT_OFFSET
#define WEIGHT_OFFSET 64
#endif
#ifndef WEIGHTS_FILE
#define WEIGHTS_FILE "hand.weights"
#endif

#ifndef OLD_MANIFEST
static const int64_t dims[] = {2, 3};
static const struct ridge_tensor_desc tensors[] = {
    {"in put", DTYPE, 2, dims},
    {"out put", RIDGE_DTYPE_I64, 0, NULL},
};
#ifdef WEIGHTS
static const void *weight;
static const struct ridge_weight_desc weights[] = {
    {"layer.w", &weight, WEIGHT_OFFSET, 2 * sizeof(int64_t)}};
static const struct ridge_model_desc desc = {
    ABI_VERSION, "cpu", 1, 1, tensors, WEIGHTS_FILE, 1, weights, 42,
    80,          0,     0, 0, 0,       NULL,    0};
#else
static const struct ridge_model_desc desc = {
    ABI_VERSION, "cpu", 1, 1, tensors, NULL, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, 0};
#endif
#endif

#ifdef OLD_MANIFEST
/* ABI version 1 exported text instead of a descriptor. */
const char *ridge_model_manifest(void) {
  return "ridgeline-model 1\ntarget cpu\noutput y f32 1\n";
}
#else
const struct ridge_model_desc *ridge_model_describe(void) { return &desc; }
#endif

void ridge_model_run(void **buffers) {
#ifdef WEIGHTS
  /* The sum of the weight's two values, as loaded from the file. */
  const int64_t *w = (const int64_t *)weight;
  *(int64_t *)buffers[1] = w[0] + w[1];
#else
  *(int64_t *)buffers[1] = 42;
#endif
}
