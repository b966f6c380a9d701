// Executions waiting for a person: tool, caller, arguments, a live countdown to expiry, and
// allow once / allow always / deny. Decided ones are listed below.

import { get, post, seg } from '../api.js';
import { h, replace, table, toast } from '../dom.js';
import { dateTime } from '../format.js';

function left(expiresAt) {
  const s = Math.round((new Date(expiresAt).getTime() - Date.now()) / 1000);
  if (s <= 0) return 'expired';
  return `expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export async function render(main, ctx) {
  const pendingEl = h('div', { class: 'approvals' });
  const decidedEl = h('section', { 'aria-labelledby': 'decided-title' });
  replace(main, h('h1', { text: 'Approvals' }),
    h('p', { class: 'muted', text: 'Calls that wait for a person before they run. A decision allows or denies exactly the call shown; "Allow always" allows this tool for this caller until its code changes.' }),
    pendingEl, decidedEl);
  const countdowns = [];

  async function decide(a, decision) {
    try {
      await post(`/approvals/${seg(a.id)}/decision`, { decision });
      toast(`${a.toolName}: ${decision.replace('_', ' ')}.`);
      await load();
      ctx.pollNow();
    } catch (e) {
      toast(`Could not decide: ${e.message}`, 'error');
      await load();
    }
  }

  async function load() {
    const [pending, all] = await Promise.all([get('/approvals?status=pending'), get('/approvals?status=all&limit=50')]);
    countdowns.length = 0;
    const canDecide = ctx.canDecide();
    replace(pendingEl,
      h('h2', { text: `Waiting (${pending.approvals.length})` }),
      pending.approvals.length === 0 ? h('p', { class: 'empty', text: 'Nothing is waiting for a decision.' }) : null,
      h('ul', { class: 'cards list', 'aria-label': 'Waiting approvals' }, pending.approvals.map((a) => {
        const timer = h('span', { class: 'countdown', text: left(a.expiresAt) });
        countdowns.push({ el: timer, at: a.expiresAt });
        return h('li', { class: 'card approval' },
          h('div', { class: 'card-head' }, h('h3', { class: 'tool-name', text: a.toolName }), timer),
          h('p', {}, 'Caller: ', h('strong', { text: a.agent || 'no agent (the user)' }), ' · asked ', dateTime(a.createdAt), ' · ', h('code', { text: a.id })),
          h('pre', { class: 'code', tabindex: '0', 'aria-label': `Arguments of ${a.toolName}`, text: a.arguments }),
          canDecide ? h('div', { class: 'card-actions' },
            h('button', { type: 'button', class: 'btn approve', text: 'Allow once', onclick: () => decide(a, 'allow_once') }),
            h('button', { type: 'button', class: 'btn', text: 'Allow always', onclick: () => decide(a, 'allow_always') }),
            h('button', { type: 'button', class: 'btn danger', text: 'Deny', onclick: () => decide(a, 'deny') })) : null);
      })));
    const decided = all.approvals.filter((a) => a.status !== 'pending');
    replace(decidedEl, h('h2', { id: 'decided-title', text: 'Recent decisions' }),
      table('Recent decisions', [
        { label: 'Tool', cell: (a) => a.toolName },
        { label: 'Caller', cell: (a) => a.agent || '—' },
        { label: 'Status', cell: (a) => a.status },
        { label: 'Decision', cell: (a) => (a.decision ? `${a.decision} by ${a.decidedBy || '?'}` : '—') },
        { label: 'Asked', cell: (a) => dateTime(a.createdAt) },
      ], decided, 'No decisions yet.'));
  }

  await load();
  const tick = setInterval(() => { for (const c of countdowns) c.el.textContent = left(c.at); }, 1000);
  return {
    refresh: (what) => (what.approvals ? load() : null),
    destroy: () => clearInterval(tick),
  };
}
