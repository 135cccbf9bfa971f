"""The web page for people: server-rendered HTML, refreshed by a small script
(static/ui.js) from the same data as JSON. No build step, no framework."""

from __future__ import annotations

import time
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from heronbridge.runtime.proto import topology_pb2

from . import files
from .custom import custom_metrics
from .history import History
from .kafka_lag import partition_lags
from .stats import COLUMNS, STMGR, WIDTH, ComponentStats, by_component
from .tracker import Topology, Tracker

HOT, WARM = 0.8, 0.5  # capacity at which a component turns red, and orange
BLOCKED = 0.1  # share of the live window a component's output was held back
TIMELINE_SECS = 600
NODE_W, NODE_H, GAP_X, GAP_Y = 160, 46, 70, 24


def level(capacity: float) -> str:
    return "hot" if capacity >= HOT else "warm" if capacity >= WARM else "ok"


def _num(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def state_name(t: Topology) -> str:
    names: dict[int, str] = {topology_pb2.RUNNING: "RUNNING", topology_pb2.PAUSED: "PAUSED",
                             topology_pb2.KILLED: "KILLED"}
    return names.get(t.state, "UNKNOWN")


# -- data ---------------------------------------------------------------------------


def topology_data(t: Topology, home: Path | None) -> dict[str, Any]:
    """What the topology page shows, as JSON: live rates and capacity over the last 5
    seconds, totals over the topology's life."""
    live = by_component(t.live(), t.kinds)
    total = by_component(t.stats(None), t.kinds)
    components = [_component_row(live[n], total[n]) for n in t.kinds]
    tasks = []
    for name in t.kinds:
        totals = {s.task: s for s in total[name].tasks}
        for s in live[name].tasks:
            whole = totals.get(s.task, s)
            tasks.append({
                "task": s.task, "component": name, "container": s.container,
                "emitted_rate": _num(s.rate("emitted")),
                "executed_rate": _num(s.rate("executed")),
                "acked": int(whole.acked), "failed": int(whole.failed_total),
                "execute_ms": _num(s.execute_ms, 3), "complete_ms": _num(s.complete_ms, 3),
                "capacity": _num(s.capacity, 3), "blocked": _num(s.bp_ratio, 3),
                "restarts": s.restarts, "rss_mb": _num(s.rss_bytes / 2**20),
                "errors": int(whole.errors)})
    return {
        "name": t.name, "id": t.id, "state": state_name(t), "uptime": int(t.uptime),
        "error": t.error, "sampled": t.report_time, "components": components, "tasks": tasks,
        "timeline": backpressure_timeline(t.history, time.time()),
        "exceptions": exceptions(t),
        "actions": health_actions(t),
        "custom": custom_metrics(t),
        "kafka": [{"component": p.component, "task": p.task, "topic": p.topic,
                   "partition": p.partition, "committed": p.committed, "head": p.head,
                   "lag": p.lag} for p in partition_lags(t.report)],
    }


def _component_row(live: ComponentStats, total: ComponentStats) -> dict[str, Any]:
    capacity = live.capacity
    return {
        "name": live.name, "kind": live.kind, "tasks": len(total.tasks),
        "emitted_rate": _num(live.rate("emitted")), "executed_rate": _num(live.rate("executed")),
        "acked": int(total.total("acked")), "failed": int(total.failed_total),
        "execute_ms": _num(live.execute_ms, 3), "complete_ms": _num(total.complete_ms, 3),
        "capacity": _num(capacity, 3), "blocked": _num(live.bp_ratio, 3),
        "restarts": total.restarts, "rss_mb": _num(total.rss_bytes / 2**20),
        "level": level(capacity), "is_blocked": live.bp_ratio >= BLOCKED,
    }


def backpressure_timeline(history: History, now: float) -> list[list[float]]:
    """[time, share of the interval the spouts were paused (the worst container),
    tuples emitted per second] for each sampling interval of the last 10 minutes."""
    points = history.between(now - TIMELINE_SECS, now)
    bp, emitted = COLUMNS.index("bp_ms"), COLUMNS.index("emitted")
    out = []
    for before, after in zip(points, points[1:], strict=False):
        dt = after.ts - before.ts
        if dt <= 0:
            continue
        old = before.rows(WIDTH)
        worst = 0.0
        rate = 0.0
        for key, row in after.rows(WIDTH).items():
            prev = old.get(key)
            if prev is None:
                continue
            if key[0] == STMGR:
                worst = max(worst, (row[bp] - prev[bp]) / (dt * 1000))
            else:
                rate += max(0.0, row[emitted] - prev[emitted]) / dt
        out.append([round(after.ts, 1), round(min(1.0, max(0.0, worst)), 3), round(rate, 1)])
    return out


def exceptions(t: Topology, limit: int = 20) -> list[dict[str, Any]]:
    """Each distinct error once: the same exception class raised from the same place (the
    same frames) in any task, with its count, first and last seen, and the tasks; the
    latest message and stack trace shown. Latest first."""
    found: dict[tuple, dict[str, Any]] = {}
    for task in t.report.tasks if t.report is not None else []:
        for e in task.exceptions:
            key = (task.component, e.class_name, _place(e.stacktrace))
            first, last = e.first_ms / 1000, e.last_ms / 1000
            seen = found.get(key)
            if seen is None:
                found[key] = seen = {
                    "component": task.component, "class_name": e.class_name, "count": 0,
                    "first": first, "last": 0.0, "tasks": [], "message": e.message,
                    "stacktrace": e.stacktrace}
            seen["count"] += e.count
            seen["first"] = min(seen["first"], first)
            if last >= seen["last"]:
                seen.update(last=last, message=e.message, stacktrace=e.stacktrace)
            if task.task_id not in seen["tasks"]:
                seen["tasks"] = sorted([*seen["tasks"], task.task_id])
    return sorted(found.values(), key=lambda e: -e["last"])[:limit]


def _place(trace: str) -> str:
    """Where an exception was raised: its frames without the message (which may vary)."""
    frames = [line for line in trace.splitlines() if line.startswith("  File ")]
    return "\n".join(frames) if frames else trace


def health_actions(t: Topology, limit: int = 20) -> list[dict[str, Any]]:
    """The health manager's latest decisions, latest first."""
    return [{"when": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(a.time)),
             "action": a.action, "component": a.component, "task": a.task,
             "diagnosis": a.diagnosis, "detail": a.detail, "why": a.why}
            for a in reversed(t.nodes.actions[-limit:])]


