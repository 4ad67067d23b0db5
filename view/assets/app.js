// mlfeed view: the page. Plain JavaScript, no framework; every request goes to the server
// that served the page (the token travels in its cookie).
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: "same-origin" });
  if (!r.ok) throw new Error(url + ": " + r.status + " " + (await r.text()));
  return r.json();
}

function fmt(n) { return Number(n).toLocaleString("en-US"); }

function shapeOf(s) {
  if (s.shape && s.shape.length) return s.shape.join("×");
  return s.dim === 0 ? "variable" : String(s.dim);
}

// chart draws one render.Chart (the charts `mlfeed stats --png` draws) as SVG bars.
function chart(c) {
  const W = 360, H = 150, bottom = 18;
  const bars = c.Bars || [];
  const most = Math.max(1, ...bars.map(b => b.Value));
  const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
  const bw = bars.length ? W / bars.length : W;
  bars.forEach((b, i) => {
    const h = Math.round((H - bottom - 4) * b.Value / most);
    const r = svg("rect", { class: "bar", x: (i * bw + 1).toFixed(1), y: H - bottom - h, width: Math.max(1, bw - 2).toFixed(1), height: h });
    const t = svg("title", {}); t.textContent = `${b.Label}: ${fmt(b.Value)}`; r.append(t);
    s.append(r);
  });
  // Label every step-th bar, so that labels of about 6 pixels a character do not overlap.
  const longest = Math.max(1, ...bars.map(b => String(b.Label).length));
  const step = Math.max(1, Math.ceil((longest * 6 + 8) / bw));
  bars.forEach((b, i) => {
    if (i % step) return;
    const t = svg("text", { x: (i * bw + 1).toFixed(1), y: H - 4 }); t.textContent = b.Label; s.append(t);
  });
  return el("div", { class: "chart" }, el("div", { class: "title", text: c.Title }), el("div", { class: "sub", text: c.Subtitle || "" }), s);
}

class SetView {
  constructor(index, info) {
    this.index = index;
    this.info = info;
    this.root = el("section", { class: "set", "data-set": index });
    this.recFrom = 0;
    this.gridFrom = 0;
    this.build();
  }

  q(path, params) {
    const p = new URLSearchParams(Object.assign({ set: this.index }, params || {}));
    return `/api/${path}?${p}`;
  }

  build() {
    const i = this.info;
    this.root.append(el("h2", { text: i.name }));
    const about = el("div", { class: "about" });
    const row = el("div", { class: "row" }, about);
    this.root.append(row);
    const files = el("div", { class: "files" });
    for (const f of i.files) files.append(el("div", { text: f }));
    about.append(el("table", { class: "overview" },
      el("tr", {}, el("th", { text: "format" }), el("td", { class: "format", text: i.format })),
      el("tr", {}, el("th", { text: i.files.length === 1 ? "file" : `files (${i.files.length})` }), el("td", {}, files)),
      el("tr", {}, el("th", { text: "sequences" }), el("td", { class: "num sequences", text: fmt(i.sequences) })),
      el("tr", {}, el("th", { text: "samples" }), el("td", { class: "num samples", text: fmt(i.samples) })),
      el("tr", {}, el("th", { text: "chunks" }), el("td", { class: "num chunks", text: fmt(i.chunks) }))));
    about.append(el("h3", { text: "streams" }));
    const t = el("table", { class: "streams" }, el("tr", {}, ...["stream", "storage", "type", "shape", "samples", "values"].map(h => el("th", { text: h }))));
    this.streamRows = [];
    for (const s of i.streams) {
      const samples = el("td", { class: "num stream-samples", text: "…" });
      const values = el("td", { class: "num stream-values", text: "…" });
      t.append(el("tr", { class: "stream", "data-stream": s.name }, el("td", { class: "stream-name", text: s.name }),
        el("td", { text: s.storage }), el("td", { text: s.type }), el("td", { text: shapeOf(s) }), samples, values));
      this.streamRows.push({ samples, values });
    }
    about.append(t);
    this.labels = el("div", { class: "labels" });
    row.append(el("div", { class: "label-box" }, el("h3", { text: "label distribution" }), this.labels));
    this.root.append(el("h3", {}, "statistics ", el("a", { class: "png", href: this.q("charts.png"), download: "stats.png", text: "(PNG)" })));
    this.progress = el("div", { class: "progress", text: "reading…" });
    this.charts = el("div", { class: "charts" });
    this.root.append(this.progress, this.charts);
    if (i.streams.some(s => s.image)) {
      this.grid = el("div", { class: "grid" });
      this.gridPos = el("span", { class: "grid-pos" });
      this.root.append(el("h3", { text: "images" }),
        el("div", { class: "pager" }, this.button("grid-prev", "◀ previous", () => this.moveGrid(-1)), this.button("grid-next", "next ▶", () => this.moveGrid(1)), this.gridPos),
        this.grid);
    }
    this.records = el("div", { class: "records" });
    this.recPos = el("span", { class: "rec-pos" });
    this.root.append(el("h3", { text: "records" }),
      el("div", { class: "pager" }, this.button("rec-prev", "◀ previous", () => this.moveRecords(-1)), this.button("rec-next", "next ▶", () => this.moveRecords(1)), this.recPos),
      this.records);
  }

  button(cls, label, fn) {
    const b = el("button", { class: cls, type: "button", text: label });
    b.addEventListener("click", () => fn().catch(showError));
    return b;
  }

