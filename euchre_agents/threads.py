"""One thread per worker: the lab's parallelism is across processes (a match's chunks, teacher shards), so each
process that plays runs its numerical libraries on one thread. Torch's default of one thread per core ran a
one-worker job beside a training run at a fraction of the speed of either."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
"""The environment variables that size the thread pools of OpenMP, MKL and OpenBLAS."""


def use_one_thread() -> None:
    """This process on one thread from now on (a pool worker's initializer): the variables, and torch if loaded."""
    for var in THREAD_VARS:
        os.environ[var] = "1"
    torch = sys.modules.get("torch")  # None where an import of it was blocked
    if torch is not None:
        torch.set_num_threads(1)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Work done in this process on one thread, as in a pool's worker, so that `workers` is the number of cores
    a job takes. Torch imported inside keeps one thread; torch imported before gets its thread count back,
    and the variables their values."""
    saved = {var: os.environ.get(var) for var in THREAD_VARS}
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    use_one_thread()
    try:
        yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        if threads is not None:
            torch.set_num_threads(threads)
