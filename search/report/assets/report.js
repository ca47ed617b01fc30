'use strict';
// The report page: every chart is drawn from the JSON document embedded in the page
// (report_data.h says what it holds); nothing is fetched.
(function () {
  const started = performance.now();
  const data = JSON.parse(document.getElementById('comera-data').textContent);
  const charts = [];

  // How each trial status is drawn on the front chart; "front" and "dominated" are complete.
  const STATUS = {
    front: { symbol: 'circle', color: '#d62728', size: 11, label: 'front' },
    dominated: { symbol: 'circle', color: '#1f77b4', size: 8, label: 'dominated' },
    pruned: { symbol: 'rect', color: '#8c8c8c', size: 7, label: 'pruned' },
    failed: { symbol: 'triangle', color: '#222222', size: 9, label: 'failed' },
    diverged: { symbol: 'diamond', color: '#ff7f0e', size: 9, label: 'diverged' },
    killed: { symbol: 'rect', color: '#9467bd', size: 8, label: 'killed' },
    running: { symbol: 'pin', color: '#2ca02c', size: 12, label: 'running' },
    queued: { symbol: 'emptyCircle', color: '#bbbbbb', size: 7, label: 'queued' },
  };
  const LINE_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b',
    '#e377c2', '#7f7f7f', '#bcbd22'];

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === 'text') node.textContent = value;
      else if (key === 'class') node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }
  function num(x) { return typeof x === 'number' && isFinite(x) ? x : null; }
  function fmt(x) {
    if (typeof x !== 'number') return x === null || x === undefined ? '' : String(x);
    if (!isFinite(x)) return String(x);
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
    return Number(x.toPrecision(4)).toString();
  }
  function escapeText(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }
  function chart(node) {
    const c = echarts.init(node, null, { renderer: 'canvas' });
    charts.push(c);
    return c;
  }
  window.addEventListener('resize', () => charts.forEach((c) => c.resize()));

  // A trial's value of a metric: its recorded objective, else its last epoch's metric.
  function valueOf(trial, metric) {
    const objective = num(trial.objectives[metric]);
    return objective !== null ? objective : num(trial.last_epoch[metric]);
  }

  // The trials on the front of (x, y) among complete ones with both values.
  function frontOf(points, dirs) {
    const sign = dirs.map((d) => (d === 'max' ? -1 : 1));
    const sorted = points.slice().sort((a, b) => sign[0] * (a.x - b.x) || sign[1] * (a.y - b.y));
    const front = new Set();
    let bestY = Infinity, lastX = null, lastY = null;
    for (const p of sorted) {
      const y = sign[1] * p.y;
      if (y < bestY || (p.x === lastX && p.y === lastY)) {
        front.add(p.trial.id);
        bestY = Math.min(bestY, y);
        lastX = p.x;
        lastY = p.y;
      }
    }
    return front;
  }

  function trialTitle(t) {
    return '#' + t.number + ' (id ' + t.id + ') ' + (t.kind || '') + (t.target ? ' (L0 ' + fmt(t.target.loss) + ', S0 ' +
      fmt(t.target.size_ratio) + ')' : '');
  }
  function notes(t) {
    const out = [];
    if (t.size_vs_target !== null && t.size_vs_target !== undefined) out.push('size/S0 ' + fmt(t.size_vs_target));
    if (t.lost_layers && t.lost_layers.length) out.push('lost ' + t.lost_layers.join(', '));
    if (t.error) out.push('error: ' + t.error);
    return out.join('; ');
  }
  function trialRows(t, metrics) {
    const rows = [['status', t.state], ['kind', t.kind], ['epochs', t.epochs], ['seed', t.seed]];
    for (const m of metrics) rows.push([m, fmt(valueOf(t, m))]);
    for (const [k, v] of Object.entries(t.point || {})) rows.push(['point.' + k, JSON.stringify(v)]);
    for (const [k, v] of Object.entries(t.diff || {})) rows.push(['config ' + k, v === null ? '(not set)' : JSON.stringify(v)]);
    const n = notes(t);
    if (n) rows.push(['notes', n]);
    return rows;
  }
  function tooltipHtml(t, metrics) {
    return '<b>' + escapeText(trialTitle(t)) + '</b><br>' +
      trialRows(t, metrics).slice(0, 14).map((r) => escapeText(r[0]) + ': ' + escapeText(r[1])).join('<br>');
  }

  // The study's sections: front, curves, ranks, progress.
  function drawStudy(study, index, root) {
    const metrics = Object.keys(study.directions).sort();
    const byId = new Map(study.trials.map((t) => [t.id, t]));
    const section = el('section', { class: 'study', id: 'study-' + index });
    root.appendChild(section);
    const states = {};
    for (const t of study.trials) states[t.state] = (states[t.state] || 0) + 1;
    section.appendChild(el('h2', { text: 'Study ' + study.name }));
    if (study.experiment && (study.experiment.name || study.experiment.description))
      section.appendChild(el('p', { class: 'note', text: 'Experiment ' + study.experiment.name +
        (study.experiment.description ? ': ' + study.experiment.description : '') }));
    const hv = study.front ? ', hypervolume ' + fmt(study.front.hypervolume) + ' (' + study.front.objectives.join(', ') +
      '; reference ' + study.front.reference.map(fmt).join(', ') + ')' : '';
    section.appendChild(el('p', { class: 'note', text: study.trials.length + ' trials: ' +
      Object.entries(states).map(([s, n]) => n + ' ' + s).join(', ') + hv +
      (study.front_error ? ' (no front: ' + study.front_error + ')' : '') }));

    // Front panel.
    const [defaultX, defaultY] = study.objectives.split(',').map((o) => o.split(':')[0]);
    const frontPanel = el('div', { class: 'panel' });
    const xSelect = el('select', { 'data-role': 'x' }), ySelect = el('select', { 'data-role': 'y' });
    for (const m of metrics) {
      xSelect.appendChild(el('option', { value: m, text: m + ' (' + study.directions[m] + ')' }));
      ySelect.appendChild(el('option', { value: m, text: m + ' (' + study.directions[m] + ')' }));
    }
    xSelect.value = metrics.includes(defaultX) ? defaultX : metrics[0];
    ySelect.value = metrics.includes(defaultY) ? defaultY : metrics[Math.min(1, metrics.length - 1)];
    const xLog = el('input', { type: 'checkbox' }), yLog = el('input', { type: 'checkbox' });
    xLog.checked = /size|compression/.test(xSelect.value);
    yLog.checked = /size|compression/.test(ySelect.value);
    frontPanel.appendChild(el('h3', { text: 'Pareto front (click a point for its curves and ranks)' }));
    frontPanel.appendChild(el('div', { class: 'controls' }, [
      el('label', { text: 'x' }), xSelect, el('label', {}, [xLog, document.createTextNode(' log')]),
      el('label', { text: 'y' }), ySelect, el('label', {}, [yLog, document.createTextNode(' log')])]));
    const grid = el('div', { class: 'grid' });
    const frontNode = el('div', { class: 'chart', 'data-chart': 'front' });
    const info = el('div', { class: 'trial-info' }, [el('p', { class: 'note', text: 'Hover or click a trial.' })]);
    grid.appendChild(frontNode);
    grid.appendChild(info);
    frontPanel.appendChild(grid);
    const undrawnNote = el('p', { class: 'note' });
    frontPanel.appendChild(undrawnNote);
    section.appendChild(frontPanel);
    const frontChart = chart(frontNode);
    const drawn = { counts: {}, undrawn: {} };

    function showTrial(t) {
      info.replaceChildren(el('b', { text: trialTitle(t) }),
        el('table', {}, trialRows(t, metrics).map((r) => el('tr', {}, [el('td', { text: r[0] }), el('td', { text: String(r[1]) })]))));
    }

    function drawFront() {
      const x = xSelect.value, y = ySelect.value;
      const dirs = [study.directions[x], study.directions[y]];
      const groups = {}, undrawn = {}, complete = [];
      for (const t of study.trials) {
        const vx = valueOf(t, x), vy = valueOf(t, y);
        const usable = vx !== null && vy !== null && (!xLog.checked || vx > 0) && (!yLog.checked || vy > 0);
        if (!usable) { undrawn[t.state] = (undrawn[t.state] || 0) + 1; continue; }
        if (t.state === 'complete') complete.push({ x: vx, y: vy, trial: t });
        else (groups[t.state] = groups[t.state] || []).push([vx, vy, t.id]);
      }
      const front = frontOf(complete, dirs);
      groups.front = [];
      groups.dominated = [];
      for (const p of complete) groups[front.has(p.trial.id) ? 'front' : 'dominated'].push([p.x, p.y, p.trial.id]);
      groups.front.sort((a, b) => a[0] - b[0]);
      const series = [];
      drawn.counts = {};
      for (const [status, style] of Object.entries(STATUS)) {
        const points = groups[status] || [];
        drawn.counts[status] = points.length;
        if (!points.length) continue;
        series.push({
          name: style.label + ' (' + points.length + ')', type: 'scatter', data: points,
          symbol: style.symbol, symbolSize: style.size, large: points.length > 2000,
          itemStyle: { color: style.color, opacity: status === 'dominated' ? 0.7 : 1 },
          z: status === 'front' ? 5 : 3,
        });
        if (status === 'front' && points.length > 1)
          series.push({ name: 'front line', type: 'line', data: points, symbol: 'none', step: 'end',
            lineStyle: { color: style.color, width: 1, type: 'dashed' }, silent: true, tooltip: { show: false } });
      }
      drawn.undrawn = undrawn;
      const undrawnText = Object.entries(undrawn).map(([s, n]) => n + ' ' + s).join(', ');
      undrawnNote.textContent = undrawnText ? 'Not drawn (no ' + x + ' or ' + y + ' recorded' +
        (xLog.checked || yLog.checked ? ', or not positive on a log axis' : '') + '): ' + undrawnText + '.' : '';
      frontChart.setOption({
        animation: false,
        legend: { top: 0, type: 'scroll', data: series.filter((s) => s.type === 'scatter').map((s) => s.name) },
        grid: { left: 70, right: 20, top: 40, bottom: 50 },
        tooltip: { trigger: 'item', confine: true,
          formatter: (p) => tooltipHtml(byId.get(p.data[2]), [x, y]) },
        xAxis: { type: xLog.checked ? 'log' : 'value', name: x + ' (' + dirs[0] + ')', nameLocation: 'middle', nameGap: 28, scale: true },
        yAxis: { type: yLog.checked ? 'log' : 'value', name: y + ' (' + dirs[1] + ')', nameLocation: 'middle', nameGap: 50, scale: true },
        series: series,
      }, { notMerge: true });
    }
    frontChart.on('mouseover', (p) => { if (p.data && byId.has(p.data[2])) showTrial(byId.get(p.data[2])); });
    for (const control of [xSelect, ySelect, xLog, yLog]) control.addEventListener('change', drawFront);
    drawFront();

    // Curves panel: trials overlaid, the stage switch marked.
    const detailed = Object.keys(study.details).map(Number);
    const curvePanel = el('div', { class: 'panel' });
    const curveMetric = el('select', { 'data-role': 'curve-metric' });
    const curveMetrics = new Set();
    for (const d of Object.values(study.details))
      for (const row of d.epochs) for (const [k, v] of Object.entries(row)) if (typeof v === 'number' && !['epoch', 'step'].includes(k)) curveMetrics.add(k);
    const preferred = ['train_loss', 'eval_loss', 'accuracy', 'auc', 'size', 'compression'];
    const curveList = preferred.filter((m) => curveMetrics.has(m)).concat([...curveMetrics].filter((m) => !preferred.includes(m)).sort());
    for (const m of curveList) curveMetric.appendChild(el('option', { value: m, text: m }));
    const chips = el('span', { class: 'chips' });
    curvePanel.appendChild(el('h3', { text: 'Per-epoch curves' }));
    curvePanel.appendChild(el('div', { class: 'controls' }, [el('label', { text: 'metric' }), curveMetric,
      el('label', { text: 'trials (click to remove)' }), chips]));
    const curveNode = el('div', { class: 'chart short', 'data-chart': 'curves' });
    curvePanel.appendChild(curveNode);
    curvePanel.appendChild(el('p', { class: 'note', text: detailed.length + ' of ' + study.trials.length +
      ' trials have their per-epoch record in this page (the front first, then the latest; comera report --max-curves sets how many).' }));
    section.appendChild(curvePanel);
    const curveChart = chart(curveNode);
    const selected = detailed.filter((id) => study.front && byId.get(id).state === 'complete').slice(0, 5);
    if (!selected.length) selected.push(...detailed.slice(0, 3));

    function drawCurves() {
      const metric = curveMetric.value;
      chips.replaceChildren(...selected.map((id) => {
        const b = el('button', { text: trialTitle(byId.get(id)) });
        b.addEventListener('click', () => { selected.splice(selected.indexOf(id), 1); drawCurves(); });
        return b;
      }));
      const series = selected.map((id, i) => {
        const d = study.details[id];
        const colour = LINE_COLOURS[i % LINE_COLOURS.length];
        const points = d.epochs.filter((r) => typeof r[metric] === 'number').map((r) => [r.epoch + 1, r[metric]]);
        const firstStage = d.epochs.length ? d.epochs[0].stage : '';
        const switchRow = d.epochs.find((r) => r.stage !== firstStage);
        return {
          name: trialTitle(byId.get(id)), type: 'line', data: points, showSymbol: points.length < 60,
          lineStyle: { color: colour }, itemStyle: { color: colour },
          markLine: switchRow ? { symbol: 'none', silent: true, label: { formatter: switchRow.stage, color: colour },
            lineStyle: { color: colour, type: 'dotted' }, data: [{ xAxis: switchRow.epoch + 0.5 }] } : undefined,
        };
      });
      curveChart.setOption({
        animation: false, legend: { top: 0, type: 'scroll' }, tooltip: { trigger: 'axis' },
        grid: { left: 70, right: 20, top: 40, bottom: 40 },
        xAxis: { type: 'value', name: 'epoch', nameLocation: 'middle', nameGap: 25, minInterval: 1, min: 'dataMin' },
        yAxis: { type: /size|compression/.test(metric) ? 'log' : 'value', name: metric, scale: true },
        series: series,
      }, { notMerge: true });
    }
    curveMetric.addEventListener('change', drawCurves);

    // Ranks panel: one trial's surviving rank per bond and epoch.
    const rankPanel = el('div', { class: 'panel' });
    const rankTrial = el('select', { 'data-role': 'rank-trial' });
    // The trial whose ranks changed most is shown first.
    const rankChange = (d) => {
      const epochs = Object.keys(d.ranks).map(Number).sort((a, b) => a - b);
      const total = (e) => d.ranks[e].reduce((sum, l) => sum + l.ranks.reduce((a, b) => a + b, 0), 0);
      return epochs.length ? total(epochs[0]) - total(epochs[epochs.length - 1]) + epochs.length * 1e-6 : -1;
    };
    const withRanks = detailed.filter((id) => Object.keys(study.details[id].ranks).length);
    withRanks.sort((a, b) => rankChange(study.details[b]) - rankChange(study.details[a]));
    for (const id of withRanks) rankTrial.appendChild(el('option', { value: id, text: trialTitle(byId.get(id)) }));
    rankPanel.appendChild(el('h3', { text: 'Rank trajectories: each layer\'s surviving rank per bond over epochs' }));
    rankPanel.appendChild(el('div', { class: 'controls' }, [el('label', { text: 'trial' }), rankTrial]));
    const rankNode = el('div', { class: 'chart', 'data-chart': 'ranks' });
    rankPanel.appendChild(rankNode);
    const rankNote = el('p', { class: 'note' });
    rankPanel.appendChild(rankNote);
    section.appendChild(rankPanel);
    const rankChart = chart(rankNode);
    const rankCells = { count: 0 };

    function drawRanks() {
      const d = study.details[rankTrial.value];
      if (!d) { rankNote.textContent = 'No trial with recorded ranks in this page.'; rankNode.style.display = 'none'; return; }
      const epochs = Object.keys(d.ranks).map(Number).sort((a, b) => a - b);
      const rows = [], cells = [];
      const layers = [...new Set(epochs.flatMap((e) => d.ranks[e].map((l) => l.layer)))].sort();
      for (const layer of layers) {
        const first = d.ranks[epochs[0]].find((l) => l.layer === layer);
        const bonds = first ? first.ranks.length - 2 : 0;
        for (let b = 1; b <= bonds; ++b) {
          const row = rows.length;
          rows.push(layer + ' r' + b);
          epochs.forEach((e, col) => {
            const entry = d.ranks[e].find((l) => l.layer === layer);
            if (entry) cells.push([col, row, entry.ranks[b], first.ranks[b]]);
          });
        }
      }
      rankCells.count = cells.length;
      rankNode.style.height = Math.max(260, 60 + rows.length * 14) + 'px';
      rankChart.resize();
      const max = Math.max(1, ...cells.map((c) => c[2]));
      rankChart.setOption({
        animation: false,
        tooltip: { formatter: (p) => escapeText(rows[p.data[1]]) + ', epoch ' + (epochs[p.data[0]] + 1) +
          ': rank ' + p.data[2] + ' of ' + p.data[3] + ' at first' },
        grid: { left: 230, right: 80, top: 10, bottom: 40 },
        xAxis: { type: 'category', data: epochs.map((e) => e + 1), name: 'epoch', nameLocation: 'middle', nameGap: 25 },
        yAxis: { type: 'category', data: rows, inverse: true, axisLabel: { fontSize: 10, interval: 0 } },
        visualMap: { min: 0, max: max, calculable: true, orient: 'vertical', right: 0, top: 'center',
          inRange: { color: ['#ffffff', '#9ecae1', '#08306b'] } },
        series: [{ type: 'heatmap', data: cells, progressive: 0 }],
      }, { notMerge: true });
      rankNote.textContent = d.sampled_epochs ? 'Epochs sampled: ' + d.sampled_epochs.shown + ' of ' +
        d.sampled_epochs.recorded + ' shown.' : '';
    }
    rankTrial.addEventListener('change', drawRanks);

    frontChart.on('click', (p) => {
      if (!p.data || !byId.has(p.data[2])) return;
      const id = p.data[2];
      showTrial(byId.get(id));
      if (!study.details[id]) {
        info.appendChild(el('p', { class: 'note', text: 'This trial\'s per-epoch record is not in this page.' }));
        return;
      }
      if (!selected.includes(id)) selected.push(id);
      drawCurves();
      if ([...rankTrial.options].some((o) => Number(o.value) === id)) { rankTrial.value = String(id); drawRanks(); }
    });
    if (curveList.length) drawCurves(); else curvePanel.style.display = 'none';
    drawRanks();

    // Progress: hypervolume against complete trials (the others are never on a front).
    if (study.hypervolume_progress.length) {
      const progressPanel = el('div', { class: 'panel' });
      progressPanel.appendChild(el('h3', { text: 'Hypervolume against complete trials, in the order they ended (' +
        study.front.objectives.join(', ') + ')' }));
      const node = el('div', { class: 'chart short', 'data-chart': 'progress' });
      progressPanel.appendChild(node);
      section.appendChild(progressPanel);
      chart(node).setOption({
        animation: false, tooltip: { trigger: 'axis' }, grid: { left: 80, right: 20, top: 20, bottom: 40 },
        xAxis: { type: 'value', name: 'complete trials', nameLocation: 'middle', nameGap: 25, minInterval: 1 },
        yAxis: { type: 'value', name: 'hypervolume', scale: true },
        series: [{ type: 'line', step: 'end', data: study.hypervolume_progress.map((p) => [p.trials, num(p.hypervolume)]) }],
      });
    }
    return {
      name: study.name, frontChart, drawn, xSelect, ySelect, drawFront, rankCells,
      curveSeries: () => ((curveChart.getOption() || {}).series || []).length,
    };
  }

  function table(columns, rows) {
    return el('table', { class: 'data' }, [
      el('thead', {}, [el('tr', {}, columns.map((c) => el('th', { text: c })))]),
      el('tbody', {}, rows.map((r) => el('tr', {}, r.map((v) => el('td', { text: fmt(v), class: typeof v === 'number' ? 'num' : '' })))))]);
  }

  document.title = document.title || 'comera report';
  document.getElementById('title').textContent = document.title;
  document.getElementById('summary').textContent = data.database + ': ' + data.studies.length + ' stud' +
    (data.studies.length === 1 ? 'y' : 'ies');
  const nav = document.getElementById('studies');
  data.studies.forEach((s, i) => nav.appendChild(el('a', { href: '#study-' + i, text: s.name })));
  const root = document.getElementById('report');
  const drawnStudies = data.studies.map((s, i) => drawStudy(s, i, root));

  const envPanel = el('div', { class: 'panel' }, [el('h3', { text: 'Where the trials ran' })]);
  envPanel.appendChild(data.environments.length ? table(['commit', 'dirty', 'LibTorch', 'device (CPU and BLAS kernels, or GPU)', 'threads', 'host', 'trials'],
    data.environments.map((e) => [e.git_commit, e.git_dirty ? 'yes' : 'no', e.torch_version, e.device, e.threads, e.host, e.trials]))
    : el('p', { class: 'note', text: 'No trial has run yet.' }));
  root.appendChild(envPanel);
  const kernelPanel = el('div', { class: 'panel' }, [el('h3', { text: 'Contraction orders chosen by the tuner' })]);
  kernelPanel.appendChild(data.kernels.length ? table(['layer modes', 'ranks', 'tokens', 'dtype', 'device', 'threads', 'order', 'median ms', 'repeats'],
    data.kernels.map((k) => [k.layer_modes, k.ranks, k.token_bucket, k.dtype, k.device, k.threads, k.choice, k.median_ms, k.repeats]))
    : el('p', { class: 'note', text: 'None measured in this database (contraction "merged" needs none).' }));
  root.appendChild(kernelPanel);
  const scriptMs = performance.now() - started;
  const loadedMs = performance.now();

  // report.html#selftest: the page checks itself and writes what it found into #selftest, for
  // the tests in a headless browser (counts drawn, a redraw, painted pixels, errors), with the
  // time from navigation to the page drawn (loaded_ms) and of this script alone (script_ms).
  if (location.hash === '#selftest') {
    const painted = (c) => {
      c.getZr().refreshImmediately();
      const canvas = c.getDom().querySelector('canvas');
      const copy = el('canvas', { width: canvas.width, height: canvas.height });
      const context = copy.getContext('2d', { willReadFrequently: true });
      context.drawImage(canvas, 0, 0);
      const pixels = context.getImageData(0, 0, copy.width, copy.height).data;
      let n = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 3] > 0 && (pixels[i] < 240 || pixels[i + 1] < 240 || pixels[i + 2] < 240)) ++n;
      return n;
    };
    const result = { script_ms: scriptMs, loaded_ms: loadedMs, studies: [] };
    for (const s of drawnStudies) {
      const before = { x: s.xSelect.value, y: s.ySelect.value, counts: Object.assign({}, s.drawn.counts),
        undrawn: Object.assign({}, s.drawn.undrawn), painted: painted(s.frontChart),
        y_axis: s.frontChart.getOption().yAxis[0].name };
      const other = [...s.ySelect.options].map((o) => o.value).find((m) => m !== s.ySelect.value && m !== s.xSelect.value);
      let after = null;
      if (other) {
        s.ySelect.value = other;
        s.ySelect.dispatchEvent(new Event('change'));
        after = { y: other, counts: Object.assign({}, s.drawn.counts), undrawn: Object.assign({}, s.drawn.undrawn),
          painted: painted(s.frontChart), y_axis: s.frontChart.getOption().yAxis[0].name };
      }
      result.studies.push({ name: s.name, before, after, curve_series: s.curveSeries(), rank_cells: s.rankCells.count });
    }
    result.errors = window.comeraErrors;
    const out = document.getElementById('selftest');
    out.textContent = JSON.stringify(result);
    out.hidden = false;
  }
})();
