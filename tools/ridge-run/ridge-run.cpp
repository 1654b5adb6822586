//===- ridge-run.cpp - Compile a model and check it against references ----===//
//
//   ridge-run MODEL.onnx --target=cpu --test-data DIR --compare
//             [--rtol R --atol A]
//
// Compiles the model (input shapes taken from DIR/input_K.pb; small inputs
// also lend their values to operands that decide shapes), runs it
// through libridge_runtime and compares each output with DIR/output_K.pb.
// With --target=sm_* --device=emulator, the PTX emulator stands in for the
// CUDA driver under the runtime (lib/Runtime/EmulatedDriver.cpp).
// Exit codes: 0 all outputs within tolerance, 1 mismatch or error,
// 3 the GPU target was asked for but no NVIDIA GPU/driver is available.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/GpuSpec.h"
#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"
#include "ridgeline/Driver/Compiler.h"
#include "ridgeline/Driver/EmulatorReport.h"
#include "ridgeline/Driver/Verify.h"
#include "ridgeline/Import/OnnxImporter.h"
#include "ridgeline/Import/TensorProto.h"
#include "ridgeline/Pipelines/Pipelines.h"
#include "ridgeline/Runtime/Runtime.h"

// --inject-fault (hidden): the test library's deliberately wrong kernel.
#include "TestPasses.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::ridge;
namespace cl = llvm::cl;

