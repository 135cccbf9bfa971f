// The topology page's live parts: every 2 s it reads /ui/api/topology/NAME and updates
// the graph's colours, the tables and the exceptions, every 5 s the charts over time; it
// fetches a task's log tail on request and sends the control buttons (token + confirm);
// every 2 s the sampled tuples.
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

  // -- charts over time: one per metric, a line per component (or the one task asked),
  // axes with units, a legend, the health manager's actions and updates as markers.
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  const W = 380, H = 180, ML = 52, MR = 10, MT = 24, MB = 30;
  const ns = (v) => Math.abs(v) >= 1000 ? (v / 1000).toLocaleString(undefined, {
    maximumFractionDigits: 1 }) + "k" : v.toLocaleString(undefined, {
    maximumFractionDigits: Math.abs(v) < 1 ? 3 : Math.abs(v) < 10 ? 2 : 0 });

  function niceMax(v) {
    if (!(v > 0)) { return 1; }
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) { if (m * p >= v) { return m * p; } }
    return 10 * p;
  }

  function clock(t, span) {
    const d = new Date(t * 1000);
    const hh = String(d.getHours()).padStart(2, "0"), mm = String(d.getMinutes()).padStart(2, "0");
    return span > 3 * 3600 ? `${hh}:${mm}` : `${hh}:${mm}:${String(d.getSeconds()).padStart(2, "0")}`;
  }

  function chart(metric, data, names) {
    const t0 = data.start, t1 = data.end, span = Math.max(1, t1 - t0);
    const x = (t) => ML + ((t - t0) / span) * (W - ML - MR);
    let peak = 0;
    for (const n of names) {
      for (const v of data.lines[n][metric.key]) { if (v !== null && v > peak) { peak = v; } }
    }
    const top = niceMax(peak);
    const y = (v) => H - MB - (v / top) * (H - MT - MB);
    const parts = [`<text class=title x=${ML} y=14>${esc(metric.title)}</text>`,
      `<text class=unit x=4 y=14>${esc(metric.unit)}</text>`];
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      parts.push(`<line class=grid x1=${ML} x2=${W - MR} y1=${y(v)} y2=${y(v)}></line>`,
        `<text class="tick ytick" x=${ML - 4} y=${y(v) + 3} text-anchor=end>${ns(v)}</text>`);
    }
    for (let i = 0; i <= 3; i++) {
      const t = t0 + (span * i) / 3;
      parts.push(`<text class="tick xtick" x=${x(t)} y=${H - MB + 14} text-anchor=${
        i === 0 ? "start" : i === 3 ? "end" : "middle"}>${clock(t, span)}</text>`);
    }
    parts.push(`<line class=axis x1=${ML} x2=${ML} y1=${MT} y2=${H - MB}></line>`,
      `<line class=axis x1=${ML} x2=${W - MR} y1=${H - MB} y2=${H - MB}></line>`,
      `<text class=unit x=${W - MR} y=${H - 4} text-anchor=end>time</text>`);
    names.forEach((n, i) => {
      const values = data.lines[n][metric.key];
      let d = "", pen = "M", linePeak = null;
      values.forEach((v, j) => {
        if (v === null) { pen = "M"; return; }
        d += `${pen}${x(data.times[j]).toFixed(1)},${y(v).toFixed(1)} `;
        pen = "L";
        linePeak = linePeak === null ? v : Math.max(linePeak, v);
      });
      if (d) {
        parts.push(`<path class=line data-line="${esc(n)}" data-peak="${linePeak}" d="${d}" ` +
          `stroke="${COLOURS[i % COLOURS.length]}"><title>${esc(n)}</title></path>`);
      }
    });
    for (const e of data.events) {
      parts.push(`<line class="event event-${e.kind}" data-kind="${e.kind}" x1=${x(e.time)} ` +
        `x2=${x(e.time)} y1=${MT} y2=${H - MB}><title>${esc(clock(e.time, 0))} ${esc(e.label)}` +
        `: ${esc(e.detail)}</title></line>`);
    }
    return `<svg class=chart id="chart-${metric.key}" data-metric="${metric.key}" ` +
      `data-unit="${esc(metric.unit)}" width=${W} height=${H} viewBox="0 0 ${W} ${H}" ` +
      `role=img aria-label="${esc(metric.title)} (${esc(metric.unit)})">${parts.join("")}</svg>`;
  }

  async function drawCharts() {
    const task = $("chart-task").value;
    const query = `?window=${$("chart-window").value}` + (task ? `&task=${task}` : "");
    const reply = await fetch(`${base}/series${query}`, { credentials: "same-origin" });
    if (!reply.ok) { throw new Error(await reply.text()); }
    const data = await reply.json();
    const names = Object.keys(data.lines);
    $("chart-legend").innerHTML = names.map((n, i) =>
      `<span class=swatch style="background:${COLOURS[i % COLOURS.length]}"></span>${esc(n)}`)
      .join("") + "<span class='swatch event-health' style='background:#b00'></span>health " +
      "manager action<span class='swatch event-update' style='background:#06c'></span>update";
    $("charts").innerHTML = data.metrics.map((m) => chart(m, data, names)).join("");
    document.body.dataset.charted = String(Date.now());
  }

  function showExceptions(found) {
    const box = $("exceptions");
    if (!found.length) { box.innerHTML = "<p class=quiet>No exception reported.</p>"; return; }
    const open = new Set(Array.from(box.querySelectorAll("details[open]")).map((d) => d.dataset.key));
    box.innerHTML = found.map((e) => {
      const key = e.component + e.class_name + e.tasks.join(",") + e.stacktrace.length;
      const clockOf = (t) => new Date(t * 1000).toLocaleTimeString();
      const tasks = (e.tasks.length === 1 ? "task " : "tasks ") + e.tasks.join(", ");
      return `<details class=exception data-key="${esc(key)}"${open.has(key) ? " open" : ""}>` +
        `<summary><b>${esc(e.class_name)}</b>: ${esc(e.message.slice(0, 200))} <span class=where>` +
        `${esc(e.component)} ${esc(tasks)} · ${e.count}× · first ${esc(clockOf(e.first))} · ` +
        `last ${esc(clockOf(e.last))}</span></summary><pre>${esc(e.stacktrace)}</pre></details>`;
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
      fillTable("custom", data.custom);
      fillTable("kafka", data.kafka);
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

  async function setLevel() {
    const token = $("token").value.trim();
    if (!token) { $("level-result").textContent = "enter the token first"; return; }
    const query = new URLSearchParams({ component: $("level-component").value,
      level: $("level-name").value, timeout: $("level-timeout").value || "0" });
    const reply = await fetch(`${base}/loglevel?${query}`, {
      method: "POST", credentials: "same-origin", headers: { "X-Heronbridge-Token": token } });
    const text = await reply.text();
    $("level-result").textContent = reply.ok ? "set" : "refused: " + text;
  }

  async function profile(kind) {
    const token = $("token").value.trim();
    if (!token) { $("profile-result").textContent = "enter the token first"; return; }
    const task = $("profile-task").value, seconds = $("profile-seconds").value || "5";
    $("profile-result").textContent = kind === "flame" ? `sampling for ${seconds} s…` : "…";
    const reply = await fetch(`${base}/tasks/${task}/${kind}?seconds=${seconds}`, {
      method: "POST", credentials: "same-origin", headers: { "X-Heronbridge-Token": token } });
    if (!reply.ok) { $("profile-result").textContent = "refused: " + await reply.text(); return; }
    const text = $("profile-text"), flame = $("profile-flame");
    if (kind === "flame") {  // as an image: its script never runs
      if (flame.src) { URL.revokeObjectURL(flame.src); }
      flame.src = URL.createObjectURL(await reply.blob());
      flame.hidden = false; text.hidden = true;
    } else {
      const body = kind === "memory" ? JSON.stringify(await reply.json(), null, 1)
        : await reply.text();
      text.textContent = body; text.hidden = false; flame.hidden = true;
    }
    $("profile-result").textContent = `task ${task}: ${kind}`;
  }

  async function showEvents() {
    const component = $("sample-component").value;
    const query = component ? "?" + new URLSearchParams({ component }) : "";
    const reply = await fetch(`${base}/events${query}`, { credentials: "same-origin" });
    if (!reply.ok) { return; }
    const data = await reply.json();
    const on = Object.entries(data.sampling).map(([c, p]) => `${esc(c)} ${fmt(p)}%`);
    $("sampling-now").textContent = on.length ? "sampling: " + on.join(", ") : "sampling: off";
    $("events").tBodies[0].innerHTML = data.events.slice(-50).reverse().map((e) =>
      `<tr><td>${new Date(e.ts).toLocaleTimeString()}</td><td>${esc(e.component)}</td>` +
      `<td class=num>${e.task}</td><td>${esc(e.stream)}</td><td>${esc(e.tasks.join(" "))}` +
      `</td><td><code>${esc(JSON.stringify(e.values))}</code></td></tr>`).join("");
  }

  async function sample(percent) {
    const token = $("token").value.trim();
    if (!token) { $("sample-result").textContent = "enter the token first"; return; }
    const query = new URLSearchParams({ component: $("sample-component").value, percent });
    const reply = await fetch(`${base}/sampling?${query}`, {
      method: "POST", credentials: "same-origin", headers: { "X-Heronbridge-Token": token } });
    const text = await reply.text();
    $("sample-result").textContent = !reply.ok ? "refused: " + text
      : Number(percent) > 0 ? `sampling ${percent}%` : "stopped";
  }

  $("sample-on").addEventListener("click", () => sample($("sample-percent").value || "10"));
  $("sample-off").addEventListener("click", () => sample("0"));
  $("sample-component").addEventListener("change", showEvents);
  for (const button of document.querySelectorAll("#profile button")) {
    button.addEventListener("click", () => profile(button.dataset.kind));
  }
  $("level-set").addEventListener("click", setLevel);
  for (const button of document.querySelectorAll("#controls button")) {
    button.addEventListener("click", () => control(button.dataset.action));
  }
  const charts = () => drawCharts().catch((err) => {
    $("chart-legend").textContent = "charts failed: " + err.message; });
  $("chart-window").addEventListener("change", charts);
  $("chart-task").addEventListener("change", charts);
  $("log-task").addEventListener("change", showLog);
  $("log-refresh").addEventListener("click", showLog);
  refresh();
  showLog();
  setInterval(refresh, 2000);
  charts();
  setInterval(charts, 5000);
  const events = () => showEvents().catch(() => {});
  events();
  setInterval(events, 2000);
})();
