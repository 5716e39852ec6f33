from typing import Any

CL_INVALID_OPERATION: int
CL_INVALID_WORK_DIMENSION: int

def bind(set_arg: int, enqueue: int) -> None: ...
def bind_counting() -> tuple[int, int]: ...
def counts() -> tuple[int, int]: ...
def launch(queue: int, kernel: int, bufs: list, vals: list, gsize: tuple,
           lsize: tuple | None) -> int: ...
def quiet(queue: Any, knl: Any, bufs: list, vals: list, gsize: tuple,
          lsize: tuple | None) -> bool: ...

class Plan:
    queue: Any
    knl: Any
    consts: tuple
    gsize: tuple
    lsize: tuple | None
    def __init__(self, queue: Any, knl: Any, consts: tuple, gsize: tuple,
                 lsize: tuple | None) -> None: ...