static cl::OptionCategory category("ridge-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required, cl::cat(category));
static TargetCLOptions targetOptions(category);
static ImportCLOptions importCLOptions(category);
static ArtifactCLOptions artifactOptions(category);
/// The target, resolved once from targetOptions, and its chip.
static TargetSpec resolvedTarget;
static std::string target;
static cl::opt<std::string>
    testData("test-data",
             cl::desc("Folder with input_K.pb (and output_K.pb) files"),
             cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> compare("compare",
                             cl::desc("Compare outputs with output_K.pb"),
                             cl::init(false), cl::cat(category));
static cl::opt<double> relTolerance("rtol",
                                    cl::desc("Relative tolerance (1e-3)"),
                                    cl::init(1e-3), cl::cat(category));
static cl::opt<double> absTolerance("atol",
                                    cl::desc("Absolute tolerance (1e-5)"),
                                    cl::init(1e-5), cl::cat(category));
static cl::opt<bool> reducedPrecisionTolerance(
    "reduced-precision-tolerance",
    cl::desc("When the build rounds contractions to bf16 or fp16 "
             "(--precision; docs/precision.md), compare each output at the "
             "wider of --rtol/--atol and that format's tolerance (default "
             "on); off: at --rtol/--atol alone"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string>
    cudaToolkit("cuda-toolkit",
                cl::desc("CUDA toolkit (default: $CUDA_HOME, then PATH)"),
                cl::init(""), cl::cat(category));

static cl::opt<bool>
    describe("describe",
             cl::desc("Print the model's opset, op types and whether it is in "
                      "Ridgeline's scope, then exit (4 when out of scope)"),
             cl::init(false), cl::cat(category));

static cl::opt<bool> specializeValues(
    "specialize-values",
    cl::desc("Specialize shape-deciding operands (Reshape targets, Slice "
             "bounds, axes, Resize scales, ...) that are small graph inputs "
             "to their test-data values, as input shapes are (default on)"),
    cl::init(true), cl::cat(category));

static cl::opt<bool>
    fusion("fusion",
           cl::desc("Compile with the roofline-driven fusion plan (default "
                    "on); off: one kernel per graph op"),
           cl::init(true), cl::cat(category));

static cl::opt<bool> verify(
    "verify",
    cl::desc("Run the fused plan and an unfused reference side by side on "
             "the test inputs and name the first kernel whose outputs differ "
             "beyond --rtol/--atol, with its ONNX nodes"),
    cl::init(false), cl::cat(category));

static cl::opt<std::string> injectFault(
    "inject-fault",
    cl::desc("With --verify: add 1 to this kernel's first result in the "
             "fused build (to test that verification finds a broken kernel)"),
    cl::value_desc("kernel"), cl::init(""), cl::cat(category), cl::Hidden);

static cl::opt<std::string> injectGpuFault(
    "inject-gpu-fault",
    cl::desc("Test only: break one GPU kernel, FAULT[:KERNEL] with FAULT "
             "thread-index, drop-barrier, drop-fence, shuffle-lane or "
             "misaligned-vector (test-ridge-inject-gpu-fault); with --verify, "
             "the fused build only"),
    cl::value_desc("fault[:kernel]"), cl::init(""), cl::cat(category),
    cl::Hidden);

static cl::opt<int> repeat(
    "repeat",
    cl::desc("Run the model this many more times after the first, with the "
             "data in place, and print the median and minimum time (a "
             "benchmark, not a test)"),
    cl::init(0), cl::cat(category));

static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Run on uniform random inputs of the model's own static shapes "
             "instead of --test-data (for --repeat benchmarks; the same "
             "inputs on every target, so --save-outputs of two runs "
             "compare)"),
    cl::init(false), cl::cat(category));

enum class DeviceKind { Gpu, Emulator };
static cl::opt<std::string> deviceName(
    "device",
    cl::desc("What runs a GPU target's kernels: gpu (the NVIDIA driver's "
             "device 0, the default), cuda:N (its device N), or emulator "
             "(the PTX emulator standing in for the driver as the target's "
             "chip; RIDGE_DEVICE)"),
    cl::value_desc("gpu|cuda:N|emulator"), cl::init("gpu"), cl::cat(category));
/// --device, parsed once in main.
static DeviceKind device = DeviceKind::Gpu;
static int deviceOrdinal = 0;

static cl::opt<std::string> emulatorReport(
    "emulator-report",
    cl::desc("With --device=emulator: print each kernel's measured counters "
             "(instructions, global bytes and sectors, footprint, bank "
             "conflicts) next to the bytes the fusion plan predicted, as a "
             "table (--emulator-report) or JSON (--emulator-report=json)"),
    cl::value_desc("text|json"), cl::ValueOptional, cl::init(""),
    cl::cat(category));
static cl::opt<bool> kernelTimes(
    "kernel-times",
    cl::desc("Time every kernel launch (CUDA events around each; on the "
             "emulator, the host time of its emulation) and print each "
             "kernel's time next to its roofline prediction"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> saveOutputs(
    "save-outputs",
    cl::desc("Write each output to DIR/output_K.npy (NumPy's format; bf16 as "
             "uint16, float8 as uint8), e.g. to compare a GPU run with an "
             "emulated one"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    reportFile("o", cl::desc("Where --emulator-report writes (default: -)"),
               cl::value_desc("file"), cl::init("-"), cl::cat(category));

enum ExitCode { kOk = 0, kFailed = 1, kNoGpu = 3, kOutOfScope = 4 };

/// Inputs up to this size are offered to the importer as values that
/// shape-deciding operands may be specialized to.
static constexpr int64_t kMaxSpecializedElements = 64;

static int fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ridge-run") << message << "\n";
  return kFailed;
}

/// Lists DIR/PREFIX_K.pb for K = 0, 1, ... and rejects gaps.
static std::vector<std::string> listTensors(StringRef dir, StringRef prefix,
                                            std::string &error) {
  std::vector<std::string> files;
  std::error_code ec;
  unsigned found = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(prefix.str() + "_") && name.ends_with(".pb"))
      ++found;
  }
  if (ec) {
    error = "cannot read test-data folder '" + dir.str() + "': " + ec.message();
    return {};
  }
  for (unsigned k = 0; k < found; ++k) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, prefix + "_" + std::to_string(k) + ".pb");
    if (!llvm::sys::fs::exists(path)) {
      error = "test-data folder '" + dir.str() + "' has " +
              std::to_string(found) + " " + prefix.str() + " files but no " +
              llvm::sys::path::filename(path).str();
      return {};
    }
    files.push_back(std::string(path));
  }
  return files;
}

static double halfToDouble(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(static_cast<double>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}

/// An ONNX float8 value (`expBits` exponent and 7 - `expBits` mantissa bits
/// under `bias`) as a double. FNUZ types have one NaN, 0x80, and no
/// infinity; E4M3FN has no infinity and S.1111.111 is NaN; E5M2 follows IEEE.
static double float8ToDouble(uint8_t bits, int expBits, int bias, bool fnuz) {
  int manBits = 7 - expBits;
  int exponent = (bits >> manBits) & ((1 << expBits) - 1);
  int mantissa = bits & ((1 << manBits) - 1);
  bool negative = bits & 0x80;
  if (fnuz && bits == 0x80)
    return NAN;
  if (!fnuz && exponent == (1 << expBits) - 1) {
    if (expBits == 5) // E5M2: IEEE infinities and NaNs.
      return mantissa ? NAN : (negative ? -INFINITY : INFINITY);
    if (mantissa == (1 << manBits) - 1) // E4M3FN: S.1111.111 only.
      return NAN;
  }
  double value =
      exponent == 0
          ? std::ldexp(static_cast<double>(mantissa), 1 - bias - manBits)
          : std::ldexp(static_cast<double>(mantissa | (1 << manBits)),
                       exponent - bias - manBits);
  return negative ? -value : value;
}

/// Element `i` of a buffer of `dtype` as a double.
static double elementAt(const char *data, ridge_dtype dtype, size_t i) {
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, data + i * sizeof(v), sizeof(v));
    return v;
  };
  switch (dtype) {
  case RIDGE_DTYPE_F32:
    return load(float());
  case RIDGE_DTYPE_F64:
    return load(double());
  case RIDGE_DTYPE_F16:
    return halfToDouble(load(uint16_t()));
  case RIDGE_DTYPE_BF16: {
    uint32_t bits = static_cast<uint32_t>(load(uint16_t())) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case RIDGE_DTYPE_I1:
    return load(uint8_t()) != 0;
  case RIDGE_DTYPE_I8:
    return load(int8_t());
  case RIDGE_DTYPE_I16:
    return load(int16_t());
  case RIDGE_DTYPE_I32:
    return load(int32_t());
  case RIDGE_DTYPE_I64:
    return static_cast<double>(load(int64_t()));
  case RIDGE_DTYPE_U8:
    return load(uint8_t());
  case RIDGE_DTYPE_U16:
    return load(uint16_t());
  case RIDGE_DTYPE_U32:
    return load(uint32_t());
  case RIDGE_DTYPE_U64:
    return static_cast<double>(load(uint64_t()));
  case RIDGE_DTYPE_F8E4M3FN:
    return float8ToDouble(load(uint8_t()), 4, 7, /*fnuz=*/false);
  case RIDGE_DTYPE_F8E4M3FNUZ:
    return float8ToDouble(load(uint8_t()), 4, 8, /*fnuz=*/true);
  case RIDGE_DTYPE_F8E5M2:
    return float8ToDouble(load(uint8_t()), 5, 15, /*fnuz=*/false);
  case RIDGE_DTYPE_F8E5M2FNUZ:
    return float8ToDouble(load(uint8_t()), 5, 16, /*fnuz=*/true);
  case RIDGE_DTYPE_INVALID:
    break;
  }
  return 0;
}

/// Element errors of `got` against `want` (both of `spec`'s type): returns
/// the count outside tolerance.
static size_t compareElements(const ::ridge::rt::TensorSpec &spec,
                              const char *got, const char *want, double rtol,
                              double atol, double &maxAbs, double &maxRel) {
  maxAbs = 0;
  maxRel = 0;
  size_t bad = 0;
  for (size_t i = 0, e = spec.numElements(); i < e; ++i) {
    double g = elementAt(got, spec.dtype, i);
    double w = elementAt(want, spec.dtype, i);
    // Equal values (equal infinities too) and NaN against NaN are exact.
    if ((std::isnan(g) && std::isnan(w)) || g == w)
      continue;
    double diff = std::fabs(g - w);
    if (std::isnan(diff) || (std::isinf(w) && g != w))
      diff = INFINITY;
    maxAbs = std::max(maxAbs, diff);
    if (w != 0)
      maxRel = std::max(maxRel, diff / std::fabs(w));
    if (!(diff <= atol + rtol * std::fabs(w)))
      ++bad;
  }
  return bad;
}

/// The relative tolerance of outputs computed through contractions whose
/// operands were rounded to `numerics` (docs/precision.md): 8 units of
/// rounding of the format, u = 2^-8 for bf16 (8 significant bits), 2^-11
/// for fp16 and tf32 (11) and 2^-4 for fp8 (e4m3: 4); 0 for fp32.
static double getReducedPrecisionTolerance(Precision numerics) {
  switch (numerics) {
  case Precision::FP8:
    return std::ldexp(1.0, -1);
  case Precision::BF16:
    return std::ldexp(1.0, -5);
  case Precision::FP16:
  case Precision::TF32:
    return std::ldexp(1.0, -8);
  default:
    return 0;
  }
}

/// The root mean square of a buffer of `spec` (finite elements), the scale
/// of the absolute error a rounded contraction leaves in an element that
/// cancels to near zero.
static double getRootMeanSquare(const ::ridge::rt::TensorSpec &spec,
                                const char *data) {
  double sum = 0;
  size_t count = 0;
  for (size_t i = 0, e = spec.numElements(); i < e; ++i) {
    double v = elementAt(data, spec.dtype, i);
    if (std::isfinite(v)) {
      sum += v * v;
      ++count;
    }
  }
  return count ? std::sqrt(sum / count) : 0;
}

/// A compiled model and the outputs of one run.
struct Run {
  std::unique_ptr<::ridge::rt::Model> model;
  std::vector<std::vector<char>> outputs;
  /// On the emulator: the kernels of the fusion plan, for the emulator
  /// report and for naming a failing kernel's ONNX nodes.
  std::optional<RooflineReport> plan;
};

static std::optional<RooflineReport> planKernels(ModuleOp module,
                                                 const CompileOptions &options);

/// `error` with the ONNX nodes of the kernel it names ("kernel
/// 'k18_reduction_kernel', block ..."), from the plan of the build.
static std::string addKernelNodes(const std::string &error,
                                  const std::optional<RooflineReport> &plan) {
  static const llvm::Regex kernelName("kernel '([A-Za-z0-9_$.]+)'");
  SmallVector<StringRef> match;
  if (!plan || !kernelName.match(error, &match))
    return error;
  std::string group = getKernelGroupName(match[1]);
  for (const RooflineKernelRow &kernel : plan->kernels)
    if (kernel.name == group && !kernel.nodes.empty())
      return error + " [kernel " + group +
             " computes ONNX nodes: " + llvm::join(kernel.nodes, ", ") + "]";
  return error;
}

/// Appends the input pointers for `model` to `buffers`; returns an exit
/// code (kOk to go on).
using InputBinder =
    llvm::function_ref<int(const ::ridge::rt::Model &, std::vector<void *> &)>;

/// Compiles `module` (model ABI attached) to a temporary shared object,
/// loads it and runs it on the inputs `bindInputs` provides.
static int compileAndRun(ModuleOp module, const CompileOptions &options,
                         InputBinder bindInputs, Run &run) {
  std::string error;
  llvm::SmallString<128> soPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("ridge-run", "so", soPath))
    return fail("cannot create a temporary file: " + ec.message());
  // Removed on every exit path: returns, and signals (a crash of the
  // compiler or of the compiled model).
  // The weights file, when the weights are kept beside the model.
  llvm::SmallString<128> weightsPath(llvm::sys::path::parent_path(soPath));
  llvm::sys::path::append(weightsPath, getWeightsFileName(soPath));
  llvm::FileRemover removeSo(soPath), removeWeights(weightsPath);
  llvm::sys::RemoveFileOnSignal(soPath);
  llvm::sys::RemoveFileOnSignal(weightsPath);
  llvm::scope_exit unregister([&] {
    llvm::sys::DontRemoveFileOnSignal(soPath);
    llvm::sys::DontRemoveFileOnSignal(weightsPath);
  });
  if ((device == DeviceKind::Emulator || kernelTimes) &&
      options.target.isGpu() && !(run.plan = planKernels(module, options)))
    return kFailed;
  if (failed(compileGraphModule(module, options, soPath)))
    return kFailed;
  run.model =
      ::ridge::rt::Model::load(std::string(soPath), error, deviceOrdinal);
  if (!run.model)
    return fail(error);
  // The loaded mapping outlives the file, and the weights are copied in:
  // removing both now also covers a run killed by a signal no handler sees
  // (SIGKILL on a timeout).
  llvm::sys::fs::remove(soPath);
  llvm::sys::fs::remove(weightsPath);

  std::vector<void *> buffers;
  if (int rc = bindInputs(*run.model, buffers))
    return rc;
  for (const ::ridge::rt::TensorSpec &spec : run.model->outputs())
    run.outputs.emplace_back(std::max<size_t>(spec.byteSize(), 1));
  for (auto &out : run.outputs)
    buffers.push_back(out.data());
  run.model->setTimedRuns(repeat);
  if (kernelTimes) {
    ::ridge::rt::resetKernelTimes();
    ::ridge::rt::setKernelProfiling(true);
  }
  llvm::scope_exit stopProfiling(
      [] { ::ridge::rt::setKernelProfiling(false); });

  if (!run.model->run(buffers, error)) {
    bool noGpu = error.rfind("no NVIDIA GPU available", 0) == 0;
    fail(addKernelNodes(error, run.plan));
    return noGpu ? kNoGpu : kFailed;
  }
  return kOk;
}

