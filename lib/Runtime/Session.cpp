//===- Session.cpp - A GPU model resident on its device -------------------===//
//
// A compiled GPU model keeps no device memory of its own: its run takes the
// device weights block and the arena the compiler planned (ModelAbi.h) and
// the stream to queue its work on. The session owns them: it uploads the
// weights once, allocates everything at creation, and a run only copies the
// inputs and outputs and queues the kernels, or replays them from a CUDA
// graph captured at the first run.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include "CudaDriver.h"

#include <cstdio>

using namespace ridge::rt;
using namespace ridge::rt::cu;

namespace {
/// Human-readable bytes for out-of-memory messages.
std::string formatBytes(uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (1u << 20)) {
    char mib[32];
    std::snprintf(mib, sizeof(mib), " (%.1f MiB)", bytes / 1048576.0);
    text += mib;
  }
  return text;
}

/// The driver with `model`'s device current on this thread, after checking
/// that the device exists, can run the model's code and has its kernels;
/// nullptr and `error` otherwise.
CudaDriver *enterModelDevice(const Model &model, std::string &error) {
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  if (!driver) {
    error = "no NVIDIA GPU available: " + why;
    return nullptr;
  }
  int device = model.getDevice();
  if (device >= driver->deviceCount()) {
    error = "CUDA device " + std::to_string(device) + " does not exist (" +
            std::to_string(driver->deviceCount()) + " device(s) present)";
    return nullptr;
  }
  // Refuse obviously incompatible devices up front: the driver's own error
  // for this (a PTX JIT or "no kernel image" failure) does not say why.
  int required = 0;
  bool archSpecific = false;
  if (parseGpuTarget(model.target(), required, archSpecific)) {
    int have = driver->computeCapability(device);
    auto sm = [](int cc) { return "sm_" + std::to_string(cc); };
    if (have < required || (archSpecific && have != required)) {
      error = "model targets " + model.target() + " but GPU '" +
              driver->deviceName(device) + "' is " + sm(have);
      return nullptr;
    }
  }
  if (!driver->makeCurrent(device, error))
    return nullptr;
  return driver;
}

/// What a failed synchronization adds: a GPU reports a kernel's fault at
/// the next synchronization, for whichever kernel of the run made it.
std::string faultHint() {
  if (isSyncingLaunches())
    return "";
  return " (one of the run's kernels failed; RIDGE_SYNC_LAUNCHES=1 waits "
         "for each kernel and names it)";
}

/// Holds a session's one run at a time: `acquired` is false, with `error`
/// set, when another thread's run holds it.
class RunGuard {
public:
  RunGuard(std::atomic<bool> &busy, std::string &error) : busy(busy) {
    bool expected = false;
    acquired = busy.compare_exchange_strong(expected, true);
    if (!acquired)
      error = "the session is already running an inference on another "
              "thread; a session runs one at a time (make one session per "
              "thread)";
  }
  ~RunGuard() {
    if (acquired)
      busy = false;
  }
  bool acquired;

private:
  std::atomic<bool> &busy;
};
} // namespace

std::unique_ptr<Session> Session::create(const Model &model,
                                         std::string &error) {
  return create(model, error, Options());
}

