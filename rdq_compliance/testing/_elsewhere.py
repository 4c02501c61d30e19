"""A durable plugin's namespace read by a new process, and judged here (C15).

The storage is closed, a new Python process opens it and reads each id
(``storage/_elsewhere``), the storage is opened again here, and every read is judged
as the kit judges a read of its own (``Namespace.judge``): the same diagnosis, the same
causes. What the other process could not do fails the test, except an outage (C20) and
an interpreter that cannot start, which say nothing about the plugin (skips).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NoReturn

from ..envelope._model import Envelope
from ..reporting._outage import could_not_run_reason
from ..storage._elsewhere import Answer, Problem, read_elsewhere
from ..storage._stdio import StdioStorage
from ._failures import OperationHung, canonical, is_c17, testee_violations
from ._guard import CouldNotRun
from ._symptom_messages import symptom_of_call

if TYPE_CHECKING:
    from ._context import Context
    from ._namespace_handle import Namespace

__all__ = ["WHY", "read_in_new_process"]

WHY = ("read by a new process after this one closed the storage; C15: a durable store "
       "keeps what it wrote outside the process that wrote it")


def read_in_new_process(
    rdq: Context, ns: Namespace, envelopes: Sequence[Envelope],
    restart: Callable[[Callable[[], None]], None],
) -> None:
    """Close the storage, read each of ``envelopes`` by its id in ``ns`` from a new
    process, reopen the storage, then require each read to be exactly as written.
    ``restart(between)`` closes the storage, calls ``between`` and opens it again."""
    __tracebackhide__ = True
    runtime = rdq.runtime
    answers: list[Answer] = []
    options = dict(runtime.loaded.resolved)
    if isinstance(runtime.storage, StdioStorage) and not options.get("state_dir"):
        # The bridge's default state directory is made per kit process: the new one
        # gets this one's, as every restart of the testee does.
        options["state_dir"] = runtime.storage.state_dir

    def elsewhere() -> None:
        answers.append(read_elsewhere(runtime.loaded, options, ns.name,
                                      [env.id for env in envelopes], timeout=runtime.timeout))

    restart(elsewhere)
    if not answers:  # pragma: no cover - a restart that failed has failed the test
        raise AssertionError("the storage was reopened without the new process' reads")
    answer = answers[0]
    if answer.problem is None and envelopes and all(
            r.problem is None and r.value is None for r in answer.reads):
        rdq.fail(f"a new process found none of the {len(envelopes)} envelopes written to "
                 f"namespace {ns.name!r}: each read returned None ({WHY})",
                 envelopes=envelopes[:1], difference="not-durable")
    for env, read in zip(envelopes, answer.reads, strict=False):
        op = f"read({env.id!r}) in namespace {ns.name!r}, in a new process"
        if read.problem is not None:
            _failed(rdq, ns, read.problem, (env,), op=op, id=env.id)
        got = read.value
        if got is not None and not isinstance(got, Envelope):
            rdq.fail(f"{op} returned {type(got).__name__} {got!r:.200}; expected "
                     f"rdq_compliance.Envelope or None ({WHY})", envelopes=(env,))
        ns.judge(op, env.id, env, got, why=WHY)
    if answer.problem is not None:
        shown = envelopes[len(answer.reads):len(answer.reads) + 1]
        _failed(rdq, ns, answer.problem, shown)


def _failed(
    rdq: Context, ns: Namespace, problem: Problem, shown: Sequence[Envelope], *,
    op: str | None = None, id: str | None = None,
) -> NoReturn:
    """Fail the test (or skip it, for an outage) with what the new process met."""
    __tracebackhide__ = True
    step = op or f"{problem.step}, in a new process"
    if problem.kind == "unavailable":
        raise CouldNotRun(could_not_run_reason(datetime.now(UTC), step, problem.message))
    if problem.kind == "unstarted":
        raise CouldNotRun(f"the kit could not start a new process to read the store from "
                          f"(C15): {problem.message}")
    if problem.kind == "mismatched":
        raise CouldNotRun(
            f"the kit could not read the store from a new process as this one runs the "
            f"plugin (C15): the new process, given this one's sys.path and working "
            f"directory, {problem.message}; install the plugin, or run the kit from the "
            f"folder that holds it, so that both import the same code")
    if problem.kind == "hung":
        rdq.hung(OperationHung(f"{step} {problem.message} ({WHY})"), shown)
    if op is not None and id is not None and problem.code is not None and is_c17(problem.code):
        ns.read_refused(op, id, problem.message, problem.code, shown)
    judged = testee_violations(problem.violations, problem.document, next(iter(shown), None))
    if judged is not None:  # the bridge's verdict on the testee's wire JSON (RDQ-RT-004)
        detail, symptom = judged
        rdq.fail(f"{step} raised {problem.message} ({WHY})", detail=detail, envelopes=shown,
                 symptom=symptom)
    detail = ""
    if problem.traceback:
        detail = "plugin traceback:\n" + "\n".join(
            "    " + line for line in problem.traceback.splitlines()[-60:])
    if problem.kind == "unloadable":
        summary = (f"the plugin could not be loaded by a new process (the same interpreter, "
                   f"sys.path, working directory and options): {problem.message}")
    elif problem.kind == "crashed":
        summary = f"the new process that reads the store {problem.message}"
    elif problem.kind == "unpicklable":
        summary = f"{step} {problem.message}"
    else:
        summary = f"{step} raised {problem.message}"
    # The symptom without WHY: the exception read in a new process is one cause with
    # the same exception read in this one.
    rdq.fail(f"{summary} ({WHY})", detail=detail, envelopes=shown,
             symptom=symptom_of_call(summary, [f"{summary} ({WHY})"],
                                     [canonical(env) for env in shown]))
