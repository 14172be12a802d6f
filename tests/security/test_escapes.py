"""Classic Python-sandbox escapes, each tried through every way a condition reaches the engine.

Conditions used to be Python source run with ``eval()``; they are now parsed into a closed IR
(:mod:`workbench.engine.expr`). Every attempt of :data:`ATTEMPTS` goes through every entry point of
:data:`ENTRY_POINTS` (the Python sequence and reaction-group APIs, ``%%cep`` text, the CLI, conformance
cases and the IPython magic) and must end in one of two ways:

* **rejected** when the pattern is defined, with a :class:`~workbench.errors.CepError` that says where
  (a ``span``, ``line N, column M`` in the message, or ``file:line:column`` from the CLI); or
* **ran harmlessly**: the run finishes (a failing condition is recorded, not raised).

Either way nothing may have been executed (the :class:`Canary` sees no process, no sentinel file, no
frame or code introspection), no input event may have changed, and it must take less than
:data:`BUDGET_S` seconds. Anything else -- another exception at definition, an aborted run, a hang, a
mutated event, a canary hit -- fails. The cases that fail today are listed in :data:`KNOWN_FAILURES`
with the observed behaviour and marked ``xfail(strict=True)``, so that a fix shows up as an XPASS.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import inspect
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pandas as pd
import pytest

from workbench.cli import main as cli_main
from workbench.conformance.runner import RunOptions
from workbench.conformance.runner import run_case as run_conformance_case
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Matcher
from workbench.engine.nfa import Quantifier, SequencePattern, Stage
from workbench.engine.reactions import (
    Channel,
    Count,
    Exit,
    Initiator,
    Instance,
    MapCounter,
    ReactionGroup,
    Timer,
    Var,
)
from workbench.engine.runtime import RunResult, run
from workbench.errors import CepError
from workbench.language import compile_text

# ============================================================================ the attempts

#: replaced in every attempt by the path of a file that must never come to exist.
SENTINEL = "SENTINEL"


@dataclass(frozen=True)
class Attempt:
    """One escape attempt: a condition text (``SENTINEL`` stands for the canary file's path)."""

    name: str
    text: str

    def render(self, sentinel: Path) -> str:
        """The text with the sentinel's path filled in."""
        return self.text.replace(SENTINEL, str(sentinel))


def _attempts(**texts: str) -> tuple[Attempt, ...]:
    return tuple(Attempt(name, text) for name, text in texts.items())


ATTEMPTS: tuple[Attempt, ...] = (
    # --- dunder walks to object.__subclasses__(), a function's globals, the event's class
    *_attempts(
        subclasses_walk="().__class__.__bases__[0].__subclasses__()",
        subclasses_popen=(
            "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'Popen'][0]"
            "(['touch', 'SENTINEL'])"
        ),
        event_class="e.__class__",
        fields_class="e.fields.__class__",
        init_globals="e.__init__.__globals__['os'].system('touch SENTINEL')",
        dunder_name="__builtins__",
        dunder_as_field_index="e['__class__'] is None",
        dunder_as_get_argument="e.get('__globals__') is None",
        homoglyph_dunder="e.__сlass__",  # Cyrillic 'с'
    ),
    # --- generator, frame and traceback attributes
    *_attempts(
        gi_frame_globals="(x for x in [1]).gi_frame.f_back.f_globals",
        gi_code="(x for x in [1]).gi_code.co_consts",
        gi_frame_locals="(x for x in [1]).gi_frame.f_locals",
        f_builtins_import="(x for x in [1]).gi_frame.f_builtins['__import__']('os').system('touch SENTINEL')",
        tb_frame="e.tb_frame.f_back.f_globals",
        lambda_generator_frame="(lambda g: g.gi_frame.f_globals)((x for x in [1]))",
    ),
    # --- str.format / format_map templates and % formatting
    *_attempts(
        format_globals="'{0.__init__.__globals__}'.format(e)",
        format_map_class="'{x.__class__}'.format_map({'x': e})",
        format_plain_field="'{0.fields}'.format(e) != ''",
        percent_huge_width="('%999999999d' % 1) == ''",
        percent_star_width="('%*d' % (999999999, 1)) == ''",
        percent_mapping_dunder="('%(__class__)s' % e) == ''",
    ),
    # --- calling values that are not named functions
    *_attempts(
        call_fields="e.fields()",
        call_literal="(1)()",
        call_matched_event="matched('a')[0]()",
        call_lambda_parameter="(lambda f: f('id'))(len)",
        call_comprehension_variable="[f('id') for f in [len]]",
        call_value_from_get="e.get('system')('touch SENTINEL')",
    ),
    # --- dangerous built-ins called by name
    *_attempts(
        getattr_by_name="getattr(e, '__class__')",
        setattr_by_name="setattr(e, 'price', 0)",
        type_by_name="type(e)",
        globals_by_name="globals()",
        locals_by_name="locals()",
        vars_by_name="vars(e)",
        open_by_name="open('SENTINEL', 'w')",
        eval_by_name="eval(\"__import__('os').system('touch SENTINEL')\")",
        exec_by_name="exec(\"open('SENTINEL', 'w')\")",
        compile_by_name="compile('1', 'x', 'eval')",
        import_by_name="__import__('os').system('touch SENTINEL')",
        breakpoint_by_name="breakpoint()",
        input_by_name="input()",
        help_by_name="help()",
    ),
    # --- statements and imports
    *_attempts(
        import_statement="import os",
        from_import="from os import system",
        module_global="sys.modules['os'] is not None",
        semicolon_statement="e.price > 0; __import__('os').system('touch SENTINEL')",
        newline_statement="e.price > 0\nimport os",
        comment_smuggling="e.price > 0  # or __import__('os').system('touch SENTINEL')",
        null_byte="e.price > 0\x00 or True",
    ),
    # --- walrus and f-strings
    *_attempts(
        walrus="(y := 1)",
        walrus_in_comprehension="[(y := x) for x in [1]]",
        fstring="f'{e}'",
        fstring_dunder="f'{e.__class__}' == ''",
    ),
    # --- huge powers, shifts, repetitions, ranges and comprehensions
    *_attempts(
        power_tower="9**9**9 > 0",
        power_huge="2**10**8 > 0",
        power_float_overflow="10.0**400 > 0",
        shift_huge="(1 << 10**10) > 0",
        repeat_string="len('a' * 10**10) > 0",
        repeat_list="len([1] * 10**10) > 0",
        concat_growth="len('a' * 999999 + 'b' * 999999) > 0",
        replace_growth="len(('a' * 1000).replace('a', 'b' * 10000)) > 0",
        int_from_huge_string="int('9' * 5000) > 0",
        range_huge="len(range(10**15)) > 0",
        range_small="len(range(3)) == 3",
        comprehension_filtered_product="len([1 for a in 'x' * 999999 for b in 'y' * 999999 if a == b]) > 0",
    ),
    # --- deep nesting
    *_attempts(
        deep_parentheses="(" * 500 + "1" + ")" * 500,
        deep_not="not " * 1000 + "x",
        deep_minus="-" * 10000 + "1",
        deep_lists="[" * 100 + "]" * 100,
        deep_attribute_chain="e" + ".x" * 5000,
        deep_addition="1" + " + 1" * 4000,
    ),
    # --- mutating the event
    *_attempts(
        fields_update="e.fields.update({'price': 0})",
        fields_clear="e.fields.clear()",
        fields_pop="e.fields.pop('price')",
        fields_setitem="e.fields.__setitem__('price', 0)",
        fields_setdefault="e.fields.setdefault('pwned', 1)",
        object_setattr="object.__setattr__(e, 'price', 0)",
    ),
    # --- syntax outside the subset
    *_attempts(
        dict_comprehension="{k: 1 for k in 'ab'}",
        set_comprehension="{k for k in 'ab'}",
        star_unpacking="[*e.fields]",
        double_star_unpacking="{**e.fields}",
        slice="e.name[::-1] == 'x'",
        underscore_attribute="e._secret",
        underscore_name="_x",
        underscore_comprehension_target="[__x for __x in [1]]",
        bytes_literal="b'abc'",
        keyword_argument="round(e.price, ndigits=1)",
        is_identity="e is e",
    ),
    # --- very long text
    *_attempts(
        long_text="e.price > 0 and " * 6250 + "True",
        long_string_literal="'" + "a" * 15000 + "' == ''",
    ),
    # --- unicode tricks
    *_attempts(
        fullwidth_eval="ｅｖａｌ('1')",
        fullwidth_dunder_attribute="e.＿＿class＿＿",
        fullwidth_import="＿＿import＿＿('os')",
        escaped_dunder_string="'\\x5f\\x5fclass\\x5f\\x5f' == e.name",
    ),
    # --- lambdas, yield, await
    *_attempts(
        bare_lambda="lambda: 1",
        lambda_default="(lambda a=1: a)()",
        lambda_varargs="(lambda *a: a)(1)",
        yield_expression="(yield 1)",
        yield_from="(yield from e)",
        await_expression="await e",
        async_comprehension="[x async for x in e]",
    ),
)

# ============================================================================ outcomes


@dataclass(frozen=True)
class Rejected:
    """The pattern was refused when it was defined; ``located``: the error says line and column."""

    error: str
    located: bool


@dataclass(frozen=True)
class Ran:
    """The pattern was defined and run to the end.

    Attributes:
        detected: whether anything was detected (``None``: the entry point does not tell).
        errors: the condition errors the run recorded.
        events: the events the results carry (checked for mutation).
    """

    detected: bool | None
    errors: tuple[str, ...] = ()
    events: tuple[Event, ...] = ()


Outcome = Rejected | Ran

_LOCATION = re.compile(r"line \d+, column \d+")


def _rejected(err: CepError) -> Rejected:
    span = getattr(err, "span", None)
    return Rejected(f"{type(err).__name__}: {err}", span is not None or bool(_LOCATION.search(str(err))))


def _ran(result: RunResult) -> Ran:
    seen = [e for d in result.detections for e in d.events] + [r.event for r in result.reactions]
    errors = tuple(f"{f.kind}: {f.message}" for f in result.errors)
    return Ran(bool(result.detections), errors, tuple(seen))


# ============================================================================ the canary

#: audit events that no condition may ever cause (process creation, frame and code introspection...).
FORBIDDEN_AUDIT_EVENTS = frozenset(
    {
        "os.system",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "os.remove",
        "os.rename",
        "os.rmdir",
        "subprocess.Popen",
        "pty.spawn",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "builtins.input",
        "builtins.breakpoint",
        "sys.settrace",
        "sys.setprofile",
        "object.__getattr__",
        "object.__setattr__",
        "object.__delattr__",
        "function.__new__",
        "code.__new__",
        "socket.connect",
        "webbrowser.open",
    }
)
_FORBIDDEN_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")


class Canary:
    """Records anything an attempt must never cause, while armed.

    An audit hook (installed once per process, inert while disarmed) sees process creation, frame
    and code introspection and any ``open`` of the sentinel file; the usual ways to start a process
    are also replaced by recorders that refuse to run anything.
    """

    _active: Canary | None = None
    _installed = False

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel
        self.hits: list[str] = []
        self.armed = False

    @classmethod
    def _hook(cls, event: str, args: tuple[Any, ...]) -> None:
        canary = cls._active
        if canary is not None and canary.armed:
            canary.audit(event, args)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """Record ``event`` if an attempt must never cause it (never raises)."""
        if event in FORBIDDEN_AUDIT_EVENTS or event.startswith(_FORBIDDEN_PREFIXES):
            names = [a if isinstance(a, str) else type(a).__name__ for a in args]
            self.hits.append(f"audit {event}({', '.join(names)})")
        elif event == "open" and args and str(args[0]) == str(self.sentinel):
            self.hits.append(f"audit open({self.sentinel})")

    def recorder(self, name: str) -> Callable[..., Any]:
        """A stand-in for ``name`` that records the call and runs nothing."""

        def refuse(*args: Any, **kwargs: Any) -> Any:
            self.hits.append(f"call {name}{args!r:.200}")
            msg = f"the security canary refused {name}"
            raise PermissionError(msg)

        return refuse

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make this canary the active one and replace the process-starting functions."""
        if not Canary._installed:
            sys.addaudithook(Canary._hook)
            Canary._installed = True
        Canary._active = self
        for module, name in (
            (os, "system"),
            (os, "popen"),
            (os, "execv"),
            (os, "execve"),
            (os, "execvp"),
            (os, "spawnv"),
            (subprocess, "Popen"),
            (subprocess, "run"),
            (subprocess, "call"),
            (subprocess, "check_output"),
        ):
            monkeypatch.setattr(module, name, self.recorder(f"{module.__name__}.{name}"))

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Arm the canary for the duration of the block."""
        self.armed = True
        try:
            yield
        finally:
            self.armed = False

    def problems(self) -> list[str]:
        """Everything the canary saw, and the sentinel file if it exists."""
        found = list(self.hits)
        if self.sentinel.exists():
            found.append(f"the sentinel file {self.sentinel} was created")
        return found


# ============================================================================ the time limit

#: seconds an attempt may take through one entry point (definition and run together). A hang is
#: unbounded work; the engine bounds every evaluation (``MAX_ITERATIONS``, ``MAX_SIZE``), and the
#: worst attempt costs about 1 s on an idle machine, so this leaves room for a loaded CI machine.
BUDGET_S = 10.0


class AttemptTimedOut(BaseException):
    """Raised in the attempt by SIGALRM; a BaseException so that no ``except Exception`` swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (SIGALRM, main thread) and fail if it ran over anyway."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise AttemptTimedOut

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    except AttemptTimedOut:
        pytest.fail(f"hang: still running after {seconds:.0f} s (interrupted)")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.monotonic() - start
    if elapsed > seconds:
        pytest.fail(f"hang: took {elapsed:.1f} s, the budget is {seconds:.0f} s")


# ============================================================================ the inputs

#: the events every entry point runs over (one key, one user; the fields conditions read).
ROWS: tuple[Mapping[str, Any], ...] = tuple(
    {"type": type_, "time": t, "key": "k", "user": "u", "price": 5, "name": "x", "id": t}
    for t, type_ in enumerate(["login", "trade", "trade", "trade", "logout"])
)
FIELDS = ("user", "price", "name", "id")


def _fields(row: Mapping[str, Any]) -> dict[str, Any]:
    return {f: row[f] for f in FIELDS}


@dataclass
class Ctx:
    """Everything one attempt may touch, fresh per test; :meth:`intact` checks none of it changed."""

    tmp_path: Path
    sentinel: Path
    events: list[Event] = field(init=False)
    case: dict[str, Any] | None = None
    csv_path: Path = field(init=False)
    frame: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.events = [Event(r["type"], r["time"], r["key"], _fields(r), i) for i, r in enumerate(ROWS)]
        self.csv_path = self.tmp_path / "events.csv"
        with self.csv_path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=list(ROWS[0]))
            writer.writeheader()
            writer.writerows(ROWS)
        self._csv_text = self.csv_path.read_text(encoding="utf-8")
        self.frame = pd.DataFrame([dict(r) for r in ROWS])
        self._frame_copy = self.frame.copy(deep=True)

    def conformance_case(self, pattern: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
        """A conformance case over :data:`ROWS` (kept for the mutation check)."""
        events = [{"t": r["time"], "key": r["key"], "type": r["type"], "fields": _fields(r)} for r in ROWS]
        case = {"id": "security/probe", "pattern": dict(pattern), "events": events, "expected": [], **extra}
        self.case = json.loads(json.dumps(case))  # as read from a case file
        self._case_copy = copy.deepcopy(self.case)
        return self.case

    def pattern_file(self, text: str) -> Path:
        """``%%cep`` text written to a pattern file."""
        path = self.tmp_path / "probe.cep"
        path.write_text(text, encoding="utf-8")
        return path

    def intact(self, seen: Sequence[Event] = ()) -> list[str]:
        """What changed among the inputs (and the events a result carries)."""
        changed = []
        for i, (event, row) in enumerate(zip(self.events, ROWS, strict=True)):
            if dict(event.fields) != _fields(row):
                changed.append(f"event #{i} fields became {dict(event.fields)!r}")
        for event in seen:
            if 0 <= event.seq < len(ROWS) and dict(event.fields) != _fields(ROWS[event.seq]):
                changed.append(f"result event #{event.seq} fields became {dict(event.fields)!r}")
        if self.csv_path.read_text(encoding="utf-8") != self._csv_text:
            changed.append("the events file changed")
        if not self.frame.equals(self._frame_copy):
            changed.append("the events DataFrame changed")
        if self.case is not None and self.case != self._case_copy:
            changed.append("the conformance case changed")
        return changed


# ============================================================================ entry points: Python API


def _run_python(define: Callable[[], SequencePattern | ReactionGroup], ctx: Ctx) -> Outcome:
    """Define the pattern (build the objects, compile them), then run it over the events."""
    try:
        matcher: Matcher = compile_matcher(define())
    except CepError as err:
        return _rejected(err)
    return _ran(run(matcher, ctx.events))


def via_sequence_where(text: str, ctx: Ctx) -> Outcome:
    """``Stage(where=...)`` in a :class:`SequencePattern`."""

    def define() -> SequencePattern:
        return SequencePattern("probe", (Stage("a", where=text), Stage("b", where="e.price > 0")))

    return _run_python(define, ctx)


def via_sequence_until(text: str, ctx: Ctx) -> Outcome:
    """``Stage(until=...)`` of a looping stage."""

    def define() -> SequencePattern:
        loop = Stage("a", where="e.price > 0", quantifier=Quantifier.one_or_more(), until=text)
        return SequencePattern("probe", (loop, Stage("b", where="e.type == 'logout'")))

    return _run_python(define, ctx)


def via_group_channel_where(text: str, ctx: Ctx) -> Outcome:
    """A reaction group channel's ``where``."""

    def define() -> ReactionGroup:
        channel = Channel("c1", "trade", match={"user": Var("User")}, where=text)
        initiator = Initiator("login", bind={"User": "user"})
        return ReactionGroup("probe", "and", channels=(channel,), initiator=initiator, timeout_ms=1000)

    return _run_python(define, ctx)


def via_group_where(text: str, ctx: Ctx) -> Outcome:
    """A reaction group's own ``where`` (evaluated on ``@vars`` joins)."""

    def define() -> ReactionGroup:
        channels = (
            Channel("c1", "trade", count=Count.of(-1), vars={"U": "user", "P1": "price"}),
            Channel("c2", "logout", count=Count.of(-1), vars={"U": "user", "P2": "price"}),
        )
        instances = (Instance("k", 0),)
        return ReactionGroup("probe", "and", channels, 1000, instances=instances, where=text)

    return _run_python(define, ctx)


def via_group_collect(text: str, ctx: Ctx) -> Outcome:
    """A channel's ``collect`` expression (appended to a per-instance list)."""

    def define() -> ReactionGroup:
        channels = (
            Channel("add", "trade", count=Count.of(-1), collect={"Basket": text}),
            Channel("close", "logout"),
        )
        initiator = Initiator("login", bind={"User": "user"}, state={"Basket": []})
        return ReactionGroup("probe", "and", channels=channels, initiator=initiator, timeout_ms=1000)

    return _run_python(define, ctx)


def via_group_accumulator(text: str, ctx: Ctx) -> Outcome:
    """The key expression of a ``MapCounter`` accumulator on a ``@timer`` channel."""

    def define() -> ReactionGroup:
        channel = Channel("c1", "trade", timer=Timer(2, 2, MapCounter(text)))
        instances = (Instance("k", 0),)
        return ReactionGroup("probe", "or", channels=(channel,), instances=instances, exit=Exit(count=2))

    return _run_python(define, ctx)


# ============================================================================ entry points: %%cep text

CEP_SEQUENCE_WHERE = """\
sequence probe
    begin a: trade where {X}
    followed by b: trade
"""
CEP_SEQUENCE_UNTIL = """\
sequence probe
    begin a: trade where e.price > 0 one or more until {X}
    followed by b: logout
"""
CEP_CHANNEL_WHERE = """\
group probe
    on login(user as User)
    @and @timeout(1s) {{
        c1: trade(user = User) where {X}
    }}
"""
CEP_GROUP_WHERE = """\
group probe
    instance 'k' at 0
    @and @timeout(1s) @where({X}) {{
        @count(-1) @vars c1: trade(user as U, price as P1)
        @count(-1) @vars c2: logout(user as U, price as P2)
    }}
"""


def _cep(template: str, text: str) -> str:
    return template.format(X=text)


def _run_cep(source: str, ctx: Ctx) -> Outcome:
    """Define ``source`` with :func:`compile_text`, then run every pattern it defines."""
    try:
        definitions = compile_text(source)
    except CepError as err:
        return _rejected(err)
    return _ran(run([d.pattern for d in definitions], ctx.events))


def via_cep_sequence_where(text: str, ctx: Ctx) -> Outcome:
    """``%%cep``: ``begin a: trade where ...``."""
    return _run_cep(_cep(CEP_SEQUENCE_WHERE, text), ctx)


def via_cep_sequence_until(text: str, ctx: Ctx) -> Outcome:
    """``%%cep``: ``... one or more until ...``."""
    return _run_cep(_cep(CEP_SEQUENCE_UNTIL, text), ctx)


def via_cep_channel_where(text: str, ctx: Ctx) -> Outcome:
    """``%%cep``: a group channel's ``where``."""
    return _run_cep(_cep(CEP_CHANNEL_WHERE, text), ctx)


def via_cep_group_where(text: str, ctx: Ctx) -> Outcome:
    """``%%cep``: a group's ``@where(...)``."""
    return _run_cep(_cep(CEP_GROUP_WHERE, text), ctx)


# ============================================================================ entry points: the CLI


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(argv)
    return status, out.getvalue(), err.getvalue()


def _cli_outcome(status: int, stderr: str, path: Path) -> Outcome:
    """Exit status 1 is a rejection (located if stderr says ``file:line:column``); 0 and 3 ran."""
    if status == 1:
        located = re.search(rf"{re.escape(str(path))}:\d+:\d+: error", stderr) is not None
        return Rejected(stderr.strip(), located)
    if status in (0, 3):
        found = re.search(r"(\d+) detection\(s\)", stderr)
        errors = tuple(line for line in stderr.splitlines() if line.startswith("error in condition"))
        return Ran(None if found is None else int(found.group(1)) > 0, errors)
    pytest.fail(f"unexpected exit status {status}: {stderr}")


def via_cli_check(text: str, ctx: Ctx) -> Outcome:
    """``workbench check FILE`` (a check only defines, so it never runs)."""
    path = ctx.pattern_file(_cep(CEP_SEQUENCE_WHERE, text))
    status, _, stderr = _cli(["check", str(path)])
    return _cli_outcome(status, stderr, path)


def via_cli_run(text: str, ctx: Ctx) -> Outcome:
    """``workbench run FILE events.csv``."""
    path = ctx.pattern_file(_cep(CEP_SEQUENCE_WHERE, text))
    status, _, stderr = _cli(["run", str(path), str(ctx.csv_path)])
    return _cli_outcome(status, stderr, path)


# ============================================================================ entry points: conformance cases

#: exceptions the runner reports as ``crashed with ...`` that are an expression failing to evaluate
#: (an ``events_generator`` is evaluated unguarded: a failing one fails its case, nothing more).
EVALUATION_ERRORS = frozenset(
    {"ValueError", "TypeError", "NameError", "ZeroDivisionError", "OverflowError", "KeyError", "IndexError"}
)


def _cep_error_names(cls: type[BaseException] = CepError) -> set[str]:
    names = {cls.__name__}
    for sub in cls.__subclasses__():
        names |= _cep_error_names(sub)
    return names


def _conformance(case: Mapping[str, Any], *, generated: bool = False) -> Outcome:
    """Run ``case`` with the conformance runner and read its differences as an outcome.

    A sequence case says whether the pattern was rejected or the run failed; a group case reports any
    CepError as ``Name: message``, which is read as a rejection (its conditions record runtime errors).
    """
    diffs = run_conformance_case(case, RunOptions(), "security/probe.json").diffs
    for diff in diffs:
        head, _, rest = diff.partition(": ")
        if head == "pattern rejected" or head in _cep_error_names() - {"CepRuntimeError"}:
            return Rejected(diff, bool(_LOCATION.search(rest)))
        crashed = re.match(r"crashed with (\w+)", diff)
        if crashed and not (generated and crashed.group(1) in EVALUATION_ERRORS):
            pytest.fail(f"the conformance runner reports a crash: {diff}")
        if head in ("run failed", "CepRuntimeError"):
            pytest.fail(f"the run was aborted: {diff}")
    return Ran(any(d.startswith("unexpected ") for d in diffs), tuple(diffs))


def via_conformance_stage_where(text: str, ctx: Ctx) -> Outcome:
    """A sequence case with the attempt as a stage ``where``."""
    stages = [{"name": "a", "where": text}, {"name": "b", "where": "e.price > 0"}]
    return _conformance(ctx.conformance_case({"kind": "sequence", "stages": stages}))


def via_conformance_channel_where(text: str, ctx: Ctx) -> Outcome:
    """A group case with the attempt as a channel ``where``."""
    pattern = {
        "kind": "group",
        "operator": "and",
        "timeout_ms": 1000,
        "initiator": {"type": "login", "bind": {"User": "user"}},
        "channels": [{"id": "c1", "type": "trade", "match": {"user": "$User"}, "where": text}],
    }
    return _conformance(ctx.conformance_case(pattern))


def via_conformance_events_generator(text: str, ctx: Ctx) -> Outcome:
    """A filter case whose ``events_generator`` is the attempt."""
    case = ctx.conformance_case(
        {"kind": "filter", "type": "trade", "where": "e.price > 0"}, events_generator=text
    )
    return _conformance(case, generated=True)


# ============================================================================ entry point: the IPython magic


def _ipython() -> Any:
    from tests.jupyter.shell import cep_shell

    return cep_shell()


def via_magic(text: str, ctx: Ctx) -> Outcome:
    """``%%cep`` with the attempt in a stage ``where``, then ``%cep run probe --on EVENTS``."""
    from workbench.jupyter.magics import CepCellError
    from workbench.session.session import CepSession

    shell = _ipython()
    shell.user_ns["security_events"] = ctx.frame
    # a fresh session: event declarations other tests made in this shared kernel would be in force
    shell.magics_manager.registry["CepMagics"].session = CepSession()
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            shell.run_cell_magic("cep", "-q", _cep(CEP_SEQUENCE_WHERE, text))
        except CepCellError as err:
            return _rejected(err.error)
        frame = shell.run_line_magic("cep", "run probe --on security_events")
    return Ran(len(frame) > 0)


# ============================================================================ the table of entry points

EntryPoint = Callable[[str, Ctx], Outcome]

ENTRY_POINTS: dict[str, EntryPoint] = {
    "sequence_where": via_sequence_where,
    "sequence_until": via_sequence_until,
    "group_channel_where": via_group_channel_where,
    "group_where": via_group_where,
    "group_collect": via_group_collect,
    "group_accumulator": via_group_accumulator,
    "cep_sequence_where": via_cep_sequence_where,
    "cep_sequence_until": via_cep_sequence_until,
    "cep_channel_where": via_cep_channel_where,
    "cep_group_where": via_cep_group_where,
    "cli_check": via_cli_check,
    "cli_run": via_cli_run,
    "conformance_stage_where": via_conformance_stage_where,
    "conformance_channel_where": via_conformance_channel_where,
    "conformance_events_generator": via_conformance_events_generator,
    "magic": via_magic,
}

ALL = tuple(ENTRY_POINTS)
#: entry points that pass the text to the engine as is (no ``%%cep`` parser, which adds a location).
RAW_TEXT = (
    "sequence_where",
    "sequence_until",
    "group_channel_where",
    "group_where",
    "group_collect",
    "group_accumulator",
    "conformance_stage_where",
    "conformance_channel_where",
    "conformance_events_generator",
)


def _every(attempts: Sequence[str], entries: Sequence[str], reason: str) -> dict[tuple[str, str], str]:
    return {(attempt, entry): reason for attempt in attempts for entry in entries}


#: (attempt, entry point) -> what happens today, for cases that fail: each becomes an
#: ``xfail(strict=True)`` case, so that a fix shows up as an XPASS. Empty: every attempt is rejected
#: with its position or runs harmlessly.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _cases() -> list[Any]:
    cases = []
    for attempt in ATTEMPTS:
        for entry in ENTRY_POINTS:
            reason = KNOWN_FAILURES.get((attempt.name, entry))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(attempt, entry, id=f"{attempt.name}-{entry}", marks=marks))
    return cases