/// Whether test data of ONNX type `dataType` fills a tensor of `dtype`:
/// the same type, or bf16 given as uint16. libonnx-testdata 1.12 stores
/// bf16 tensors as their uint16 bits (NumPy has no bfloat16), and ONNX's
/// own runner of that release compares them as such: the bits are the
/// values.
static bool fillsTensorOf(int32_t dataType, ridge_dtype dtype) {
  ridge_dtype given = getRidgeDType(dataType);
  return given == dtype ||
         (dtype == RIDGE_DTYPE_BF16 && given == RIDGE_DTYPE_U16);
}

/// Binds test-data tensors, checked against the compiled signature.
static int bindTestData(const ::ridge::rt::Model &model,
                        std::vector<void *> &buffers,
                        std::vector<TensorData> &inputs,
                        const std::vector<std::string> &inputFiles) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ::ridge::rt::TensorSpec &spec = model.inputs()[k];
    if (!fillsTensorOf(inputs[k].dataType, spec.dtype) ||
        inputs[k].bytes.size() != spec.byteSize())
      return fail(inputFiles[k] + ": tensor of " +
                  getOnnxDataTypeName(inputs[k].dataType).str() + " [" +
                  std::to_string(inputs[k].getNumElements()) +
                  " elements] does not match input '" + spec.name + "' (" +
                  ::ridge::rt::dtypeName(spec.dtype) + " " +
                  spec.shapeString() + ")");
    buffers.push_back(inputs[k].bytes.data());
  }
  return kOk;
}

