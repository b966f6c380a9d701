// Executions waiting for a person: tool, caller, arguments, a live countdown to expiry, and
// allow once / allow always / deny. A decision here reaches the call if it is still waiting (in
// its client's own approval form): it runs, or is told it was denied and by whom. Decided ones
// are listed below, with what really happened. Live updates add and remove cards by id and
// leave the others as they are.

import { get, post, seg } from '../api.js';
import { h, replace, table, toast } from '../dom.js';
import { dateTime } from '../format.js';

/** What an approval's status means for its call. */
const OUTCOMES = {
  pending: 'waiting',
  allowed: 'allowed once: not run yet (runs when the same call is made)',
  consumed: 'allowed once: ran',
  granted: 'allowed always',
  denied: 'denied: the call did not run',
  expired: 'expired: the call did not run',
};

function left(expiresAt) {
  const s = Math.round((new Date(expiresAt).getTime() - Date.now()) / 1000);
  if (s <= 0) return 'expired';
  return `expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export async function render(main, ctx) {
  const pendingEl = h('div', { class: 'approvals' });
  const decidedEl = h('section', { 'aria-labelledby': 'decided-title' });
  replace(main, h('h1', { text: 'Approvals' }),
    h('p', { class: 'muted', text: 'Calls that wait for a person before they run. A decision allows or denies exactly the call shown, and reaches it at once if it is still waiting; "Allow always" allows this tool for this caller until its code changes.' }),
    pendingEl, decidedEl);
  const countdowns = [];

  /**
   * The approval once its waiting call has taken an "allow once": the decision answers
   * `allowed` before the call it woke consumes it, so the toast would say "not run yet" of a
   * call that runs at once. Read again (up to ~3 s) until the call takes it.
   */
  async function settled(decided) {
    let now = decided;
    for (let i = 0; i < 12 && now.status === 'allowed'; i += 1) {
      await new Promise((r) => setTimeout(r, 250));
      try { now = await get(`/approvals/${seg(decided.id)}`); } catch { break; }
    }
    return now;
  }

  async function decide(a, decision, li) {
    // Where the keyboard goes once the card leaves: the next card waiting, else the heading.
    const after = li && (li.nextElementSibling || li.previousElementSibling);
    const nextId = after && after.dataset.id;
    const refocus = () => {
      const next = nextId && [...list.children].find((c) => c.dataset.id === nextId);
      const target = (next && next.querySelector('button')) || waitingTitle;
      if (target) target.focus();
    };
    let decided;
    try {
      decided = await post(`/approvals/${seg(a.id)}/decision`, { decision });
    } catch (e) {
      toast(`Could not decide: ${e.message}`, 'error');
      await load();
      refocus();
      return;
    }
    try { await load(); } catch { /* the live feed reloads it */ }
    refocus();
    ctx.pollNow();
    if (decided.status === 'allowed') decided = await settled(decided);
    const said = decided.status === 'allowed'
      ? 'allowed once: no call was waiting; it runs when the same call is made'
      : OUTCOMES[decided.status] || decided.status;
    toast(`${a.toolName}: ${decision.replace('_', ' ')} — ${said}.`);
    if (decided.status === 'consumed') { try { await load(); } catch { /* as above */ } }
  }

  function card(a, canDecide) {
    const timer = h('span', { class: 'countdown', text: left(a.expiresAt) });
    const li = h('li', { class: 'card approval', 'data-id': a.id },
      h('div', { class: 'card-head' }, h('h3', { class: 'tool-name', text: a.toolName }), timer),
      h('p', {}, 'Caller: ', h('strong', { text: a.agent || 'no agent (the user)' }), ' · asked ', dateTime(a.createdAt), ' · ', h('code', { text: a.id })),
      h('pre', { class: 'code', tabindex: '0', 'aria-label': `Arguments of ${a.toolName}`, text: a.arguments }),
      canDecide ? h('div', { class: 'card-actions' },
        h('button', { type: 'button', class: 'btn approve', text: 'Allow once', onclick: () => decide(a, 'allow_once', li) }),
        h('button', { type: 'button', class: 'btn', text: 'Allow always', onclick: () => decide(a, 'allow_always', li) }),
        h('button', { type: 'button', class: 'btn danger', text: 'Deny', onclick: () => decide(a, 'deny', li) })) : null);
    li.countdown = { el: timer, at: a.expiresAt };
    return li;
  }

  const list = h('ul', { class: 'cards list', 'aria-label': 'Waiting approvals' });
  const waitingTitle = h('h2', { tabindex: '-1' });
  const nothingWaiting = h('p', { class: 'empty', text: 'Nothing is waiting for a decision.' });
  async function load() {
    const [pending, all] = await Promise.all([get('/approvals?status=pending'), get('/approvals?status=all&limit=50')]);
    const canDecide = ctx.canDecide();
    // Patch the cards: the ones still waiting stay as they are (focus, scroll), new ones are
    // added in order, decided ones leave.
    const shown = new Map([...list.children].map((li) => [li.dataset.id, li]));
    const waiting = new Set(pending.approvals.map((a) => a.id));
    for (const [id, li] of shown) if (!waiting.has(id)) li.remove();
    let at = list.firstChild;
    for (const a of pending.approvals) {
      const existing = shown.get(a.id);
      if (existing && waiting.has(a.id) && existing.parentNode === list) { at = existing.nextSibling; continue; }
      list.insertBefore(card(a, canDecide), at);
    }
    countdowns.length = 0;
    for (const li of list.children) countdowns.push(li.countdown);
    // The heading, the note and the list stay in place (moving the list would take the focus
    // off the card a person is on); only their text and the cards change.
    if (!pendingEl.firstChild) replace(pendingEl, waitingTitle, nothingWaiting, list);
    waitingTitle.textContent = `Waiting (${pending.approvals.length})`;
    nothingWaiting.hidden = pending.approvals.length > 0;
    const decided = all.approvals.filter((a) => a.status !== 'pending');
    replace(decidedEl, h('h2', { id: 'decided-title', text: 'Recent decisions' }),
      table('Recent decisions', [
        { label: 'Tool', cell: (a) => a.toolName },
        { label: 'Caller', cell: (a) => a.agent || '—' },
        { label: 'Outcome', wrap: true, cell: (a) => h('span', {}, h('span', { class: `pill approval-${a.status}`, text: a.status }), ' ', OUTCOMES[a.status] || '') },
        { label: 'Decision', cell: (a) => (a.decision ? `${a.decision} by ${a.decidedBy || '?'}` : '—') },
        { label: 'Decided', cell: (a) => (a.decidedAt ? dateTime(a.decidedAt) : '—') },
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
