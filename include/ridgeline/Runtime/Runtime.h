//===- Runtime.h - Executing compiled Ridgeline models ----------*- C++ -*-===//
//
// The runtime loads a model shared object produced by ridgec, reads its
// descriptor and runs it on host (target cpu) or NVIDIA GPU (target sm_XX)
// buffers. It is plain C++17 + libc + libdl on purpose: deployments must not
// need MLIR, LLVM or the CUDA toolkit. The CUDA driver is dlopen()ed at run
// time, so the same binary runs CPU models on machines without a GPU.
//
// Model shared-object ABI (the C structs are defined in ModelAbi.h):
//   extern "C" const struct ridge_model_desc *ridge_model_describe(void);
//   extern "C" void ridge_model_run(void **buffers);
// `buffers` holds all inputs then all outputs, in descriptor order, each
// pointing to dense row-major data (device pointers for GPU targets).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_RUNTIME_RUNTIME_H
#define RIDGELINE_RUNTIME_RUNTIME_H

#include "ridgeline/Emulator/Counters.h"
#include "ridgeline/Runtime/ModelAbi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::rt {

//===----------------------------------------------------------------------===//
// Element types and tensor descriptions
//===----------------------------------------------------------------------===//

/// Element types: the C enum of ModelAbi.h, the project's one dtype table.
using DType = ridge_dtype;

/// The spelling of `type` ("f32", "i1", ...); "invalid" for a value that is
/// not a ridge_dtype.
inline const char *dtypeName(DType type) {
  const char *name = ridge_dtype_name(type);
  return name ? name : "invalid";
}
/// Bytes per element (1 for I1, 0 for an invalid value).
inline size_t dtypeSize(DType type) { return ridge_dtype_size(type); }

/// One graph input or output as declared by the model's descriptor.
struct TensorSpec {
  /// The ONNX name, verbatim.
  std::string name;
  DType dtype = RIDGE_DTYPE_F32;
  /// Static dims, outermost first; empty for a rank-0 tensor.
  std::vector<int64_t> shape;

  /// Product of the dims (1 for a scalar, 0 if any dim is 0).
  int64_t numElements() const;
  /// numElements() * dtypeSize(dtype). readModelDesc guarantees this fits.
  size_t byteSize() const;
  /// "scalar" or the dims joined by 'x' ("4x64"), for messages.
  std::string shapeString() const;
};

/// One weight the model keeps in its weights file.
struct WeightSpec {
  std::string name;
  /// The slot inside the loaded model that holds its address.
  const void **address = nullptr;
  /// Its bytes in the weights file.
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// One weight of a GPU model's device weights block.
struct DeviceWeightSpec {
  std::string name;
  /// Where the weight's host address is read from, once the weights file
  /// (if any) is mapped.
  const void *const *source = nullptr;
  /// Its bytes in the device weights block.
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// A validated copy of a model's `ridge_model_describe()` descriptor.
struct ModelInfo {
  /// RIDGE_MODEL_ABI_VERSION.
  int version = 0;
  /// "cpu" or an NVIDIA architecture such as "sm_80" / "sm_90a".
  std::string target;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// The weights file (a name in the model's folder) and what it must hold;
  /// empty `weights` when the weights are inside the model.
  std::string weightsFile;
  uint64_t weightsFingerprint = 0;
  uint64_t weightsBytes = 0;
  std::vector<WeightSpec> weights;
  /// GPU models: the device blocks each session holds (ModelAbi.h), and
  /// the most temporary bytes live at once (the arena's lower bound).
  uint64_t deviceWeightsBytes = 0;
  uint64_t arenaBytes = 0;
  /// The arena's first bytes, zeroed once by the session (ModelAbi.h).
  uint64_t arenaZeroedBytes = 0;
  uint64_t peakLiveBytes = 0;
  std::vector<DeviceWeightSpec> deviceWeights;
};

/// Checks `desc` and copies it into `out`. The checks are strict (see
/// Model.cpp): the descriptor comes from a compiler or a foreign .so, and
/// running on guessed buffer sizes would corrupt memory. On failure returns
/// false and sets `error` (naming the tensor concerned, if any).
bool readModelDesc(const ridge_model_desc *desc, ModelInfo &out,
                   std::string &error);

/// A model's weights file, mapped read-only.
class WeightsMapping {
public:
  WeightsMapping() = default;
  WeightsMapping(const WeightsMapping &) = delete;
  WeightsMapping &operator=(const WeightsMapping &) = delete;
  ~WeightsMapping() { unmap(); }