# -- HTML ---------------------------------------------------------------------------


def _page(title: str, body: str, topology: str = "") -> bytes:
    attr = f' data-topology="{escape(topology)}"' if topology else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'>"
            f"<title>{escape(title)}</title><link rel=stylesheet href='/static/ui.css'>"
            f"</head><body{attr}>{body}<script src='/static/ui.js'></script>"
            f"</body></html>").encode()


def index(tracker: Tracker, home: Path | None) -> bytes:
    rows = []
    for t in tracker.all():
        comps = by_component(t.live(), t.kinds)
        rate = sum(c.rate("emitted") for c in comps.values())
        hottest = max((c.capacity for c in comps.values() if c.kind == "bolt"), default=0.0)
        rows.append(
            f"<tr><td><a href='/topology/{quote(t.name)}'>{escape(t.name)}</a></td>"
            f"<td class='state state-{state_name(t)}'>{state_name(t)}</td>"
            f"<td>{_uptime(t.uptime)}</td><td class=num>{_tasks(t)}</td>"
            f"<td class=num>{rate:,.0f}</td>"
            f"<td class='num level-{level(hottest)}'>{hottest:.2f}</td>"
            f"<td>{escape(t.error or '')}</td></tr>")
    table = ("<table id=topologies><thead><tr><th>topology</th><th>state</th><th>uptime</th>"
             "<th>tasks</th><th>emitted/s</th><th>busiest bolt</th><th>note</th></tr></thead>"
             f"<tbody>{''.join(rows)}</tbody></table>") if rows else \
        "<p id=topologies>No topology is running.</p>"
    body = (f"<header><h1>heronbridge</h1><span class=where>{len(rows)} topologies</span>"
            f"</header><main><section>{table}</section>"
            f"<section><h2>Reports</h2>{_reports(files.reports(home))}</section></main>")
    return _page("heronbridge", body)


