from typing import Any

from carray.opencl._clcall import Plan

class EwPlan(Plan):
    scalars: tuple[tuple[int, int], ...]
    def __init__(self, queue: Any, knl: Any, consts: tuple, gsize: tuple, lsize: tuple | None,
                 scalars: tuple[tuple[int, int], ...]) -> None: ...

def run(kind: Any, code: int, t: int, out: Any, inputs: Any) -> Any: ...