/// Binds uniform random data of the compiled input shapes (floats in
/// [-1, 1), integers in [0, 16)) held in `storage`.
static int bindRandomInputs(const ::ridge::rt::Model &model,
                            std::vector<void *> &buffers,
                            std::vector<std::vector<char>> &storage) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (const ::ridge::rt::TensorSpec &spec : model.inputs()) {
    storage.emplace_back(std::max<size_t>(spec.byteSize(), 1));
    char *data = storage.back().data();
    for (size_t i = 0, e = spec.numElements(); i < e; ++i) {
      switch (spec.dtype) {
      case RIDGE_DTYPE_F32: {
        float v = static_cast<float>((next() >> 40) / double(1 << 24)) * 2 - 1;
        std::memcpy(data + 4 * i, &v, 4);
        break;
      }
      case RIDGE_DTYPE_I64: {
        int64_t v = static_cast<int64_t>(next() % 16);
        std::memcpy(data + 8 * i, &v, 8);
        break;
      }
      case RIDGE_DTYPE_F16: {
        // j / 1024 for j in [-1024, 1024): exact in f16 (10-bit mantissa).
        int64_t j = static_cast<int64_t>(next() % 2048) - 1024;
        uint16_t bits = 0;
        if (j != 0) {
          uint64_t magnitude = static_cast<uint64_t>(j < 0 ? -j : j);
          unsigned e = 63 - __builtin_clzll(magnitude); // j = 1.f x 2^e
          bits = static_cast<uint16_t>((j < 0 ? 0x8000 : 0) | (e + 5) << 10 |
                                       ((magnitude << (10 - e)) & 0x3ff));
        }
        std::memcpy(data + 2 * i, &bits, 2);
        break;
      }
      case RIDGE_DTYPE_BF16: {
        float v = static_cast<float>((next() >> 40) / double(1 << 24)) * 2 - 1;
        uint32_t f;
        std::memcpy(&f, &v, 4);
        uint16_t bits =
            static_cast<uint16_t>((f + 0x7fff + ((f >> 16) & 1)) >> 16);
        std::memcpy(data + 2 * i, &bits, 2);
        break;
      }
      default:
        return fail(std::string("--random-inputs supports f32, f16, bf16 and "
                                "i64 "
                                "inputs, not ") +
                    ::ridge::rt::dtypeName(spec.dtype) + " ('" + spec.name +
                    "')");
      }
    }
    buffers.push_back(data);
  }
  return kOk;
}