  /// Maps `info`'s weights file from the folder `dir`, after checking its
  /// header against the descriptor, and stores each weight's address in its
  /// slot. Nothing to do for a model without one. On failure returns false
  /// and sets `error`, naming the file.
  bool map(const ModelInfo &info, const std::string &dir, std::string &error);
  void unmap();
  /// The mapping; null when nothing is mapped.
  const void *getData() const { return data; }
  size_t getBytes() const { return bytes; }

private:
  const void *data = nullptr;
  size_t bytes = 0;
};

/// Splits an NVIDIA target name "sm_<major><minor>[a]" into its compute
/// capability (major * 10 + minor) and whether it is an architecture-specific
/// ("a") target. Returns false for "cpu" and anything malformed.
bool parseGpuTarget(std::string_view target, int &computeCapability,
                    bool &archSpecific);

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

class Session;

/// How a Session runs a GPU model.
struct SessionOptions {
  /// Capture the launches of the first run into a CUDA graph and replay it
  /// afterwards. Ignored (launches are issued one by one) where the driver
  /// has no graphs, while kernels are timed (setKernelProfiling), or when
  /// capturing failed (Session::getGraphFallback says why).
  bool cudaGraph = true;
};

/// A loaded model shared object.
class Model {
public:
  /// dlopen()s `soPath` (RTLD_NOW | RTLD_LOCAL), resolves the two entry
  /// points, reads the descriptor (readModelDesc) and maps the weights file
  /// beside it, if any (WeightsMapping). On failure returns
  /// nullptr and sets `error` to "<soPath>: <problem>". Loading a GPU model
  /// succeeds on a machine without a GPU (its descriptor can still be
  /// inspected); run() then fails with "no NVIDIA GPU available: <reason>".
  /// `device` is the CUDA device ordinal the model's kernels load on (in
  /// its static constructors) and run() uses. A .so is loaded once per
  /// process: loading it again for another device gets the first one's
  /// kernels, so such a load fails with an error.
  static std::unique_ptr<Model> load(const std::string &soPath,
                                     std::string &error, int device = 0);
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const std::string &path() const { return soPath; }
  /// The CUDA device ordinal it was loaded for.
  int getDevice() const { return device; }
  const ModelInfo &modelInfo() const { return info; }
  const std::string &target() const { return info.target; }
  const std::vector<TensorSpec> &inputs() const { return info.inputs; }
  const std::vector<TensorSpec> &outputs() const { return info.outputs; }
  bool isGpu() const { return info.target != "cpu"; }

  /// Runs the model. `hostBuffers` holds inputs then outputs in descriptor
  /// order, each a host pointer to inputs()[i].byteSize() (resp. outputs())
  /// dense row-major bytes. A GPU model runs in a Session the first run
  /// makes and later runs reuse (its weights uploaded once). Runs from
  /// several threads are serialized. Returns false and sets `error` on any
  /// failure; outputs are then unspecified.
  bool run(const std::vector<void *> &hostBuffers, std::string &error);

