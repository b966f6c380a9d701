// One tool: Details, Code, Test, History (versions, diff, rollback) and Metrics tabs, and the
// enable / disable / approve / reject / delete actions.

import { ApiError, del, get, post, seg } from '../api.js';
import { append, choiceDialog, confirmDialog, field, h, replace, table, tabs, toast } from '../dom.js';
import { diffLines, hunks } from '../diff.js';
import { codeBlock } from '../highlight.js';
import { trendChart } from '../chart.js';
import { describe, schemaForm } from '../schemaform.js';
import { KIND_LABELS, ago, creatorLabel, dateTime, json, ms, number, percent, statusLabel } from '../format.js';

const TABS = ['details', 'code', 'test', 'history', 'metrics'];

export function language(kind) {
  if (kind === 'http') return 'yaml';
  if (kind === 'command') return 'json';
  return 'js';
}

/** The result of an execution: status, duration, output, console, error. */
export function executionResult(exec) {
  const meta = exec.metadata || {};
  const consoleLines = Array.isArray(meta.console) ? meta.console : [];
  return h('section', { class: `result ${exec.isError ? 'is-error' : 'is-ok'}`, 'aria-label': 'Result' },
    h('p', { class: 'result-head' },
      h('strong', { text: exec.isError ? 'Failed' : 'Succeeded' }),
      ` in ${ms(meta.durationMs)}`,
      meta.errorKind ? h('span', { class: 'pill rejected', text: meta.errorKind }) : null,
      exec.testMode ? h('span', { class: 'pill', text: 'dry run' }) : null),
    h('h3', { text: exec.isError ? 'Error' : 'Output' }),
    h('pre', { class: 'code output', tabindex: '0', text: typeof exec.content === 'string' ? exec.content : json(exec.content) }),
    consoleLines.length ? [
      h('h3', { text: 'Console' }),
      h('pre', { class: 'code console', tabindex: '0', text: consoleLines.map((l) => `[${l.level}] ${l.message}`).join('\n') }),
    ] : null);
}

