// The topology page's live parts: every 2 s it reads /ui/api/topology/NAME and updates
// the graph's colours, the tables, the backpressure timeline and the exceptions; it
// fetches a task's log tail on request and sends the control buttons (token + confirm).
"use strict";
(function () {
  const name = document.body.dataset.topology;
  if (!name) { return; }
  const base = "/ui/api/topology/" + encodeURIComponent(name);
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const fmt = (v) => v === null || v === undefined ? "-" : typeof v === "number"
    ? (Number.isInteger(v) ? v.toLocaleString() : v.toLocaleString(undefined, {
      maximumFractionDigits: Math.abs(v) < 10 ? 3 : 1 })) : esc(v);

  function fillTable(id, rows) {
    const table = $(id);
    if (!table) { return; }
    const keys = Array.from(table.querySelectorAll("th")).map((th) => th.dataset.key);
    table.tBodies[0].innerHTML = rows.map((r) => "<tr>" + keys.map((k) =>
      "<td" + (typeof r[k] === "number" || r[k] === null ? " class=num" : "") + ">" +
      fmt(r[k]) + "</td>").join("") + "</tr>").join("");
  }

  function paintGraph(components) {
    const levels = {};
    for (const c of components) {
      const node = document.querySelector(`g.node[data-component="${CSS.escape(c.name)}"]`);
      if (!node) { continue; }
      levels[c.name] = c.level;
      node.classList.remove("level-ok", "level-warm", "level-hot");
      node.classList.add("level-" + c.level);
      node.classList.toggle("blocked", c.is_blocked);
      const rate = c.kind === "bolt" ? c.executed_rate : c.emitted_rate;
      node.querySelector(".detail").textContent =
        `${c.kind} · cap ${(c.capacity || 0).toFixed(2)} · ${Math.round(rate || 0).toLocaleString()}/s`;
    }
    for (const edge of document.querySelectorAll("path.edge")) {
      edge.classList.toggle("hot", levels[edge.dataset.to] === "hot");
    }
  }

  function drawTimeline(points) {
    const svg = $("timeline");
    if (!svg) { return; }
    if (!points.length) { svg.innerHTML = ""; return; }
    const t0 = points[0][0], t1 = points[points.length - 1][0], span = Math.max(1, t1 - t0);
    const top = Math.max(1, ...points.map((p) => p[2]));
    const x = (t) => ((t - t0) / span) * 600;
    const bars = points.map((p, i) => {
      const prev = i ? points[i - 1][0] : p[0] - span / points.length;
      const w = Math.max(1, x(p[0]) - x(prev));
      return `<rect class=bp x="${x(p[0]) - w}" y="${120 - p[1] * 120}" width="${w}" height="${p[1] * 120}"></rect>`;
    }).join("");
    const line = points.map((p) => `${x(p[0])},${118 - (p[2] / top) * 110}`).join(" ");
    svg.innerHTML = bars + `<polyline class=rate points="${line}"></polyline>`;
  }

  function showExceptions(found) {
    const box = $("exceptions");
    if (!found.length) { box.innerHTML = "<p class=quiet>No exception reported.</p>"; return; }
    const open = new Set(Array.from(box.querySelectorAll("details[open]")).map((d) => d.dataset.key));
    box.innerHTML = found.map((e) => {
      const key = e.component + e.task + e.stacktrace.length + e.class_name;
      const when = new Date(e.last * 1000).toLocaleTimeString();
      return `<details class=exception data-key="${esc(key)}"${open.has(key) ? " open" : ""}>` +
        `<summary><b>${esc(e.class_name)}</b>: ${esc(e.message.slice(0, 200))} <span class=where>` +
        `${esc(e.component)} task ${e.task} · ${e.count}× · last ${esc(when)}</span></summary>` +
        `<pre>${esc(e.stacktrace)}</pre></details>`;
    }).join("");
  }

  async function refresh() {
    try {
      const reply = await fetch(base, { credentials: "same-origin" });
      if (!reply.ok) { throw new Error(await reply.text()); }
      const data = await reply.json();
      $("state").textContent = data.state;
      $("state").className = "state state-" + data.state;
      $("uptime").textContent = data.uptime + "s";
      $("error").textContent = data.error || "";
      paintGraph(data.components);
      fillTable("components", data.components);
      fillTable("tasks", data.tasks);
      fillTable("actions", data.actions);
      drawTimeline(data.timeline);
      showExceptions(data.exceptions);
      document.body.dataset.refreshed = String(Date.now());
    } catch (err) {
      $("error").textContent = "refresh failed: " + err.message;
    }
  }

  async function showLog() {
    const task = $("log-task").value;
    if (!task) { return; }
    const reply = await fetch(`/topology/${encodeURIComponent(name)}/logs/${task}?lines=200`,
      { credentials: "same-origin" });
    $("log").textContent = await reply.text();
  }

  async function control(action) {
    const token = $("token").value.trim();
    if (!token) { $("control-result").textContent = "enter the token first"; return; }
    if (!window.confirm(`${action} ${name}?`)) { return; }
    const reply = await fetch(`${base}/${action}`, {
      method: "POST", credentials: "same-origin",
      headers: { "X-Heronbridge-Token": token } });
    const text = await reply.text();
    $("control-result").textContent = reply.ok ? `${action}: done` : `${action} refused: ${text}`;
    refresh();
  }

  for (const button of document.querySelectorAll("#controls button")) {
    button.addEventListener("click", () => control(button.dataset.action));
  }
  $("log-task").addEventListener("change", showLog);
  $("log-refresh").addEventListener("click", showLog);
  refresh();
  showLog();
  setInterval(refresh, 2000);
})();
