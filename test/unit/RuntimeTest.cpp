//===- RuntimeTest.cpp - Unit tests for libridge_runtime ------------------===//
//
// Standalone (no test framework, no MLIR): exercises the model-descriptor
// checks, the dtype table and the GPU-less paths of the CUDA driver probe and
// the mgpu* wrappers. Prints "PASS <name>" / "FAIL <name>: ..." and exits
// non-zero if anything failed.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

// The driver internals are private to the runtime; this test probes them.
#include "Runtime/CudaDriver.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace ridge::rt;

// MLIR runtime-wrapper ABI exported by libridge_runtime.so.
extern "C" void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
extern "C" void *mgpuModuleGetFunction(void *module, const char *name);
extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t paramsCount);
extern "C" void mgpuModuleUnload(void *module);
extern "C" void ridgeTensorMapEncodeTiled(
    void *map, void *base, int32_t dataType, int32_t rank, int64_t dim0,
    int64_t dim1, int64_t dim2, int64_t dim3, int64_t dim4, int64_t stride1,
    int64_t stride2, int64_t stride3, int64_t stride4, int32_t box0,
    int32_t box1, int32_t box2, int32_t box3, int32_t box4, int32_t swizzle);

namespace {
int failures = 0;
std::string currentTest;
bool currentFailed = false;

void begin(const char *name) {
  currentTest = name;
  currentFailed = false;
}

void expect(bool cond, const std::string &what) {
  if (cond)
    return;
  std::printf("FAIL %s: %s\n", currentTest.c_str(), what.c_str());
  currentFailed = true;
}

void end() {
  if (currentFailed)
    ++failures;
  else
    std::printf("PASS %s\n", currentTest.c_str());
}

/// A descriptor built the way the compiler emits one, owning its storage.
struct DescBuilder {
  std::string target = "sm_90a";
  struct Tensor {
    std::string name;
    uint32_t dtype;
    std::vector<int64_t> dims;
  };
  std::vector<Tensor> inputs, outputs;
  std::vector<ridge_tensor_desc> tensors;
  ridge_model_desc desc{};

