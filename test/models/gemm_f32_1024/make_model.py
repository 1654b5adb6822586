# Makes test/models/gemm_f32_1024: python3 make_model.py model.onnx 1024 1024 1024
# (an f32 MatMul of two graph inputs; no weights, run with --random-inputs;
# --precision=tf32 rounds its operands). With --weight-b, B is a [K, N]
# initializer of seeded normal values instead (the form whose tf32 build
# stores B rounded and K-major, and sm_90a multiplies with wgmma); the
# tests make that model in their own output folder.
import onnx, sys
import numpy as np
from onnx import helper, numpy_helper, TensorProto
args = [a for a in sys.argv[1:] if not a.startswith('--')]
M,K,N = [int(v) for v in args[1:4]]
F = TensorProto.FLOAT
inputs = [helper.make_tensor_value_info('a', F, [M, K])]
inits = []
if '--weight-b' in sys.argv:
    w = np.random.default_rng(7).standard_normal((K, N)).astype(np.float32)
    inits.append(numpy_helper.from_array(w, 'b'))
else:
    inputs.append(helper.make_tensor_value_info('b', F, [K, N]))
nodes = [helper.make_node('MatMul', ['a', 'b'], ['c'])]
g = helper.make_graph(nodes, 'gemm', inputs,
                      [helper.make_tensor_value_info('c', F, [M, N])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); m.ir_version = 8
onnx.save(m, args[0])
