# Makes test/models/gemm_bf16_1024: python3 make_model.py model.onnx 1024 1024 1024
# (a and b cast to bf16, their product cast back to f32; no weights, run
# with --random-inputs).
import onnx, sys
from onnx import helper, TensorProto
M,K,N = [int(v) for v in sys.argv[2:5]]
BF = TensorProto.BFLOAT16; F = TensorProto.FLOAT
nodes = [helper.make_node('Cast', ['a'], ['ab'], to=BF), helper.make_node('Cast', ['b'], ['bb'], to=BF),
         helper.make_node('MatMul', ['ab', 'bb'], ['cb']), helper.make_node('Cast', ['cb'], ['c'], to=F)]
g = helper.make_graph(nodes, 'gemm', [helper.make_tensor_value_info('a', F, [M, K]), helper.make_tensor_value_info('b', F, [K, N])],
                      [helper.make_tensor_value_info('c', F, [M, N])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); m.ir_version = 8
onnx.save(m, sys.argv[1])