  async start() {
    const loads = [this.loadRecords()];
    if (this.grid) loads.push(this.loadGrid());
    loads.push(this.poll());
    await Promise.all(loads);
  }

  async poll() {
    for (;;) {
      const st = await getJSON(this.q("stats"));
      this.showStats(st);
      if (st.finished) return;
      await new Promise(r => setTimeout(r, 400));
    }
  }

  showStats(st) {
    const pct = st.total ? (100 * st.done / st.total).toFixed(1) : "100";
    let line = st.finished ? `read ${fmt(st.done)} sequences` : `reading: ${fmt(st.done)} of ${fmt(st.total)} sequences (${pct}%)`;
    if (st.error) line += " — error: " + st.error;
    this.progress.textContent = line;
    this.progress.classList.toggle("error", !!st.error);
    this.progress.classList.toggle("finished", st.finished);
    st.result.streams.forEach((s, k) => {
      this.streamRows[k].samples.textContent = fmt(s.samples);
      this.streamRows[k].values.textContent = fmt(s.values);
    });
    this.charts.replaceChildren(...(st.charts || []).map(chart));
    const lab = st.result.streams.filter(s => s.classes);
    this.labels.replaceChildren();
    if (!lab.length) this.labels.append(el("p", { text: "no stream of class labels (integer scalars or one-hot vectors)" }));
    for (const s of lab) {
      const total = s.classes.counts.reduce((a, c) => a + c.count, 0) || 1;
      const t = el("table", { class: "classes", "data-stream": s.name }, el("tr", {}, el("th", { text: "class (" + s.name + ")" }), el("th", { text: "count" }), el("th", { text: "share" })));
      for (const c of s.classes.counts.slice(0, 100)) {
        t.append(el("tr", {}, el("td", { class: "num", text: String(c.class) }), el("td", { class: "num", text: fmt(c.count) }), el("td", { class: "num", text: (100 * c.count / total).toFixed(2) + "%" })));
      }
      this.labels.append(t);
    }
  }

  async moveGrid(d) {
    const n = 100;
    const next = this.gridFrom + d * n;
    if (next < 0 || next >= this.info.sequences) return;
    this.gridFrom = next;
    await this.loadGrid();
  }

  async loadGrid() {
    const g = await getJSON(this.q("grid", { from: this.gridFrom, n: 100 }));
    const end = this.gridFrom + g.items.length;
    this.gridPos.textContent = `${g.stream}${g.label ? ", labelled by " + g.label : ""}: records ${fmt(this.gridFrom)}–${fmt(end - 1)} of ${fmt(g.total)}`;
    this.grid.replaceChildren(...g.items.map(it => el("figure", { class: "thumb", "data-seq": it.seq, "data-label": it.label },
      it.not_image ? el("div", { class: "not-image", text: it.not_image, title: `record ${it.seq}` }) :
        el("img", { src: this.q("image", { seq: it.seq }), alt: `record ${it.seq}`, title: `record ${it.seq}` }),
      el("figcaption", { class: "label", text: it.label }))));
  }

  async moveRecords(d) {
    const n = 10;
    const next = this.recFrom + d * n;
    if (next < 0 || next >= this.info.sequences) return;
    this.recFrom = next;
    await this.loadRecords();
  }

  async loadRecords() {
    if (!this.info.sequences) { this.recPos.textContent = "no records"; return; }
    const r = await getJSON(this.q("records", { from: this.recFrom, n: 10 }));
    const end = r.from + r.records.length;
    this.recPos.textContent = `records ${fmt(r.from)}–${fmt(end - 1)} of ${fmt(r.total)}`;
    this.records.replaceChildren(...r.records.map(rec => {
      const box = el("div", { class: "rec", "data-seq": rec.seq }, el("div", { class: "seq", text: `record ${rec.seq}` }));
      rec.streams.forEach((s, k) => {
        const body = el("div", { class: "rec-stream", "data-stream": s.name }, el("span", { class: "name", text: `${s.name} (${s.samples} sample${s.samples === 1 ? "" : "s"})` }));
        if (s.image) {
          for (let j = 0; j < Math.min(s.samples, 8); j++) body.append(el("img", { src: this.q("image", { seq: rec.seq, stream: k, sample: j }), alt: `${s.name} ${j}` }));
        } else {
          body.append(el("pre", { text: s.text + (s.cut ? " …" : "") }));
        }
        box.append(body);
      });
      return box;
    }));
  }
}

function showError(e) {
  document.querySelector("header").append(el("div", { class: "error", text: String(e.message || e) }));
}

async function main() {
  const info = await getJSON("/api/info");
  const main = document.getElementById("sets");
  main.replaceChildren();
  const views = info.sets.map((s, i) => new SetView(i, s));
  for (const v of views) main.append(v.root);
  const jobs = views.map(v => v.start());
  if (info.diff) jobs.push(pollDiff(info.diff));
  await Promise.all(jobs);
  document.body.dataset.ready = "1";
}

async function pollDiff(d) {
  const box = document.getElementById("diff");
  box.hidden = false;
  for (;;) {
    if (!d.running) {
      box.className = d.same ? "same" : "differ";
      box.textContent = d.same ? "The two data sets hold the same values." : "They differ: " + d.first;
      return;
    }
    box.textContent = "comparing the two data sets…";
    await new Promise(r => setTimeout(r, 500));
    d = (await getJSON("/api/info")).diff;
  }
}

main().catch(showError);
