//===- RuntimeTest.cpp - Unit tests for libridge_runtime ------------------===//
//
// Standalone (no test framework, no MLIR): exercises the manifest parser,
// dtype helpers and the GPU-less paths of the CUDA driver probe and the mgpu*
// wrappers. Prints "PASS <name>" / "FAIL <name>: ..." and exits non-zero if
// anything failed.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include <cstdio>
#include <string>
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

const char *kGood = "ridgeline-model 1\n"
                    "target sm_90a\n"
                    "input x f32 4x64\n"
                    "input flag i1 scalar\n"
                    "input weird.name:0/a bf16 0x3\n"
                    "output y f16 4x64\n"
                    "output idx i64 7\n";

void testManifestParse() {
  begin("manifest-parse");
  Manifest m;
  std::string error;
  bool ok = parseManifest(kGood, m, error);
  expect(ok, "good manifest rejected: " + error);
  if (ok) {
    expect(m.version == 1, "version");
    expect(m.target == "sm_90a", "target");
    expect(m.inputs.size() == 3 && m.outputs.size() == 2, "tensor counts");
  }
  if (ok && m.inputs.size() == 3 && m.outputs.size() == 2) {
    const TensorSpec &x = m.inputs[0];
    expect(x.name == "x" && x.dtype == DType::F32, "input 0 name/dtype");
    expect(x.shape == std::vector<int64_t>({4, 64}), "input 0 shape");
    expect(x.numElements() == 256 && x.byteSize() == 1024, "input 0 size");
    expect(x.shapeString() == "4x64", "input 0 shapeString");
    const TensorSpec &flag = m.inputs[1];
    expect(flag.dtype == DType::I1 && flag.shape.empty(), "scalar bool");
    expect(flag.numElements() == 1 && flag.byteSize() == 1, "scalar size");
    expect(flag.shapeString() == "scalar", "scalar shapeString");
    const TensorSpec &w = m.inputs[2];
    expect(w.name == "weird.name:0/a", "names keep punctuation");
    expect(w.numElements() == 0 && w.byteSize() == 0, "empty tensor");
    expect(w.shapeString() == "0x3", "empty tensor shapeString");
    expect(m.outputs[1].byteSize() == 56, "i64 output size");
  }

  // No trailing newline, tabs as separators, no inputs, cpu target.
  Manifest cpu;
  ok = parseManifest("ridgeline-model 1\ntarget cpu\noutput\tz\tu8\t3x1x2", cpu,
                     error);
  expect(ok, "minimal cpu manifest rejected: " + error);
  if (ok)
    expect(cpu.target == "cpu" && cpu.inputs.empty() &&
               cpu.outputs.size() == 1 && cpu.outputs[0].byteSize() == 6,
           "minimal cpu manifest contents");

  // The same name may be both an input and an output (ONNX identity graphs).
  expect(parseManifest("ridgeline-model 1\ntarget cpu\ninput a f32 2\n"
                       "output a f32 2\n",
                       cpu, error),
         "input and output sharing a name rejected: " + error);
  end();
}