  /// Makes run() execute the model `count` more times after the first, with
  /// the data already in place (device-resident on a GPU), and record each
  /// execution's wall time in seconds (synchronized on a GPU). For
  /// benchmarks; 0 (the default) runs once.
  void setTimedRuns(int count) { timedRuns = count; }
  /// The options of the session run() makes for a GPU model (taken at the
  /// first run).
  void setSessionOptions(const SessionOptions &options) {
    sessionOptions = options;
  }
  /// run()'s session; null before the first GPU run.
  const Session *getSession() const { return session.get(); }
  const std::vector<double> &getRunTimes() const { return runTimes; }

private:
  friend class Session;
  Model() = default;
  /// One host buffer per input and output, none null unless its tensor is
  /// empty.
  bool checkBuffers(const std::vector<void *> &hostBuffers,
                    std::string &error) const;
  bool runGpu(std::vector<void *> &buffers, std::string &error);

  using RunFn = void (*)(void **);
  std::string soPath;
  void *handle = nullptr;
  RunFn entry = nullptr;
  ModelInfo info;
  WeightsMapping weights;
  int timedRuns = 0;
  int device = 0;
  std::vector<double> runTimes;
  /// First GPU error raised by the model's static constructors (the MLIR
  /// lowering loads kernel modules in global constructors at dlopen time).
  std::string loadGpuError;
  /// run()'s session of a GPU model, and the lock that serializes run().
  std::unique_ptr<Session> session;
  SessionOptions sessionOptions;
  std::mutex runMutex;
};

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

/// A GPU model made ready to run on its device, as TensorRT's execution
/// context or AOTInductor's container: the weights uploaded once into one
/// device block, one arena for the temporaries (its size planned by the
/// compiler from their live ranges), device buffers for the inputs and
/// outputs, and a stream. A run allocates nothing and copies no weight: it
/// queues the input copies, the model's kernels (replayed from a CUDA graph
/// captured at the first run, where the driver has graphs) and the output
/// copies on the stream, and waits for that stream only.
///
/// Threads: a session runs one inference at a time (they share its arena);
/// a run started on one thread while another thread's run is in flight
/// fails with an error saying so. Make one session per thread: sessions of
/// one model share its kernels and run concurrently, as do sessions of
/// models loaded for different devices.
class Session {
public:
  using Options = SessionOptions;

  /// Makes a session for `model` (a GPU model; it must outlive the session)
  /// on the device it was loaded for. On failure returns nullptr and sets
  /// `error`: no GPU, an incompatible one, kernels that failed to load, or
  /// out of memory (naming the bytes and what they were for).
  static std::unique_ptr<Session> create(const Model &model,
                                         std::string &error);
  static std::unique_ptr<Session> create(const Model &model, std::string &error,
                                         const Options &options);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const Model &getModel() const { return model; }

  /// Runs on host data, as Model::run: copies the inputs in, runs, copies
  /// the outputs out and waits for the session's stream.
  bool run(const std::vector<void *> &hostBuffers, std::string &error);

  /// Queues a run on device data: `deviceBuffers` holds inputs then outputs,
  /// device pointers of this session's device (getDeviceBuffer gives the
  /// session's own). The work goes on `stream` (a CUstream; null: the
  /// session's) and this returns once it is queued; synchronize that
  /// stream before reading the outputs. No other run of this session may
  /// be queued until it is finished (they share the arena): runs queued on
  /// one stream are ordered.
  bool enqueue(const std::vector<void *> &deviceBuffers, void *stream,
               std::string &error);
  /// Waits for the session's stream; a fault of its kernels is an error.
  bool synchronize(std::string &error);

  /// The session's device buffer of input (then output) `index`.
  void *getDeviceBuffer(size_t index) const;
  /// The session's stream (a CUstream).
  void *getStream() const { return stream; }
  /// Device bytes the session holds: weights, arena, inputs and outputs.
  uint64_t getDeviceBytes() const { return deviceBytes; }
  /// Whether the last run replayed a CUDA graph, and why not if it did not
  /// (empty while graphs are used, or before the first run).
  bool lastRunUsedGraph() const { return usedGraph; }
  const std::string &getGraphFallback() const { return graphFallback; }

private:
  Session(const Model &model, const Options &options)
      : model(model), options(options) {}
  bool launch(std::vector<void *> &buffers, void *stream, std::string &error);
  void releaseGraph();