# ============================================================================ fixtures


@pytest.fixture(scope="module", autouse=True)
def _warm_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run a benign condition through every entry point once, so imports stay out of the time budget."""
    tmp = tmp_path_factory.mktemp("warm")
    for name, entry in ENTRY_POINTS.items():
        (tmp / name).mkdir()
        ctx = Ctx(tmp / name, tmp / name / "sentinel")
        entry(CONTROL.get(name, "e.price > 0"), ctx)


@pytest.fixture
def canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Canary]:
    watch = Canary(tmp_path / "sentinel")
    watch.install(monkeypatch)
    yield watch
    Canary._active = None


@pytest.fixture
def ctx(tmp_path: Path, canary: Canary) -> Ctx:
    return Ctx(tmp_path, canary.sentinel)


# ============================================================================ the tests


def _attempt(ctx: Ctx, canary: Canary, entry: str, text: str) -> Outcome:
    """Run ``text`` through ``entry`` with the canary armed and the time limit on; check the aftermath."""
    with canary.watching(), time_limit(BUDGET_S):
        outcome = ENTRY_POINTS[entry](text, ctx)
    assert not canary.problems(), f"the attempt executed something: {canary.problems()}"
    seen = outcome.events if isinstance(outcome, Ran) else ()
    assert not ctx.intact(seen), f"the attempt changed its input: {ctx.intact(seen)}"
    return outcome


@pytest.mark.parametrize(("attempt", "entry"), _cases())
def test_escape_attempt_is_rejected_or_harmless(
    attempt: Attempt, entry: str, ctx: Ctx, canary: Canary
) -> None:
    outcome = _attempt(ctx, canary, entry, attempt.render(canary.sentinel))
    if isinstance(outcome, Rejected):
        assert outcome.located, f"rejected without a line and column: {outcome.error}"
    else:
        assert isinstance(outcome, Ran)


#: a harmless condition per entry point that makes every one of them detect something.
CONTROL: dict[str, str] = {
    "sequence_until": "e.price < 0",
    "cep_sequence_until": "e.price < 0",
    "group_collect": "e.price",
    "group_accumulator": "e.price",
    "conformance_events_generator": (
        "[{'t': i, 'key': 'k', 'type': 'trade', 'fields': {'price': 5}} for i in range(5, 8)]"
    ),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_entry_point_runs_a_harmless_condition(entry: str, ctx: Ctx, canary: Canary) -> None:
    """The control: a benign condition runs, detects something, and trips no alarm."""
    outcome = _attempt(ctx, canary, entry, CONTROL.get(entry, "e.price > 0"))
    assert isinstance(outcome, Ran), outcome
    assert outcome.detected is not False, outcome
    assert not outcome.errors or entry.startswith("conformance"), outcome.errors


def test_canary_sees_a_process_and_the_sentinel(canary: Canary) -> None:
    """The canary itself works: a shell command is refused, frame access and the sentinel are seen."""
    with canary.watching(), pytest.raises(PermissionError):
        os.system(f"touch {canary.sentinel}")  # refused by the canary
    assert any(p.startswith(("call os.system", "audit os.system")) for p in canary.problems())
    with canary.watching():  # reads generator.gi_frame
        assert inspect.getgeneratorstate(x for x in [1]) == inspect.GEN_CREATED
    assert any("gi_frame" in p for p in canary.problems())
    canary.sentinel.write_text("x", encoding="utf-8")
    assert any("sentinel" in p for p in canary.problems())


def _spin(seconds: float) -> None:
    with time_limit(seconds):
        while True:
            pass


def test_time_limit_interrupts_a_loop() -> None:
    """The time limit interrupts pure-Python work and fails the test."""
    with pytest.raises(pytest.fail.Exception, match="hang"):
        _spin(0.2)


def test_there_are_enough_attempts() -> None:
    assert len(ATTEMPTS) >= 45
    assert len({a.name for a in ATTEMPTS}) == len(ATTEMPTS)
