/* A model written by hand against ModelAbi.h (C99), for
 * model-abi-errors.test. -DABI_VERSION=, -DDTYPE= and -DOLD_MANIFEST break
 * it in the ways the runtime must refuse. */
#include "ridgeline/Runtime/ModelAbi.h"

#ifndef ABI_VERSION
#define ABI_VERSION RIDGE_MODEL_ABI_VERSION
#endif
#ifndef DTYPE
#define DTYPE RIDGE_DTYPE_F32
#endif

#ifndef OLD_MANIFEST
static const int64_t dims[] = {2, 3};
static const struct ridge_tensor_desc tensors[] = {
    {"in put", DTYPE, 2, dims},
    {"out put", RIDGE_DTYPE_I64, 0, NULL},
};
static const struct ridge_model_desc desc = {ABI_VERSION, "cpu", 1, 1,
                                             tensors};
#endif

#ifdef OLD_MANIFEST
/* ABI version 1 exported text instead of a descriptor. */
const char *ridge_model_manifest(void) {
  return "ridgeline-model 1\ntarget cpu\noutput y f32 1\n";
}
#else
const struct ridge_model_desc *ridge_model_describe(void) { return &desc; }
#endif

void ridge_model_run(void **buffers) { *(int64_t *)buffers[1] = 42; }
