"""Timing on the GPU with CUDA events, shared by the benchmarks.

Copied into the bundle of bench/gpu_bundle.py beside gpu_run.py, so it
imports nothing from the repository.
"""


def cuda_time(fn, repeat=20):
    """Median milliseconds of `repeat` runs of `fn`, each between two CUDA
    events, after 3 warm-up runs."""
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]