def topology_page(t: Topology | None, name: str, home: Path | None) -> bytes:
    reports = _reports(files.reports(home, name))
    if t is None:
        body = (f"<header><h1><a href='/'>heronbridge</a> › {escape(name)}</h1></header>"
                f"<main><p>{escape(name)} is not running.</p>"
                f"<section><h2>Reports</h2>{reports}</section></main>")
        return _page(name, body)
    data = topology_data(t, home)
    task_options = "".join(
        f"<option value={r['task']}>task {r['task']} ({escape(r['component'])})</option>"
        for r in data["tasks"])
    component_options = "".join(f"<option>{escape(n)}</option>" for n in t.kinds)
    body = f"""<header><h1><a href='/'>heronbridge</a> › {escape(t.name)}</h1>
<span id=state class='state state-{data["state"]}'>{data["state"]}</span>
<span class=where>id {escape(t.id)} · up <span id=uptime>{_uptime(t.uptime)}</span></span>
<form id=controls autocomplete=off><input id=token type=password placeholder=token
aria-label=token><button type=button data-action=activate>Activate</button><button
type=button data-action=deactivate>Deactivate</button><button type=button
data-action=kill class=danger>Kill</button><span id=control-result></span></form></header>
<main><p id=error class=error>{escape(t.error or "")}</p>
<section><h2>Graph</h2><p class=legend>colour: capacity over the last 5 s
(<span class=level-ok>&lt; {WARM}</span>, <span class=level-warm>&lt; {HOT}</span>,
<span class=level-hot>&ge; {HOT}</span>); dashed: output held back by backpressure</p>
{dag(t, data["components"])}</section>
<section><h2>Over time</h2><form id=chart-controls autocomplete=off><label>window
<select id=chart-window><option value=900>15 minutes</option><option value=10800>3 hours
</option><option value=86400>1 day</option></select></label> <label>lines <select
id=chart-task><option value="">per component</option>{task_options}</select></label>
</form><p id=chart-legend class=legend></p><div id=charts></div></section>
<section><h2>Components</h2>{_table("components", COMPONENT_COLUMNS, data["components"])}
</section><section><h2>Tasks</h2>{_table("tasks", TASK_COLUMNS, data["tasks"])}</section>
<section><h2>Custom metrics</h2><p class=legend>what the components report themselves
(a counter's total, a gauge's latest value), per task</p>
{_table("custom", CUSTOM_COLUMNS, data["custom"])}</section>
<section><h2>Kafka lag</h2><p class=legend>records of each partition past its Kafka spout's
committed (or checkpointed) offset</p>{_table("kafka", KAFKA_COLUMNS, data["kafka"])}
</section>
<section><h2>Health manager</h2><p class=legend>its latest diagnoses (the evidence, what
it did or why nothing), latest first</p>
{_table("actions", ACTION_COLUMNS, data["actions"])}</section>
<section><h2>Exceptions</h2><div id=exceptions>{_exceptions(data["exceptions"])}</div>
</section><section><h2>Logs</h2><select id=log-task>{task_options}</select>
<button type=button id=log-refresh>Refresh</button>
<form id=log-level autocomplete=off>log level of <select id=level-component><option
value="">every component</option>{component_options}</select> <select id=level-name>
<option>DEBUG</option><option>INFO</option><option>WARNING</option><option>ERROR</option>
<option value="">as before</option></select> for <input id=level-timeout type=number
min=0 value=30 aria-label="seconds"> s <button type=button id=level-set>Set</button>
<span id=level-result></span></form><pre id=log></pre></section>
<section><h2>Sampled tuples</h2><p class=legend>Storm's Debug: a share of a component's
emitted tuples, as they leave its tasks, latest first (tuples sent to no task are not
sampled)</p><form id=sampling autocomplete=off><select id=sample-component><option
value="">every component</option>{component_options}</select> <input id=sample-percent
type=number min=0 max=100 step=any value=10 aria-label=percent> % <button type=button
id=sample-on>Debug</button> <button type=button id=sample-off>Stop</button> <span
id=sample-result></span></form><p id=sampling-now class=legend></p>
<table id=events><thead><tr><th>time</th><th>component</th><th>task</th><th>stream</th>
<th>to tasks</th><th>values</th></tr></thead><tbody></tbody></table></section>
<section><h2>Profile a task</h2><form id=profile autocomplete=off><select
id=profile-task>{task_options}</select> <button type=button data-kind=stacks>Stacks</button>
<button type=button data-kind=memory>Memory</button> <button type=button
data-kind=flame>Flame graph</button> for <input id=profile-seconds type=number min=1
max=60 value=5 aria-label=seconds> s <span id=profile-result></span></form>
<pre id=profile-text hidden></pre><img id=profile-flame alt="flame graph" hidden></section>
<section><h2>Reports</h2>{reports}</section></main>"""
    return _page(t.name, body, t.name)


