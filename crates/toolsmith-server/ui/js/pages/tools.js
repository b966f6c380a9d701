// The tools page: the caller's custom tools as cards (grid or list), status filters, search,
// the stats bar, approve/reject on pending cards; the built-in and bridged tools apart (searched
// too, each opening its page: pages/catalog.js).
// Filtering runs over the data in memory; at most PAGE cards more are built per "Show more".

import { allTools, get, post, seg } from '../api.js';
import { h, replace, toast } from '../dom.js';
import { KIND_LABELS, creatorLabel, number, statusLabel } from '../format.js';

/** Cards built at a time; "Show more" adds as many again. */
const PAGE = 100;

const FILTERS = [
  ['all', 'All'],
  ['active', 'Active'],
  ['disabled', 'Disabled'],
  ['pending_approval', 'Pending Approval'],
  ['rejected', 'Rejected'],
];

export async function render(main, ctx, route) {
  const view = {
    status: FILTERS.some(([k]) => k === route.params.get('status')) ? route.params.get('status') : 'all',
    search: '',
    limit: PAGE,
    layout: localStorage.getItem('toolsmith.layout') === 'list' ? 'list' : 'grid',
  };
  const [list, stats, catalogue] = await Promise.all([allTools(), get('/custom-tools/stats'), get('/tools')]);
  performance.mark('toolsmith:tools-fetched');

  const statsBar = h('section', { class: 'stats', 'aria-label': 'Statistics' });
  const listEl = h('ul', { class: `cards ${view.layout}`, 'aria-label': 'Custom tools' });
  const countEl = h('p', { class: 'result-count', role: 'status', 'aria-live': 'polite' });
  const builtinEl = h('section', { class: 'builtins', 'aria-labelledby': 'builtins-title' });
  let tools = [];
  const built = new Map();
  const more = h('button', { type: 'button', class: 'btn', hidden: true });
  more.addEventListener('click', () => { view.limit += PAGE; applyFilter(); });

  const search = h('input', { type: 'search', id: 'tool-search', placeholder: 'Name, description or category', autocomplete: 'off' });
  search.addEventListener('input', () => { view.search = search.value.trim().toLowerCase(); view.limit = PAGE; applyFilter(); filterCatalogue(); });

  const filterButtons = FILTERS.map(([key, label]) => {
    const b = h('button', { type: 'button', class: 'chip', 'aria-pressed': String(view.status === key), text: label });
    b.addEventListener('click', () => {
      view.status = key;
      view.limit = PAGE;
      for (const other of filterButtons) other.setAttribute('aria-pressed', String(other === b));
      applyFilter();
    });
    return b;
  });

  const layoutButtons = [['grid', 'Grid view'], ['list', 'List view']].map(([key, label]) => {
    const b = h('button', { type: 'button', class: 'chip', 'aria-pressed': String(view.layout === key), text: label });
    b.addEventListener('click', () => {
      view.layout = key;
      localStorage.setItem('toolsmith.layout', key);
      listEl.className = `cards ${key}`;
      for (const other of layoutButtons) other.setAttribute('aria-pressed', String(other === b));
    });
    return b;
  });

  const newButton = ctx.can('tools:write') ? h('a', { class: 'btn primary', href: '#/tools/new', text: 'New tool' }) : null;

  replace(main,
    h('div', { class: 'page-head' }, h('h1', { text: 'Tools' }), newButton),
    statsBar,
    h('div', { class: 'toolbar' },
      h('div', { class: 'search' }, h('label', { for: 'tool-search', text: 'Search tools' }), search),
      h('div', { role: 'group', 'aria-label': 'Status filter', class: 'chips' }, filterButtons),
      h('div', { role: 'group', 'aria-label': 'Layout', class: 'chips' }, layoutButtons)),
    countEl,
    listEl,
    more,
    builtinEl);

  function renderStats(s) {
    const item = (label, value, cls) => h('div', { class: `stat ${cls || ''}` }, h('span', { class: 'stat-value', text: number(value) }), h('span', { class: 'stat-label', text: label }));
    replace(statsBar,
      item('Active', s.active, 'active'),
      item('Disabled', s.disabled, 'disabled'),
      item('Pending', s.pendingApproval, 'pending_approval'),
      item('Rejected', s.rejected, 'rejected'),
      item('Total usage', s.totalUsage));
  }

  function card(t) {
    const actions = [];
    if (t.status === 'pending_approval' && ctx.canDecide()) {
      actions.push(
        h('button', { type: 'button', class: 'btn small approve', 'aria-label': `Approve ${t.name}`, text: 'Approve', onclick: () => decide(t, 'approve') }),
        h('button', { type: 'button', class: 'btn small danger', 'aria-label': `Reject ${t.name}`, text: 'Reject', onclick: () => decide(t, 'reject') }));
    }
    const li = h('li', { class: `card tool-card status-${t.status}` },
      h('div', { class: 'card-head' },
        h('h2', { class: 'tool-name' }, h('a', { href: `#/tools/${seg(t.id)}`, text: t.name })),
        h('span', { class: `pill status ${t.status}`, text: statusLabel(t.status) })),
      h('p', { class: 'description', text: t.description }),
      h('div', { class: 'meta' },
        h('span', { class: `pill creator ${t.createdBy === 'llm' ? 'ai' : 'user'}`, text: creatorLabel(t.createdBy) }),
        h('span', { class: 'pill', text: KIND_LABELS[t.kind] || t.kind }),
        t.category ? h('span', { class: 'pill', text: t.category }) : null,
        h('span', { class: 'muted', text: `v${t.version}` }),
        h('span', { class: 'muted', text: `${number(t.usageCount)} ${t.usageCount === 1 ? 'use' : 'uses'}` })),
      actions.length ? h('div', { class: 'card-actions' }, actions) : null);
    return li;
  }

  async function decide(t, action) {
    try {
      await post(`/custom-tools/${seg(t.id)}/${action}`);
      toast(`${t.name} ${action === 'approve' ? 'approved' : 'rejected'}.`);
      await refresh({ tools: true });
      ctx.pollNow();
    } catch (e) {
      toast(`Could not ${action} ${t.name}: ${e.message}`, 'error');
    }
    // The card was rebuilt (or left the filtered list): the keyboard goes to the tool's name
    // if it is still shown, else to the next tool waiting, else to the status filter.
    const links = [...listEl.querySelectorAll('.tool-name a')];
    const next = links.find((a) => a.textContent === t.name)
      || listEl.querySelector('.card.status-pending_approval .btn.approve')
      || main.querySelector('.chips [aria-pressed="true"]');
    if (next) next.focus();
  }

  /** A tool's card, rebuilt only when what it shows changed. */
  function cardFor(t) {
    const key = `${t.revision}:${t.usageCount}:${t.status}`;
    const hit = built.get(t.id);
    if (hit && hit.key === key) return hit.el;
    const el = card(t);
    built.set(t.id, { key, el });
    return el;
  }

  function renderList(list) {
    tools = list.map((t) => ({ t, haystack: `${t.name}\n${t.description}\n${t.category || ''}`.toLowerCase() }));
    const ids = new Set(list.map((t) => t.id));
    for (const id of built.keys()) if (!ids.has(id)) built.delete(id);
    applyFilter();
  }

  /** Filters in memory and builds at most `view.limit` cards, so 1,000 tools stay quick. */
  function applyFilter() {
    const matches = tools.filter(({ t, haystack }) => (view.status === 'all' || t.status === view.status)
      && (!view.search || haystack.includes(view.search)));
    const shown = matches.slice(0, view.limit);
    // Cards are moved only where the list changed, so the one a person is on keeps the focus;
    // a card rebuilt under the focus gives it to the new card's name.
    const had = document.activeElement && listEl.contains(document.activeElement)
      ? document.activeElement.closest('.tool-card') : null;
    const hadName = had && had.querySelector('.tool-name').textContent;
    let at = listEl.firstChild;
    for (const { t } of shown) {
      const el = cardFor(t);
      if (el === at) { at = at.nextSibling; continue; }
      listEl.insertBefore(el, at);
    }
    while (at) { const next = at.nextSibling; at.remove(); at = next; }
    if (hadName && !listEl.contains(document.activeElement)) {
      const link = [...listEl.querySelectorAll('.tool-name a')].find((a) => a.textContent === hadName);
      if (link) link.focus();
    }
    const rest = matches.length - shown.length;
    more.hidden = rest <= 0;
    more.textContent = `Show ${Math.min(PAGE, rest)} more`;
    countEl.textContent = tools.length === 0
      ? 'No custom tools yet.'
      : `Showing ${shown.length} of ${tools.length} tools${rest > 0 ? ` (${matches.length} match)` : ''}.`;
  }

  /** Built-in and bridged tools: grouped, each opening its page; the search filters them too. */
  let catalogueItems = [];
  const catalogueCount = h('p', { class: 'result-count', role: 'status', 'aria-live': 'polite' });
  function renderBuiltins(items) {
    const others = items.filter((t) => t.source !== 'custom');
    const groups = new Map();
    catalogueItems = [];
    for (const t of others) {
      const g = t.source === 'mcp' ? `MCP: ${(t.category || '').replace(/^mcp:/, '') || 'bridged'}` : (t.category || 'Other');
      if (!groups.has(g)) groups.set(g, []);
      const li = h('li', {},
        h('a', { href: `#/catalog/${seg(t.name)}` }, h('code', { text: t.name })), ' ', h('span', { class: 'muted', text: t.description }));
      groups.get(g).push(li);
      catalogueItems.push({ li, haystack: `${t.name}\n${t.description}\n${t.category || ''}`.toLowerCase() });
    }
    const builtins = others.filter((t) => t.source === 'builtin').length;
    const bridged = others.length - builtins;
    replace(builtinEl,
      h('h2', { id: 'builtins-title', text: `Built-in tools (${builtins})${bridged ? ` and bridged MCP tools (${bridged})` : ''}` }),
      h('p', { class: 'muted', text: 'Compiled into Toolsmith, or bridged from an upstream MCP server: open one to read it and test it. Groups are switched on the Tool groups page.' }),
      catalogueCount,
      [...groups.entries()].map(([group, lis]) => h('div', { class: 'builtin-group' },
        h('h3', { text: group }),
        h('ul', { class: 'builtin-list' }, lis))));
    filterCatalogue();
  }

  function filterCatalogue() {
    let shown = 0;
    for (const { li, haystack } of catalogueItems) {
      const hit = !view.search || haystack.includes(view.search);
      li.hidden = !hit;
      if (hit) shown += 1;
    }
    for (const g of builtinEl.querySelectorAll('.builtin-group')) {
      g.hidden = !g.querySelector('li:not([hidden])');
    }
    catalogueCount.textContent = view.search
      ? `${shown} of ${catalogueItems.length} built-in and bridged tools match.`
      : `${catalogueItems.length} built-in and bridged tools.`;
  }

  // A call moves only the usage digest: the custom tools are read again for their uses (the
  // stats and cards showed the counts of the page's load until a reload), and only the cards
  // whose count changed are rebuilt. The catalogue of built-ins is read only when tools changed.
  async function refresh(what) {
    if (!what.tools && !what.usage) return;
    const [fresh, s, cat] = await Promise.all([allTools(), get('/custom-tools/stats'), what.tools ? get('/tools') : null]);
    renderStats(s);
    renderList(fresh);
    if (!cat) return;
    const others = JSON.stringify(cat.tools.filter((t) => t.source !== 'custom').map((t) => [t.name, t.description, t.category]));
    if (others !== lastCatalogue) { lastCatalogue = others; renderBuiltins(cat.tools); }
  }

  renderStats(stats);
  renderList(list);
  let lastCatalogue = JSON.stringify(catalogue.tools.filter((t) => t.source !== 'custom').map((t) => [t.name, t.description, t.category]));
  renderBuiltins(catalogue.tools);
  performance.mark('toolsmith:tools-rendered');
  // The first frame after the cards are built: the page is painted and its thread is free.
  requestAnimationFrame(() => setTimeout(() => performance.mark('toolsmith:tools-interactive'), 0));
  return { refresh };
}