export async function render(main, ctx, route) {
  const id = route.parts[1];
  let tool = await get(`/custom-tools/${seg(id)}`);
  let tab = TABS.includes(route.params.get('tab')) ? route.params.get('tab') : 'details';
  const head = h('div', { class: 'page-head' });
  const actions = h('div', { class: 'actions' });
  const body = h('div');
  replace(main, h('p', {}, h('a', { href: '#/tools', text: '← All tools' })), head, actions, body);

  function renderHead() {
    replace(head,
      h('h1', { text: tool.name }),
      h('span', { class: `pill status ${tool.status}`, text: statusLabel(tool.status) }),
      h('span', { class: `pill creator ${tool.createdBy === 'llm' ? 'ai' : 'user'}`, text: creatorLabel(tool.createdBy) }),
      h('span', { class: 'muted', text: `version ${tool.version} · revision ${tool.revision}` }));
    const list = [];
    if (ctx.can('tools:write')) list.push(h('a', { class: 'btn', href: `#/tools/${seg(tool.id)}/edit`, text: 'Edit' }));
    if (ctx.can('tools:write') && tool.status === 'active') list.push(h('button', { type: 'button', class: 'btn', text: 'Disable', onclick: () => act('disable') }));
    if (ctx.can('tools:write') && tool.status === 'disabled') list.push(h('button', { type: 'button', class: 'btn', text: 'Enable', onclick: () => act('enable') }));
    if (ctx.canDecide() && tool.status === 'pending_approval') {
      list.push(h('button', { type: 'button', class: 'btn approve', text: 'Approve', onclick: () => act('approve') }));
      list.push(h('button', { type: 'button', class: 'btn danger', text: 'Reject', onclick: () => act('reject') }));
    }
    if (ctx.can('tools:write') && moveTargets().length) list.push(h('button', { type: 'button', class: 'btn', text: 'Move to…', onclick: move }));
    if (ctx.can('tools:write')) list.push(h('button', { type: 'button', class: 'btn danger', text: 'Delete', onclick: remove }));
    replace(actions, list);
  }

  /** Where the person may move the tool: their own scope, or an organisation they edit in. */
  function moveTargets() {
    if (ctx.session.agentId) return [];
    const current = ctx.session.organization;
    const targets = current ? [{ value: 'me', label: 'Personal (your own)' }] : [];
    for (const o of ctx.organizations) {
      if (['editor', 'admin', 'owner'].includes(o.role) && (!current || current.id !== o.id)) {
        targets.push({ value: o.name, label: `${o.displayName || o.name} (${o.role})` });
      }
    }
    return targets;
  }

  async function move() {
    const here = ctx.session.organization;
    const to = await choiceDialog(`Move ${tool.name}?`,
      `It leaves ${here ? `${here.displayName || here.name}` : 'your own tools'} with its versions; its past executions stay here as history.`,
      'Move to', moveTargets(), 'Move tool');
    if (!to) return;
    try {
      await post(`/custom-tools/${seg(tool.id)}/move`, { to, expectedRevision: tool.revision });
      const target = moveTargets().find((t) => t.value === to);
      toast(`${tool.name} moved to ${target ? target.label : to}.`);
      ctx.navigate('#/tools');
    } catch (e) {
      toast(explain(e), 'error');
    }
  }

  async function act(action) {
    try {
      const body = action === 'enable' || action === 'disable' ? { expectedRevision: tool.revision } : {};
      tool = await post(`/custom-tools/${seg(tool.id)}/${action}`, body);
      toast(`${tool.name}: ${statusLabel(tool.status)}.`);
      renderHead();
      tabsView.show(tab);
      ctx.pollNow();
    } catch (e) {
      toast(explain(e), 'error');
    }
  }

  async function remove() {
    const ok = await confirmDialog(`Delete ${tool.name}?`, 'The tool and all its versions are deleted. This cannot be undone.', 'Delete tool');
    if (!ok) return;
    try {
      await del(`/custom-tools/${seg(tool.id)}`, { expectedRevision: tool.revision });
      toast(`${tool.name} deleted.`);
      ctx.navigate('#/tools');
    } catch (e) {
      toast(explain(e), 'error');
    }
  }

  const tabsView = tabs('Tool', [
    { id: 'details', label: 'Details', render: details },
    { id: 'code', label: 'Code', render: (p) => p.append(codeBlock(tool.code, language(tool.kind), `${tool.name} code`)) },
    { id: 'test', label: 'Test', render: test },
    { id: 'history', label: 'History', render: history },
    { id: 'metrics', label: 'Metrics', render: metrics },
  ], tab, (t) => { tab = t; });

  function details(p) {
    const dl = (pairs) => h('dl', { class: 'details' }, pairs.map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)]));
    p.append(
      h('p', { class: 'description', text: tool.description }),
      dl([
        ['Kind', KIND_LABELS[tool.kind] || tool.kind],
        ['Creator', creatorLabel(tool.createdBy)],
        ['Category', tool.category || '—'],
        ['Version', String(tool.version)],
        ['Revision', String(tool.revision)],
        ['Usage', `${number(tool.usageCount)} calls`],
        ['Last used', tool.lastUsedAt ? `${dateTime(tool.lastUsedAt)} (${ago(tool.lastUsedAt)})` : 'never'],
        ['Permissions', tool.permissions.length ? tool.permissions.join(', ') : 'none'],
        ['Requires approval', tool.requiresApproval ? 'yes: each call waits for a person' : 'no'],
        ['Config Center services', requiredConfig(tool)],
        ['Created', dateTime(tool.createdAt)],
        ['Updated', dateTime(tool.updatedAt)],
      ]),
      h('h2', { text: 'Parameters' }),
      describe(tool.parameters),
      h('details', {}, h('summary', { text: 'Parameter schema (JSON)' }), codeBlock(json(tool.parameters), 'json', 'Parameter schema')));
  }

  function test(p) {
    const form = schemaForm(tool.parameters);
    const out = h('div', { 'aria-live': 'polite' });
    const run = h('button', { type: 'submit', class: 'btn primary', text: 'Run' });
    const f = h('form', { class: 'test-form', 'aria-label': 'Test run' }, form.el, run);
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      let args;
      try { args = form.read(); } catch (err) { replace(out, h('p', { class: 'error', role: 'alert', text: err.message })); return; }
      run.disabled = true;
      replace(out, h('p', { class: 'loading', text: 'Running…' }));
      try {
        const exec = tool.status === 'active'
          ? await post(`/custom-tools/${seg(tool.id)}/execute`, { arguments: args })
          : await post('/custom-tools/test', {
            name: tool.name, kind: tool.kind, description: tool.description, parameters: tool.parameters,
            code: tool.code, permissions: tool.permissions, testArgs: args,
          });
        replace(out, executionResult(exec));
      } catch (err) {
        replace(out, h('p', { class: 'error', role: 'alert', text: explain(err) }),
          err.details ? h('pre', { class: 'code', text: json(err.details) }) : null);
      } finally {
        run.disabled = false;
      }
    });
    // dom.js's append skips a missing child; Element.append would print "null".
    append(p, [
      tool.status === 'active' ? null : h('p', { class: 'muted', text: 'The tool is not active: Run makes a dry run of its definition (nothing is recorded).' }),
      f, out]);
  }

  async function history(p) {
    p.append(h('p', { class: 'loading', text: 'Loading versions…' }));
    const { versions } = await get(`/custom-tools/${seg(tool.id)}/versions`);
    const canWrite = ctx.can('tools:write');
    const fromSel = h('select', {}, versions.map((v, i) => h('option', { value: v.version, text: `Version ${v.version}`, selected: i === 1 || versions.length === 1 })));
    const toSel = h('select', {}, versions.map((v, i) => h('option', { value: v.version, text: `Version ${v.version}`, selected: i === 0 })));
    const diffOut = h('div', { 'aria-live': 'polite' });
    const showDiff = () => {
      const a = versions.find((v) => String(v.version) === fromSel.value);
      const b = versions.find((v) => String(v.version) === toSel.value);
      if (!a || !b) return;
      const text = (v) => `// description\n${v.description}\n// parameters\n${json(v.parameters)}\n// permissions\n${v.permissions.join(', ')}\n// code\n${v.code}`;
      const lines = diffLines(text(a), text(b));
      const added = lines.filter((l) => l.op === '+').length;
      const removed = lines.filter((l) => l.op === '-').length;
      // Only the changes, with three lines of context, each hunk named by its part
      // (description, parameters, permissions, code); what did not change is counted, not shown.
      const parts = hunks(lines, 3, (t) => (/^\/\/ (description|parameters|permissions|code)$/.test(t) ? t.slice(3) : null));
      const skip = (n) => (n > 0 ? h('span', { class: 'skip-lines' }, `⋯ ${n} unchanged line${n === 1 ? '' : 's'}\n`) : null);
      const num = (v) => (v ? String(v) : '').padStart(4, ' ');
      replace(diffOut,
        h('p', { text: added || removed ? `Version ${a.version} → version ${b.version}: ${added} line${added === 1 ? '' : 's'} added, ${removed} removed, in ${parts.hunks.length} place${parts.hunks.length === 1 ? '' : 's'}.` : 'No differences.' }),
        added || removed ? h('pre', { class: 'code diff', tabindex: '0', 'aria-label': `Diff of version ${a.version} and version ${b.version}` },
          parts.hunks.map((hk) => [
            skip(hk.skipped),
            h('span', { class: 'hunk' }, `${hk.header}\n`),
            hk.lines.map((l) => h('span', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'same' },
              h('span', { class: 'ln', 'aria-hidden': 'true' }, `${num(l.old)} ${num(l.new)} `), `${l.op} ${l.text}\n`)),
          ]),
          skip(parts.after)) : null);
    };
    replace(p,
      h('h2', { text: 'Versions' }),
      table('Versions', [
        { label: 'Version', cell: (v) => `${v.version}${v.version === tool.version ? ' (current)' : ''}` },
        { label: 'Saved', cell: (v) => dateTime(v.createdAt) },
        { label: 'Description', wrap: true, cell: (v) => v.description },
        { label: 'Action', cell: (v) => (canWrite && v.version !== tool.version
          ? h('button', { type: 'button', class: 'btn small', text: `Roll back to version ${v.version}`, onclick: () => rollback(v.version) })
          : '—') },
      ], versions),
      h('h2', { text: 'Compare versions' }),
      h('div', { class: 'inline-fields' }, field('From version', fromSel).wrap, field('To version', toSel).wrap,
        h('button', { type: 'button', class: 'btn', text: 'Show diff', onclick: showDiff })),
      diffOut);
  }

  async function rollback(version) {
    const ok = await confirmDialog(`Roll back ${tool.name} to version ${version}?`, `Version ${version}'s code and parameters become current as a new version.`, 'Roll back', false);
    if (!ok) return;
    try {
      tool = await post(`/custom-tools/${seg(tool.id)}/rollback`, { version, expectedRevision: tool.revision });
      toast(`${tool.name} rolled back to version ${version}; now version ${tool.version}.`);
      renderHead();
      tabsView.show('history');
      // The button pressed is gone with the old list: the keyboard goes on from the tab.
      const tab = document.getElementById('tab-history');
      if (tab) tab.focus();
    } catch (e) {
      toast(explain(e), 'error');
    }
  }

  async function metrics(p) {
    p.append(h('p', { class: 'loading', text: 'Loading metrics…' }));
    const m = await get(`/custom-tools/${seg(tool.id)}/metrics?period=30d`);
    const stat = (label, value) => h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: value }), h('span', { class: 'stat-label', text: label }));
    replace(p,
      h('section', { class: 'stats', 'aria-label': 'Last 30 days' },
        stat('Executions', number(m.totalExecutions)),
        stat('Success rate', percent(m.successRate)),
        stat('p95', ms(m.p95ExecutionTimeMs)),
        stat('Average', ms(m.avgExecutionTimeMs)),
        stat('Refused', number(m.refused))),
      h('h2', { text: 'Daily trend (30 days)' }),
      trendChart(m.usageTrend || [], 'Daily executions'),
      h('h2', { text: 'Errors' }),
      table('Error breakdown', [
        { label: 'Error', cell: (r) => r[0] },
        { label: 'Count', cell: (r) => number(r[1]) },
      ], Object.entries(m.errorBreakdown || {}), 'No errors in the period.'));
  }

  renderHead();
  replace(body, tabsView.el);

  return {
    async refresh(what) {
      if (!what.tools) return;
      try {
        const fresh = await get(`/custom-tools/${seg(tool.id)}`);
        if (fresh.revision !== tool.revision || fresh.usageCount !== tool.usageCount) {
          tool = fresh;
          renderHead();
          if (tab === 'details') tabsView.show('details');
        }
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) {
          replace(body, h('p', { class: 'error', role: 'alert', text: 'This tool was deleted elsewhere.' }));
          replace(actions);
        }
      }
    },
  };
}

