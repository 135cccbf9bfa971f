"""What went wrong in a Storm run, read from its log and said so that a user can act on it.

In local mode the death of any component halts the whole JVM, so a run that fails
usually fails once, at the first fatal event; what Storm logs after it (other components
losing their pipes) is a consequence. The first fatal event names the component; the
signature near it says what happened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DIRECT_EMIT_CAST = "direct-emit-cast"
UNREGISTERED_METRIC = "unregistered-metric"
DIRECT_TO_REGULAR = "direct-emit-to-regular-grouping"
REGULAR_TO_DIRECT = "regular-emit-to-direct-stream"
HEARTBEAT_TIMEOUT = "heartbeat-timeout"
PYTHON_EXCEPTION = "component-raised"
NOT_STARTED = "component-not-started"
COMPONENT_DIED = "component-died"
WORKER_DIED = "worker-died"
SPOUT_EXIT = "spout-exit"
NOT_SUBMITTED = "topology-not-submitted"
INJECTED_EXIT = "injected-exit"
JVM_EXIT = "jvm-exit"

SPOUT_TIMEOUT_EXIT = 11  # ShellSpout.die's System.exit, local mode included

# "15:16:41.796 [Thread-43] ERROR o.a.s.t.ShellBolt - message"; continuation lines
# (stack traces, a component's stderr) follow without a timestamp.
EVENT = re.compile(r"^\d\d:\d\d:\d\d\.\d{3} \[(?P<thread>.*?)\] (?P<level>[A-Z]+)\s+"
                   r"(?P<logger>\S+) - (?P<msg>.*)$")
FATAL = re.compile(r"^(Halting process|Async loop died)|^Thread Thread\[main,.*\] died")
MAIN_DIED = re.compile(r"^Thread Thread\[main,.*\] died")
LAUNCHED = re.compile(r"^Launched subprocess with pid (?P<pid>\d+)$")
SHELL_DIED = re.compile(r"Shell(?P<kind>Bolt|Spout) died\. Command: \[(?P<command>.*?)\], "
                        r"ProcessInfo pid:(?P<pid>\d+), name:(?P<component>\S+) "
                        r"exitCode:(?P<code>-?\d+)")
PROCESS_INFO = re.compile(r"pid:(?P<pid>\d+), name:(?P<component>\S+) exitCode:(?P<code>-?\d+)")
EXECUTOR = re.compile(r"^Thread-\d+-(?P<component>.+)-executor\[(?P<first>-?\d+), "
                      r"(?P<last>-?\d+)\]$")
SHELL_LOG = re.compile(r"^ShellLog pid:(?P<pid>\d+), name:(?P<component>\S+) (?P<msg>.*)$")
METRIC = re.compile(r"Could not find metric by name\[(?P<name>[^\]]*)\]")
CAST = re.compile(r"ClassCastException: class java\.lang\.Integer cannot be cast to class "
                  r"java\.lang\.Long")
PYTHON_ERROR = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\w*)"
                          r"(: (?P<text>.*))?$")


def is_fatal(line: str) -> bool:
    """A log line after which the JVM halts: a Storm daemon halting it, an executor (or
    the main thread) dying."""
    event = EVENT.match(line)
    if event is None:
        return line.startswith('Exception in thread "main"')
    return event["level"] == "ERROR" and bool(FATAL.search(event["msg"])) and \
        not SHELL_LOG.match(event["msg"])


@dataclass(frozen=True)
class Trap:
    kind: str
    component: str | None
    task: int | None
    explanation: str
    evidence: str  # the log line that shows it


@dataclass
class _Event:
    thread: str
    level: str
    logger: str
    msg: str
    more: list[str]

    @property
    def text(self) -> str:
        return "\n".join([self.msg, *self.more])


def events(log: str) -> list[_Event]:
    out: list[_Event] = []
    for line in log.splitlines():
        match = EVENT.match(line)
        if match:
            out.append(_Event(match["thread"], match["level"], match["logger"], match["msg"], []))
        elif out:
            out[-1].more.append(line)
        else:
            out.append(_Event("", "", "", line, []))  # before the first log line
    return out


def diagnose(log: str, exit_code: int | None, version: str) -> Trap | None:
    """The first thing that went fatally wrong in `log` (Storm's output up to the moment
    the run was stopped), or None when the log shows nothing fatal and the JVM did not
    exit."""
    found = events(log)
    fatal = next((i for i, e in enumerate(found)
                  if e.level == "ERROR" and FATAL.search(e.msg)), None)
    if fatal is None:
        return None if exit_code is None else _jvm_exit(found, exit_code, version)
    if MAIN_DIED.search(found[fatal].msg):
        cause = _cause(found[fatal])
        return Trap(NOT_SUBMITTED, None, None, (
            f"Flux could not build or submit the topology on Storm {version}: {cause}"),
            found[fatal].msg.strip())
    return _Diagnosis(found, fatal, exit_code, version).trap()


def _task_of(found: list[_Event], pid: int) -> int | None:
    """The task whose executor launched process `pid` (the component's own pid, which
    Storm learns from the handshake)."""
    for e in found:
        launched = LAUNCHED.match(e.msg)
        executor = EXECUTOR.search(e.thread)
        if launched and executor and int(launched["pid"]) == pid and \
                executor["first"] == executor["last"]:
            return int(executor["first"])
    return None


class _Diagnosis:
    def __init__(self, found: list[_Event], fatal: int, exit_code: int | None,
                 version: str) -> None:
        self.event = found[fatal]
        self.exit_code = exit_code
        self.version = version
        died = SHELL_DIED.search(self.event.msg) or PROCESS_INFO.search(self.event.text)
        executor = EXECUTOR.search(self.event.thread)
        self.component = died["component"] if died else \
            executor["component"] if executor else None
        self.code = int(died["code"]) if died else None
        self.task = _task_of(found, int(died["pid"])) if died else None
        if self.task is None and executor and executor["first"] == executor["last"]:
            self.task = int(executor["first"])
        self.spout = "ShellSpout" in self.event.text or "SpoutExecutor" in self.event.text
        # A component's own errors come just before the event that reports its death.
        self.before = [e for e in found[:fatal] if e.level == "ERROR"]
        self.text = "\n".join(e.text for e in [*self.before[-5:], *found[fatal:fatal + 6]])

    def where(self, noun: str = "component") -> str:
        if self.component is None:
            return f"a {noun}"
        return f"{noun} {self.component!r}" + (f" (task {self.task})" if self.task else "")

    def trap(self) -> Trap:
        for check in (self._cast, self._metric, self._direct, self._heartbeat,
                      self._python, self._not_started):
            found = check()
            if found is not None:
                return found
        return self._died()

    def _make(self, kind: str, explanation: str) -> Trap:
        return Trap(kind, self.component, self.task, explanation, self.event.msg.strip())

    def _halts(self) -> str:
        return "in local mode the death of one component halts the whole JVM"

    def _cast(self) -> Trap | None:
        if not CAST.search(self.text):
            return None
        return self._make(DIRECT_EMIT_CAST, (
            f"{self.where()} made a direct emit (emit(..., direct_task=...)), which Storm "
            f"{self.version}'s multilang JSON serializer cannot read: it casts the emit's task "
            "to Long while its JSON parser gives Integer (ClassCastException), so Storm killed "
            f"the component, and {self._halts()}. The suite reads direct emits with a "
            "serializer of its own when the topology declares a direct stream: declare the "
            "stream with Stream(fields, name=..., direct=True) in the component's outputs, "
            "and leave topology.multilang.serializer unset"))

    def _metric(self) -> Trap | None:
        match = METRIC.search(self.text)
        if not match:
            return None
        return self._make(UNREGISTERED_METRIC, (
            f"{self.where()} reported the metric {match['name']!r} (pystorm's report_metric, "
            "the multilang 'metrics' command), but Storm accepts only metrics registered "
            "under that name in the component's Java class, and Flux's shell wrappers "
            "register none (\"Could not find metric by name\"); Storm killed the component, "
            f"and {self._halts()}. Do not call report_metric in components run on Storm "
            "through streamparse/Flux, or register the metric in a ShellBolt of your own"))

    def _direct(self) -> Trap | None:
        if "Cannot emitDirect to a task expecting a regular grouping" in self.text:
            return self._make(DIRECT_TO_REGULAR, (
                f"{self.where()} made a direct emit to a task that subscribes to the stream "
                "with a regular grouping (Storm: \"Cannot emitDirect to a task expecting a "
                f"regular grouping\"), and {self._halts()}. Subscribe to a direct stream "
                "with Grouping.DIRECT, and emit to it only with direct_task"))
        if "Cannot do regular emit to direct stream" in self.text:
            return self._make(REGULAR_TO_DIRECT, (
                f"{self.where()} made a regular emit on a stream that is subscribed with a "
                "direct grouping (Storm: \"Cannot do regular emit to direct stream\"), and "
                f"{self._halts()}. Emit to a direct stream with direct_task=<task id>"))
        return None

    def _heartbeat(self) -> Trap | None:
        if "subprocess heartbeat timeout" not in self.text and \
                self.exit_code != SPOUT_TIMEOUT_EXIT:
            return None
        if self.spout or self.exit_code == SPOUT_TIMEOUT_EXIT:
            return self._make(HEARTBEAT_TIMEOUT, (
                f"{self.where('spout')} did not answer Storm within "
                "topology.subprocess.timeout.secs (default: supervisor.worker.timeout.secs, "
                "30 s): one next_tuple, ack or fail call took that long, or the spout waited "
                "for task ids that never came (with topology.acker.executors 0 and "
                "need_task_ids). Storm's ShellSpout then ends the JVM (System.exit(11), in "
                "local mode too). Make next_tuple return quickly (sleep briefly when there "
                "is nothing to emit), or raise topology.subprocess.timeout.secs"))
        return self._make(HEARTBEAT_TIMEOUT, (
            f"{self.where('bolt')} did not answer Storm's heartbeats within "
            "topology.subprocess.timeout.secs (default: supervisor.worker.timeout.secs, 30 s): "
            f"one process() call took that long, and {self._halts()}. Make process() return "
            "sooner, or raise topology.subprocess.timeout.secs"))

    def _python(self) -> Trap | None:
        mine = [e for e in self.before if (m := SHELL_LOG.match(e.msg)) and
                (self.component is None or m["component"] == self.component) and e.more]
        report = next((e for e in self.before if "Shell Process Exception:" in e.text), None)
        if not mine and report is None:
            return None
        lines = (mine[-1] if mine else report).text.splitlines()
        error = next((ln.strip() for ln in reversed(lines) if PYTHON_ERROR.match(ln.strip())),
                     None)
        start = next((i for i, ln in enumerate(lines) if ln.startswith("Traceback")), None)
        traceback = "\n".join(ln for ln in lines[start:] if ln.strip()) if start is not None \
            else ""
        code = f" (exit code {self.code})" if self.code is not None else ""
        return self._make(PYTHON_EXCEPTION, (
            f"{self.where()} raised {error or 'an exception'}; pystorm reported it and ended "
            f"the process{code}, and {self._halts()} (Storm does not restart components "
            "there). Fix the component, or catch the exception in it"
            + (f":\n{traceback}" if traceback else "")))

    def _not_started(self) -> Trap | None:
        text = self.event.text
        if "No output read" not in text or "ShellProcess.launch" not in text:
            return None
        stderr = _stderr(text)
        return self._make(NOT_STARTED, (
            f"{self.where()}'s process ended before it answered Storm's handshake, so it "
            f"never started, and {self._halts()}. Its command could not run, or it failed "
            "while importing; it wrote: " + (stderr or "nothing on stderr")))

    def _died(self) -> Trap:
        cause = _cause(self.event)
        if SHELL_DIED.search(self.event.msg):
            code = f" with exit code {self.code}" if self.code not in (None, -1) else ""
            return self._make(COMPONENT_DIED, (
                f"{self.where()}'s process died{code} ({cause}), and {self._halts()}; "
                "see the component's log lines (ShellLog) before it in the JVM's log"))
        return self._make(WORKER_DIED, (
            f"Storm's executor of {self.where()} died ({cause}), and {self._halts()}"))


def injected_exit(exits: list[tuple[str, int]], death: Trap) -> Trap:
    """A component death the scenario asked for (an `exit` fault): on Storm's local mode it
    ends the run, which is no fault of the topology's."""
    ended = ", ".join(f"component {c!r} (task {t})" for c, t in exits)
    first_component, first_task = exits[0]
    return Trap(INJECTED_EXIT, first_component, first_task, (
        f"the scenario's exit fault ended {ended} as asked, and Storm's local mode does not "
        "restart a component: the death of one halts the whole JVM, so on Storm the run "
        "ends there. Drop the exit fault for Storm, or declare a known divergence (check "
        "'run', system 'storm')"), death.evidence)