  const Model &model;
  Options options;
  /// Device allocations: the weights block, the arena, then one per tensor.
  uint64_t weightsBlock = 0, arena = 0;
  std::vector<uint64_t> tensorBuffers;
  uint64_t deviceBytes = 0;
  void *stream = nullptr;
  /// The instantiated graph and the buffers it was captured with.
  void *graphExec = nullptr;
  std::vector<void *> graphBuffers;
  std::string graphFallback;
  bool usedGraph = false;
  /// Set while a run is under way (concurrent runs are refused).
  std::atomic<bool> busy{false};
};

//===----------------------------------------------------------------------===//
// PTX emulator counters
//===----------------------------------------------------------------------===//

/// The counters (docs/emulator.md, "Counters") of every kernel that ran on
/// the emulated driver (RIDGE_DEVICE=emulator) in this process so far, one
/// entry per kernel name summed over its launches, in the order of their
/// first launches. Failed launches are not counted. Empty when the emulator
/// has run nothing (or the driver is a real GPU's).
std::vector<ridge::emu::KernelCounters> getEmulatorCounters();
/// The same as the counters' JSON document (schema "ridgeline-emulator-
/// counters", docs/emulator.md), with an empty "kernels" list when empty.
std::string getEmulatorCountersJson();
/// Forgets the counters collected so far, e.g. after warm-up runs.
void resetEmulatorCounters();

//===----------------------------------------------------------------------===//
// Kernel times
//===----------------------------------------------------------------------===//

/// The time of one kernel's launches: on a GPU, measured with CUDA events
/// around each launch; on the emulated driver, the host time its emulation
/// took.
struct KernelTime {
  std::string name;
  uint64_t launches = 0;
  double milliseconds = 0;
};
/// Times every kernel launch from now on (a pair of events around each and
/// a wait for the second, so launches no longer overlap) until turned off.
void setKernelProfiling(bool enabled);
/// The kernels timed so far, per name in the order of first launches.
std::vector<KernelTime> getKernelTimes();
void resetKernelTimes();

//===----------------------------------------------------------------------===//
// Driver calls
//===----------------------------------------------------------------------===//

/// The CUDA driver calls this process made that allocate, free, copy,
/// launch or load modules, for real and emulated drivers alike: the
/// runtime's own (inputs and outputs staged by Model::run) and the compiled
/// host code's (through the mgpu* wrappers). Copies the host code makes
/// (mgpuMemcpy) count as device copies: with unified addressing their
/// direction is the driver's to infer. A difference of two readings around
/// a run gives what one run costs beyond its kernels.
struct DriverCallCounts {
  uint64_t allocations = 0, allocatedBytes = 0, frees = 0;
  uint64_t hostToDevice = 0, hostToDeviceBytes = 0;
  uint64_t deviceToHost = 0, deviceToHostBytes = 0;
  uint64_t deviceCopies = 0, deviceCopyBytes = 0;
  uint64_t launches = 0, moduleLoads = 0;
  /// Replays of a captured CUDA graph (each runs every launch captured in
  /// it; the captured launches count once, as launches, at capture).
  uint64_t graphLaunches = 0;
};
DriverCallCounts getDriverCallCounts();
void resetDriverCallCounts();

} // namespace ridge::rt

extern "C" {
/// getEmulatorCountersJson for hosts that reach the runtime through dlsym:
/// copies the JSON into `buffer` (at most `size` bytes, NUL-terminated when
/// `size` > 0; `buffer` may be null when `size` is 0) and returns its full
/// length without the NUL, as snprintf does, so that a first call with size
/// 0 sizes the buffer.
size_t ridge_emulator_counters_json(char *buffer, size_t size);
}

#endif // RIDGELINE_RUNTIME_RUNTIME_H