/**
 * The Config Center services a tool declares, each with its state: set, or what it still lacks
 * (the server's `missingConfig`, `service (fields)`), with the way to the Config Center.
 */
export function requiredConfig(tool) {
  const declared = tool.metadata && Array.isArray(tool.metadata.requiredApiKeys)
    ? tool.metadata.requiredApiKeys.filter((k) => k && typeof k === 'object' && k.name) : [];
  const missing = new Map((tool.missingConfig || []).map((m) => {
    const at = m.indexOf(' (');
    return at > 0 ? [m.slice(0, at), m.slice(at + 2, -1)] : [m, ''];
  }));
  if (!declared.length && !missing.size) return 'none declared';
  const names = [...new Set([...declared.map((k) => k.name), ...missing.keys()])];
  return h('ul', { class: 'config-needs' }, names.map((name) => (missing.has(name)
    ? h('li', { class: 'missing' }, h('strong', { text: name }), `: missing ${missing.get(name) || 'a value'} — `,
      h('a', { href: '#/config', text: `set it in the Config Center` }), '; calls fail until it is set.')
    : h('li', {}, h('strong', { text: name }), ': set'))));
}

/** A refusal as a sentence for people. */
export function explain(e) {
  if (!(e instanceof ApiError)) return String(e && e.message ? e.message : e);
  if (e.code === 'revision_conflict') {
    const d = e.details || {};
    return `Someone else changed this tool meanwhile (you saw revision ${d.expectedRevision}, it is now at revision ${d.currentRevision}). Reload to see their change, then try again.`;
  }
  return e.message;
}