COMPONENT_COLUMNS = (
    ("name", "component"), ("kind", "kind"), ("tasks", "tasks"),
    ("emitted_rate", "emitted/s"), ("executed_rate", "executed/s"), ("acked", "acked"),
    ("failed", "failed"), ("execute_ms", "execute ms"), ("complete_ms", "complete ms"),
    ("capacity", "capacity"), ("blocked", "held back"), ("restarts", "restarts"),
    ("rss_mb", "memory MB"))
CUSTOM_COLUMNS = (("component", "component"), ("task", "task"), ("name", "metric"),
                  ("kind", "kind"), ("value", "value"))
KAFKA_COLUMNS = (
    ("component", "spout"), ("task", "task"), ("topic", "topic"), ("partition", "partition"),
    ("committed", "committed offset"), ("head", "log end offset"), ("lag", "lag"))
ACTION_COLUMNS = (
    ("when", "time"), ("action", "action"), ("component", "component"), ("task", "task"),
    ("diagnosis", "diagnosis"), ("why", "evidence"), ("detail", "what was done"))
TASK_COLUMNS = (
    ("task", "task"), ("component", "component"), ("container", "container"),
    ("emitted_rate", "emitted/s"), ("executed_rate", "executed/s"), ("acked", "acked"),
    ("failed", "failed"), ("execute_ms", "execute ms"), ("complete_ms", "complete ms"),
    ("capacity", "capacity"), ("blocked", "held back"), ("restarts", "restarts"),
    ("rss_mb", "memory MB"), ("errors", "errors"))


def _cell(value: Any) -> str:
    if value is None:
        return "<td class=num>-</td>"
    if isinstance(value, (int, float)):
        return f"<td class=num>{value:,}</td>" if isinstance(value, int) else \
            f"<td class=num>{value:,.3f}</td>" if abs(value) < 10 else \
            f"<td class=num>{value:,.1f}</td>"
    return f"<td>{escape(str(value))}</td>"


def _table(table_id: str, columns: tuple, rows: list[dict]) -> str:
    head = "".join(f"<th data-key={key}>{escape(label)}</th>" for key, label in columns)
    body = "".join("<tr>" + "".join(_cell(r.get(key)) for key, _ in columns) + "</tr>"
                   for r in rows)
    return f"<table id={table_id}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _exceptions(found: list[dict]) -> str:
    if not found:
        return "<p class=quiet>No exception reported.</p>"
    return "".join(
        f"<details class=exception><summary><b>{escape(e['class_name'])}</b>: "
        f"{escape(e['message'][:200])} <span class=where>{escape(e['component'])} "
        f"{_task_list(e['tasks'])} · {e['count']}× · first {_clock(e['first'])} · last "
        f"{_clock(e['last'])}</span></summary><pre>{escape(e['stacktrace'])}</pre></details>"
        for e in found)


def _task_list(tasks: list[int]) -> str:
    return ("task " if len(tasks) == 1 else "tasks ") + ", ".join(map(str, tasks))


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def _reports(found: list[files.Report]) -> str:
    if not found:
        return "<p class=quiet>No conformance or bench report under this home.</p>"
    items = "".join(
        f"<li><a href='/reports/{r.kind}/{quote(r.folder)}/{quote(r.page)}'>{r.kind}: "
        f"{escape(r.folder)}</a> <span class=where>"
        f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(r.when))}</span></li>" for r in found)
    return f"<ul class=reports>{items}</ul>"