def _cause(event: _Event) -> str:
    """The innermost exception of an event's stack trace."""
    causes = [ln.strip() for ln in event.more
              if re.match(r"^(Caused by: )?[\w.$]+(Exception|Error)\b", ln.strip())]
    if not causes:
        return event.msg.strip()
    return re.sub(r"^Caused by: ", "", causes[-1])


def _stderr(text: str) -> str:
    """What a component wrote on stderr, as Storm appends it after 'Serializer Exception:'."""
    lines = text.splitlines()
    start = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("Serializer Exception:")),
                 None)
    if start is None:
        return ""
    out = []
    for line in lines[start:]:
        if line.startswith("\tat ") or line.startswith("Caused by:"):
            break
        if line.strip():
            out.append(line.strip())
    return "\n".join(out)


def _jvm_exit(found: list[_Event], exit_code: int, version: str) -> Trap:
    if exit_code == SPOUT_TIMEOUT_EXIT:
        return Trap(SPOUT_EXIT, None, None, (
            "the JVM exited with code 11, which Storm's ShellSpout uses when a spout does not "
            "answer within topology.subprocess.timeout.secs (default 30 s): make next_tuple "
            "return quickly, or raise that timeout"), "exit code 11")
    errors = [e for e in found if e.level == "ERROR" or
              e.msg.startswith("Exception in thread")]
    first = errors[0] if errors else None
    cause = _cause(first) if first else "nothing in the log says why"
    return Trap(JVM_EXIT, None, None, (
        f"Storm {version}'s JVM exited with code {exit_code} before the topology was done: "
        f"{cause}"), first.msg.strip() if first else f"exit code {exit_code}")
