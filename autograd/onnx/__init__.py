"""autograd.onnx: export a model to an ONNX file (torch.onnx.export's face).

    autograd.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                         dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})

The model runs once on the example args (in eval mode) while a hook records every autograd
Function applied (autograd/function.py's set_tracer); each recorded op becomes ONNX nodes
(autograd/onnx/_symbolic.py). The `onnx` package is an optional extra (pip install
'carray[onnx]'); it is imported only when export runs.
"""

from autograd.onnx._errors import UnsupportedOperatorError
from autograd.onnx._export import TrainingMode, export

__all__ = ["TrainingMode", "UnsupportedOperatorError", "export"]
