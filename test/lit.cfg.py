# -*- Python -*- lit configuration for Ridgeline.
import os
import platform
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "RIDGELINE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ridge_obj_root, "test")
config.excludes = ["Inputs", "models", "unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]

llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "CUDA_HOME",
                                     "CUDA_ROOT", "CUDA_PATH"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [os.path.join(config.ridge_obj_root, "bin"), config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["ridge-opt", "ridgec", "ridge-run", "ridge-emu", "ridge-exec",
     "ridge-runtime-test",
     "ridge-cost-coverage-test"], tool_dirs)

config.substitutions.append(
    ("%models", os.path.join(config.test_source_root, "models")))
# Public headers, for tests that build C programs against ModelAbi.h.
config.substitutions.append(
    ("%ridge_include", os.path.join(config.ridge_src_root, "include")))

# ptxas (CUDA) is optional: tests that assemble PTX say `REQUIRES: ptxas`.
cuda_bins = [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin"),
             "/usr/local/cuda/bin"]
# nvdisasm also comes from PyPI (nvidia-cuda-nvdisasm), into build/tools-venv
# (scripts/deps.sh, ridge_install_nvdisasm).
import glob
cuda_bins += sorted(glob.glob(os.path.join(
    config.ridge_obj_root, "tools-venv", "lib", "python*", "site-packages",
    "nvidia", "*", "bin")))
for tool in ["ptxas", "cuobjdump", "nvdisasm", "nvcc"]:
    found = shutil.which(tool)
    if not found:
        for d in cuda_bins:
            if os.path.exists(os.path.join(d, tool)):
                found = os.path.join(d, tool)
                break
    if found:
        config.available_features.add(tool)
        config.substitutions.append(("%" + tool, found))

# ONNX backend node tests from Debian's libonnx-testdata.
onnx_node_tests = "/usr/share/libonnx-testdata/data/node"
if os.path.isdir(onnx_node_tests):
    config.available_features.add("onnx-testdata")
    config.substitutions.append(("%onnx_node_tests", onnx_node_tests))

# The Python tools (`%python` is the interpreter running lit); tests that plot
# say `REQUIRES: matplotlib`.
config.substitutions.append(
    ("%ridgeline_python", os.path.join(config.ridge_src_root, "python", "ridgeline")))
if subprocess.run([sys.executable, "-c", "import matplotlib"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("matplotlib")

# Triton from PyPI in build/triton-venv (scripts/deps.sh, ridge_install_triton):
# tests that compile Triton's kernels ahead of time (no GPU) and run them on
# the emulator beside Ridgeline's say `REQUIRES: triton` and run
# `%triton_python`.
triton_python = os.path.join(config.ridge_obj_root, "triton-venv", "bin", "python")
if os.path.exists(triton_python) and subprocess.run(
        [triton_python, "-c", "import numpy, triton"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("triton")
    config.substitutions.append(("%triton_python", triton_python))
# The built tools' folder, for scripts that take --bin-dir.
config.substitutions.append(("%ridge_bin", os.path.join(config.ridge_obj_root, "bin")))

# The host architecture, for tests of the host code's instructions.
if platform.machine() == "x86_64":
    config.available_features.add("x86_64")
    # glibc's vector math library, which CPU kernels call when it is there.
    if any(os.path.exists(os.path.join(d, "libmvec.so"))
           for d in ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                     "/usr/lib64", "/lib64"]):
        config.available_features.add("libmvec")

# A loadable NVIDIA driver decides what `ridge-run --target=sm_*` can do.
if any(os.path.exists(os.path.join(d, "libcuda.so.1"))
       for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]):
    config.available_features.add("cuda-driver")