std::unique_ptr<Session> Session::create(const Model &model, std::string &error,
                                         const Options &options) {
  if (!model.isGpu()) {
    error =
        "a session runs GPU models; this one targets '" + model.target() + "'";
    return nullptr;
  }
  CudaDriver *driver = enterModelDevice(model, error);
  if (!driver)
    return nullptr;
  if (!model.loadGpuError.empty()) {
    error = "loading the model's GPU kernels failed: " + model.loadGpuError;
    return nullptr;
  }
  ThreadDeviceScope scope(model.getDevice());
  const CudaDriver::Api &api = driver->api();
  const ModelInfo &info = model.modelInfo();
  std::unique_ptr<Session> session(new Session(model, options));

  // Everything a run uses, allocated here: a failure names the bytes and
  // what they were for, and nothing has been launched.
  auto allocate = [&](uint64_t bytes, const std::string &what,
                      uint64_t &pointer) {
    // cuMemAlloc refuses 0 bytes; an empty tensor still gets a distinct
    // pointer so that the model never sees null.
    uint64_t size = bytes ? bytes : 1;
    CUdeviceptr address = 0;
    std::string why;
    if (!driver->check(api.cuMemAlloc(&address, size), "cuMemAlloc", why)) {
      error = "out of device memory: allocating " + formatBytes(size) +
              " for " + what + " on CUDA device " +
              std::to_string(model.getDevice()) + ": " + why;
      return false;
    }
    pointer = address;
    session->deviceBytes += size;
    return true;
  };
  if (info.deviceWeightsBytes &&
      !allocate(info.deviceWeightsBytes, "the weights", session->weightsBlock))
    return nullptr;
  for (const DeviceWeightSpec &weight : info.deviceWeights) {
    const void *source = *weight.source;
    std::string why;
    if (!source) {
      error = "weight '" + weight.name +
              "' has no host data (its weights file is not mapped)";
      return nullptr;
    }
    if (weight.bytes &&
        !driver->check(api.cuMemcpyHtoD(session->weightsBlock + weight.offset,
                                        source, weight.bytes),
                       "cuMemcpyHtoD", why)) {
      error = "uploading weight '" + weight.name + "' (" +
              formatBytes(weight.bytes) + "): " + why;
      return nullptr;
    }
  }
  if (info.arenaBytes &&
      !allocate(info.arenaBytes, "the arena of temporaries", session->arena))
    return nullptr;
  // The arena's zeroed bytes (split-K's tile counters): zero once, and
  // every run leaves them so.
  if (info.arenaZeroedBytes &&
      !driver->check(api.cuMemsetD8(session->arena, 0, info.arenaZeroedBytes),
                     "cuMemsetD8", error)) {
    error = "zeroing the arena's first " + formatBytes(info.arenaZeroedBytes) +
            ": " + error;
    return nullptr;
  }
  size_t numInputs = info.inputs.size();
  session->tensorBuffers.assign(numInputs + info.outputs.size(), 0);
  for (size_t i = 0; i < session->tensorBuffers.size(); ++i) {
    bool isInput = i < numInputs;
    const TensorSpec &spec =
        isInput ? info.inputs[i] : info.outputs[i - numInputs];
    if (!allocate(spec.byteSize(),
                  std::string(isInput ? "input" : "output") + " '" + spec.name +
                      "'",
                  session->tensorBuffers[i]))
      return nullptr;
  }
  CUstream stream = nullptr;
  if (!driver->check(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                     "cuStreamCreate", error))
    return nullptr;
  session->stream = stream;
  // The weights went through pageable host memory: done before any run.
  if (!driver->check(api.cuStreamSynchronize(nullptr), "cuStreamSynchronize",
                     error))
    return nullptr;
  return session;
}

Session::~Session() {
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  if (!driver)
    return;
  ThreadDeviceScope scope(model.getDevice());
  std::string error;
  if (!driver->makeCurrent(model.getDevice(), error))
    return;
  const CudaDriver::Api &api = driver->api();
  if (stream)
    api.cuStreamSynchronize(static_cast<CUstream>(stream));
  releaseGraph();
  if (stream)
    api.cuStreamDestroy(static_cast<CUstream>(stream));
  for (uint64_t pointer : tensorBuffers)
    if (pointer)
      api.cuMemFree(pointer);
  if (arena)
    api.cuMemFree(arena);
  if (weightsBlock)
    api.cuMemFree(weightsBlock);
}

void Session::releaseGraph() {
  if (!graphExec)
    return;
  std::string why;
  if (CudaDriver *driver = CudaDriver::get(why))
    driver->api().cuGraphExecDestroy(static_cast<CUgraphExec>(graphExec));
  graphExec = nullptr;
  graphBuffers.clear();
}

void *Session::getDeviceBuffer(size_t index) const {
  return index < tensorBuffers.size()
             ? reinterpret_cast<void *>(tensorBuffers[index])
             : nullptr;
}

bool Session::run(const std::vector<void *> &hostBuffers, std::string &error) {
  if (!model.checkBuffers(hostBuffers, error))
    return false;
  RunGuard guard(busy, error);
  if (!guard.acquired)
    return false;
  const ModelInfo &info = model.modelInfo();
  size_t numInputs = info.inputs.size();
  CudaDriver *driver = enterModelDevice(model, error);
  if (!driver)
    return false;
  ThreadDeviceScope scope(model.getDevice());
  const CudaDriver::Api &api = driver->api();
  auto *cuStream = static_cast<CUstream>(stream);

  std::vector<void *> buffers;
  for (size_t i = 0; i < tensorBuffers.size(); ++i) {
    buffers.push_back(reinterpret_cast<void *>(tensorBuffers[i]));
    if (i >= numInputs)
      continue;
    const TensorSpec &spec = info.inputs[i];
    if (spec.byteSize() &&
        !driver->check(api.cuMemcpyHtoDAsync(tensorBuffers[i], hostBuffers[i],
                                             spec.byteSize(), cuStream),
                       "cuMemcpyHtoDAsync", error)) {
      error = "copying input '" + spec.name + "' to the GPU: " + error;
      return false;
    }
  }
  if (!launch(buffers, stream, error))
    return false;
  for (size_t i = numInputs; i < tensorBuffers.size(); ++i) {
    const TensorSpec &spec = info.outputs[i - numInputs];
    if (spec.byteSize() &&
        !driver->check(api.cuMemcpyDtoHAsync(hostBuffers[i], tensorBuffers[i],
                                             spec.byteSize(), cuStream),
                       "cuMemcpyDtoHAsync", error)) {
      error = "copying output '" + spec.name + "' from the GPU: " + error;
      return false;
    }
  }
  return synchronize(error);
}

