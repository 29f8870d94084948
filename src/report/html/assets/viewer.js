// leasesim report viewer: draws the run timeline on a canvas, the header and the summary table.
// Every string from the data reaches the DOM through textContent or attributes, never as markup.
(function () {
  'use strict';

  // The self-test must see errors raised while the page is being built, so capture them first.
  const SELFTEST = location.hash === '#selftest';
  const capturedErrors = [];
  if (SELFTEST) captureErrors();

  function captureErrors() {
    window.addEventListener('error', (e) => capturedErrors.push('error: ' + (e.message || String(e.error))));
    window.addEventListener('unhandledrejection', (e) => capturedErrors.push('unhandledrejection: ' + String(e.reason)));
    document.addEventListener('securitypolicyviolation',
      (e) => capturedErrors.push('csp: ' + e.violatedDirective + ' ' + e.blockedURI));
    for (const level of ['error', 'warn']) {
      const original = console[level];
      console[level] = function (...args) {
        capturedErrors.push('console.' + level + ': ' + args.map(String).join(' '));
        original.apply(console, args);
      };
    }
  }

  // ===== Sizes and colours =====

  const AXIS_H = 38;
  const BELIEF_H = 32, READ_H = 14, GRANTS_H = 32, NETWORK_H = 28;
  const OP_ROW_H = 7, OP_BAR_H = 5, OP_PAD = 3, MIN_OP_ROWS = 2, MAX_OP_ROWS = 8;
  const FAULT_STRIP_H = 11;
  const OPS_DRAW_LIMIT = 2000;   // more ops than this in view: draw the per-bin counts instead
  const MIN_SPAN_NS = 0.5;       // deepest zoom: half a nanosecond across the plot
  const HIT_PX = 3;              // hover/click tolerance either side of a thing
  const FONT = '11px system-ui, "DejaVu Sans", sans-serif';
  const FONT_SMALL = '10px system-ui, "DejaVu Sans", sans-serif';
  const CHAR_PX = 6.3;           // rough glyph width: fitting labels without measureText per frame

  // Lease tokens, cycling: the report's SVG palette (colour-blind-safe, no reds, so a token never
  // reads as an overlap).
  const TOKEN_COLORS = ['#1f77b4', '#44aa99', '#332288', '#999933', '#aa4499', '#88ccee', '#117733', '#8c7b6b'];
  const TOKEN_INK = TOKEN_COLORS.map((c) => (isDark(c) ? '#ffffff' : '#141414'));
  // Nodes (grant recipients, lane swatches): distinct from red, which means overlap.
  const NODE_COLORS = ['#4e79a7', '#59a14f', '#b07aa1', '#9c755f', '#76b7b2', '#d4a62a', '#7f7f7f', '#f28e2b'];
  const OP_KIND_NAMES = ['read', 'write', 'stale read', 'unsafe write', 'zombie', 'fenced write'];
  const OP_COLORS = ['#4a7ab5', '#3d9a5b', '#d62728', '#8e24aa', '#ef7d00', '#9a9a9a'];
  const OP_STALE = 2, OP_UNSAFE = 3, OP_ZOMBIE = 4, OP_FENCED = 5;
  const FAULT_COLORS = {
    'gc-pause': '#f5b014', 'vm-freeze': '#6e8cd7', 'thread-stall': '#283c96', 'disk-stall': '#ad1457',
    'down': '#505050', 'restart': '#2e7d32', 'clock-step': '#00695c', 'drift-change': '#7b1fa2',
    'partition': '#546e7a', 'one-way': '#90a4ae', 'delay': '#a1887f', 'drop': '#6d4c41',
  };
  const NETWORK_KINDS = new Set(['partition', 'one-way', 'delay', 'drop']);
  const HARM_BIN_KINDS = new Set(['stale-read', 'zombie-read', 'zombie-write', 'unsafe-write']);
  const BIN_COLOR = '#8da3c0', BIN_HARM_COLOR = '#d62728';
  const OVERLAP_WRITE = 'rgba(228,26,28,0.13)', OVERLAP_READ = 'rgba(228,26,28,0.08)';
  const OVERLAP_EDGE = 'rgba(200,20,20,0.75)', OVERLAP_MARK = '#e41a1c';
  const HANDOVER_OK = ['rgba(46,160,67,0.30)', 'rgba(30,130,50,0.85)'];
  const HANDOVER_BAD = ['rgba(228,26,28,0.30)', 'rgba(190,20,20,0.9)'];
  const GRID = '#e6e8eb', LANE_LINE = '#d5d9de', GROUP_BG = ['#ffffff', '#f6f7f9'];
  const TEXT = '#1c1f23', MUTED = '#5f6670';

  function isDark(hex) {
    const v = parseInt(hex.slice(1), 16);
    return 299 * (v >> 16) + 587 * ((v >> 8) & 255) + 114 * (v & 255) <= 150000;
  }

  function tokenIndex(token) {
    return (Math.max(1, token || 0) - 1) % TOKEN_COLORS.length;
  }

  // ---------------------------------------------------------------------------------------------
  // Formatting: times are exact integer nanoseconds, so they are split with integer arithmetic
  // rather than printed through floating-point seconds.
  // ---------------------------------------------------------------------------------------------

  function digitsOf(abs, unit, digits) {
    const whole = Math.floor(abs / unit);
    const frac = String(abs - whole * unit).padStart(digits, '0').replace(/0+$/, '');
    return [String(whole), frac];
  }

  function fmtTime(ns) {
    const r = Math.round(ns);
    const [whole, frac] = digitsOf(Math.abs(r), 1e9, 9);
    return (r < 0 ? '-' : '') + whole + '.' + frac.padEnd(3, '0') + ' s';
  }

  const DURATION_UNITS = [[1e9, 's', 9], [1e6, 'ms', 6], [1e3, 'us', 3]];

  function fmtDur(ns) {
    const r = Math.round(ns), abs = Math.abs(r), sign = r < 0 ? '-' : '';
    for (const [unit, name, digits] of DURATION_UNITS) {
      if (abs >= unit) {
        const [whole, frac] = digitsOf(abs, unit, digits);
        return sign + whole + (frac ? '.' + frac : '') + ' ' + name;
      }
    }
    return sign + abs + ' ns';
  }

  function isNil(v) {
    return v === null || v === undefined;
  }

  // A value shown through `show`, or a dash when the data has none.
  function orDash(v, show) {
    return isNil(v) ? '—' : show(v);
  }

  // A relative link from the data, or null when it carries a scheme (javascript:, http:, ...).
  function safeLink(link) {
    return typeof link === 'string' && link && !/^\s*[a-z][a-z0-9+.-]*:/i.test(link) && !/^\s*\/\//.test(link)
      ? link : null;
  }

  // ---------------------------------------------------------------------------------------------
  // Interval index: items sorted by start plus the running maximum of their ends, so the items
  // touching [t0, t1] are found by two binary searches even when items overlap each other.
  // ---------------------------------------------------------------------------------------------

  function buildIndex(items, startOf, endOf) {
    const sorted = items.slice().sort((a, b) => startOf(a) - startOf(b));
    const n = sorted.length;
    const starts = new Float64Array(n), ends = new Float64Array(n), maxEnd = new Float64Array(n);
    let running = -Infinity;
    for (let i = 0; i < n; i++) {
      starts[i] = startOf(sorted[i]);
      ends[i] = endOf(sorted[i]);
      running = Math.max(running, ends[i]);
      maxEnd[i] = running;
    }
    return { items: sorted, starts, ends, maxEnd, len: n };
  }

  // First i whose running maximum end reaches t0: nothing before it can be in view.
  function firstVisible(ix, t0) {
    let lo = 0, hi = ix.len;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ix.maxEnd[mid] < t0) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // First i starting after t1: nothing from it on can be in view.
  function pastVisible(ix, t1) {
    let lo = 0, hi = ix.len;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ix.starts[mid] <= t1) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function countInRange(sorted, t0, t1) {
    return upperBound(sorted, t1) - upperBound(sorted, t0 - 1e-9);
  }

  function upperBound(sorted, t) {
    let lo = 0, hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // ===== Run preparation: done once per run so drawing only reads typed arrays and sorted lists. =====

  function prepareRun(run) {
    const n = run.nodes.length;
    const endNs = Math.max(1, run.end_ns || 0);
    const perNode = (list) => run.nodes.map((_, i) => (list && list[i]) || []);
    const P = {
      run, n, endNs,
      beliefs: perNode(run.beliefs).map((l) => buildIndex(l, (p) => p[0], (p) => p[1])),
      reads: perNode(run.read_beliefs).map((l) => buildIndex(l, (p) => p[0], (p) => p[1])),
      overlaps: buildIndex(run.overlaps || [], (o) => o[0], (o) => o[1]),
      handovers: buildIndex(run.handovers || [], (h) => Math.min(h[2], h[3]), (h) => Math.max(h[2], h[3])),
      grants: buildIndex(run.grants || [], (g) => g[3], (g) => g[4]),
    };
    prepareFaults(P, run.faults || []);
    prepareOps(P, run.ops || []);
    P.bins = prepareBins(run.bins, n);
    return P;
  }

  function prepareFaults(P, faults) {
    const byNode = P.run.nodes.map(() => []);
    const network = [];
    for (const f of faults) {
      const nodes = f.nodes || [];
      if (NETWORK_KINDS.has(f.kind) || nodes.length === 0) network.push(f);
      else for (const i of nodes) if (byNode[i]) byNode[i].push(f);
    }
    const index = (l) => buildIndex(l, (f) => f.start, (f) => f.end);
    P.nodeFaults = byNode.map(index);
    P.netFaults = index(network);
  }

  function opEnd(P, op) {
    return isNil(op.ret) ? P.endNs : op.ret;
  }

  function opCode(op) {
    if (op.unsafe) return OP_UNSAFE;
    if (op.stale) return OP_STALE;
    if (op.zombie) return OP_ZOMBIE;
    if (op.fenced) return OP_FENCED;
    return op.write ? 1 : 0;
  }

  function prepareOps(P, ops) {
    const byNode = P.run.nodes.map(() => []);
    for (const op of ops) if (byNode[op.node]) byNode[op.node].push(op);
    P.ops = byNode.map((l) => {
      const ix = buildIndex(l, (op) => op.call, (op) => opEnd(P, op));
      ix.codes = Uint8Array.from(ix.items, opCode);
      ix.faint = Uint8Array.from(ix.items, (op) => (op.failed ? 1 : 0));
      ix.rows = packRows(ix);
      ix.rowCount = Math.max(MIN_OP_ROWS, ix.rows.reduce((m, r) => Math.max(m, r + 1), 0));
      return ix;
    });
    P.opCalls = Float64Array.from(ops, (op) => op.call).sort();
    P.keptEnd = ops.length ? P.opCalls[P.opCalls.length - 1] : -Infinity;
    P.opById = new Map(ops.map((op) => [op.id, op]));
    P.firstStale = ops.filter((op) => op.stale).sort((a, b) => a.call - b.call)[0] || null;
  }

  // Concurrent ops of one node go to separate rows (first free row); past MAX_OP_ROWS an op
  // shares the row that frees up first. Never-answered ops run to the end of the run, so they
  // would hold rows for good: they share one row of their own, below the others.
  function packRows(ix) {
    const rows = new Uint8Array(ix.len);
    const rowEnd = [], pending = [];
    for (let i = 0; i < ix.len; i++) {
      if (isNil(ix.items[i].ret)) {
        pending.push(i);
        continue;
      }
      let row = rowEnd.findIndex((end) => end <= ix.starts[i]);
      if (row < 0 && rowEnd.length < MAX_OP_ROWS) row = rowEnd.length;
      if (row < 0) row = rowEnd.indexOf(Math.min(...rowEnd));
      rowEnd[row] = ix.ends[i];
      rows[i] = row;
    }
    for (const i of pending) rows[i] = rowEnd.length;
    return rows;
  }

  function prepareBins(bins, n) {
    if (!bins || !bins.counts || !bins.width_ns) return null;
    const harmKinds = bins.kinds.map((k) => HARM_BIN_KINDS.has(k));
    const count = Math.max(0, ...bins.counts.flat().map((c) => c.length));
    const nodes = [];
    for (let i = 0; i < n; i++) {
      const benign = new Float64Array(count), harm = new Float64Array(count);
      (bins.counts[i] || []).forEach((perKind, k) => {
        const into = harmKinds[k] ? harm : benign;
        perKind.forEach((c, b) => { into[b] += c; });
      });
      let lastBin = count - 1;
      while (lastBin >= 0 && benign[lastBin] === 0 && harm[lastBin] === 0) lastBin--;
      nodes.push({ benign, harm, lastBin, maxBenign: Math.max(1, ...benign), maxHarm: Math.max(1, ...harm) });
    }
    return { start: bins.start_ns, width: bins.width_ns, count, kinds: bins.kinds, raw: bins.counts, nodes };
  }

  // ===== Page state and DOM handles =====

  const $ = (id) => document.getElementById(id);
  const canvas = $('canvas'), ctx = canvas.getContext('2d'), tooltip = $('tooltip'), detailEl = $('detail');
  const S = {
    data: null, P: null, runIndex: 0, layout: null,
    t0: 0, t1: 1, k: 1, width: 0, height: 0, dpr: 1,
    selected: null, overlapCursor: -1, drawPending: false, aggregated: [],
    drag: null, suppressClick: false, hatch: null, cutHatch: null,
  };

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function nodeName(i) {
    const nd = S.P && S.P.run.nodes[i];
    return nd ? nd.name : '#' + i;
  }

  // ===== Header, figures and the summary table =====

  function renderHeader(data) {
    $('title').textContent = data.title || '';
    const lines = $('lines');
    for (const line of data.lines || []) lines.appendChild(el('div', 'line', line));
  }

  function renderRunHeader(run) {
    const badge = $('verdict');
    badge.hidden = false;
    badge.textContent = run.verdict;
    badge.className = 'badge verdict-' + run.verdict;
    const figures = $('figures');
    figures.replaceChildren(keyValueTable(run.figures || [], 'figures'));
    const trace = safeLink(run.trace);
    if (trace) figures.appendChild(el('div', 'trace', 'trace: ')).appendChild(anchor(run.trace, trace));
  }

  function keyValueTable(pairs, className) {
    const table = el('table', className);
    for (const [k, v] of pairs) {
      const tr = table.insertRow();
      tr.append(el('th', null, k), el('td', null, v));
    }
    return table;
  }

  function anchor(text, href) {
    const a = el('a', null, text);
    a.href = href;
    return a;
  }

  function renderTable(table) {
    const section = $('summary');
    section.hidden = false;
    const t = el('table', 'summary');
    const head = t.createTHead().insertRow();
    const body = t.createTBody();
    const sort = { col: -1, dir: 1 };
    table.columns.forEach((c, i) => {
      const th = el('th', c.numeric ? 'num sortable' : 'sortable', c.name);
      th.title = 'Sort by ' + c.name;
      th.addEventListener('click', () => {
        sort.dir = sort.col === i ? -sort.dir : 1;
        sort.col = i;
        head.querySelectorAll('th').forEach((h, j) => h.setAttribute('aria-sort',
          j !== i ? 'none' : sort.dir > 0 ? 'ascending' : 'descending'));
        fillTableBody(body, table, sort);
      });
      head.appendChild(th);
    });
    fillTableBody(body, table, sort);
    section.appendChild(t);
  }

  function compareSortValues(a, b, dir) {
    const aNull = isNil(a), bNull = isNil(b);
    if (aNull || bNull) return aNull === bNull ? 0 : aNull ? 1 : -1;   // nulls last either way
    if (typeof a === 'number' && typeof b === 'number') return (a - b) * dir;
    const sa = String(a), sb = String(b);
    return (sa < sb ? -1 : sa > sb ? 1 : 0) * dir;
  }

  function fillTableBody(body, table, sort) {
    const rows = table.rows.slice();
    if (sort.col >= 0) {
      rows.sort((r1, r2) => compareSortValues((r1.sort || [])[sort.col], (r2.sort || [])[sort.col], sort.dir));
    }
    body.replaceChildren();
    for (const row of rows) {
      const tr = body.insertRow();
      if (row.verdict) tr.className = 'verdict-row-' + row.verdict;
      row.cells.forEach((cell, i) => tr.appendChild(tableCell(cell, i, row, table.columns[i])));
    }
  }

  function tableCell(cell, i, row, column) {
    const td = el('td', column && column.numeric ? 'num' : null);
    const link = i === 0 ? safeLink(row.link) : null;
    if (link) td.appendChild(anchor(cell, link));
    else td.textContent = cell;
    return td;
  }

  // ===== Lanes: their order and geometry, and the DOM labels beside the canvas =====

  function layoutLanes(P) {
    const lanes = [], groups = [];
    let y = AXIS_H;
    const add = (name, kind, node, h, sub) => {
      const lane = { name, kind, node, top: y, h, sub };
      lanes.push(lane);
      y += h;
      return lane;
    };
    P.run.nodes.forEach((nd, i) => {
      const top = y;
      const belief = add(nd.name, 'belief', i, BELIEF_H, nd.role);
      const read = P.reads[i].len ? add(nd.name + ' read', 'read', i, READ_H, 'read lease') : null;
      const clients = add(nd.name + ' clients', 'clients', i, 2 * OP_PAD + P.ops[i].rowCount * OP_ROW_H, '');
      groups.push({ top, bottom: y, belief, read, clients });
    });
    add('grants', 'grants', -1, GRANTS_H, 'by recipient');
    add('network', 'network', -1, NETWORK_H, 'faults');
    return { lanes, groups, height: y };
  }

  function renderLaneLabels(layout, P) {
    const box = $('lanes');
    box.replaceChildren();
    const spacer = el('div', 'lane-spacer');
    spacer.style.height = AXIS_H + 'px';
    box.appendChild(spacer);
    for (const lane of layout.lanes) {
      const div = el('div', 'lane lane-' + lane.kind);
      div.setAttribute('data-lane', lane.name);
      div.style.height = lane.h + 'px';
      if (lane.kind === 'belief') {
        const sw = el('span', 'node-swatch');
        sw.style.background = NODE_COLORS[lane.node % NODE_COLORS.length];
        div.appendChild(sw);
      }
      div.appendChild(el('span', 'lane-name', lane.name));
      if (lane.sub) div.appendChild(el('span', 'lane-sub', lane.sub));
      div.title = laneTitle(lane, P, false);
      lane.label = div;
      box.appendChild(div);
    }
  }

  function laneTitle(lane, P, aggregated) {
    if (lane.kind !== 'clients') return lane.name;
    const note = P.run.ops_note ? '\n' + P.run.ops_note : '';
    return lane.name + (aggregated ? ' (aggregated: per-bin counts of client acts)' : ': one bar per op') + note;
  }

  // The clients lanes say in their title whether they show single ops or aggregated counts.
  function updateLaneTitles() {
    for (const g of S.layout.groups) {
      const agg = S.aggregated[g.clients.node];
      if (g.clients.isAggregated !== agg) {
        g.clients.isAggregated = agg;
        g.clients.label.title = laneTitle(g.clients, S.P, agg);
        g.clients.label.classList.toggle('aggregated', agg);
      }
    }
  }

  // ===== View: the visible window [t0, t1] in ns, clamped to the run =====

  function setView(t0, t1) {
    const end = S.P.endNs;
    const span = Math.min(end, Math.max(MIN_SPAN_NS, t1 - t0));
    const mid = (t0 + t1) / 2;
    S.t0 = Math.min(Math.max(0, mid - span / 2), end - span);
    S.t1 = S.t0 + span;
    S.k = S.width / span;
    scheduleDraw();
  }

  function zoomAround(x, factor) {
    const t = S.t0 + x / S.k;
    const span = (S.t1 - S.t0) * factor;
    const frac = x / S.width;
    setView(t - frac * span, t + (1 - frac) * span);
  }

  function panBy(px) {
    const dt = px / S.k;
    setView(S.t0 + dt, S.t1 + dt);
  }

  // Show [a, b] with a margin around it, at least `minSpan` wide.
  function focusInterval(a, b, minSpan) {
    const len = Math.max(b - a, 0);
    const span = Math.max(len * 2, minSpan || 0, MIN_SPAN_NS * 8);
    const mid = (a + b) / 2;
    setView(mid - span / 2, mid + span / 2);
  }

  function xOf(t) { return (t - S.t0) * S.k; }
  function tOf(x) { return S.t0 + x / S.k; }

  function opsAggregated(P, t0, t1) {
    return !!P.bins && (P.opCalls.length === 0 || countInRange(P.opCalls, t0, t1) > OPS_DRAW_LIMIT);
  }

  // ===== Drawing =====

  function scheduleDraw() {
    if (S.drawPending) return;
    S.drawPending = true;
    requestAnimationFrame(() => { if (S.drawPending) drawNow(); });
  }

  function resizeCanvas() {
    const plot = $('plot');
    S.width = Math.max(100, plot.clientWidth);
    S.height = S.layout.height;
    S.dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(S.width * S.dpr);
    canvas.height = Math.round(S.height * S.dpr);
    canvas.style.width = S.width + 'px';
    canvas.style.height = S.height + 'px';
    S.k = S.width / (S.t1 - S.t0);
  }

  function drawNow() {
    S.drawPending = false;
    const P = S.P;
    ctx.setTransform(S.dpr, 0, 0, S.dpr, 0, 0);
    ctx.clearRect(0, 0, S.width, S.height);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    const ticks = axisTicks();
    drawLaneBackgrounds();
    drawGrid(ticks);
    drawHandovers(P);
    for (const g of S.layout.groups) drawNodeGroup(P, g);
    drawGrants(P, S.layout.lanes[S.layout.lanes.length - 2]);
    drawNetwork(P, S.layout.lanes[S.layout.lanes.length - 1]);
    drawSpansCut(P);
    drawOverlaps(P);
    drawAxis(ticks);
    drawSelection();
    updateLaneTitles();
    updateWindowText();
  }

  function drawLaneBackgrounds() {
    const L = S.layout;
    L.groups.forEach((g, i) => {
      ctx.fillStyle = GROUP_BG[i % 2];
      ctx.fillRect(0, g.top, S.width, g.bottom - g.top);
    });
    ctx.fillStyle = GROUP_BG[L.groups.length % 2];
    ctx.fillRect(0, L.lanes[L.lanes.length - 2].top, S.width, GRANTS_H + NETWORK_H);
    ctx.fillStyle = LANE_LINE;
    for (const lane of L.lanes) ctx.fillRect(0, lane.top + lane.h - 1, S.width, 1);
  }

  function drawGrid(ticks) {
    ctx.fillStyle = GRID;
    for (const t of ticks.values) ctx.fillRect(Math.round(xOf(t)), AXIS_H, 1, S.height - AXIS_H);
  }

  // Clamp a [t0, t1] interval to pixels, slightly beyond the canvas so strokes do not show.
  function spanPx(a, b, minW) {
    const x0 = Math.max(-4, xOf(a));
    const x1 = Math.min(S.width + 4, xOf(b));
    return [x0, Math.max(minW, x1 - x0)];
  }

  function drawNodeGroup(P, g) {
    const i = g.belief.node;
    drawFaultShades(P.nodeFaults[i], g.belief);
    drawPieces(P.beliefs[i], g.belief.top + 3, g.belief.h - 6 - FAULT_STRIP_H, true);
    drawFaultMarks(P.nodeFaults[i], g.belief);
    if (g.read) drawPieces(P.reads[i], g.read.top + 2, g.read.h - 5, false);
    drawClients(P, i, g.clients);
  }

  // Belief pieces: at most one sub-pixel piece per pixel column, so 20,000 pieces cost no more
  // than the plot is wide.
  function drawPieces(ix, y, h, labelled) {
    let lastCol = -Infinity;
    const end = pastVisible(ix, S.t1);
    for (let i = firstVisible(ix, S.t0); i < end; i++) {
      if (ix.ends[i] < S.t0) continue;
      const [x, w] = spanPx(ix.starts[i], ix.ends[i], 1);
      const col = Math.floor(x);
      if (w < 1.5 && col <= lastCol) continue;
      lastCol = Math.floor(x + w - 0.5);
      const p = ix.items[i], c = tokenIndex(p[2]);
      drawPiece(x, y, w, h, c, p[3]);
      if (labelled && w > 26) drawLabel('t' + p[2], x, y + h / 2, w, TOKEN_INK[c], p[3]);
    }
  }

  function drawPiece(x, y, w, h, colorIndex, running) {
    ctx.fillStyle = TOKEN_COLORS[colorIndex];
    if (running) {
      ctx.fillRect(x, y, w, h);
      return;
    }
    // Believed while not running (paused): lighter, hatched.
    ctx.globalAlpha = 0.4;
    ctx.fillRect(x, y, w, h);
    ctx.globalAlpha = 1;
    ctx.fillStyle = S.hatch;
    ctx.fillRect(x, y, w, h);
  }

  // A label centred in [x, x+w] when it fits, drawn on the visible part of the bar.
  function drawLabel(text, x, yMid, w, ink, onColor) {
    const x0 = Math.max(x, 0), x1 = Math.min(x + w, S.width);
    const need = text.length * CHAR_PX + 6;
    if (x1 - x0 < need) return;
    ctx.fillStyle = onColor ? ink : TEXT;
    ctx.textAlign = 'center';
    ctx.fillText(text, (x0 + x1) / 2, yMid + 0.5);
    ctx.textAlign = 'left';
  }

  function visibleFaults(ix, fn) {
    const end = pastVisible(ix, S.t1);
    for (let i = firstVisible(ix, S.t0); i < end; i++) {
      if (ix.ends[i] >= S.t0) fn(ix.items[i]);
    }
  }

  function drawFaultShades(ix, lane) {
    ctx.globalAlpha = 0.16;
    visibleFaults(ix, (f) => {
      if (f.end <= f.start) return;
      const [x, w] = spanPx(f.start, f.end, 1);
      ctx.fillStyle = faultColor(f);
      ctx.fillRect(x, lane.top, w, lane.h - 1);
    });
    ctx.globalAlpha = 1;
  }

  // Interval faults as a strip at the bottom of the node's lane, instants as ticks.
  function drawFaultMarks(ix, lane) {
    visibleFaults(ix, (f) => {
      ctx.fillStyle = faultColor(f);
      if (f.end > f.start) {
        const [x, w] = spanPx(f.start, f.end, 2);
        const y = lane.top + lane.h - FAULT_STRIP_H - 2;
        ctx.fillRect(x, y, w, FAULT_STRIP_H);
        ctx.font = FONT_SMALL;
        drawLabel(f.text || f.kind, x, y + FAULT_STRIP_H / 2, w, isDark(faultColor(f)) ? '#fff' : TEXT, true);
        ctx.font = FONT;
      } else {
        drawInstant(xOf(f.start), lane.top, lane.h - 1);
      }
    });
  }

  function drawInstant(x, top, h) {
    ctx.fillRect(Math.round(x) - 1, top, 2, h);
    ctx.beginPath();
    ctx.moveTo(x - 4, top);
    ctx.lineTo(x + 4, top);
    ctx.lineTo(x, top + 6);
    ctx.fill();
  }

  function faultColor(f) {
    return FAULT_COLORS[f.kind] || MUTED;
  }

  // The view reaches past the bin of the last kept op into acts of this node only counted.
  function countedPastKept(P, node) {
    if (!P.bins) return false;
    const keptBin = binAt(P.bins, P.keptEnd);
    return P.bins.nodes[node].lastBin > keptBin && S.t1 > P.bins.start + (keptBin + 1) * P.bins.width;
  }

  function binAt(B, t) {
    return Math.floor((t - B.start) / B.width);
  }

  function drawClients(P, node, lane) {
    const aggregated = opsAggregated(P, S.t0, S.t1);
    const pastKept = countedPastKept(P, node);
    S.aggregated[node] = aggregated || pastKept;
    if (aggregated) {
      drawBins(P.bins, node, lane, binAt(P.bins, S.t0));
      return;
    }
    drawOps(P.ops[node], lane, false);
    drawOps(P.ops[node], lane, true);
    // Past the bin of the last kept op the history is only counted: show the counts there.
    if (pastKept) drawBins(P.bins, node, lane, binAt(P.bins, P.keptEnd) + 1);
  }

  // Harmful ops are drawn in a second pass, on top and at least 3 px wide, so none hides.
  function drawOps(ix, lane, harmful) {
    const end = pastVisible(ix, S.t1);
    for (let i = firstVisible(ix, S.t0); i < end; i++) {
      if (ix.ends[i] < S.t0) continue;
      const code = ix.codes[i];
      if ((code >= OP_STALE && code <= OP_ZOMBIE) !== harmful) continue;
      const [x, w] = spanPx(ix.starts[i], ix.ends[i], harmful ? 3 : 1);
      const y = lane.top + OP_PAD + ix.rows[i] * OP_ROW_H;
      ctx.globalAlpha = ix.faint[i] ? 0.25 : isNil(ix.items[i].ret) ? 0.45 : 1;
      if (harmful) {
        ctx.fillStyle = '#1c1f23';   // a dark halo: harm must read even on a red overlap band
        ctx.fillRect(x - 1, y - 1, w + 2, OP_BAR_H + 2);
      }
      ctx.fillStyle = OP_COLORS[code];
      ctx.fillRect(x, y, w, OP_BAR_H);
    }
    ctx.globalAlpha = 1;
  }

  // Density strip: all acts of a bin as a bar rising from the bottom (height ∝ √count), the
  // harmful ones as a red bar hanging from the top.
  function drawBins(B, node, lane, fromBin) {
    const bn = B.nodes[node];
    const first = Math.max(0, fromBin, binAt(B, S.t0));
    const last = Math.min(B.count, Math.ceil((S.t1 - B.start) / B.width));
    const top = lane.top + 2, h = lane.h - 5;
    for (let b = first; b < last; b++) {
      const [x, w] = spanPx(B.start + b * B.width, B.start + (b + 1) * B.width, 1);
      if (bn.benign[b] > 0) {
        const bh = Math.max(1, Math.round(h * Math.sqrt(bn.benign[b] / bn.maxBenign)));
        ctx.fillStyle = BIN_COLOR;
        ctx.fillRect(x, top + h - bh, w, bh);
      }
      if (bn.harm[b] > 0) {
        ctx.fillStyle = BIN_HARM_COLOR;
        ctx.fillRect(x, top, Math.max(2, w), Math.max(3, Math.round(h * Math.sqrt(bn.harm[b] / bn.maxHarm))));
      }
    }
  }

  function drawNone(ix, lane) {
    if (ix.len) return;
    ctx.fillStyle = MUTED;
    ctx.fillText('none in this run', 6, lane.top + lane.h / 2);
  }

  function drawGrants(P, lane) {
    drawNone(P.grants, lane);
    const ix = P.grants, rowH = (lane.h - 6) / 2;
    let lastCol = -Infinity;
    const end = pastVisible(ix, S.t1);
    for (let i = firstVisible(ix, S.t0); i < end; i++) {
      if (ix.ends[i] < S.t0) continue;
      const [x, w] = spanPx(ix.starts[i], ix.ends[i], 1);
      if (w < 1.5 && Math.floor(x) <= lastCol) continue;
      lastCol = Math.floor(x + w - 0.5);
      const g = ix.items[i], color = NODE_COLORS[g[1] % NODE_COLORS.length];
      const y = lane.top + 3 + (i % 2) * rowH;   // alternate rows so back-to-back grants stay apart
      ctx.fillStyle = color;
      ctx.fillRect(x, y, w, rowH - 1);
      drawLabel('t' + g[2], x, y + rowH / 2, w, isDark(color) ? '#fff' : TEXT, true);
    }
  }

  function drawNetwork(P, lane) {
    drawNone(P.netFaults, lane);
    const rowH = (lane.h - 6) / 2;
    visibleFaults(P.netFaults, (f) => {
      ctx.fillStyle = faultColor(f);
      if (f.end <= f.start) {
        drawInstant(xOf(f.start), lane.top + 1, lane.h - 3);
        return;
      }
      const row = f.kind === 'delay' || f.kind === 'drop' ? 1 : 0;
      const [x, w] = spanPx(f.start, f.end, 2);
      const y = lane.top + 3 + row * rowH;
      ctx.fillRect(x, y, w, rowH - 1);
      drawLabel(f.text || f.kind, x, y + rowH / 2, w, '#fff', true);
    });
  }

  // A handover joins the two nodes' belief lanes of its authority (write, or read when the
  // protocol tracks it apart) between the old holder's end and the new start.
  // Zoomed out, thousands of handovers share pixel columns: one band per column and sign.
  function drawHandovers(P) {
    const groups = S.layout.groups, ix = P.handovers, lastCol = [-Infinity, -Infinity];
    const end = pastVisible(ix, S.t1);
    for (let i = firstVisible(ix, S.t0); i < end; i++) {
      const h = ix.items[i], ga = groups[h[0]], gb = groups[h[1]];
      if (ix.ends[i] < S.t0 || !ga || !gb) continue;
      const a = laneOf(ga, h[5]), b = laneOf(gb, h[5]);
      const [x, w] = spanPx(ix.starts[i], ix.ends[i], 2);
      const sign = h[4] >= 0 ? 0 : 1;
      if (w < 3 && Math.floor(x) <= lastCol[sign]) continue;
      lastCol[sign] = Math.floor(x + w);
      const [fill, edge] = sign ? HANDOVER_BAD : HANDOVER_OK;
      ctx.fillStyle = fill;
      ctx.fillRect(x, a.top + 1, w, a.h - 2);
      ctx.fillRect(x, b.top + 1, w, b.h - 2);
      if (w < 3) continue;
      // Edges joining the two lanes, over whatever lies between them.
      const top = Math.min(a.top, b.top) + 1;
      const bottom = Math.max(a.top + a.h, b.top + b.h) - 1;
      ctx.fillStyle = edge;
      ctx.fillRect(x, top, 1, bottom - top);
      ctx.fillRect(x + w - 1, top, 1, bottom - top);
    }
  }

  // The lane of a node's group that holds its beliefs of `authority`.
  function laneOf(group, authority) {
    return authority === 'read' && group.read ? group.read : group.belief;
  }

  function drawOverlaps(P) {
    const groups = S.layout.groups;
    visibleFaults(P.overlaps, (o) => {
      const [x, w] = spanPx(o[0], o[1], 2);
      const isRead = o[3] === 'read';
      for (const n of o[2]) {
        const g = groups[n];
        if (!g) continue;
        const lane = isRead ? g.read || g.belief : null;
        const top = lane ? lane.top : g.top, h = lane ? lane.h : g.bottom - g.top;
        ctx.fillStyle = isRead ? OVERLAP_READ : OVERLAP_WRITE;
        ctx.fillRect(x, top, w, h);
        ctx.fillStyle = OVERLAP_EDGE;
        ctx.fillRect(x, top, 1, h);
        ctx.fillRect(x + w - 1, top, 1, h);
      }
      ctx.fillStyle = OVERLAP_MARK;
      ctx.fillRect(x, AXIS_H - 6, w, 5);
    });
  }

  function drawSpansCut(P) {
    const cut = P.run.spans_cut_at;
    if (isNil(cut) || cut > S.t1) return;
    const x = Math.max(0, xOf(cut));
    ctx.fillStyle = S.cutHatch;
    ctx.fillRect(x, AXIS_H, S.width - x, S.height - AXIS_H);
    ctx.fillStyle = MUTED;
    ctx.fillRect(Math.round(x), AXIS_H, 1, S.height - AXIS_H);
    const text = 'spans cut at ' + fmtTime(cut) + ': later beliefs, grants, overlaps not all kept';
    const tx = x + text.length * CHAR_PX + 8 < S.width ? x + 4 : Math.max(4, x - text.length * CHAR_PX - 4);
    ctx.fillText(text, tx, 8);
  }

  // Axis units come from the visible span; below seconds the labels are offsets from a round
  // base (shown at the left) so they stay short at nanosecond zoom deep into a long run.
  const AXIS_UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];

  function axisTicks() {
    const span = S.t1 - S.t0;
    const unit = AXIS_UNITS.find(([u]) => span >= u) || AXIS_UNITS[3];
    const step = niceStep(span / Math.max(2, S.width / 110));
    const base = unit[0] === 1e9 ? 0 : Math.floor(S.t0 / (unit[0] * 1000)) * unit[0] * 1000;
    const decimals = Math.max(0, Math.ceil(-Math.log10(step / unit[0]) - 1e-9));
    const values = [];
    for (let t = Math.ceil(S.t0 / step) * step; t <= S.t1 && values.length < 100; t += step) values.push(t);
    return { values, unit, base, decimals };
  }

  function niceStep(rough) {
    const p = Math.pow(10, Math.floor(Math.log10(rough)));
    const m = rough / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function drawAxis(ticks) {
    ctx.fillStyle = LANE_LINE;
    ctx.fillRect(0, AXIS_H - 1, S.width, 1);
    const [u, name] = ticks.unit;
    const relative = ticks.base !== 0 || u !== 1e9;
    ctx.fillStyle = TEXT;
    for (const t of ticks.values) {
      const x = Math.round(xOf(t));
      ctx.fillRect(x, AXIS_H - 11, 1, 5);
      const v = ((t - ticks.base) / u).toFixed(ticks.decimals);
      const label = (relative ? '+' : '') + v + ' ' + name;
      const w = ctx.measureText(label).width;
      const lx = Math.min(Math.max(x - w / 2, 2), S.width - w - 3);
      ctx.fillText(label, lx, 22);
    }
    if (relative) {
      ctx.fillStyle = MUTED;
      ctx.fillText('offsets from ' + fmtTime(ticks.base), 4, 8);
    }
  }

  function updateWindowText() {
    const text = fmtTime(S.t0) + ' – ' + fmtTime(S.t1) + '  (' + fmtDur(S.t1 - S.t0) + ')';
    const w = $('window');
    if (w.textContent !== text) w.textContent = text;
  }

  function drawSelection() {
    const r = S.selected && selectionRect(S.selected);
    if (!r) return;
    ctx.lineWidth = 2;
    ctx.strokeStyle = '#ffffff';
    ctx.strokeRect(r[0] - 2, r[1] - 2, r[2] + 4, r[3] + 4);
    ctx.strokeStyle = '#111111';
    ctx.strokeRect(r[0] - 3, r[1] - 3, r[2] + 6, r[3] + 6);
    ctx.lineWidth = 1;
  }

  // [x, y, w, h] of a selected thing on the canvas, or null for bands (overlaps, handovers).
  function selectionRect(sel) {
    const g = sel.node >= 0 ? S.layout.groups[sel.node] : null;
    const it = sel.item;
    const box = (a, b, minW, top, h) => {
      const [x, w] = spanPx(a, b, minW);
      return [x, top, w, h];
    };
    switch (sel.type) {
      case 'op':
        return box(it.call, opEnd(S.P, it), 3,
          g.clients.top + OP_PAD + S.P.ops[it.node].rows[sel.index] * OP_ROW_H, OP_BAR_H);
      case 'belief': return box(it[0], it[1], 1, g.belief.top + 3, g.belief.h - 6 - FAULT_STRIP_H);
      case 'read': return box(it[0], it[1], 1, g.read.top + 2, g.read.h - 5);
      case 'grant': {
        const lane = S.layout.lanes[S.layout.lanes.length - 2], rowH = (lane.h - 6) / 2;
        return box(it[3], it[4], 1, lane.top + 3 + (sel.index % 2) * rowH, rowH - 1);
      }
      default: return null;
    }
  }

  // ===== Hit testing: what lies under a canvas point, most specific first =====

  function laneAt(y) {
    return S.layout.lanes.find((l) => y >= l.top && y < l.top + l.h) || null;
  }

  // Items of `ix` within HIT_PX of time t, as hits of `type`, filtered by `keep`.
  function collect(ix, t, type, node, hits, keep) {
    const tol = HIT_PX / S.k;
    const end = pastVisible(ix, t + tol);
    for (let i = firstVisible(ix, t - tol); i < end; i++) {
      if (ix.ends[i] < t - tol) continue;
      if (!keep || keep(ix.items[i], i)) hits.push({ type, item: ix.items[i], node, index: i });
    }
  }

  function hitsAt(x, y) {
    const P = S.P, hits = [], t = tOf(x);
    const involves = (n) => (o) => o[2].includes(n);
    if (y < AXIS_H) {
      collect(P.overlaps, t, 'overlap', -1, hits);
      return hits;
    }
    const lane = laneAt(y);
    if (!lane) return hits;
    const n = lane.node;
    switch (lane.kind) {
      case 'belief':
        collect(P.nodeFaults[n], t, 'fault', n, hits,
          (f) => f.end === f.start || y >= lane.top + lane.h - FAULT_STRIP_H - 3);
        collect(P.beliefs[n], t, 'belief', n, hits);
        collect(P.handovers, t, 'handover', n, hits, (h) => h[0] === n || h[1] === n);
        collect(P.overlaps, t, 'overlap', n, hits, involves(n));
        collect(P.nodeFaults[n], t, 'fault', n, hits, (f) => f.end > f.start && y < lane.top + lane.h - FAULT_STRIP_H - 3);
        break;
      case 'read':
        collect(P.reads[n], t, 'read', n, hits);
        collect(P.overlaps, t, 'overlap', n, hits, involves(n));
        break;
      case 'clients':
        clientHits(P, lane, x, y, t, hits);
        collect(P.overlaps, t, 'overlap', n, hits, involves(n));
        break;
      case 'grants': {
        const row = y < lane.top + lane.h / 2 ? 0 : 1;
        collect(P.grants, t, 'grant', -1, hits, (g, i) => i % 2 === row);
        break;
      }
      default:
        collect(P.netFaults, t, 'fault', -1, hits);
    }
    return hits;
  }

  function clientHits(P, lane, x, y, t, hits) {
    const n = lane.node;
    const b = P.bins ? binAt(P.bins, t) : -1;
    if (opsAggregated(P, S.t0, S.t1) || (countedPastKept(P, n) && b > binAt(P.bins, P.keptEnd))) {
      if (b >= 0 && b < P.bins.count) hits.push({ type: 'bin', item: b, node: n, index: b });
      return;
    }
    const row = Math.floor((y - lane.top - OP_PAD) / OP_ROW_H);
    const ix = P.ops[n];
    const found = [];
    collect(ix, t, 'op', n, found, (op, i) => ix.rows[i] === row);
    // An op that really contains t beats one merely within tolerance; harm beats the rest.
    const score = (h) => (h.item.call <= t && t <= opEnd(P, h.item) ? 2 : 0) + (ix.codes[h.index] >= OP_STALE ? 1 : 0);
    found.sort((a, b) => score(b) - score(a) || b.item.call - a.item.call);
    hits.push(...found);
  }

  // ===== Tooltip and detail panel =====

  function opKind(op) {
    const flags = [op.write ? 'write' : 'read'];
    for (const f of ['stale', 'unsafe', 'zombie', 'fenced', 'failed']) if (op[f]) flags.push(f);
    if (isNil(op.ret)) flags.push('never answered');
    return flags.join(', ');
  }

  function overlapTitle(o) {
    return (o[3] === 'read' ? 'Read' : 'Write') + ' overlap of ' + o[2].map(nodeName).join(', ');
  }

  function binRange(b) {
    const B = S.P.bins;
    return [B.start + b * B.width, B.start + (b + 1) * B.width];
  }

  function binSummary(hit) {
    const B = S.P.bins, counts = (B.raw[hit.node] || []).map((k) => k[hit.item] || 0);
    const parts = B.kinds.map((k, i) => k + ' ' + counts[i]).filter((_, i) => counts[i] > 0);
    const [a, b] = binRange(hit.item);
    return nodeName(hit.node) + ' clients, ' + fmtTime(a) + ' – ' + fmtTime(b) + ': ' + (parts.join(', ') || 'no acts');
  }

  function showTooltip(x, y, hits) {
    if (!hits.length) {
      tooltip.hidden = true;
      return;
    }
    const lines = hits.slice(0, 6).map((h) => describe(h).title);
    if (hits.length > 6) lines.push('… ' + (hits.length - 6) + ' more');
    tooltip.textContent = lines.join('\n');
    tooltip.hidden = false;
    const left = x + 14 + tooltip.offsetWidth > S.width ? x - 14 - tooltip.offsetWidth : x + 14;
    tooltip.style.left = Math.max(0, left) + 'px';
    tooltip.style.top = (y + 16) + 'px';
  }

  function select(hit) {
    S.selected = hit;
    renderDetail(hit);
    scheduleDraw();
  }

  function renderDetail(hit, emptyText) {
    if (!hit) {
      detailEl.replaceChildren(el('span', 'muted', emptyText || 'Nothing here. Click a bar, band or mark on the timeline.'));
      return;
    }
    const { title, rows } = describe(hit);
    detailEl.replaceChildren(el('h3', null, title), keyValueTable(rows, 'detail-table'));
    if (hit.type === 'op' && hit.item.missed) detailEl.appendChild(missedBlock(hit.item.missed));
  }

  function describe(hit) {
    const it = hit.item;
    switch (hit.type) {
      case 'op': return describeOp(it);
      case 'belief': case 'read': return {
        title: (hit.type === 'read' ? 'Read lease' : 'Lease') + ' t' + it[2] + ' on ' + nodeName(hit.node) + ': ' +
          fmtTime(it[0]) + ' – ' + fmtTime(it[1]) + (it[3] ? '' : ' (not running)'),
        rows: [['node', nodeName(hit.node)], ['token', String(it[2])], ['start', fmtTime(it[0])],
          ['end', fmtTime(it[1])], ['length', fmtDur(it[1] - it[0])],
          ['running', it[3] ? 'yes' : 'no: believed while the node was not running (paused/frozen)']],
      };
      case 'overlap': return {
        title: overlapTitle(it) + ': ' + fmtDur(it[1] - it[0]),
        rows: [['nodes', it[2].map(nodeName).join(', ')], ['authority', it[3]], ['start', fmtTime(it[0])],
          ['end', fmtTime(it[1])], ['length', fmtDur(it[1] - it[0])]],
      };
      case 'handover': return {
        title: 'Handover ' + nodeName(it[0]) + ' → ' + nodeName(it[1]) + ', slack ' + fmtDur(it[4]),
        rows: [['from', nodeName(it[0])], ['to', nodeName(it[1])], ['authority', it[5] || 'write'],
          ['previous holder ended', fmtTime(it[2])],
          ['new holder started', fmtTime(it[3])],
          ['slack', fmtDur(it[4]) + (it[4] < 0 ? ' (negative: both held the lease)' : ' (gap: safe)')]],
      };
      case 'grant': return {
        title: 'Grant of t' + it[2] + ' to ' + nodeName(it[1]) + ': ' + fmtTime(it[3]) + ' – ' + fmtTime(it[4]),
        rows: [['grantor', nodeName(it[0])], ['to', nodeName(it[1])], ['token', String(it[2])],
          ['start', fmtTime(it[3])], ['until', fmtTime(it[4])], ['length', fmtDur(it[4] - it[3])]],
      };
      case 'fault': return {
        title: 'Fault: ' + (it.text || it.kind),
        rows: [['kind', it.kind], ['nodes', (it.nodes || []).map(nodeName).join(', ') || 'network-wide'],
          ['start', fmtTime(it.start)], ['end', fmtTime(it.end)],
          ['length', it.end > it.start ? fmtDur(it.end - it.start) : 'instant'], ['text', it.text || '']],
      };
      default: return { title: binSummary(hit), rows: [['aggregated', 'counts of client acts in one bin']] };
    }
  }

  function describeOp(op) {
    const rows = [['id', '#' + op.id], ['node', nodeName(op.node)], ['kind', opKind(op)], ['key', String(op.key)],
      ['call', fmtTime(op.call)], ['return', isNil(op.ret) ? 'never answered' : fmtTime(op.ret)]];
    if (!isNil(op.ret)) rows.push(['latency', fmtDur(op.ret - op.call)]);
    if (op.write) rows.push(['took effect', orDash(op.effect, fmtTime)], ['at node', orDash(op.at_node, nodeName)]);
    rows.push([op.write ? 'value written' : 'value read', orDash(op.value, String)],
      ['token', orDash(op.token, (t) => 't' + t)],
      ['monotonic clock', orDash(op.mono_ns, fmtTime)], ['wall clock', orDash(op.wall_ns, fmtTime)]);
    return { title: 'Op #' + op.id + ' (' + opKind(op) + ') on ' + nodeName(op.node) + ' at ' + fmtTime(op.call), rows };
  }

  function missedBlock(m) {
    const box = el('div', 'missed');
    box.appendChild(el('span', null, 'missed write #' + m.id + ' by ' + nodeName(m.node) + ', took effect at ' +
      orDash(m.effect, fmtTime) + ', seen at ' + fmtTime(m.seen) + ' (' + m.by + ')'));
    const button = el('button', null, 'select write #' + m.id);
    button.type = 'button';
    if (S.P.opById.has(m.id)) button.addEventListener('click', () => selectOp(m.id));
    else {
      button.disabled = true;
      button.title = 'That write is not in the kept history';
    }
    box.appendChild(button);
    return box;
  }

  // ===== Navigation: buttons, overlaps, ops =====

  function goToOverlap(i) {
    const ix = S.P.overlaps;
    if (!ix.len) return;
    S.overlapCursor = ((i % ix.len) + ix.len) % ix.len;
    const o = ix.items[S.overlapCursor];
    focusInterval(o[0], o[1], 1000);
    select({ type: 'overlap', item: o, node: -1, index: S.overlapCursor });
  }

  // Zoom so the op is wide enough to click and the clients lanes show single ops, not bins.
  function focusOp(op) {
    const P = S.P, call = op.call, end = opEnd(P, op);
    focusInterval(call, end, 40 / S.width * 1000);
    let span = S.t1 - S.t0;
    while (opsAggregated(P, S.t0, S.t1) && span > MIN_SPAN_NS * 8) {
      span /= 2;
      setView(call - span * 0.25, call + span * 0.75);
    }
  }

  // A point inside the op's visible bar where the ordinary hit test finds that very op.
  function clickPointForOp(op) {
    const P = S.P, ix = P.ops[op.node], g = S.layout.groups[op.node];
    const i = ix.items.indexOf(op);
    const y = g.clients.top + OP_PAD + ix.rows[i] * OP_ROW_H + OP_BAR_H / 2;
    const x0 = Math.max(0, xOf(op.call)), x1 = Math.min(S.width - 1, xOf(opEnd(P, op)));
    for (let step = 0; step <= 9; step++) {
      const x = step === 9 ? Math.min(x1, x0 + 2) : x0 + (x1 - x0) * (step % 2 ? 0.5 - step / 18 : 0.5 + step / 18);
      const hit = hitsAt(x, y)[0];
      if (hit && hit.item === op) return { x, y };
    }
    return { x: (x0 + x1) / 2, y };
  }

  function selectOp(id) {
    const op = S.P && S.P.opById.get(id);
    if (!op) return detailEl.textContent;
    focusOp(op);
    drawNow();
    const pt = clickPointForOp(op);
    const r = canvas.getBoundingClientRect();
    canvas.dispatchEvent(new MouseEvent('click', { clientX: r.left + pt.x, clientY: r.top + pt.y, bubbles: true }));
    return detailEl.textContent;
  }

  function updateButtons() {
    const P = S.P;
    $('btn-first-overlap').disabled = P.overlaps.len === 0;
    $('btn-next-overlap').disabled = P.overlaps.len === 0;
    $('btn-first-stale').disabled = !P.firstStale;
  }

  // ===== Input =====

  function canvasPoint(e) {
    const r = canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  function onWheel(e) {
    e.preventDefault();
    const scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    const [x] = canvasPoint(e);
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey) {
      panBy((e.shiftKey ? e.deltaY : e.deltaX) * scale);
      return;
    }
    zoomAround(x, Math.exp(e.deltaY * scale * 0.0015));
  }

  function onPointerDown(e) {
    if (e.button !== 0) return;
    S.drag = { x: e.clientX, t0: S.t0, t1: S.t1, moved: false };
    try {
      canvas.setPointerCapture(e.pointerId);
    } catch (err) {
      // A synthetic event (a test's) has no active pointer to capture; dragging still works.
    }
  }

  function onPointerMove(e) {
    const [x, y] = canvasPoint(e);
    if (S.drag) {
      const dx = e.clientX - S.drag.x;
      if (Math.abs(dx) > 3) S.drag.moved = true;
      if (S.drag.moved) {
        const dt = dx / S.k;
        setView(S.drag.t0 - dt, S.drag.t1 - dt);
        tooltip.hidden = true;
        return;
      }
    }
    showTooltip(x, y, hitsAt(x, y));
  }

  function onPointerUp() {
    S.suppressClick = !!(S.drag && S.drag.moved);
    S.drag = null;
  }

  function onClick(e) {
    if (S.suppressClick) {
      S.suppressClick = false;
      return;
    }
    const [x, y] = canvasPoint(e);
    select(hitsAt(x, y)[0] || null);
  }

  function onKey(e) {
    const tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || !S.P || e.ctrlKey || e.metaKey) return;
    const actions = {
      '+': () => zoomAround(S.width / 2, 0.5), '=': () => zoomAround(S.width / 2, 0.5),
      '-': () => zoomAround(S.width / 2, 2), '_': () => zoomAround(S.width / 2, 2),
      'ArrowLeft': () => panBy(-S.width / 8), 'ArrowRight': () => panBy(S.width / 8),
      'ArrowUp': () => zoomAround(S.width / 2, 0.5), 'ArrowDown': () => zoomAround(S.width / 2, 2),
    };
    if (actions[e.key]) {
      e.preventDefault();
      actions[e.key]();
    }
  }

  function bindInput() {
    canvas.addEventListener('wheel', onWheel, { passive: false });
    canvas.addEventListener('pointerdown', onPointerDown);
    canvas.addEventListener('pointermove', onPointerMove);
    canvas.addEventListener('pointerup', onPointerUp);
    canvas.addEventListener('pointerleave', () => { tooltip.hidden = true; });
    canvas.addEventListener('click', onClick);
    canvas.addEventListener('dblclick', (e) => zoomAround(canvasPoint(e)[0], 0.5));
    document.addEventListener('keydown', onKey);
    window.addEventListener('resize', () => {
      resizeCanvas();
      setView(S.t0, S.t1);
    });
    $('btn-whole').addEventListener('click', () => setView(0, S.P.endNs));
    $('btn-first-overlap').addEventListener('click', () => goToOverlap(0));
    $('btn-next-overlap').addEventListener('click', () => goToOverlap(S.overlapCursor + 1));
    $('btn-first-stale').addEventListener('click', () => S.P.firstStale && selectOp(S.P.firstStale.id));
  }

  // ===== Runs, legend, start-up =====

  function selectRun(i) {
    const runs = S.data.runs;
    if (!runs.length) return;
    S.runIndex = Math.min(Math.max(0, i | 0), runs.length - 1);
    const picker = $('run-picker');
    if (picker) picker.value = String(S.runIndex);
    S.P = prepareRun(runs[S.runIndex]);
    S.layout = layoutLanes(S.P);
    S.aggregated = S.P.run.nodes.map(() => false);
    S.selected = null;
    S.overlapCursor = -1;
    renderRunHeader(S.P.run);
    renderLaneLabels(S.layout, S.P);
    $('ops-note').textContent = S.P.run.ops_note ? 'Client ops: ' + S.P.run.ops_note : '';
    renderDetail(null, 'Click anything on the timeline to see its details here.');
    updateButtons();
    S.t0 = 0;
    S.t1 = S.P.endNs;
    resizeCanvas();
    setView(0, S.P.endNs);
    drawNow();
  }

  function renderRunPicker(runs) {
    const select = el('select');
    select.id = 'run-picker';
    select.title = 'Run drawn';
    runs.forEach((r, i) => {
      const opt = el('option', null, r.label + ' — ' + r.verdict);
      opt.value = String(i);
      select.appendChild(opt);
    });
    select.addEventListener('change', () => selectRun(Number(select.value)));
    const label = el('label', 'picker', 'run ');
    label.appendChild(select);
    $('picker-slot').appendChild(label);
  }

  const LEGEND = [
    ['Lease', [['tokens', 'tokens'], ['hatched', 'believed while not running'],
      ['band:' + OVERLAP_WRITE, 'overlap'], ['band:' + HANDOVER_OK[0], 'handover gap'],
      ['band:' + HANDOVER_BAD[0], 'handover overlap']]],
    ['Clients', OP_KIND_NAMES.map((n, i) => [OP_COLORS[i], n])
      .concat([['faint:' + OP_COLORS[0], 'failed (did not happen)'], [BIN_COLOR, 'density (zoomed out)'],
        [BIN_HARM_COLOR, 'harmful acts per bin']])],
    ['Faults', Object.keys(FAULT_COLORS).map((k) => [FAULT_COLORS[k], k])],
    ['Grants', [['nodes', 'colour = recipient, label = token']]],
  ];

  function legendSwatch(kind) {
    const sw = el('span', 'sw');
    if (kind === 'tokens' || kind === 'nodes') {
      sw.className = 'sw sw-multi';
      for (const c of (kind === 'tokens' ? TOKEN_COLORS : NODE_COLORS).slice(0, 6)) {
        const part = el('span');
        part.style.background = c;
        sw.appendChild(part);
      }
    } else if (kind === 'hatched') {
      sw.className = 'sw sw-hatched';
    } else if (kind.startsWith('band:')) {
      sw.className = 'sw sw-band';
      sw.style.background = kind.slice(5);
    } else if (kind.startsWith('faint:')) {
      sw.style.background = kind.slice(6);
      sw.style.opacity = '0.3';
    } else {
      sw.style.background = kind;
    }
    return sw;
  }

  function renderLegend() {
    const box = $('legend');
    for (const [group, items] of LEGEND) {
      const row = el('div', 'legend-group');
      row.appendChild(el('span', 'legend-title', group));
      for (const [kind, text] of items) {
        const item = el('span', 'legend-item');
        item.appendChild(legendSwatch(kind));
        item.appendChild(document.createTextNode(text));
        row.appendChild(item);
      }
      box.appendChild(row);
    }
  }

  function makePattern(color, gap) {
    const c = document.createElement('canvas');
    c.width = c.height = gap;
    const g = c.getContext('2d');
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    g.beginPath();
    g.moveTo(0, gap);
    g.lineTo(gap, 0);
    g.stroke();
    return ctx.createPattern(c, 'repeat');
  }

  function runSelftest() {
    const out = { lanes: page.lanes(), stale_op: null, detail: null, detail_ok: null, errors: capturedErrors };
    try {
      const op = S.P && (S.P.run.ops || []).find((o) => o.stale && o.missed);
      if (op) {
        out.stale_op = op.id;
        out.detail = page.selectOp(op.id);
        out.detail_ok = out.detail.includes('missed write #' + op.missed.id);
      }
    } catch (err) {
      capturedErrors.push('selftest: ' + String(err && err.stack || err));
    }
    const pre = el('pre', null, JSON.stringify(out));
    pre.id = 'selftest';
    document.body.appendChild(pre);
  }

  const page = {
    lanes: () => (S.layout ? S.layout.lanes.map((l) => l.name) : []),
    selectRun,
    selectOp,
    // Sets the window [t0, t1] (ns) and draws synchronously; returns the milliseconds drawing took.
    setView(t0, t1) {
      setView(t0, t1);
      const start = performance.now();
      drawNow();
      return performance.now() - start;
    },
  };

  function init() {
    S.data = JSON.parse($('data').textContent);
    S.hatch = makePattern('rgba(255,255,255,0.85)', 6);
    S.cutHatch = makePattern('rgba(120,120,120,0.18)', 10);
    renderHeader(S.data);
    if (S.data.table) renderTable(S.data.table);
    const runs = S.data.runs || [];
    if (runs.length) {
      $('timeline').hidden = false;
      if (runs.length > 1) renderRunPicker(runs);
      renderLegend();
      bindInput();
      selectRun(0);
    }
    window.leasesimPage = page;
    if (SELFTEST) setTimeout(runSelftest, 0);
  }

  init();
})();