/// Prints the median and minimum of `times` (seconds).
static void printTimes(std::vector<double> times) {
  if (times.empty())
    return;
  llvm::sort(times);
  llvm::outs() << llvm::format(
      "ridge-run: %zu timed runs: median %.4f ms, min %.4f ms\n", times.size(),
      1e3 * times[times.size() / 2], 1e3 * times.front());
}

/// --random-inputs: compile the model at its own shapes and run it on random
/// data.
/// --emulator-report: the kernels the fusion plan forms for `module` (the
/// imported graph), before it is compiled.
static std::optional<RooflineReport>
planKernels(ModuleOp module, const CompileOptions &options) {
  std::string error;
  std::optional<RooflineModel> model = RooflineModel::create(
      options.target.gpu, options.target.precision, error);
  if (!model) {
    fail(error);
    return std::nullopt;
  }
  return buildPlannedReport(module, options.target, options.fusion, *model,
                            inputFile);
}

/// --save-outputs: `outputs` as DIR/output_K.npy.
static int writeOutputs(const ::ridge::rt::Model &model,
                        const std::vector<std::vector<char>> &outputs) {
  if (std::error_code ec = llvm::sys::fs::create_directories(saveOutputs))
    return fail("cannot create '" + saveOutputs + "': " + ec.message());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ::ridge::rt::TensorSpec &spec = model.outputs()[k];
    const char *descr = "";
    switch (spec.dtype) {
    case RIDGE_DTYPE_F16:
      descr = "<f2";
      break;
    case RIDGE_DTYPE_BF16: // NumPy has no bfloat16: its bits
    case RIDGE_DTYPE_U16:
      descr = "<u2";
      break;
    case RIDGE_DTYPE_F32:
      descr = "<f4";
      break;
    case RIDGE_DTYPE_F64:
      descr = "<f8";
      break;
    case RIDGE_DTYPE_I1:
      descr = "|b1";
      break;
    case RIDGE_DTYPE_I8:
      descr = "|i1";
      break;
    case RIDGE_DTYPE_I16:
      descr = "<i2";
      break;
    case RIDGE_DTYPE_I32:
      descr = "<i4";
      break;
    case RIDGE_DTYPE_I64:
      descr = "<i8";
      break;
    case RIDGE_DTYPE_U8:
    case RIDGE_DTYPE_F8E4M3FN: // Nor float8: their bits
    case RIDGE_DTYPE_F8E4M3FNUZ:
    case RIDGE_DTYPE_F8E5M2:
    case RIDGE_DTYPE_F8E5M2FNUZ:
      descr = "|u1";
      break;
    case RIDGE_DTYPE_U32:
      descr = "<u4";
      break;
    case RIDGE_DTYPE_U64:
      descr = "<u8";
      break;
    default:
      return fail("output '" + spec.name + "' has no NumPy type");
    }
    std::string shape;
    for (int64_t dim : spec.shape)
      shape += std::to_string(dim) + ", ";
    if (spec.shape.size() > 1)
      shape.resize(shape.size() - 2);
    std::string header = std::string("{'descr': '") + descr +
                         "', 'fortran_order': False, 'shape': (" + shape +
                         "), }";
    // Version 1.0: magic, version, a 16-bit header length, and the header
    // padded with spaces to a multiple of 64 bytes, ending in a newline.
    size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string path = (saveOutputs + "/output_" + std::to_string(k) + ".npy");
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    out << "\x93NUMPY" << '\x01' << '\x00';
    out << static_cast<char>(header.size() & 0xff)
        << static_cast<char>(header.size() >> 8) << header;
    out.write(outputs[k].data(), spec.byteSize());
  }
  return kOk;
}

/// --kernel-times: each kernel's measured time next to its roofline.
static void printMeasuredKernelTimes(const RooflineReport &plan) {
  std::vector<MeasuredKernelTime> times;
  for (const ::ridge::rt::KernelTime &time : ::ridge::rt::getKernelTimes())
    times.push_back({time.name, time.launches, time.milliseconds});
  printKernelTimes(plan, times, target, resolvedTarget.gpu.name,
                   device == DeviceKind::Emulator ? "host time of emulation"
                                                  : "GPU time",
                   llvm::outs());
}

