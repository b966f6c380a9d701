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
