"""Where a match's chunks run: in this process, in a process pool, or as Ray tasks; the same results on each.

`run_tasks(run, tasks, workers=..., ray=...)` yields `run(task)` for every task as it finishes. The
tasks and `run` must pickle by reference (module-level, importable): a pool's workers and Ray's get
them that way. Ray's workers get the code through the job's runtime_env (`ray_runtime_env`).
"""

from __future__ import annotations

import logging
import socket
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

from euchre_agents.pool import pool_results
from euchre_agents.threads import one_thread
from euchre_env.extras import require

Task = TypeVar("Task")
Result = TypeVar("Result")

RAY_LOCAL = "local"
"""`--ray` without an address: a Ray started on this machine for the run."""
RAY_MAX_RETRIES = 3
"""Times a chunk is run again after its worker process or node died."""
RAY_CONNECT_TIMEOUT = 20.0
"""Seconds to wait for a cluster to answer before giving up (ray.init itself may wait much longer)."""
RAY_HINT = "start one with `ray start --head`, or give --ray without an address for a local Ray"
RAY_OBJECT_STORE = 200 * 2**20
"""Object store of a local Ray, in bytes: results are a few arrays per chunk."""


def run_tasks(
    run: Callable[[Task], Result], tasks: Sequence[Task], *, workers: int = 1, ray: str | None = None
) -> Iterator[Result]:
    """`run(task)` for every task, as each finishes: here (workers 1), in a pool of `workers` processes,
    or as Ray tasks on the cluster at `ray` (an address, or `RAY_LOCAL`). Close the iterator to stop early."""
    if ray is not None:
        yield from ray_results(tasks, ray, run)
        return
    workers = max(1, min(int(workers), len(tasks)))
    if workers == 1:
        for task in tasks:
            with one_thread():
                result = run(task)
            yield result
        return
    yield from pool_results(run, tasks, workers)


def task_runner(workers: int = 1, ray: str | None = None) -> Callable[[Callable[[Task], Result], Sequence[Task]], Iterator[Result]]:
    """`run_tasks` with its backend chosen: a `run_jobs(run, tasks)` for code that hands its jobs out
    (the teacher data's `generate`)."""
    return lambda run, tasks: run_tasks(run, tasks, workers=workers, ray=ray)


# ---------------------------------------------------------------------------------------- Ray


def ray_runtime_env() -> dict[str, Any]:
    """Ray's job-level runtime_env that ships the engine, the bots and the lab's tools to every worker (py_modules).

    `connect_ray` passes it to `ray.init`; a program that starts Ray itself passes it too.
    """
    import euchre_agents
    import euchre_env

    modules = [Path(euchre_agents.__file__).parent, Path(euchre_env.__file__).parent, Path(__file__).resolve().parents[1]]
    return {"py_modules": [str(p) for p in modules], "excludes": ["__pycache__", "*.pyc"]}


def _probe(address: str, timeout: float) -> None:
    """Raise ConnectionError unless something listens at HOST:PORT (or ray://HOST:PORT); `auto` is left to Ray."""
    where = address.removeprefix("ray://")
    host, sep, port = where.rpartition(":")
    if address == "auto":
        return
    if not sep or not port.isdigit():
        raise ValueError(f"--ray: {address!r} is not an address; give HOST:PORT, ray://HOST:PORT, auto, or no value for a local Ray")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise ConnectionError(f"cannot reach a Ray cluster at {address}: {error.strerror or error}; {RAY_HINT}") from None


def _use_auth_token() -> None:
    """Send this machine's Ray token (~/.ray/auth_token, RAY_AUTH_TOKEN) when RAY_AUTH_MODE is unset, as `ray start` does:
    clusters of Ray 2.60 require one by default, and without it ray.init waits on the refusals."""
    try:
        from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
    except ImportError:  # another Ray version: RAY_AUTH_MODE is then the user's to set
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def _drop_sigterm_note(record: logging.LogRecord) -> bool:
    return "SIGTERM handler is not set" not in record.getMessage()


def _start_local_ray(num_cpus: int | None) -> None:
    import ray

    ray.init(
        num_cpus=num_cpus,
        object_store_memory=RAY_OBJECT_STORE,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env=ray_runtime_env(),
    )


def _join_cluster(address: str, timeout: float) -> None:
    """ray.init at `address` in a thread, so that a silent address cannot hang this one; one-line ConnectionErrors."""
    import ray

    outcome: dict[str, BaseException | None] = {}

    def join() -> None:
        try:
            quiet = {} if address.startswith("ray://") else {"log_to_driver": False}  # Ray Client takes no such options
            ray.init(address=address, runtime_env=ray_runtime_env(), **quiet)
            outcome["error"] = None
        except BaseException as error:  # noqa: BLE001 - reported below as one line
            outcome["error"] = error

    # Off the main thread ray.init notes that it cannot set its SIGTERM handler, which changes nothing here.
    worker_log = logging.getLogger("ray._private.worker")
    worker_log.addFilter(_drop_sigterm_note)
    thread = threading.Thread(target=join, daemon=True)
    thread.start()
    thread.join(timeout)
    worker_log.removeFilter(_drop_sigterm_note)
    if "error" not in outcome:
        raise ConnectionError(f"cannot reach a Ray cluster at {address}: no answer in {timeout:.0f} s; {RAY_HINT}")
    if outcome["error"] is not None:
        lines = str(outcome["error"]).strip().splitlines() or [type(outcome["error"]).__name__]
        raise ConnectionError(f"cannot connect to Ray at {address}: {lines[0].rstrip('.')}; {RAY_HINT}")


def connect_ray(address: str, num_cpus: int | None = None, timeout: float = RAY_CONNECT_TIMEOUT) -> bool:
    """Join the cluster at `address`, or start a local Ray (`RAY_LOCAL`, with `num_cpus`); False if already connected.

    The job's runtime_env ships the code (`ray_runtime_env`). Raises ConnectionError with a one-line
    message when the cluster cannot be reached within `timeout`, MissingExtraError without the [ray] extra.
    """
    require("ray", "ray", what="--ray")
    import ray

    if ray.is_initialized():
        return False
    if address == RAY_LOCAL:
        _start_local_ray(num_cpus)
        return True
    _probe(address, timeout)
    _use_auth_token()
    _join_cluster(address, timeout)
    return True


def _ray_play(run: Callable[[Task], Result], task: Task) -> Result:
    """A Ray task: `run(task)`."""
    return run(task)


def ray_results(
    tasks: Sequence[Task], address: str, run: Callable[[Task], Result], max_retries: int = RAY_MAX_RETRIES
) -> Iterator[Result]:
    """`run(task)` for each task, as its Ray task finishes; a task whose worker dies runs again.

    A Ray already running in this process is used as it is (its job must ship the code:
    `ray_runtime_env`); one started here is shut down when the iterator is exhausted or closed.
    """
    import ray

    started = connect_ray(address)
    remote = ray.remote(_ray_play).options(num_cpus=1, max_retries=max_retries)
    pending = [remote.remote(run, task) for task in tasks]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
