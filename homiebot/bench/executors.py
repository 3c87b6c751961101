"""Where the jobs of an evaluation (or of any batch of independent jobs) run.

A ``JobExecutor`` takes a job function, a per-process initialiser and a list of payloads, and yields
``(index, value)`` pairs as jobs finish, in any order. The caller (the driver) alone writes results,
so resuming, reports and merging do not depend on the executor.

- ``LocalExecutor``: this machine; one process (``workers=1``) or a pool of spawned processes.
- ``RayExecutor``: a Ray cluster; every job is a Ray task with declared resources (CPUs, GPUs,
  memory). A job lost to the infrastructure (its worker or node died, the node ran out of memory) is
  submitted again, up to ``retries`` times, and reported through ``on_retry``; it never becomes a
  result. Ray is optional (``pip install homiebot[ray]``).

Job functions and initialisers must be importable top-level functions (they are sent by name).
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

EXECUTORS = ("local", "ray")
RAY_MISSING = "--executor ray needs Ray: pip install 'homiebot[ray]' (or pip install ray)"


class ExecutorError(ValueError):
    """An executor that cannot start (Ray missing, cluster unreachable); the message says what to do."""


@dataclass(frozen=True)
class JobResources:
    """What one job needs on the node that runs it (Ray schedules by these; the local pool ignores them)."""

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory_mb: int = 0

    def ray_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus}
        if self.memory_mb:
            opts["memory"] = int(self.memory_mb) * 1024 * 1024
        return opts


@dataclass(frozen=True)
class Retry:
    """A job lost to the infrastructure and submitted again."""

    index: int
    attempt: int  # 1 for the first retry
    reason: str


class InfrastructureFailure(RuntimeError):
    """Jobs that were lost to the infrastructure more often than the retry limit allows."""

    def __init__(self, lost: dict[int, str]) -> None:
        self.lost = lost
        first = next(iter(lost.values()), "")
        super().__init__(f"{len(lost)} job(s) could not run for infrastructure reasons ({first}); "
                         "nothing was recorded for them: run again with --resume")


class JobExecutor(ABC):
    """Runs independent jobs; yields ``(payload index, return value)`` as each finishes."""

    name = ""

    @abstractmethod
    def run(self, fn: Callable[..., Any], payloads: Sequence[tuple[Any, ...]], init: Callable[..., None] | None = None,
            init_args: tuple[Any, ...] = (), resources: JobResources = JobResources(),
            on_retry: Callable[[Retry], None] | None = None) -> Generator[tuple[int, Any], None, None]:
        """Call ``fn(*payload)`` for every payload in processes where ``init(*init_args)`` ran first."""

    def describe(self) -> str:
        """A few words for the start-up line (e.g. '2 workers', 'Ray at 10.0.0.1:6379, 64 CPUs, 8 GPUs')."""
        return self.name

    def close(self) -> None:
        """Release what the executor holds (nothing for the local pool, which ends with each run)."""


def _call_indexed(fn: Callable[..., Any], item: tuple[int, tuple[Any, ...]]) -> tuple[int, Any]:
    index, args = item
    return index, fn(*args)


def _stop_quietly(signum: int, frame: Any) -> None:
    """A pool worker's Ctrl-C: end the worker as SystemExit, which its episode records as interrupted and
    multiprocessing ends without a traceback (a KeyboardInterrupt printed one per worker); the driver
    reports the stop once."""
    raise SystemExit(130)


def _pool_init(init: Callable[..., None] | None, *init_args: Any) -> None:
    """Every pool worker's start: Ctrl-C handled as ``_stop_quietly``, then the caller's initialiser."""
    signal.signal(signal.SIGINT, _stop_quietly)
    if init is not None:
        init(*init_args)


class LocalExecutor(JobExecutor):
    """This machine: jobs in this process (one worker) or in a pool of spawned worker processes."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ExecutorError("--workers must be at least 1")
        self.workers = workers

    def describe(self) -> str:
        return f"{self.workers} worker{'s' if self.workers != 1 else ''}"

    def run(self, fn: Callable[..., Any], payloads: Sequence[tuple[Any, ...]], init: Callable[..., None] | None = None,
            init_args: tuple[Any, ...] = (), resources: JobResources = JobResources(),
            on_retry: Callable[[Retry], None] | None = None) -> Generator[tuple[int, Any], None, None]:
        items = list(enumerate(payloads))
        call = functools.partial(_call_indexed, fn)
        if self.workers == 1:
            if init is not None:
                init(*init_args)
            yield from map(call, items)
            return
        pool = mp.get_context("spawn").Pool(self.workers, initializer=_pool_init, initargs=(init, *init_args))
        try:
            yield from pool.imap_unordered(call, items)
        finally:
            pool.terminate()
            pool.join()


# ---- Ray -----------------------------------------------------------------------------------
_RAY_INIT: dict[str, str] = {}