void testManifestMalformed() {
  begin("manifest-malformed");
  const std::string head = "ridgeline-model 1\ntarget cpu\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"ridgeline-model 2\ntarget cpu\noutput y f32 1\n", "version"},
      {"ridgeline-model\ntarget cpu\noutput y f32 1\n", "header"},
      {"ridgeline-model one\ntarget cpu\noutput y f32 1\n", "version"},
      {"target cpu\noutput y f32 1\n", "line 1"},
      {"ridgeline-model 1\noutput y f32 1\n", "before the 'target'"},
      {"ridgeline-model 1\n", "target"},
      {"ridgeline-model 1\ntarget cpu\n", "no outputs"},
      {"ridgeline-model 1\ntarget gpu\noutput y f32 1\n", "unknown target"},
      {"ridgeline-model 1\ntarget sm_8\noutput y f32 1\n", "unknown target"},
      {"ridgeline-model 1\ntarget sm_80b\noutput y f32 1\n", "unknown target"},
      {"ridgeline-model 1\ntarget cpu\ntarget cpu\noutput y f32 1\n",
       "duplicate 'target'"},
      {head + "output y f32 1\ninput x f32 1\n", "after an output"},
      {head + "input x f32\noutput y f32 1\n", "fields"},
      {head + "input x f32 1 extra\noutput y f32 1\n", "fields"},
      {head + "input x float32 1\noutput y f32 1\n", "unknown dtype"},
      {head + "input x f32 4x\noutput y f32 1\n", "malformed shape"},
      {head + "input x f32 x4\noutput y f32 1\n", "malformed shape"},
      {head + "input x f32 4xx4\noutput y f32 1\n", "malformed dimension"},
      {head + "input x f32 -1x4\noutput y f32 1\n", "malformed dimension"},
      {head + "input x f32 ?x4\noutput y f32 1\n", "dynamic"},
      {head + "input x f32 04\noutput y f32 1\n", "leading zero"},
      {head + "input x f32 4X4\noutput y f32 1\n", "malformed dimension"},
      {head + "input x f32 99999999999999999999\noutput y f32 1\n",
       "too large"},
      {head + "input x f64 65536x65536x65536\noutput y f32 1\n", "too large"},
      {head + "input x f32 1\ninput x f32 1\noutput y f32 1\n",
       "duplicate input"},
      {head + "input x f32 1\noutput y f32 1\noutput y f32 2\n",
       "duplicate output"},
      {head + "\noutput y f32 1\n", "empty line"},
      {head + "output y f32 1\n\n", "empty line"},
      {head + "output y f32 1\r\n", "carriage return"},
      {head + "param w f32 1\noutput y f32 1\n", "unknown directive"},
      {head + "ridgeline-model 1\noutput y f32 1\n", "duplicate"},
  };
  for (const auto &[text, needle] : cases) {
    Manifest m;
    std::string error;
    bool ok = parseManifest(text, m, error);
    std::string shown = text.substr(0, 60);
    for (char &c : shown)
      if (c == '\n')
        c = '|';
    expect(!ok, "accepted malformed manifest '" + shown + "'");
    if (ok)
      continue;
    std::string why = "error for '" + shown + "' is '" + error +
                      "', expected it to mention '" + needle + "'";
    expect(error.find(needle) != std::string::npos, why);
  }
  // Errors carry the line number of the offending directive.
  Manifest m;
  std::string error;
  parseManifest(head + "input x f32 1\ninput y q7 1\noutput z f32 1\n", m,
                error);
  expect(error.rfind("line 4:", 0) == 0, "line number in '" + error + "'");
  end();
}

void testDTypes() {
  begin("dtype-sizes");
  struct Row {
    const char *name;
    DType type;
    size_t size;
  };
  const Row rows[] = {
      {"f16", DType::F16, 2}, {"bf16", DType::BF16, 2}, {"f32", DType::F32, 4},
      {"f64", DType::F64, 8}, {"i1", DType::I1, 1},     {"i8", DType::I8, 1},
      {"i16", DType::I16, 2}, {"i32", DType::I32, 4},   {"i64", DType::I64, 8},
      {"u8", DType::U8, 1},   {"u16", DType::U16, 2},   {"u32", DType::U32, 4},
      {"u64", DType::U64, 8},
  };
  for (const Row &row : rows) {
    DType parsed = DType::F64;
    expect(parseDType(row.name, parsed) && parsed == row.type,
           std::string("parseDType(") + row.name + ")");
    expect(std::string(dtypeName(row.type)) == row.name,
           std::string("dtypeName for ") + row.name);
    expect(dtypeSize(row.type) == row.size,
           std::string("dtypeSize for ") + row.name);
  }
  DType untouched = DType::I32;
  expect(!parseDType("f8", untouched) && untouched == DType::I32,
         "unknown dtype rejected and out untouched");
  expect(!parseDType("F32", untouched), "dtype names are case-sensitive");
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
} // namespace

int main() {
  testManifestParse();
  testManifestMalformed();
  testDTypes();
  testGpuTargets();
  testDriverProbe();
  testStickyErrors();
  testModelLoadErrors();
  if (failures)
    std::printf("%d test(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