def listing(kind: str, folder: str, path: Path, root: Path) -> bytes:
    rows = "".join(
        f"<li><a href='/reports/{kind}/{quote(folder)}/{quote(str(p.relative_to(root)))}'>"
        f"{escape(p.name)}{'/' if p.is_dir() else ''}</a></li>"
        for p in sorted(path.iterdir()))
    return _page(f"{kind} {folder}", f"<header><h1><a href='/'>heronbridge</a> › {kind} › "
                 f"{escape(folder)}</h1></header><main><ul>{rows}</ul></main>")


def _uptime(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h {s % 3600 // 60}m {s % 60}s" if s >= 3600 else \
        f"{s // 60}m {s % 60}s" if s >= 60 else f"{s}s"


def _tasks(t: Topology) -> int:
    packing = t.nodes.packing
    return sum(len(c.instances) for c in packing.containers) if packing else 0


# -- the graph ----------------------------------------------------------------------


def layers(t: Topology) -> dict[str, int]:
    """Each component's column: spouts 0, a bolt one right of its furthest input."""
    specs = t.components
    depth: dict[str, int] = {}
    for _ in range(len(specs) + 1):  # relax: enough rounds for any acyclic graph
        for name, spec in specs.items():
            inputs = [i.component for i in spec.inputs if i.component in specs]
            depth[name] = 0 if spec.is_spout or not inputs else \
                1 + max(depth.get(i, 0) for i in inputs)
    return depth


def dag(t: Topology, components: list[dict]) -> str:
    depth = layers(t)
    columns: dict[int, list[str]] = {}
    for name in sorted(depth):
        columns.setdefault(depth[name], []).append(name)
    pos: dict[str, tuple[float, float]] = {
        name: (20 + col * (NODE_W + GAP_X), 20 + row * (NODE_H + GAP_Y))
        for col, names in columns.items() for row, name in enumerate(names)}
    width = 40 + max((x for x, _ in pos.values()), default=0) + NODE_W
    height = 40 + max((y for _, y in pos.values()), default=0) + NODE_H
    rows = {c["name"]: c for c in components}
    edges = []
    for name, spec in t.components.items():
        for inp in spec.inputs:
            if inp.component not in pos or name not in pos:
                continue
            x1, y1 = pos[inp.component]
            x2, y2 = pos[name]
            x1, y1, y2 = x1 + NODE_W, y1 + NODE_H / 2, y2 + NODE_H / 2
            mid = (x1 + x2) / 2
            edges.append(f"<path class=edge data-from='{escape(inp.component)}' "
                         f"data-to='{escape(name)}' d='M{x1},{y1} C{mid},{y1} {mid},{y2} "
                         f"{x2 - 6},{y2}' marker-end='url(#arrow)'><title>"
                         f"{escape(inp.component)} → {escape(name)}: {escape(inp.stream)} "
                         f"({escape(str(inp.grouping))})</title></path>")
    nodes = []
    for name, (x, y) in sorted(pos.items()):
        row = rows.get(name, {})
        cls = f"node level-{row.get('level', 'ok')}" + (" blocked" if row.get("is_blocked")
                                                         else "")
        kind = t.components[name].kind
        nodes.append(
            f"<g class='{cls}' id='node-{escape(name)}' data-component='{escape(name)}' "
            f"transform='translate({x},{y})'><rect width={NODE_W} height={NODE_H} rx=6>"
            f"</rect><text x=10 y=18 class=name>{escape(name)}</text>"
            f"<text x=10 y=36 class=detail>{kind} · {_detail(row)}</text></g>")
    return (f"<svg id=dag width={width} height={height} viewBox='0 0 {width} {height}' "
            f"role=img aria-label='topology graph'><defs><marker id=arrow viewBox='0 0 10 10' "
            f"refX=9 refY=5 markerWidth=7 markerHeight=7 orient=auto><path d='M0,0 L10,5 "
            f"L0,10 z'></path></marker></defs>{''.join(edges)}{''.join(nodes)}</svg>")


def _detail(row: dict) -> str:
    if not row:
        return "no metrics yet"
    rate = row.get("executed_rate") if row.get("kind") == "bolt" else row.get("emitted_rate")
    return f"cap {row.get('capacity') or 0:.2f} · {rate or 0:,.0f}/s"
