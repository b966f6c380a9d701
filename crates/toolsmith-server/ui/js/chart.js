// A bar chart of a daily trend as inline SVG (no styles, no scripts): executions per day with
// the failed part in another colour, and a text summary for screen readers.

import { h } from './dom.js';

export function trendChart(days, label) {
  const width = 640;
  const height = 160;
  const pad = 24;
  const max = Math.max(1, ...days.map((d) => d.executions));
  const bar = days.length ? (width - pad * 2) / days.length : 0;
  const total = days.reduce((s, d) => s + d.executions, 0);
  const errors = days.reduce((s, d) => s + d.errors, 0);
  const svg = h('svg:svg', {
    viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart',
    'aria-label': `${label}: ${total} executions over ${days.length} days, ${errors} failed`,
  });
  svg.append(h('svg:line', { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: 'axis' }));
  days.forEach((d, i) => {
    const x = pad + i * bar + 1;
    const w = Math.max(1, bar - 2);
    const full = ((height - pad * 2) * d.executions) / max;
    const bad = ((height - pad * 2) * d.errors) / max;
    const ok = h('svg:rect', { x, y: height - pad - full, width: w, height: Math.max(0, full - bad), class: 'bar-ok' });
    ok.append(h('svg:title', { text: `${d.date}: ${d.executions} executions, ${d.errors} failed` }));
    svg.append(ok);
    if (bad > 0) svg.append(h('svg:rect', { x, y: height - pad - bad, width: w, height: bad, class: 'bar-error' }));
  });
  if (days.length) {
    svg.append(h('svg:text', { x: pad, y: height - 6, class: 'chart-label', text: days[0].date }));
    svg.append(h('svg:text', { x: width - pad, y: height - 6, 'text-anchor': 'end', class: 'chart-label', text: days[days.length - 1].date }));
  }
  svg.append(h('svg:text', { x: pad, y: 14, class: 'chart-label', text: `max ${max}/day` }));
  return svg;
}

/**
 * Lines over time as inline SVG: `series` [{name, cls, values: [number|null]}] over `labels`
 * (one per point), with the first and last label and the maximum written out, and a text summary.
 */
export function lineChart(labels, series, label, unit) {
  const width = 640;
  const height = 160;
  const pad = 24;
  const all = series.flatMap((s) => s.values).filter((v) => typeof v === 'number');
  const max = Math.max(1, ...all);
  const step = labels.length > 1 ? (width - pad * 2) / (labels.length - 1) : 0;
  const y = (v) => height - pad - ((height - pad * 2) * v) / max;
  const summary = series.map((s) => {
    const vs = s.values.filter((v) => typeof v === 'number');
    return `${s.name} ${vs.length ? `up to ${Math.round(Math.max(...vs))} ${unit}` : 'none'}`;
  }).join(', ');
  const svg = h('svg:svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart', 'aria-label': `${label}: ${summary}` });
  svg.append(h('svg:line', { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: 'axis' }));
  for (const s of series) {
    let d = '';
    let pen = false;
    s.values.forEach((v, i) => {
      if (typeof v !== 'number') { pen = false; return; }
      d += `${pen ? 'L' : 'M'}${(pad + i * step).toFixed(1)},${y(v).toFixed(1)} `;
      pen = true;
    });
    const path = h('svg:path', { d: d.trim() || 'M0,0', class: `line ${s.cls}` });
    path.append(h('svg:title', { text: s.name }));
    svg.append(path);
    s.values.forEach((v, i) => {
      if (typeof v !== 'number') return;
      const dot = h('svg:circle', { cx: (pad + i * step).toFixed(1), cy: y(v).toFixed(1), r: 2.5, class: `dot ${s.cls}` });
      dot.append(h('svg:title', { text: `${labels[i]}: ${s.name} ${Math.round(v * 10) / 10} ${unit}` }));
      svg.append(dot);
    });
  }
  if (labels.length) {
    svg.append(h('svg:text', { x: pad, y: height - 6, class: 'chart-label', text: labels[0] }));
    svg.append(h('svg:text', { x: width - pad, y: height - 6, 'text-anchor': 'end', class: 'chart-label', text: labels[labels.length - 1] }));
  }
  svg.append(h('svg:text', { x: pad, y: 14, class: 'chart-label', text: `max ${Math.round(max)} ${unit}` }));
  return svg;
}

/** Horizontal bars of calls per row (errors in the other colour): rows [{name, calls, errors}]. */
export function barChart(rows, label) {
  const width = 640;
  const bar = 18;
  const gap = 6;
  const left = 170;
  const height = Math.max(1, rows.length) * (bar + gap) + gap;
  const max = Math.max(1, ...rows.map((r) => r.calls));
  const svg = h('svg:svg', {
    viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart bars',
    'aria-label': `${label}: ${rows.map((r) => `${r.name} ${r.calls} calls, ${r.errors} errors`).join('; ') || 'no calls'}`,
  });
  rows.forEach((r, i) => {
    const top = gap + i * (bar + gap);
    const full = ((width - left - 60) * r.calls) / max;
    const bad = ((width - left - 60) * r.errors) / max;
    const name = r.name.length > 24 ? `${r.name.slice(0, 23)}…` : r.name;
    svg.append(h('svg:text', { x: left - 6, y: top + bar - 5, 'text-anchor': 'end', class: 'chart-label', text: name }));
    const ok = h('svg:rect', { x: left, y: top, width: Math.max(1, full - bad), height: bar, class: 'bar-ok' });
    ok.append(h('svg:title', { text: `${r.name}: ${r.calls} calls, ${r.errors} errors` }));
    svg.append(ok);
    if (bad > 0) svg.append(h('svg:rect', { x: left + full - bad, y: top, width: bad, height: bar, class: 'bar-error' }));
    svg.append(h('svg:text', { x: left + full + 4, y: top + bar - 5, class: 'chart-label', text: String(r.calls) }));
  });
  return svg;
}