def _ray_job(setup: tuple[Callable[..., None] | None, tuple[Any, ...], Callable[..., Any]], args: tuple[Any, ...]) -> Any:
    """Body of every Ray task: initialise this worker process once per setup, then run the job."""
    init, init_args, fn = setup
    if init is not None:
        key = hashlib.sha256(repr((init.__module__, init.__qualname__, init_args)).encode()).hexdigest()
        if _RAY_INIT.get("key") != key:  # Ray reuses worker processes across tasks (and drivers)
            init(*init_args)
            _RAY_INIT["key"] = key
    return fn(*args)


def _infrastructure_errors(ray: Any) -> tuple[type[BaseException], ...]:
    names = ("WorkerCrashedError", "NodeDiedError", "OutOfMemoryError", "ObjectLostError", "OwnerDiedError",
             "LocalRayletDiedError", "RaySystemError", "ObjectReconstructionFailedError", "TaskCancelledError")
    return tuple(getattr(ray.exceptions, n) for n in names if isinstance(getattr(ray.exceptions, n, None), type))


def import_ray() -> Any:
    """The ``ray`` module, or ExecutorError naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise ExecutorError(RAY_MISSING) from None
    return ray


def _reachable(address: str) -> None:
    """Fail in seconds, not after Ray's minute of retries, when nothing listens at HOST:PORT."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except ValueError:
        raise ExecutorError(f"--address {address}: expected HOST:PORT (e.g. 127.0.0.1:6379) or 'auto'") from None
    except OSError as err:
        raise ExecutorError(f"cannot start or reach Ray at {address}: {err.strerror or err} "
                            "(is `ray start --head` running there?)") from None


def _token_source() -> str | None:
    """Where Ray would read this driver's authentication token from, if anywhere."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if path and os.path.isfile(path):
        return path
    default = os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
    return default if os.path.isfile(default) else None


def _refused(address: str, answered: bool) -> str:
    """Why a Ray head at ``address`` may have refused this driver. Ray's own error only says it
    failed to connect; since Ray 2.5x the usual cause is token authentication: a head started
    where ~/.ray/auth_token exists (which a local ``ray.init()`` creates) or with
    RAY_AUTH_MODE=token accepts only drivers that send its token, and a driver given an explicit
    address sends one only with RAY_AUTH_MODE=token."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() == "token":
        source = _token_source()
        if source is None:
            return "RAY_AUTH_MODE=token is set but there is no token here (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token)"
        return (f"this driver sends the token from {source}: is it the head's (`ray get-auth-token` there), "
                "and is the Ray version the same?")
    where = "something answers there, so " if answered else ""
    return (f"{where}the head most likely requires token authentication and this driver sends no token: run with "
            "RAY_AUTH_MODE=token and the head's token (its ~/.ray/auth_token here, or RAY_AUTH_TOKEN), or start the head "
            "with RAY_AUTH_MODE=disabled on a trusted network" + ("" if answered else "; or is `ray start --head` not running there?"))