/// --emulator-report: what the emulator measured for the run, per kernel of
/// `plan`.
static int writeEmulatorReport(const RooflineReport &plan) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out =
      openOutputFile(reportFile, &error);
  if (!out)
    return fail(error);
  if (failed(printEmulatorReport(plan, ::ridge::rt::getEmulatorCountersJson(),
                                 target, resolvedTarget.gpu.name,
                                 emulatorReport == "json", out->os(), error)))
    return fail(error);
  out->keep();
  return kOk;
}

static int runOnRandomInputs(MLIRContext &context, CompileOptions options) {
  OwningOpRef<ModuleOp> module = importOnnxFile(&context, inputFile, {});
  if (!module || failed(attachModelAbi(*module, target)))
    return kFailed;
  std::vector<std::vector<char>> storage;
  Run run;
  auto bind = [&](const ::ridge::rt::Model &model,
                  std::vector<void *> &buffers) {
    return bindRandomInputs(model, buffers, storage);
  };
  if (int rc = compileAndRun(*module, options, bind, run))
    return rc;
  llvm::outs() << "ridge-run: ran '" << inputFile << "' on " << target
               << " with random inputs\n";
  // The inputs are the same on every target (a fixed seed): a CPU run's
  // saved outputs are the oracle of an emulated or GPU run's.
  if (!saveOutputs.empty())
    if (int rc = writeOutputs(*run.model, run.outputs))
      return rc;
  printTimes(run.model->getRunTimes());
  if (kernelTimes)
    printMeasuredKernelTimes(*run.plan);
  if (emulatorReport.getNumOccurrences())
    return writeEmulatorReport(*run.plan);
  return kOk;
}

/// The hidden test options' hooks into the compile.
static void applyTestOptions(CompileOptions &options) {
  if (injectGpuFault.empty())
    return;
  options.kernelTestPasses = [](OpPassManager &kernels) {
    (void)addGpuFaultPass(kernels, injectGpuFault);
  };
}

