# Makes test/models/long_rows: python3 make_model.py model.onnx
# (a Softmax and a LayerNormalization over 2 rows of 8192: rows much longer
# than a warp, too few for the SMs, so the warps of a block share each row;
# no weights, run with --random-inputs).
import onnx, sys
from onnx import helper, TensorProto
F = TensorProto.FLOAT
nodes = [helper.make_node('Softmax', ['x'], ['p'], axis=-1),
         helper.make_node('LayerNormalization', ['x', 's', 'b'], ['n'], axis=-1, epsilon=1e-5)]
g = helper.make_graph(nodes, 'long_rows',
                      [helper.make_tensor_value_info('x', F, [2, 8192]),
                       helper.make_tensor_value_info('s', F, [8192]),
                       helper.make_tensor_value_info('b', F, [8192])],
                      [helper.make_tensor_value_info('p', F, [2, 8192]),
                       helper.make_tensor_value_info('n', F, [2, 8192])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