  /// Points `desc` at the current contents; call again after any change.
  const ridge_model_desc *build() {
    tensors.clear();
    for (const std::vector<Tensor> *list : {&inputs, &outputs})
      for (const Tensor &t : *list)
        tensors.push_back({t.name.c_str(), t.dtype,
                           static_cast<uint32_t>(t.dims.size()),
                           t.dims.empty() ? nullptr : t.dims.data()});
    desc.abi_version = RIDGE_MODEL_ABI_VERSION;
    desc.target = target.c_str();
    desc.num_inputs = static_cast<uint32_t>(inputs.size());
    desc.num_outputs = static_cast<uint32_t>(outputs.size());
    desc.tensors = tensors.data();
    return &desc;
  }
};

DescBuilder goodDesc() {
  DescBuilder b;
  b.inputs = {{"x", RIDGE_DTYPE_F32, {4, 64}},
              {"flag", RIDGE_DTYPE_I1, {}},
              {"weird name:0/a\t b", RIDGE_DTYPE_BF16, {0, 3}}};
  b.outputs = {{"y", RIDGE_DTYPE_F16, {4, 64}}, {"idx", RIDGE_DTYPE_I64, {7}}};
  return b;
}

void testDescRead() {
  begin("model-desc-read");
  DescBuilder b = goodDesc();
  ModelInfo m;
  std::string error;
  bool ok = readModelDesc(b.build(), m, error);
  expect(ok, "good descriptor rejected: " + error);
  if (ok) {
    expect(m.version == RIDGE_MODEL_ABI_VERSION, "version");
    expect(m.target == "sm_90a", "target");
    expect(m.inputs.size() == 3 && m.outputs.size() == 2, "tensor counts");
  }
  if (ok && m.inputs.size() == 3 && m.outputs.size() == 2) {
    const TensorSpec &x = m.inputs[0];
    expect(x.name == "x" && x.dtype == RIDGE_DTYPE_F32, "input 0 name/dtype");
    expect(x.shape == std::vector<int64_t>({4, 64}), "input 0 shape");
    expect(x.numElements() == 256 && x.byteSize() == 1024, "input 0 size");
    expect(x.shapeString() == "4x64", "input 0 shapeString");
    const TensorSpec &flag = m.inputs[1];
    expect(flag.dtype == RIDGE_DTYPE_I1 && flag.shape.empty(), "scalar bool");
    expect(flag.numElements() == 1 && flag.byteSize() == 1, "scalar size");
    expect(flag.shapeString() == "scalar", "scalar shapeString");
    const TensorSpec &w = m.inputs[2];
    expect(w.name == "weird name:0/a\t b", "names are kept verbatim");
    expect(w.numElements() == 0 && w.byteSize() == 0, "empty tensor");
    expect(w.shapeString() == "0x3", "empty tensor shapeString");
    expect(m.outputs[1].byteSize() == 56, "i64 output size");
  }

  // No inputs, cpu target.
  DescBuilder cpu;
  cpu.target = "cpu";
  cpu.outputs = {{"z", RIDGE_DTYPE_U8, {3, 1, 2}}};
  ModelInfo c;
  ok = readModelDesc(cpu.build(), c, error);
  expect(ok, "minimal cpu descriptor rejected: " + error);
  if (ok)
    expect(c.target == "cpu" && c.inputs.empty() && c.outputs.size() == 1 &&
               c.outputs[0].byteSize() == 6,
           "minimal cpu descriptor contents");

  // The same name may be both an input and an output (ONNX identity graphs).
  cpu.inputs = {{"z", RIDGE_DTYPE_U8, {3, 1, 2}}};
  expect(readModelDesc(cpu.build(), c, error),
         "input and output sharing a name rejected: " + error);
  end();
}

void testDescMalformed() {
  begin("model-desc-malformed");
  // Each case edits either the builder's contents (before build()) or the
  // built structs themselves (after it).
  struct Case {
    std::function<void(DescBuilder &)> contents, structs;
    std::string needle;
  };
  auto noop = [](DescBuilder &) {};
  const std::vector<Case> cases = {
      {noop, [](DescBuilder &b) { b.desc.abi_version = 1; },
       "unsupported model ABI version 1 (this runtime reads version"},
      {noop, [](DescBuilder &b) { b.desc.abi_version = 99; },
       "unsupported model ABI version 99"},
      {noop, [](DescBuilder &b) { b.desc.target = nullptr; }, "null target"},
      {[](DescBuilder &b) { b.target = "gpu"; }, noop, "unknown target 'gpu'"},
      {[](DescBuilder &b) { b.target = "sm_8"; }, noop, "unknown target"},
      {[](DescBuilder &b) { b.target = "sm_80b"; }, noop, "unknown target"},
      {[](DescBuilder &b) { b.outputs.clear(); }, noop, "no outputs"},
      {noop, [](DescBuilder &b) { b.desc.num_inputs = 1u << 20; }, "at most"},
      {noop, [](DescBuilder &b) { b.desc.tensors = nullptr; },
       "null tensor array"},
      {noop, [](DescBuilder &b) { b.tensors[3].name = nullptr; },
       "output 0 has a null name"},
      {[](DescBuilder &b) { b.inputs[1].name = ""; }, noop,
       "input 1 has an empty name"},
      {[](DescBuilder &b) { b.inputs[0].dtype = RIDGE_DTYPE_INVALID; }, noop,
       "input 0 ('x') has unknown dtype 0"},
      {[](DescBuilder &b) { b.outputs[1].dtype = 99; }, noop,
       "output 1 ('idx') has unknown dtype 99"},
      {noop, [](DescBuilder &b) { b.tensors[0].rank = 65; }, "rank 65"},
      {noop, [](DescBuilder &b) { b.tensors[0].dims = nullptr; },
       "has rank 2 but no dims"},
      {[](DescBuilder &b) {
         b.inputs[0].dims = {4, -1};
       },
       noop, "input 0 ('x') has dimension -1"},
      {[](DescBuilder &b) {
         b.inputs[0].dims = {int64_t(1) << 62, 4};
       },
       noop, "too large"},
      {[](DescBuilder &b) {
         b.inputs[0] = {"x", RIDGE_DTYPE_F64, {65536, 65536, 65536}};
       },
       noop, "too large"},
      {[](DescBuilder &b) { b.inputs[1].name = "x"; }, noop,
       "duplicate input name 'x'"},
      {[](DescBuilder &b) { b.outputs[1].name = "y"; }, noop,
       "duplicate output name 'y'"},
      // Device memory (ABI 4): only GPU models have it, and every weight
      // lies inside the device weights block.
      {[](DescBuilder &b) { b.target = "cpu"; },
       [](DescBuilder &b) { b.desc.arena_bytes = 256; },
       "a cpu model declares device memory"},
      {noop,
       [](DescBuilder &b) {
         b.desc.num_device_weights = 1;
         b.desc.device_weights = nullptr;
       },
       "declares device weights but no table"},
      // ABI 5: the arena's zeroed bytes lie in the arena.
      {noop,
       [](DescBuilder &b) {
         b.desc.arena_bytes = 256;
         b.desc.arena_zeroed_bytes = 512;
       },
       "declares 512 zeroed bytes in an arena of 256"},
      {noop,
       [](DescBuilder &b) {
         static const void *host = nullptr;
         static const ridge_device_weight_desc weight = {"w", &host, 192, 128};
         b.desc.device_weights_bytes = 256;
         b.desc.num_device_weights = 1;
         b.desc.device_weights = &weight;
       },
       "device weight 0 ('w') at bytes [192, +128) leaves the 256-byte "
       "device weights block"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    DescBuilder b = goodDesc();
    cases[i].contents(b);
    b.build();
    cases[i].structs(b);
    ModelInfo m;
    std::string error;
    bool ok = readModelDesc(&b.desc, m, error);
    expect(!ok, "accepted malformed descriptor, case " + std::to_string(i));
    if (ok)
      continue;
    expect(error.find(cases[i].needle) != std::string::npos,
           "error for case " + std::to_string(i) + " is '" + error +
               "', expected it to mention '" + cases[i].needle + "'");
  }
  ModelInfo m;
  std::string error;
  expect(!readModelDesc(nullptr, m, error) &&
             error.find("null") != std::string::npos,
         "null descriptor");
  end();
}

void testDTypes() {
  begin("dtype-table");
  struct Row {
    const char *name;
    DType type;
    uint32_t value;
    size_t size;
  };
  // The values are ABI: compiled models store them.
  const Row rows[] = {
      {"f16", RIDGE_DTYPE_F16, 1, 2},
      {"bf16", RIDGE_DTYPE_BF16, 2, 2},
      {"f32", RIDGE_DTYPE_F32, 3, 4},
      {"f64", RIDGE_DTYPE_F64, 4, 8},
      {"i1", RIDGE_DTYPE_I1, 5, 1},
      {"i8", RIDGE_DTYPE_I8, 6, 1},
      {"i16", RIDGE_DTYPE_I16, 7, 2},
      {"i32", RIDGE_DTYPE_I32, 8, 4},
      {"i64", RIDGE_DTYPE_I64, 9, 8},
      {"u8", RIDGE_DTYPE_U8, 10, 1},
      {"u16", RIDGE_DTYPE_U16, 11, 2},
      {"u32", RIDGE_DTYPE_U32, 12, 4},
      {"u64", RIDGE_DTYPE_U64, 13, 8},
      {"f8E4M3FN", RIDGE_DTYPE_F8E4M3FN, 14, 1},
      {"f8E4M3FNUZ", RIDGE_DTYPE_F8E4M3FNUZ, 15, 1},
      {"f8E5M2", RIDGE_DTYPE_F8E5M2, 16, 1},
      {"f8E5M2FNUZ", RIDGE_DTYPE_F8E5M2FNUZ, 17, 1},
  };
  for (const Row &row : rows) {
    expect(static_cast<uint32_t>(row.type) == row.value,
           std::string("value of ") + row.name);
    expect(std::string(dtypeName(row.type)) == row.name,
           std::string("dtypeName for ") + row.name);
    expect(dtypeSize(row.type) == row.size,
           std::string("dtypeSize for ") + row.name);
  }
  expect(ridge_dtype_name(0) == nullptr && ridge_dtype_size(0) == 0 &&
             ridge_dtype_name(18) == nullptr && ridge_dtype_size(99) == 0,
         "values outside the table have no name or size");
  expect(std::string(dtypeName(static_cast<DType>(99))) == "invalid",
         "dtypeName of an invalid value");
  end();
}

void testGpuTargets() {
  begin("gpu-target-parse");
  int cc = 0;
  bool a = false;
  expect(parseGpuTarget("sm_80", cc, a) && cc == 80 && !a, "sm_80");
  expect(parseGpuTarget("sm_90a", cc, a) && cc == 90 && a, "sm_90a");
  expect(parseGpuTarget("sm_100a", cc, a) && cc == 100 && a, "sm_100a");
  expect(!parseGpuTarget("cpu", cc, a), "cpu is not a GPU target");
  expect(!parseGpuTarget("sm_", cc, a), "sm_");
  expect(!parseGpuTarget("sm_9", cc, a), "sm_9");
  expect(!parseGpuTarget("sm_90b", cc, a), "sm_90b");
  expect(!parseGpuTarget("compute_90", cc, a), "compute_90");
  end();
}

void testDriverProbe() {
  begin("cuda-driver-probe");
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  if (driver) {
    std::printf("note: CUDA driver %d found, %d device(s); device 0: %s "
                "(sm_%d)\n",
                driver->driverVersion(), driver->deviceCount(),
                driver->deviceName(0).c_str(), driver->computeCapability(0));
    expect(driver->deviceCount() > 0, "a driver implies a device");
  } else {
    std::printf("note: no CUDA driver: %s\n", why.c_str());
    expect(!why.empty(), "nullptr without a reason");
    std::string again;
    expect(CudaDriver::get(again) == nullptr && again == why,
           "the outcome is cached");
  }
  end();
}

void testEmulatedTensorMap() {
  begin("emulated-cuTensorMapEncodeTiled");
  CudaDriver::Api api = getEmulatedDriverApi(90);
  expect(api.cuTensorMapEncodeTiled != nullptr, "the entry point is bound");
  if (!api.cuTensorMapEncodeTiled) {
    end();
    return;
  }
  alignas(256) static uint16_t matrix[128 * 64];
  cu::CUtensorMap map;
  uint64_t dims[2] = {64, 128}, strides[1] = {64 * 2};
  unsigned box[2] = {64, 32}, elementStrides[2] = {1, 1};
  expect(api.cuTensorMapEncodeTiled(
             &map, cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, matrix, dims,
             strides, box, elementStrides, cu::CU_TENSOR_MAP_INTERLEAVE_NONE,
             cu::CU_TENSOR_MAP_SWIZZLE_128B,
             cu::CU_TENSOR_MAP_L2_PROMOTION_NONE,
             cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == cu::CUDA_SUCCESS,
         "a 64 x 32 box of a bf16 matrix with the 128B swizzle encodes");
  // 128 bf16 are 256 bytes, wider than the 128B swizzle span: the driver
  // refuses that box, and so does the emulated one, saying why.
  unsigned wide[2] = {128, 32};
  cu::CUresult result = api.cuTensorMapEncodeTiled(
      &map, cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, matrix, dims, strides,
      wide, elementStrides, cu::CU_TENSOR_MAP_INTERLEAVE_NONE,
      cu::CU_TENSOR_MAP_SWIZZLE_128B, cu::CU_TENSOR_MAP_L2_PROMOTION_NONE,
      cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  const char *text = "";
  api.cuGetErrorString(result, &text);
  expect(result == cu::CUDA_ERROR_INVALID_VALUE &&
             std::string(text).find("swizzle span") != std::string::npos,
         std::string("a box wider than the swizzle span: ") + text);
  end();
}

/// The host code's tensor-map encoder fails softly: a refused map is the
/// run's error (naming the wrapper), and the map it leaves is zeros, with
/// or without a driver.
void testTensorMapEncoderErrors() {
  begin("ridgeTensorMapEncodeTiled-errors");
  takeGpuError();
  alignas(64) uint64_t map[16];
  std::memset(map, 0xab, sizeof(map));
  alignas(256) static uint16_t matrix[64 * 64];
  ridgeTensorMapEncodeTiled(map, matrix, cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                            /*rank=*/6, 64, 64, 1, 1, 1, 128, 0, 0, 0, 32, 64,
                            1, 1, 1, cu::CU_TENSOR_MAP_SWIZZLE_64B);
  std::string error = takeGpuError();
  expect(error.find("ridgeTensorMapEncodeTiled") == 0,
         "the error names the wrapper: '" + error + "'");
  bool zeros = true;
  for (uint64_t word : map)
    zeros &= word == 0;
  expect(zeros, "the refused map is zeros");
  end();
}

void testStickyErrors() {
  begin("gpu-sticky-error");
  takeGpuError();
  expect(!hasGpuError() && takeGpuError().empty(), "starts clear");
  recordGpuError("first");
  recordGpuError("second");
  expect(hasGpuError(), "recorded");
  expect(takeGpuError() == "first", "first error wins");
  expect(!hasGpuError(), "take clears");

  // The wrappers must fail softly: a bogus binary is reported, not fatal,
  // with or without a driver.
  char garbage[] = {'n', 'o', 't', ' ', 'p', 't', 'x'}; // no terminator
  void *module = mgpuModuleLoad(garbage, sizeof(garbage));
  expect(module == nullptr, "garbage module load returns null");
  expect(hasGpuError(), "garbage module load records an error");
  void *function = mgpuModuleGetFunction(module, "kernel");
  expect(function == nullptr, "lookup in a null module returns null");
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  mgpuModuleUnload(module);
  std::string error = takeGpuError();
  expect(error.find("mgpuModuleLoad") == 0,
         "the first error names mgpuModuleLoad: '" + error + "'");
  std::printf("note: recorded GPU error: %s\n", error.c_str());
  end();
}

void testModelLoadErrors() {
  begin("model-load-errors");
  std::string error;
  auto model = Model::load("/nonexistent/dir/model.so", error);
  expect(!model, "loading a missing file fails");
  expect(error.find("/nonexistent/dir/model.so") == 0,
         "error names the file: '" + error + "'");
  end();
}

/// Two kernels for the emulated driver's counters: copy moves n floats
/// (coalesced), touch reads one.
const char kCounterPtx[] = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry copy(.param .u64 in, .param .u64 out)
{
	.reg .b32 %r<2>;
	.reg .f32 %f<2>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	st.global.f32 [%rd5], %f1;
	ret;
}
.visible .entry touch(.param .u64 in)
{
	.reg .f32 %f<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [in];
	ld.global.f32 %f1, [%rd1];
	ret;
}
)";

void testEmulatorCounters() {
  begin("emulator-counters");
  CudaDriver::Api api = getEmulatedDriverApi(90);
  resetEmulatorCounters();
  cu::CUmodule module = nullptr;
  cu::CUfunction copy = nullptr, touch = nullptr;
  cu::CUdeviceptr in = 0, out = 0;
  bool ok = api.cuModuleLoadData(&module, kCounterPtx) == 0 &&
            api.cuModuleGetFunction(&copy, module, "copy") == 0 &&
            api.cuModuleGetFunction(&touch, module, "touch") == 0 &&
            api.cuMemAlloc(&in, 1024) == 0 && api.cuMemAlloc(&out, 1024) == 0;
  expect(ok, "module, functions and buffers");
  if (!ok)
    return end();
  void *copyArgs[] = {&in, &out};
  void *touchArgs[] = {&in};
  // copy twice (64 and 256 threads), touch once.
  ok = api.cuLaunchKernel(copy, 1, 1, 1, 64, 1, 1, 0, nullptr, copyArgs,
                          nullptr) == 0 &&
       api.cuLaunchKernel(touch, 1, 1, 1, 32, 1, 1, 0, nullptr, touchArgs,
                          nullptr) == 0 &&
       api.cuLaunchKernel(copy, 1, 1, 1, 256, 1, 1, 0, nullptr, copyArgs,
                          nullptr) == 0;
  expect(ok, "launches");
  std::vector<ridge::emu::KernelCounters> counters = getEmulatorCounters();
  expect(counters.size() == 2, "one entry per kernel name");
  if (counters.size() == 2) {
    const ridge::emu::KernelCounters &c = counters[0], &t = counters[1];
    expect(c.kernel == "copy" && t.kernel == "touch",
           "in the order of first launches");
    expect(c.launches == 2 && t.launches == 1, "launch counts");
    expect(c.block[0] == 256, "the last launch's block");
    expect(c.threads == 320 && c.globalLoad.bytes == 1280 &&
               c.globalLoad.sectors == 40 && c.globalStore.bytes == 1280,
           "copy's counts summed over its launches");
    expect(t.globalLoad.requests == 1 && t.globalLoad.bytes == 128 &&
               t.globalLoad.sectors == 1,
           "touch's 32 lanes read one word: 1 request, 1 sector");
  }
  std::string json = getEmulatorCountersJson();
  expect(json.find("\"launches\": 2,") != std::string::npos &&
             json.find("\"name\": \"touch\"") != std::string::npos,
         "JSON: " + json.substr(0, 200));
  size_t length = ridge_emulator_counters_json(nullptr, 0);
  expect(length == json.size(), "the C form's length");
  char small[16];
  expect(ridge_emulator_counters_json(small, sizeof(small)) == length &&
             std::strlen(small) == sizeof(small) - 1 &&
             json.compare(0, sizeof(small) - 1, small) == 0,
         "the C form truncates and terminates");
  resetEmulatorCounters();
  expect(getEmulatorCounters().empty(), "reset forgets");
  api.cuMemFree(in);
  api.cuMemFree(out);
  api.cuModuleUnload(module);
  end();
}
} // namespace

/// `name` in single quotes, with backslashes, quotes and bytes outside
/// printable ASCII escaped C-style (a tab as backslash-t, DEL as
/// backslash-x7f), so that a check can tell a tab from a space.
static std::string quoted(const std::string &name) {
  std::string out = "'";
  for (unsigned char c : name) {
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

/// `ridge-runtime-test --describe MODEL.so`: loads a compiled model and
/// prints its descriptor as the runtime read it, one tensor a line (names
/// quoted()). Exits 1 with the load error.
static int describeModel(const char *path) {
  std::string error;
  auto model = Model::load(path, error);
  if (!model) {
    std::printf("error: %s\n", error.c_str());
    return 1;
  }
  std::printf("abi version %d, target %s\n", model->modelInfo().version,
              model->target().c_str());
  for (const char *kind : {"input", "output"}) {
    const std::vector<TensorSpec> &list =
        kind[0] == 'i' ? model->inputs() : model->outputs();
    for (size_t i = 0; i < list.size(); ++i)
      std::printf("%s %zu %s %s %s\n", kind, i, quoted(list[i].name).c_str(),
                  dtypeName(list[i].dtype), list[i].shapeString().c_str());
  }
  // Weights as mapped from the weights file: the first 16 bytes in hex.
  const ModelInfo &info = model->modelInfo();
  if (!info.weights.empty())
    std::printf("weights file %s, %llu bytes\n",
                quoted(info.weightsFile).c_str(),
                static_cast<unsigned long long>(info.weightsBytes));
  for (size_t i = 0; i < info.weights.size(); ++i) {
    const WeightSpec &w = info.weights[i];
    std::printf("weight %zu %s %llu bytes at %llu:", i, quoted(w.name).c_str(),
                static_cast<unsigned long long>(w.bytes),
                static_cast<unsigned long long>(w.offset));
    for (uint64_t k = 0; k < std::min<uint64_t>(w.bytes, 16); ++k)
      std::printf(" %02x", static_cast<const unsigned char *>(*w.address)[k]);
    std::printf("\n");
  }
  return 0;
}

/// `ridge-runtime-test --sessions MODEL.so` (a GPU model, on the emulated
/// driver): sessions on several threads at once compute what one session
/// computes alone. A reference session runs each thread's inputs first and
/// is destroyed; then every thread makes its own session and runs its
/// inputs several times, concurrently with the others; every output must
/// equal the reference bit for bit.
static int testSessions(const char *path) {
  constexpr int kThreads = 4, kRuns = 3;
  std::string error;
  auto model = Model::load(path, error);
  if (!model) {
    std::printf("error: %s\n", error.c_str());
    return 1;
  }
  size_t numInputs = model->inputs().size();
  auto makeBuffers = [&](int thread, std::vector<std::vector<char>> &data) {
    data.clear();
    for (size_t i = 0; i < numInputs + model->outputs().size(); ++i) {
      const TensorSpec &spec =
          i < numInputs ? model->inputs()[i] : model->outputs()[i - numInputs];
      data.emplace_back(std::max<size_t>(spec.byteSize(), 1), 0);
      if (i >= numInputs)
        continue;
      // Small values of each thread's own: floats as f32 only.
      for (size_t k = 0; k + 4 <= data.back().size(); k += 4) {
        float value =
            spec.dtype == RIDGE_DTYPE_F32
                ? 0.01f * static_cast<float>((k / 4 * 7 + thread * 13) % 97)
                : 0.0f;
        std::memcpy(data.back().data() + k, &value, 4);
      }
    }
  };
  auto pointers = [](std::vector<std::vector<char>> &data) {
    std::vector<void *> result;
    for (std::vector<char> &bytes : data)
      result.push_back(bytes.data());
    return result;
  };
  std::vector<std::vector<std::vector<char>>> references(kThreads);
  {
    std::unique_ptr<Session> session = Session::create(*model, error);
    if (!session) {
      std::printf("error: %s\n", error.c_str());
      return 1;
    }
    for (int t = 0; t < kThreads; ++t) {
      makeBuffers(t, references[t]);
      if (!session->run(pointers(references[t]), error)) {
        std::printf("error: %s\n", error.c_str());
        return 1;
      }
    }
  }
  std::vector<std::string> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      std::string threadError;
      std::unique_ptr<Session> session = Session::create(*model, threadError);
      if (!session) {
        results[t] = "session: " + threadError;
        return;
      }
      for (int run = 0; run < kRuns; ++run) {
        std::vector<std::vector<char>> data;
        makeBuffers(t, data);
        if (!session->run(pointers(data), threadError)) {
          results[t] = "run: " + threadError;
          return;
        }
        for (size_t i = numInputs; i < data.size(); ++i)
          if (data[i] != references[t][i]) {
            results[t] = "output " + std::to_string(i - numInputs) +
                         " of run " + std::to_string(run) +
                         " differs from the reference";
            return;
          }
      }
      results[t] = "ok";
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  int failed = 0;
  for (int t = 0; t < kThreads; ++t) {
    std::printf("thread %d: %s\n", t, results[t].c_str());
    failed += results[t] != "ok";
  }
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && std::string(argv[1]) == "--describe")
    return describeModel(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--sessions")
    return testSessions(argv[2]);
  if (argc != 1) {
    std::printf("usage: ridge-runtime-test [--describe|--sessions MODEL.so]\n");
    return 2;
  }
  testDescRead();
  testDescMalformed();
  testDTypes();
  testGpuTargets();
  testDriverProbe();
  testEmulatedTensorMap();
  testTensorMapEncoderErrors();
  testStickyErrors();
  testModelLoadErrors();
  testEmulatorCounters();
  if (failures)
    std::printf("%d test(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