/// --verify: the fused plan against one kernel per op, kernel by kernel.
static int verifyFusion(OwningOpRef<ModuleOp> module, CompileOptions options,
                        std::vector<TensorData> &inputs,
                        const std::vector<std::string> &inputFiles) {
  FailureOr<std::vector<KernelProbe>> probes =
      exposeKernelOutputs(*module, options.target);
  if (failed(probes))
    return kFailed;
  OwningOpRef<ModuleOp> reference = module->clone();
  dissolveFusionGroups(*reference);
  if (!injectFault.empty() && failed(injectKernelFault(*module, injectFault)))
    return kFailed;
  if (failed(attachModelAbi(*module, target)) ||
      failed(attachModelAbi(*reference, target)))
    return kFailed;

  llvm::outs() << "ridge-run: verifying " << probes->size() << " kernels of '"
               << inputFile << "' on " << target
               << " against one kernel per op\n";
  auto bind = [&](const ::ridge::rt::Model &model,
                  std::vector<void *> &buffers) {
    return bindTestData(model, buffers, inputs, inputFiles);
  };
  Run fused, unfused;
  options.fusion = true;
  // Both builds read the same weight blobs.
  options.releaseWeights = false;
  if (int rc = compileAndRun(*module, options, bind, fused))
    return rc;
  options.fusion = false;
  options.releaseWeights = true;
  // The reference is built as it should be: --inject-gpu-fault breaks the
  // fused build only.
  options.kernelTestPasses = nullptr;
  if (int rc = compileAndRun(*reference, options, bind, unfused))
    return rc;

  for (const KernelProbe &probe : *probes) {
    std::string nodes = llvm::join(probe.nodes, ", ");
    for (auto [i, k] : llvm::enumerate(probe.outputs)) {
      const ::ridge::rt::TensorSpec &spec = fused.model->outputs()[k];
      double maxAbs, maxRel;
      size_t bad = compareElements(spec, fused.outputs[k].data(),
                                   unfused.outputs[k].data(), relTolerance,
                                   absTolerance, maxAbs, maxRel);
      if (bad == 0)
        continue;
      llvm::outs() << llvm::format(
          "first mismatch: kernel %s, output %zu [%s %s]: max abs err %.3e, "
          "max rel err %.3e, %zu of %lld outside tolerance\n",
          probe.name.c_str(), i, ::ridge::rt::dtypeName(spec.dtype),
          spec.shapeString().c_str(), maxAbs, maxRel, bad,
          static_cast<long long>(spec.numElements()));
      llvm::outs() << "  ONNX nodes: " << nodes << "\n";
      llvm::outs() << "FAIL (rtol " << relTolerance << ", atol " << absTolerance
                   << ")\n";
      return kFailed;
    }
  }
  llvm::outs() << "all " << probes->size()
               << " kernels agree with the unfused reference (rtol "
               << relTolerance << ", atol " << absTolerance << ")\nPASS\n";
  return kOk;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Ridgeline: compile an ONNX model, run it and "
                              "compare with reference outputs\n");
  std::string error;
  if (describe) {
    OnnxModelSummary summary;
    if (!describeOnnxModel(inputFile, summary, error))
      return fail(error);
    llvm::outs() << "opset: " << summary.opset << "\nops:";
    for (const std::string &op : summary.opTypes)
      llvm::outs() << " " << op;
    llvm::outs() << "\nscope: "
                 << (summary.outOfScopeReason.empty()
                         ? std::string("in")
                         : "out (" + summary.outOfScopeReason + ")")
                 << "\n";
    return summary.outOfScopeReason.empty() ? kOk : kOutOfScope;
  }
  FailureOr<TargetSpec> resolved = targetOptions.resolve("ridge-run", error);
  if (failed(resolved))
    return fail(error);
  resolvedTarget = *resolved;
  target = resolvedTarget.chip;
  if (deviceName == "emulator") {
    device = DeviceKind::Emulator;
  } else if (deviceName != "gpu") {
    StringRef ordinal = StringRef(deviceName).drop_front(5);
    if (!StringRef(deviceName).starts_with("cuda:") ||
        ordinal.getAsInteger(10, deviceOrdinal) || deviceOrdinal < 0)
      return fail("--device takes gpu, cuda:N (a device ordinal) or "
                  "emulator, not '" +
                  deviceName + "'");
  }
  if (kernelTimes && (target == "cpu" || verify))
    return fail("--kernel-times times the kernels of a GPU target's run "
                "(--target=sm_80, sm_90a, ...; not with --verify)");
  if (emulatorReport.getNumOccurrences()) {
    if (device != DeviceKind::Emulator)
      return fail("--emulator-report needs --device=emulator");
    if (emulatorReport != "" && emulatorReport != "text" &&
        emulatorReport != "json")
      return fail("unknown --emulator-report format '" + emulatorReport +
                  "'; expected --emulator-report (a table) or "
                  "--emulator-report=json");
    if (verify)
      return fail("--emulator-report and --verify cannot be combined");
  }
  if (!injectGpuFault.empty()) {
    if (target == "cpu")
      return fail("--inject-gpu-fault breaks a GPU build (--target=sm_80, "
                  "sm_90a, ...)");
    OpPassManager probe(gpu::GPUModuleOp::getOperationName());
    if (failed(addGpuFaultPass(probe, injectGpuFault)))
      return fail("unknown --inject-gpu-fault '" + injectGpuFault +
                  "' (thread-index, drop-barrier, drop-fence, shuffle-lane "
                  "or misaligned-vector, then optionally :KERNEL)");
  }
  // The runtime binds its driver on first use, after this: the emulator
  // stands in for it as the compiled chip.
  if (device == DeviceKind::Emulator) {
    if (target == "cpu")
      return fail("--device=emulator runs GPU targets (--target=sm_80, "
                  "sm_90a, ...), not the CPU");
    setenv("RIDGE_DEVICE", ("emulator:" + target).c_str(), /*overwrite=*/1);
  } else if (deviceName.getNumOccurrences()) {
    setenv("RIDGE_DEVICE", "gpu", /*overwrite=*/1);
  }
  if (randomInputs) {
    DialectRegistry registry;
    registerCompilerDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    ToolDiagnosticHandler diagnostics(&context, "ridge-run");
    CompileOptions options;
    options.target = resolvedTarget;
    options.cudaToolkit = cudaToolkit;
    options.fusion = fusion;
    artifactOptions.apply(options);
    applyTestOptions(options);
    return runOnRandomInputs(context, options);
  }
  if (testData.empty())
    return fail("--test-data is required (or --describe, --random-inputs)");
  if (!llvm::sys::fs::is_directory(testData))
    return fail("test-data folder '" + testData + "' does not exist");

  // Inputs decide the static shapes the model is compiled for.
  std::vector<std::string> inputFiles = listTensors(testData, "input", error);
  if (!error.empty())
    return fail(error);
  std::vector<TensorData> inputs(inputFiles.size());
  for (size_t k = 0; k < inputFiles.size(); ++k)
    if (!readTensorProtoFile(inputFiles[k], inputs[k], error,
                             importCLOptions.maxTensorBytes))
      return fail(error);

  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  ToolDiagnosticHandler diagnostics(&context, "ridge-run");

  // input_K.pb binds to the K-th graph input (initializers excluded).
  OnnxImportOptions importOptions;
  if (failed(importCLOptions.apply(importOptions, error)))
    return fail(error);
  std::vector<std::string> graphInputs;
  if (!listOnnxGraphInputs(inputFile, graphInputs, error))
    return fail(error);
  if (graphInputs.size() != inputs.size())
    return fail("test-data folder '" + testData + "' has " +
                std::to_string(inputs.size()) + " input files, the model '" +
                inputFile + "' takes " + std::to_string(graphInputs.size()) +
                " inputs");
  for (size_t k = 0; k < inputs.size(); ++k) {
    importOptions.inputShapes[graphInputs[k]] = inputs[k].dims;
    // Small inputs may also decide shapes (Reshape targets, Slice bounds,
    // axes): like the shapes, their values specialize the compiled model.
    if (specializeValues &&
        inputs[k].getNumElements() <= kMaxSpecializedElements)
      importOptions.inputValues[graphInputs[k]] = inputs[k];
  }

  CompileOptions options;
  options.target = resolvedTarget;
  options.cudaToolkit = cudaToolkit;
  options.fusion = fusion;
  artifactOptions.apply(options);
  applyTestOptions(options);
  OwningOpRef<ModuleOp> module =
      importOnnxFile(&context, inputFile, importOptions);
  if (!module)
    return kFailed;
  if (verify)
    return verifyFusion(std::move(module), options, inputs, inputFiles);
  // The contractions that the build rounds (the policy of
  // ridge-select-precision, asked here of the imported graph) decide the
  // tolerance of the comparison.
  double reducedTolerance = 0;
  if (compare && reducedPrecisionTolerance) {
    std::optional<RooflineModel> roofline = RooflineModel::create(
        resolvedTarget.gpu, resolvedTarget.precision, error);
    // Asked of the graph the build optimizes: the exported attention chains
    // matched (their MatMuls become one attention, rounded or not as a
    // whole).
    OwningOpRef<ModuleOp> optimized(cast<ModuleOp>((*module)->clone()));
    PassManager graphPasses(&context);
    buildGraphOptimizationPipeline(graphPasses, /*matchComposites=*/fusion);
    unsigned rounded =
        roofline && succeeded(graphPasses.run(*optimized))
            ? countRoundedContractions(*optimized, resolvedTarget, *roofline)
            : 0;
    if (rounded > 0)
      reducedTolerance = getReducedPrecisionTolerance(resolvedTarget.numerics);
    if (reducedTolerance > 0)
      llvm::outs() << "ridge-run: " << rounded << " contraction"
                   << (rounded == 1 ? "" : "s") << " compute in "
                   << stringifyPrecision(resolvedTarget.numerics)
                   << "; comparing at rtol "
                   << std::max<double>(relTolerance, reducedTolerance)
                   << ", atol " << reducedTolerance
                   << " x the output's RMS (docs/precision.md)\n";
  }
  if (failed(attachModelAbi(*module, target)))
    return kFailed;
  Run run;
  auto bind = [&](const ::ridge::rt::Model &model,
                  std::vector<void *> &buffers) {
    return bindTestData(model, buffers, inputs, inputFiles);
  };
  if (int rc = compileAndRun(*module, options, bind, run))
    return rc;
  printTimes(run.model->getRunTimes());
  if (kernelTimes)
    printMeasuredKernelTimes(*run.plan);
  if (emulatorReport.getNumOccurrences())
    if (int rc = writeEmulatorReport(*run.plan))
      return rc;
  std::unique_ptr<::ridge::rt::Model> &model = run.model;
  std::vector<std::vector<char>> &outputs = run.outputs;

  llvm::outs() << "ridge-run: ran '" << inputFile << "' on " << target << "\n";
  if (!saveOutputs.empty())
    if (int rc = writeOutputs(*model, outputs))
      return rc;
  if (!compare)
    return kOk;

  std::vector<std::string> refFiles = listTensors(testData, "output", error);
  if (!error.empty())
    return fail(error);
  if (refFiles.size() != outputs.size())
    return fail("test-data folder '" + testData + "' has " +
                std::to_string(refFiles.size()) +
                " output files, the model has " +
                std::to_string(outputs.size()) + " outputs");
  bool allOk = true;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ::ridge::rt::TensorSpec &spec = model->outputs()[k];
    TensorData ref;
    if (!readTensorProtoFile(refFiles[k], ref, error,
                             importCLOptions.maxTensorBytes))
      return fail(error);
    if (!fillsTensorOf(ref.dataType, spec.dtype) ||
        ref.getNumElements() != spec.numElements())
      return fail(refFiles[k] + ": reference of " +
                  getOnnxDataTypeName(ref.dataType).str() + " [" +
                  std::to_string(ref.getNumElements()) +
                  " elements] does not match output '" + spec.name + "' (" +
                  ::ridge::rt::dtypeName(spec.dtype) + " " +
                  spec.shapeString() + ")");
    double rtol = relTolerance, atol = absTolerance;
    if (reducedTolerance > 0) {
      rtol = std::max(rtol, reducedTolerance);
      atol = std::max(atol, reducedTolerance *
                                getRootMeanSquare(spec, ref.bytes.data()));
    }
    double maxAbs, maxRel;
    size_t bad = compareElements(spec, outputs[k].data(), ref.bytes.data(),
                                 rtol, atol, maxAbs, maxRel);
    bool ok = bad == 0;
    allOk &= ok;
    llvm::outs() << llvm::format(
        "output %zu '%s' [%s %s]: max abs err %.3e, max rel err %.3e, %zu of "
        "%lld outside tolerance: %s\n",
        k, spec.name.c_str(), ::ridge::rt::dtypeName(spec.dtype),
        spec.shapeString().c_str(), maxAbs, maxRel, bad,
        static_cast<long long>(spec.numElements()), ok ? "OK" : "MISMATCH");
  }
  llvm::outs() << (allOk ? "PASS" : "FAIL") << " (rtol " << relTolerance
               << ", atol " << absTolerance << ")\n";
  return allOk ? kOk : kFailed;
}