bool Session::enqueue(const std::vector<void *> &deviceBuffers,
                      void *callerStream, std::string &error) {
  if (deviceBuffers.size() != tensorBuffers.size()) {
    error = "expected " + std::to_string(tensorBuffers.size()) +
            " device buffers, got " + std::to_string(deviceBuffers.size());
    return false;
  }
  for (size_t i = 0; i < deviceBuffers.size(); ++i) {
    if (!deviceBuffers[i]) {
      error = "device buffer " + std::to_string(i) + " is null";
      return false;
    }
  }
  RunGuard guard(busy, error);
  if (!guard.acquired || !enterModelDevice(model, error))
    return false;
  ThreadDeviceScope scope(model.getDevice());
  std::vector<void *> buffers(deviceBuffers);
  return launch(buffers, callerStream ? callerStream : stream, error);
}

bool Session::synchronize(std::string &error) {
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  if (!driver) {
    error = "no NVIDIA GPU available: " + why;
    return false;
  }
  if (!driver->makeCurrent(model.getDevice(), error))
    return false;
  std::string syncError;
  if (!driver->check(
          driver->api().cuStreamSynchronize(static_cast<CUstream>(stream)),
          "cuStreamSynchronize", syncError)) {
    error = "GPU execution failed: " + syncError + faultHint();
    return false;
  }
  return true;
}

/// Queues the model on `buffers` (the tensors' device pointers) and
/// `queue`: a replay of the graph captured with the same buffers, or a
/// capture of one, or the model's launches one by one.
bool Session::launch(std::vector<void *> &buffers, void *queue,
                     std::string &error) {
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  const CudaDriver::Api &api = driver->api();
  auto *cuStream = static_cast<CUstream>(queue);
  // The model's run takes the tensors, then its two device blocks and the
  // stream (ModelAbi.h).
  std::vector<void *> arguments(buffers);
  arguments.push_back(reinterpret_cast<void *>(weightsBlock));
  arguments.push_back(reinterpret_cast<void *>(arena));
  arguments.push_back(queue);

  usedGraph = false;
  bool graphs =
      options.cudaGraph && api.cuStreamBeginCapture && graphFallback.empty();
  // Each timed launch waits for its event; each launch waits for its kernel
  // under RIDGE_SYNC_LAUNCHES=1.
  if (graphs && (isKernelProfiling() || isSyncingLaunches()))
    graphs = false;
  if (graphs && (!graphExec || graphBuffers != buffers)) {
    // Capture the launches once; a failure makes the launches go one by
    // one from now on, which then reports any error of the model itself.
    releaseGraph();
    takeGpuError();
    CUgraph graph = nullptr;
    std::string captureError;
    if (driver->check(api.cuStreamBeginCapture(
                          cuStream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                      "cuStreamBeginCapture", captureError)) {
      model.entry(arguments.data());
      std::string runError = takeGpuError();
      bool ended = driver->check(api.cuStreamEndCapture(cuStream, &graph),
                                 "cuStreamEndCapture", captureError);
      if (!runError.empty())
        captureError = runError;
      else if (ended) {
        CUgraphExec exec = nullptr;
        if (driver->check(api.cuGraphInstantiateWithFlags(&exec, graph, 0),
                          "cuGraphInstantiateWithFlags", captureError)) {
          graphExec = exec;
          graphBuffers = buffers;
        }
      }
    }
    if (graph)
      api.cuGraphDestroy(graph);
    if (!graphExec) {
      graphFallback = "capturing the launches failed: " + captureError;
      graphs = false;
    }
  }
  if (graphs) {
    std::string launchError;
    if (!driver->check(
            api.cuGraphLaunch(static_cast<CUgraphExec>(graphExec), cuStream),
            "cuGraphLaunch", launchError)) {
      error = "GPU execution failed: " + launchError;
      return false;
    }
    usedGraph = true;
    return true;
  }
  takeGpuError();
  model.entry(arguments.data());
  std::string runError = takeGpuError();
  if (!runError.empty()) {
    error = "GPU execution failed: " + runError;
    return false;
  }
  return true;
}