class RayExecutor(JobExecutor):
    """A Ray cluster (``address``: 'HOST:PORT', 'auto', or None for RAY_ADDRESS or a new local instance).

    ``max_in_flight`` caps the jobs submitted at once (e.g. to match a shared planner server's
    throughput); None lets the cluster's resources decide. ``local_cpus`` sizes the private
    instance started when there is no address. ``retries`` is how often one job may be lost to the
    infrastructure before the evaluation gives up on it."""

    name = "ray"

    def __init__(self, address: str | None = None, max_in_flight: int | None = None, retries: int = 3,
                 local_cpus: int | None = None) -> None:
        if (max_in_flight is not None and max_in_flight < 1) or (local_cpus is not None and local_cpus < 1):
            raise ExecutorError("--workers must be at least 1")
        if retries < 0:
            raise ExecutorError("--retries must be 0 or more")
        self.address, self.max_in_flight, self.retries, self.local_cpus = address, max_in_flight, retries, local_cpus
        self._ray = import_ray()
        self._started = False

    def _connect(self) -> None:
        if self._ray.is_initialized():
            return
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
        address = self.address or os.environ.get("RAY_ADDRESS")
        if address:
            kwargs["address"] = address
        else:  # a private single-machine instance, only on this machine's loopback
            kwargs["_node_ip_address"] = "127.0.0.1"
            # Ray runs workers at nice 15 by default; like the local pool's, these jobs are the point of the run
            os.environ.setdefault("RAY_worker_niceness", "0")
            if self.local_cpus:
                kwargs["num_cpus"] = self.local_cpus
        checked = address is not None and ":" in address and "://" not in address
        if address is not None and checked:
            _reachable(address)
        main = threading.current_thread() is threading.main_thread()
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)} if main else {}
        try:
            self._ray.init(**kwargs)
        except Exception as err:  # ConnectionError, RuntimeError, ValueError depending on what is wrong
            where = f"at {address}" if address else "on this machine"
            why = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ExecutorError(f"cannot start or reach Ray {where}: {why}" + (f" ({_refused(address, checked)})" if address else "")) from None
        finally:
            for sig, handler in handlers.items():  # Ray's driver replaces them; the caller's own say how to stop
                if handler is not None:
                    signal.signal(sig, handler)
        self._started = True

    def describe(self) -> str:
        self._connect()
        res = self._ray.cluster_resources()
        nodes = sum(1 for n in self._ray.nodes() if n.get("Alive"))
        parts = [f"Ray, {nodes} node{'s' if nodes != 1 else ''}", f"{res.get('CPU', 0):g} CPUs"]
        if res.get("GPU"):
            parts.append(f"{res['GPU']:g} GPUs")
        if self.max_in_flight:
            parts.append(f"at most {self.max_in_flight} jobs at once")
        return ", ".join(parts)

    def close(self) -> None:
        """Disconnect from the cluster (jobs still running are cancelled by Ray with this driver)."""
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False

    def _check_fits(self, resources: JobResources) -> None:
        res = self._ray.cluster_resources()
        need = {"CPU": resources.num_cpus, "GPU": resources.num_gpus, "memory": resources.memory_mb * 1024 * 1024}
        short = [k for k, v in need.items() if v and max((n.get("Resources", {}).get(k, 0) for n in self._ray.nodes() if n.get("Alive")),
                                                        default=0) < v]
        if short:
            raise ExecutorError(f"no Ray node has what one job asks for ({', '.join(f'{k} {need[k]:g}' for k in short)}; "
                                f"the cluster has {', '.join(f'{k} {res.get(k, 0):g}' for k in short)}); "
                                "lower the resources in the config or add such nodes")

    def _window(self, resources: JobResources) -> int:
        """Jobs to keep submitted: the cap, else twice what the cluster runs at once (the rest waits on
        the driver, so that waiting on the submitted ones stays cheap however long the job list)."""
        if self.max_in_flight:
            return self.max_in_flight
        res = self._ray.cluster_resources()
        fits = [res.get("CPU", 0) / resources.num_cpus if resources.num_cpus else float("inf"),
                res.get("GPU", 0) / resources.num_gpus if resources.num_gpus else float("inf")]
        at_once = min(fits)
        return max(1, 2 * int(at_once)) if at_once != float("inf") else 64

    def run(self, fn: Callable[..., Any], payloads: Sequence[tuple[Any, ...]], init: Callable[..., None] | None = None,
            init_args: tuple[Any, ...] = (), resources: JobResources = JobResources(),
            on_retry: Callable[[Retry], None] | None = None) -> Generator[tuple[int, Any], None, None]:
        ray = self._ray
        self._connect()
        if not payloads:
            return
        self._check_fits(resources)
        # max_retries=0: Ray would retry lost tasks silently; the driver retries them itself to count and report them
        task = ray.remote(_ray_job).options(max_retries=0, **resources.ray_options())
        infra = _infrastructure_errors(ray)
        setup = ray.put((init, init_args, fn))  # stored once in the object store, not sent with every task
        pending = list(range(len(payloads)))[::-1]
        attempts: dict[int, int] = {}
        running: dict[Any, int] = {}
        lost: dict[int, str] = {}
        window, sized = self._window(resources), time.monotonic()
        try:
            while pending or running:
                if not self.max_in_flight and time.monotonic() - sized > 10:  # nodes come and go
                    window, sized = self._window(resources), time.monotonic()
                while pending and len(running) < window:
                    i = pending.pop()
                    running[task.remote(setup, payloads[i])] = i
                # a timeout hands control back to Python now and then, so Ctrl-C and SIGTERM are not held up
                ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
                for ref in ready:
                    i = running.pop(ref)
                    try:
                        value = ray.get(ref)
                    except infra as err:
                        reason = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}".rstrip(": ")
                        attempts[i] = attempts.get(i, 0) + 1
                        if attempts[i] > self.retries:
                            lost[i] = reason
                            continue
                        if on_retry:
                            on_retry(Retry(i, attempts[i], reason))
                        pending.append(i)
                        continue
                    except ray.exceptions.RayTaskError as err:  # the job itself raised: as with the local pool, stop
                        cause = err.as_instanceof_cause() if hasattr(err, "as_instanceof_cause") else err
                        raise cause from None
                    yield i, value
        finally:
            # jobs still running are not cancelled one by one here (Ray's driver can trip over a cancel racing a
            # completion); close(), as the CLI does on every exit, disconnects and Ray ends them with the driver
            running.clear()
        if lost:
            raise InfrastructureFailure(lost)


def make_executor(kind: str = "local", workers: int | None = None, address: str | None = None, retries: int = 3) -> JobExecutor:
    """The executor named on the command line (``--executor``, ``--workers``, ``--address``, ``--retries``)."""
    if kind == "local":
        if address:
            raise ExecutorError("--address needs --executor ray")
        return LocalExecutor(1 if workers is None else workers)
    if kind == "ray":
        if address or os.environ.get("RAY_ADDRESS"):
            return RayExecutor(address, max_in_flight=workers, retries=retries)
        return RayExecutor(None, retries=retries, local_cpus=workers)  # the private instance's CPUs bound the jobs at once
    raise ExecutorError(f"unknown executor '{kind}'; choose one of {', '.join(EXECUTORS)}")
