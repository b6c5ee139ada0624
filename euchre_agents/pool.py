"""Process pools for the lab's parallel work (a match's chunks, teacher shards): results as each task finishes,
every worker on one thread (`euchre_agents.threads`), and a worker that dies is an error, not a wait forever."""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator, Sequence, TypeVar

from euchre_agents.threads import use_one_thread

Task = TypeVar("Task")
Result = TypeVar("Result")


class WorkerDied(RuntimeError):
    """A pool's worker process ended without handing back its task's result."""


WORKER_DIED = (
    "a worker process died while playing (killed by the system, out of memory, or a crash in native code); "
    "run again to continue, or with --workers 1 to see the failure in this process"
)


def pool_results(
    run: Callable[[Task], Result], tasks: Sequence[Task], workers: int, initializer: Callable[..., None] = use_one_thread,
    initargs: tuple = (), method: str | None = None,
) -> Iterator[Result]:
    """`run(task)` for every task, as each finishes, in a pool of `workers` processes started by `method` (default
    `start_method()`), each first running `initializer(*initargs)` (one thread); `WorkerDied` where one of them dies
    (a process pool's `imap` would wait forever for the lost task). Closing it stops the workers."""
    context = multiprocessing.get_context(method or start_method())
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs)
    try:
        for future in as_completed([pool.submit(run, task) for task in tasks]):
            yield future.result()
    except BrokenProcessPool:
        raise WorkerDied(WORKER_DIED) from None
    finally:
        _stop(pool)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Drop the tasks not started and end the running ones now, not when they finish."""
    processes = list((pool._processes or {}).values())   # the executor has no public terminate before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()


def start_method() -> str:
    """fork on Linux (workers inherit what this process imported); spawn where CUDA is live here, where Ray was
    imported, or off Linux."""
    torch = sys.modules.get("torch")
    cuda_live = torch is not None and torch.cuda.is_initialized()
    # Ray's threads and gRPC's fork handlers outlive ray.shutdown(), so a worker forked after Ray ran may die; a
    # pool whose worker dies holding its queue lock waits forever (the test suite hung so once).
    ray_imported = "ray" in sys.modules
    return "fork" if sys.platform.startswith("linux") and not cuda_live and not ray_imported else "spawn"
