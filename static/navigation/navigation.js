/* LegalMem navigation page: draws the server's layered graph on a canvas with D3 (zoom,
 * quadtree hit-testing, colour scales) and highlights the real trace the server returns.
 * Layout comes precomputed from the server; nothing is simulated in the browser. */
(function () {
  "use strict";
  const shell = document.getElementById("nav-shell");
  const canvas = document.getElementById("nav-canvas");
  const stage = document.getElementById("nav-stage");
  const ctx = canvas.getContext("2d");
  const T = JSON.parse(document.getElementById("nav-i18n").textContent);
  const scopeChoices = JSON.parse(document.getElementById("nav-scopes").textContent);
  // Translated names of layers, categories, sources and trace steps ({% memory_labels %}).
  const L = JSON.parse(document.getElementById("memory-labels").textContent);
  const scopeLabel = Object.fromEntries(scopeChoices.map(([value, text]) => [value, L.layer[value] || text]));
  const categoryLabel = (value) => L.category[value] || value;
  const sourceLabel = (value) => L.source[value] || value;
  // A level in plain words ("all notes", "overview 2"); its technical name (L0, L2) is the tooltip.
  const levelName = (level) => (level === 0 ? T.levelAll : T.levelUp.replace("{level}", level));
  const levelTerm = (level) => "L" + level;
  for (const option of document.querySelectorAll("#nav-filters select[name=scope] option")) {
    if (option.value && scopeLabel[option.value]) option.textContent = scopeLabel[option.value];
  }
  const colour = d3.scaleOrdinal()
    .domain(scopeChoices.map((c) => c[0]))
    .range(["#e15759", "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1"]);
  const urls = {
    graph: shell.dataset.graphUrl,
    trace: shell.dataset.traceUrl,
    search: shell.dataset.searchUrl,
  };
  const L0_PAGE = 1500;

  const state = {
    graph: null, nodes: new Map(), byId: new Map(), edges: [], nextOffset: null,
    transform: d3.zoomIdentity, trace: null, selected: null, quadtree: null, width: 0, height: 0,
    requestSeq: 0,
  };

  // The moment of the page's date control (?as_of=, read by the server): every request is of
  // the memory as it stood then. Empty for now.
  const asOf = shell.dataset.asOf || "";
  // A refused date is said by the form (server side): nothing is drawn or searched rather than
  // the memory of another moment.
  const refused = !!shell.dataset.refused;

  // ---------- data ----------
  function filterParams() {
    const form = new FormData(document.getElementById("nav-filters"));
    const params = new URLSearchParams();
    for (const [key, value] of form.entries()) if (value) params.set(key, value);
    if (asOf) params.set("as_of", asOf);
    return params;
  }

  function showError(message) { document.getElementById("nav-error").textContent = message || ""; }

  async function fetchJson(url, options) {
    const response = await fetch(url, Object.assign({ credentials: "same-origin" }, options || {}));
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = body.detail || Object.values(body).flat().join("; ") || response.statusText;
      throw new Error(String(detail));
    }
    return body;
  }

  function addNodes(list) {
    for (const node of list) {
      if (!state.byId.has(node.id)) {
        state.nodes.set(node.i, node);
        state.byId.set(node.id, node);
      }
    }
  }

  async function loadGraph() {
    if (refused) return;
    const seq = ++state.requestSeq;
    showError("");
    document.getElementById("nav-stats").textContent = T.loading;
    const params = filterParams();
    params.set("l0_offset", "0");
    params.set("l0_limit", String(L0_PAGE));
    try {
      const graph = await fetchJson(urls.graph + "?" + params.toString());
      if (seq !== state.requestSeq) return;
      state.graph = graph;
      state.nodes = new Map(); state.byId = new Map();
      addNodes(graph.nodes);
      state.edges = graph.edges;
      state.nextOffset = graph.l0_page.next_offset;
      state.trace = null; state.selected = null;
      fillEvents(graph.events);
      closeDetail();
      rebuildIndex(); draw(); updateStats();
    } catch (error) { showError(error.message); }
  }

  async function loadMoreL0() {
    if (state.nextOffset === null || !state.graph) return;
    const params = filterParams();
    params.set("l0_offset", String(state.nextOffset));
    params.set("l0_limit", String(L0_PAGE));
    try {
      const page = await fetchJson(urls.graph + "?" + params.toString());
      if (page.version !== state.graph.version) { await loadGraph(); return; }
      addNodes(page.nodes);
      const seen = new Set(state.edges.map((e) => e.s + ":" + e.t));
      for (const edge of page.edges) if (!seen.has(edge.s + ":" + edge.t)) state.edges.push(edge);
      state.nextOffset = page.l0_page.next_offset;
      rebuildIndex(); draw(); updateStats();
    } catch (error) { showError(error.message); }
  }

  function fillEvents(events) {
    const select = document.getElementById("nav-event");
    const current = select.value;
    while (select.options.length > 1) select.remove(1);
    for (const event of events) {
      const option = new Option(`${event.label} (${event.count})`, event.key);
      select.add(option);
    }
    if (current && ![...select.options].some((o) => o.value === current)) {
      select.add(new Option(current, current));
    }
    select.value = current;
  }

  function updateStats() {
    const g = state.graph;
    if (!g) return;
    const layers = g.layers.map((l) => `${levelName(l.level)}: ${l.count}`).join(" · ");
    const shownL0 = Math.min(g.total_nodes, state.nodes.size);
    document.getElementById("nav-stats").textContent = g.total_nodes === 0 ? T.empty :
      `${T.nodes} ${g.total_nodes} · ${T.edges} ${state.edges.length} · ${layers} · ${T.shown} ${shownL0}/${g.total_nodes}`;
    document.getElementById("nav-more").hidden = state.nextOffset === null;
    const legend = document.getElementById("nav-legend");
    legend.replaceChildren(...scopeChoices.map(([value]) => {
      const span = document.createElement("span");
      const dot = document.createElement("i");
      dot.style.background = colour(value);
      span.append(dot, scopeLabel[value]);
      return span;
    }));
  }

  // ---------- geometry ----------
  function bands() {
    const maxLevel = state.graph ? state.graph.params.max_level : 0;
    const h = state.height, top = 8;
    const l0 = maxLevel === 0 ? h - 2 * top : (h - 2 * top) * 0.42;
    const upper = maxLevel === 0 ? 0 : (h - 2 * top - l0) / maxLevel;
    const result = {};
    for (let level = maxLevel; level >= 0; level--) {
      const y0 = level === 0 ? h - top - l0 : top + (maxLevel - level) * upper;
      result[level] = { y0, y1: y0 + (level === 0 ? l0 : upper) };
    }
    return result;
  }

  function position(node, level, band) {
    const b = band[level];
    const pad = Math.min(14, (b.y1 - b.y0) / 4);
    return [20 + node.x * (state.width - 40), b.y0 + pad + node.y * (b.y1 - b.y0 - 2 * pad)];
  }

  function radius(level) { return level === 0 ? 2.6 : 3.2 + level * 0.9; }

  function rebuildIndex() {
    const band = bands();
    const points = [];
    for (const node of state.nodes.values()) {
      for (let level = 0; level <= node.level; level++) {
        const [x, y] = position(node, level, band);
        points.push({ x, y, node, level });
      }
    }
    state.quadtree = d3.quadtree().x((p) => p.x).y((p) => p.y).addAll(points);
  }

  // ---------- drawing ----------
  function resize() {
    const rect = stage.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    state.width = Math.max(200, rect.width);
    state.height = Math.max(200, rect.height);
    canvas.width = state.width * ratio;
    canvas.height = state.height * ratio;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    rebuildIndex();
    draw();
  }

  function pathSets() {
    const steps = new Set();
    const onPath = new Set();
    if (!state.trace) return { steps, onPath, drops: [] };
    const trace = state.trace;
    for (const step of trace.path) {
      steps.add(`${step.level}:${step.source}:${step.target}`);
      steps.add(`${step.level}:${step.target}:${step.source}`);
    }
    trace.path_nodes.forEach((id) => onPath.add(id));
    // Where the greedy descent dropped a level: from the node it stood on at level l to l-1.
    const drops = [];
    let current = trace.entry;
    const maxLevel = state.graph.params.max_level;
    for (let level = maxLevel; level >= 1; level--) {
      for (const step of trace.path) if (step.phase === "descent" && step.level === level) current = step.target;
      drops.push({ id: current, from: level, to: level - 1 });
    }
    return { steps, onPath, drops };
  }

  function draw() {
    const { width, height } = state;
    ctx.save();
    ctx.clearRect(0, 0, width, height);
    if (!state.graph) { ctx.restore(); return; }
    const band = bands();
    const t = state.transform;
    ctx.translate(t.x, t.y);
    ctx.scale(t.k, t.k);
    const maxLevel = state.graph.params.max_level;
    for (let level = maxLevel; level >= 0; level--) {
      const b = band[level];
      ctx.fillStyle = level % 2 ? "#f8fafc" : "#eef2f7";
      ctx.fillRect(0, b.y0, width, b.y1 - b.y0);
      ctx.fillStyle = "#616e7c";
      ctx.font = `${12 / t.k}px system-ui`;
      const layer = state.graph.layers.find((l) => l.level === level);
      ctx.fillText(`${levelName(level)} (${layer ? layer.count : 0})`, 4, b.y0 + 12 / t.k);
    }
    const { steps, onPath, drops } = pathSets();
    const tracing = !!state.trace;
    const regular = new Path2D(), bridges = new Path2D(), bold = new Path2D();
    for (const edge of state.edges) {
      const a = state.nodes.get(edge.s), b = state.nodes.get(edge.t);
      if (!a || !b) continue;
      for (const level of edge.levels) {
        const [x1, y1] = position(a, level, band), [x2, y2] = position(b, level, band);
        const target = steps.has(`${level}:${a.id}:${b.id}`) ? bold : edge.bridge ? bridges : regular;
        target.moveTo(x1, y1); target.lineTo(x2, y2);
      }
    }
    ctx.lineWidth = 0.6 / t.k;
    ctx.strokeStyle = tracing ? "rgba(100,116,139,0.07)" : "rgba(100,116,139,0.35)";
    ctx.stroke(regular);
    ctx.setLineDash([3 / t.k, 3 / t.k]);
    ctx.strokeStyle = tracing ? "rgba(180,83,9,0.08)" : "rgba(180,83,9,0.45)";
    ctx.stroke(bridges);
    if (tracing) {
      const dropPath = new Path2D();
      for (const drop of drops) {
        const node = state.byId.get(drop.id);
        if (!node) continue;
        const [x1, y1] = position(node, drop.from, band), [x2, y2] = position(node, drop.to, band);
        dropPath.moveTo(x1, y1); dropPath.lineTo(x2, y2);
      }
      ctx.strokeStyle = "#1d4ed8"; ctx.lineWidth = 1.2 / t.k;
      ctx.stroke(dropPath);
      ctx.setLineDash([]);
      ctx.strokeStyle = "#111827"; ctx.lineWidth = 2.6 / t.k;
      ctx.stroke(bold);
    }
    ctx.setLineDash([]);
    for (const node of state.nodes.values()) {
      const dim = tracing && !onPath.has(node.id);
      ctx.fillStyle = colour(node.scope);
      ctx.globalAlpha = dim ? 0.25 : 1;
      for (let level = 0; level <= node.level; level++) {
        const [x, y] = position(node, level, band);
        ctx.beginPath();
        ctx.arc(x, y, radius(level) / Math.sqrt(t.k), 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    ctx.globalAlpha = 1;
    if (state.selected) {
      const node = state.byId.get(state.selected);
      if (node) {
        ctx.strokeStyle = "#111827"; ctx.lineWidth = 2 / t.k;
        for (let level = 0; level <= node.level; level++) {
          const [x, y] = position(node, level, band);
          ctx.beginPath(); ctx.arc(x, y, (radius(level) + 3) / Math.sqrt(t.k), 0, 2 * Math.PI); ctx.stroke();
        }
      }
    }
    ctx.restore();
  }

  // ---------- interaction ----------
  function filtersForTrace() {
    const params = filterParams();
    params.set("k", "10");
    return params;
  }

  async function selectNode(id) {
    state.selected = id;
    openDetail();
    draw();
    try {
      const url = urls.trace.replace("00000000-0000-0000-0000-000000000000", id) + "?" + filtersForTrace().toString();
      const data = await fetchJson(url);
      if (state.selected !== id) return;
      addNodes(data.trace.nodes);
      rebuildIndex();
      showDetail(data.note);
      showTrace(data.trace);
    } catch (error) { showError(error.message); }
  }

  function showDetail(note) {
    document.getElementById("d-content").textContent = note.content;
    const level = document.getElementById("d-level");
    level.textContent = levelName(note.level);
    level.title = levelTerm(note.level);
    document.getElementById("d-scope").textContent = scopeLabel[note.memory_scope] || note.memory_scope;
    document.getElementById("d-category").textContent = categoryLabel(note.category);
    showSource(note);
    document.getElementById("d-matter").textContent = note.matter
      ? [note.matter.reference, note.matter.title].filter(Boolean).join(" ") : T.noMatter;
    document.getElementById("d-event").textContent = note.event_label || "—";
  }

  // A document-made note names its page and opens the viewer at the passage it was read from.
  function showSource(note) {
    const cell = document.getElementById("d-source");
    cell.textContent = sourceLabel(note.source_type);
    if (!note.document) return;
    const link = document.createElement("a");
    link.href = note.document.url;
    link.textContent = note.document.citation;
    cell.append(" · ", link);
  }

  function showQuery(query) {
    document.getElementById("d-content").textContent = `${T.searchFor}: ${query}`;
    for (const id of ["d-level", "d-scope", "d-category", "d-source", "d-matter", "d-event"]) {
      document.getElementById(id).textContent = "—";
    }
  }

  function label(id) {
    const node = state.byId.get(id);
    return node ? node.label : id;
  }

  function showTrace(trace, isSearch) {
    state.trace = trace;
    const list = document.getElementById("trace-path");
    const items = [];
    const first = document.createElement("li");
    first.dataset.node = trace.entry || "";
    first.className = "entry";
    first.textContent = `${T.entry}: ${label(trace.entry)}`;
    first.title = T.entryTerm;
    items.push(first);
    for (const step of trace.path) {
      const li = document.createElement("li");
      li.dataset.source = step.source;
      li.dataset.target = step.target;
      li.dataset.level = String(step.level);
      li.dataset.phase = step.phase;
      const lvl = document.createElement("span");
      lvl.className = "lvl";
      const step_ = step.phase === "descent" ? "descent" : "beam";
      lvl.textContent = `${levelName(step.level)} · ${L.trace[step_]} → `;
      lvl.title = `${levelTerm(step.level)} · ${L.trace[step_ + "Term"]}`;
      li.append(lvl, label(step.target));
      items.push(li);
    }
    list.replaceChildren(...items);
    const summary = isSearch ? `${T.searchRoute} → ${label(trace.goal)}` : trace.hit ? T.hit :
      trace.reached ? `${T.miss}; ${T.reachedAfter} ${trace.extra_expansions}` : T.miss;
    document.getElementById("trace-summary").textContent =
      `${summary} · ${T.visited} ${trace.visited_total}`;
    draw();
  }

  function openDetail() {
    if (!shell.classList.contains("detail-open")) {
      shell.classList.add("detail-open");
      document.getElementById("nav-detail").hidden = false;
    }
  }

  function closeDetail() {
    shell.classList.remove("detail-open");
    document.getElementById("nav-detail").hidden = true;
    state.trace = null; state.selected = null;
    draw();
  }

  function pickAt(clientX, clientY) {
    if (!state.quadtree) return null;
    const rect = canvas.getBoundingClientRect();
    const [x, y] = state.transform.invert([clientX - rect.left, clientY - rect.top]);
    const found = state.quadtree.find(x, y, 10 / state.transform.k);
    return found ? found.node : null;
  }

  async function runSearch(event) {
    event.preventDefault();
    if (refused) return;
    const query = new FormData(event.target).get("query");
    const filters = filterParams();
    const body = { query, k: 10, strategy: "layered_nav" };
    if (asOf) body.as_of = asOf;
    if (filters.get("firm")) body.firm = Number(filters.get("firm"));
    if (filters.get("matter")) body.matter = Number(filters.get("matter"));
    if (filters.get("scope")) body.scopes = [filters.get("scope")];
    try {
      showError("");
      const data = await fetchJson(urls.search, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify(body),
      });
      addNodes(data.trace.nodes || []);
      rebuildIndex();
      const list = document.getElementById("nav-results");
      list.replaceChildren(...data.hits.map((hit) => {
        const li = document.createElement("li");
        li.dataset.note = hit.note_id;
        const why = document.createElement("div");
        why.className = "why";
        const graphRank = hit.graph_rank == null ? T.graphMissed : `${T.graphRoute} ${hit.graph_rank}`;
        const vectorRank = hit.vector_rank == null ? T.vectorMissed : `${T.vector} ${hit.vector_rank}`;
        why.textContent = `${levelName(hit.level)} · ${scopeLabel[hit.memory_scope] || hit.memory_scope} · ${graphRank} · ${vectorRank} · ${T.similarity} ${hit.similarity.toFixed(2)}`;
        why.title = levelTerm(hit.level);
        li.append(hit.label, why);
        li.addEventListener("click", () => selectNode(hit.note_id));
        return li;
      }));
      if (data.trace.entry) {
        state.selected = data.trace.goal;
        openDetail();
        showQuery(query);
        showTrace(data.trace, true);
      }
    } catch (error) { showError(error.message); }
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // ---------- wiring ----------
  const zoom = d3.zoom().scaleExtent([0.5, 40]).on("zoom", (event) => { state.transform = event.transform; draw(); });
  d3.select(canvas).call(zoom).on("dblclick.zoom", null);
  canvas.addEventListener("click", (event) => {
    const node = pickAt(event.clientX, event.clientY);
    if (node) selectNode(node.id);
  });
  document.getElementById("nav-filters").addEventListener("change", loadGraph);
  document.getElementById("nav-search").addEventListener("submit", runSearch);
  document.getElementById("nav-more").addEventListener("click", loadMoreL0);
  document.getElementById("nav-close").addEventListener("click", closeDetail);
  new ResizeObserver(resize).observe(stage);

  // A small read-only handle for people debugging the page and for the browser test.
  window.legalmemNav = {
    get loaded() { return !!state.graph; },
    nodeIds() { return [...state.byId.keys()]; },
    nodeClientPosition(id) {
      const node = state.byId.get(id);
      if (!node) return null;
      const [x, y] = state.transform.apply(position(node, node.level, bands()));
      const rect = canvas.getBoundingClientRect();
      return { x: rect.left + x, y: rect.top + y };
    },
    highlightedPath() {
      return state.trace ? state.trace.path.map((s) => ({ source: s.source, target: s.target, level: s.level })) : [];
    },
  };
  loadGraph();
})();
