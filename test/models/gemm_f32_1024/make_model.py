# Makes test/models/gemm_f32_1024: python3 make_model.py model.onnx 1024 1024 1024
# (an f32 MatMul of two graph inputs; no weights, run with --random-inputs;
# --precision=tf32 rounds its operands).
import onnx, sys
from onnx import helper, TensorProto
M,K,N = [int(v) for v in sys.argv[2:5]]
F = TensorProto.FLOAT
nodes = [helper.make_node('MatMul', ['a', 'b'], ['c'])]
g = helper.make_graph(nodes, 'gemm', [helper.make_tensor_value_info('a', F, [M, K]), helper.make_tensor_value_info('b', F, [K, N])],
                      [helper.make_tensor_value_info('c', F, [M, N])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); m.ir_version = 8
onnx.save(m, sys.argv[1])
