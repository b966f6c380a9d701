// The application shell: sign-in, the hash router, the header (pending badge, theme) and the
// live feed (GET /api/v1/changes every second with If-None-Match; a page refreshes itself
// when what it shows moved). When the server cannot be reached (a restart), a "reconnecting"
// banner shows and the feed retries with backoff (1 s doubling to 10 s); once it answers, the
// page refreshes what it shows in place (a typed filter, "Show more", an open form are kept);
// a page that cannot refresh itself is built again, unless the person typed in it.
// Each route renders into a view of its own: a page still loading when the person went on
// (or when the feed came back) writes into its own detached view, never over the newer page.
// The scope switcher (issue 41): a person in any organisation chooses, for this tab, to act as
// themselves ("Personal") or in one of their organisations (api.js sends it on every call);
// the header then says plainly which organisation and which role, and switching reads the
// session and the page again.

import { ApiError, get, getOrganization, getToken, setOrganization, setToken } from './api.js';
import { h, replace, field, toast } from './dom.js';
import { finishSignIn, signInOptions, startSignIn } from './oidc.js';
import * as tools from './pages/tools.js';
import * as tool from './pages/tool.js';
import * as editor from './pages/editor.js';
import * as approvals from './pages/approvals.js';
import * as config from './pages/config.js';
import * as executions from './pages/executions.js';
import * as audit from './pages/audit.js';
import * as policy from './pages/policy.js';
import * as tokens from './pages/tokens.js';
import * as groups from './pages/groups.js';
import * as mcpServers from './pages/mcp.js';
import * as catalog from './pages/catalog.js';
import * as analytics from './pages/analytics.js';
import * as agents from './pages/agents.js';
import * as prompts from './pages/prompts.js';
import * as resources from './pages/resources.js';
import * as orgs from './pages/orgs.js';

const POLL_MS = 1000;
const MAX_RETRY_MS = 10000;
const main = document.getElementById('main');
const state = { session: null, organizations: [], page: null, changes: null, etag: null, polling: false, offline: false, retryMs: POLL_MS, routes: 0 };

/** What pages get: the session and helpers. */
const ctx = {
  get session() { return state.session; },
  can(scope) {
    const s = state.session;
    if (!s || (s.readOnly && scope !== 'tools:read' && scope !== 'tools:execute')) return false;
    return s.scopes.includes(scope) || s.scopes.includes('admin');
  },
  /** Whether the caller may decide approvals and pending tools: a person (not acting as an
   * agent) who may write; the server decides the caller's own tools, and an admin's any. */
  canDecide() {
    return ctx.can('tools:write') && !(state.session && state.session.agentId);
  },
  navigate(hash) { window.location.hash = hash; },
  pollNow() { poll(); },
  /** Reads the session again (after this tab's token changed) without leaving the page. */
  async refreshSession() {
    state.session = await get('/session');
    document.getElementById('sign-out').hidden = !state.session.authRequired;
    state.etag = null;
    drawScope();
  },
  /**
   * Said on an admin's page while the tab acts in an organisation (where `admin` is never
   * held): how to reach it. Null otherwise.
   */
  adminElsewhere() {
    const org = state.session && state.session.organization;
    return org ? h('p', { class: 'muted', text: `This tab acts in ${org.displayName || org.name}, where no one holds the admin scope: an admin uses this page acting as themselves (Personal, under “Acting in”).` }) : null;
  },
  /** The person's organisations, with their role in each. */
  get organizations() { return state.organizations; },
  /** Reads the person's organisations again (after one was made, left or changed). */
  refreshOrganizations() { return loadOrganizations(); },
  /** Acts in the organisation `id` (null: as the person), as the header's switcher does. */
  switchScope(id) { return switchScope(id); },
};

function parseRoute() {
  const raw = window.location.hash.replace(/^#/, '') || '/tools';
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, params: new URLSearchParams(query) };
}

function pick({ parts }) {
  const [first, second, third] = parts;
  switch (first) {
    case 'tools':
      if (second === 'new') return [editor, 'tools'];
      if (second && third === 'edit') return [editor, 'tools'];
      if (second) return [tool, 'tools'];
      return [tools, 'tools'];
    case 'approvals': return [approvals, 'approvals'];
    case 'executions': return [executions, 'executions'];
    case 'config': return [config, 'config'];
    case 'audit': return [audit, 'audit'];
    case 'policy': return [policy, 'policy'];
    case 'tokens': return [tokens, 'tokens'];
    case 'groups': return [groups, 'groups'];
    case 'mcp': return [mcpServers, 'mcp'];
    case 'catalog': return [catalog, 'tools'];
    case 'analytics': return [analytics, 'analytics'];
    case 'agents': return [agents, 'agents'];
    case 'prompts': return [prompts, 'prompts'];
    case 'resources': return [resources, 'resources'];
    case 'organizations': return [orgs, 'organizations'];
    default: return [tools, 'tools'];
  }
}

async function route() {
  if (!state.session) return;
  const r = parseRoute();
  const [module, nav] = pick(r);
  if (state.page && state.page.destroy) state.page.destroy();
  state.page = null;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.page === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  closeMenu();
  // This route's own view: a newer route replaces it, so whatever this render or its page
  // writes later lands in a detached element.
  const seq = ++state.routes;
  const view = h('div', { class: 'view' }, h('p', { class: 'loading', text: 'Loading…' }));
  replace(main, view);
  let page = null;
  try {
    page = (await module.render(view, ctx, r)) || null;
  } catch (e) {
    if (seq === state.routes) showError(e);
  }
  if (seq !== state.routes) {
    // The person (or the feed) went on while this page loaded: it never becomes the page.
    if (page && page.destroy) page.destroy();
    return;
  }
  state.page = page;
  // A form page (New tool, Edit) starts in its first field, so a keyboard user's first keys
  // land there; any other page starts at its content.
  const first = module === editor
    ? main.querySelector('form input:not([type=hidden]):not([disabled]), form textarea:not([disabled]), form select:not([disabled])')
    : null;
  if (first) first.focus();
  else main.focus({ preventScroll: true });
}

function showError(e) {
  const message = e instanceof ApiError ? `${e.message} (${e.code})` : String(e && e.message ? e.message : e);
  replace(main, h('h1', { text: 'Something went wrong' }), h('p', { class: 'error', role: 'alert', text: message }));
}

/**
 * The sign-in form, shown when the server needs a token. `message`: what was wrong with the
 * token typed; `notice`: what went wrong signing in through the identity provider.
 */
function signIn(message, notice) {
  state.session = null;
  state.organizations = [];
  drawScope();
  document.getElementById('sign-out').hidden = true;
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const f = field('API token', input, 'The server requires a token. It is kept for this tab only (sessionStorage).');
  if (message) f.error(message);
  const form = h('form', { class: 'card signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title', text: 'Sign in to Toolsmith' }),
    notice ? h('p', { class: 'error', role: 'alert', text: notice }) : null,
    f.wrap,
    h('button', { type: 'submit', class: 'btn primary', text: 'Sign in' }));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    // Another person may sign in here: they start in their own scope.
    setOrganization(null);
    await start();
  });
  replace(main, form);
  input.focus();
  offerProvider(form);
}

/** When the server signs people in through an identity provider, the sign-in form offers it first. */
async function offerProvider(form) {
  let options;
  try {
    options = await signInOptions();
  } catch (e) {
    form.prepend(h('p', { class: 'error', role: 'alert', text: `Signing in through the identity provider is not available now: ${e.message}` }));
    return;
  }
  if (!options || !form.isConnected) return;
  const provider = new URL(options.issuer).host;
  const here = new URL(options.redirectUri);
  let offer;
  if (here.origin !== window.location.origin) {
    // The provider sends people back to the server's public address; this tab's storage is
    // per address, so the sign-in must start there.
    offer = h('p', {}, 'To sign in through ', h('strong', { text: provider }), ', open Toolsmith at ',
      h('a', { href: here.href, text: here.href }), '.');
  } else {
    const button = h('button', { type: 'button', class: 'btn primary', text: `Sign in with ${provider}` });
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        await startSignIn(options);
      } catch (e) {
        button.disabled = false;
        toast(`Could not start signing in: ${e.message}`, 'error');
      }
    });
    offer = h('div', { class: 'signin-provider' }, button,
      h('p', { class: 'hint', text: 'or use an API token:' }));
  }
  form.querySelector('h1').after(offer);
}

/** A return from the identity provider: the token it gave, or the sign-in form saying why not. */
async function returnFromProvider() {
  try {
    const token = await finishSignIn();
    if (token) setToken(token);
    return true;
  } catch (e) {
    setToken(null);
    signIn(null, e.message);
    return false;
  }
}

async function start() {
  try {
    state.session = await get('/session');
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && getOrganization()) {
      // The organisation this tab acted in is no longer one of the person's (they left, were
      // removed, or it was deleted): back to their own scope, saying so.
      setOrganization(null);
      toast('You are no longer a member of the organisation this tab acted in: back to your own scope.', 'error');
      return start();
    }
    if (e instanceof ApiError && e.status === 401) {
      const had = getToken();
      setToken(null);
      signIn(had ? 'That token is not valid.' : null);
      return;
    }
    if (e instanceof ApiError && e.code === 'network') {
      // The server is not up (yet): say so and try again with backoff.
      setOffline(true);
      setTimeout(start, state.retryMs);
      state.retryMs = Math.min(state.retryMs * 2, MAX_RETRY_MS);
      return;
    }
    showError(e);
    return;
  }
  setOffline(false);
  document.getElementById('sign-out').hidden = !state.session.authRequired;
  state.etag = null;
  state.changes = null;
  drawScope();
  loadOrganizations();
  await route();
  if (!state.polling) {
    state.polling = true;
    feed();
  }
}

/** The live feed: one poll, then the next after a second, or later while the server is away. */
async function feed() {
  await poll();
  setTimeout(feed, state.offline ? state.retryMs : POLL_MS);
}

/** Shows or hides the "reconnecting" banner; coming back reloads what the page shows. */
function setOffline(offline) {
  let banner = document.getElementById('connection');
  if (!banner) {
    banner = h('div', { id: 'connection', class: 'connection', role: 'status', hidden: true });
    document.querySelector('header.top').after(banner);
  }
  if (offline) {
    banner.textContent = `Reconnecting to the server… (next try in ${Math.round(state.retryMs / 1000)} s)`;
    banner.hidden = false;
  } else {
    banner.hidden = true;
    state.retryMs = POLL_MS;
  }
  state.offline = offline;
}

async function poll() {
  if (!state.session || document.hidden) return;
  let answer;
  try {
    answer = await get('/changes', { etag: state.etag || '' });
  } catch (e) {
    if (e instanceof ApiError && e.code === 'network') {
      state.retryMs = state.offline ? Math.min(state.retryMs * 2, MAX_RETRY_MS) : POLL_MS;
      setOffline(true);
    }
    // The organisation this tab acts in answers 404 now (the person left or was removed, or it
    // was deleted): start again, which goes back to the person's own scope and says so.
    if (e instanceof ApiError && e.status === 404 && getOrganization()) await start();
    return;
  }
  if (state.offline) {
    // Back: whatever moved meanwhile, the page reads it again — in place when it can (what the
    // person typed or opened stays), from the start when it cannot (it has no refresh, or it
    // failed to load while the server was away).
    setOffline(false);
    state.etag = null;
    state.changes = null;
    if (state.page && state.page.refresh) {
      try { await state.page.refresh({ tools: true, approvals: true, usage: true }); } catch { /* the next change retries */ }
    } else if (!main.querySelector('[data-typed]')) {
      try { await route(); } catch { /* shown by the page */ }
    }
    // Else the person was writing in a form of a page that cannot refresh itself (New tool, an
    // agent's or a prompt's definition, the policy, a Test form): it stays as it is — building
    // it again would throw away what they typed; a save that meets a change made meanwhile is
    // refused by its revision, saying so.
    return;
  }
  if (answer.notModified) return;
  const previous = state.changes;
  state.changes = answer.data;
  state.etag = answer.etag;
  updateBadges(answer.data);
  if (previous && state.page && state.page.refresh) {
    const what = {
      tools: previous.tools !== answer.data.tools,
      approvals: previous.approvals !== answer.data.approvals,
      // Calls made (executions, usage counts) apart from the catalogue, when the server says.
      usage: answer.data.usage === undefined ? previous.tools !== answer.data.tools : previous.usage !== answer.data.usage,
    };
    if (what.tools || what.approvals || what.usage) {
      try { await state.page.refresh(what); } catch { /* the next change retries */ }
    }
  }
}

function updateBadges(c) {
  const badge = document.getElementById('pending-badge');
  badge.hidden = !c.pendingTools;
  badge.textContent = `${c.pendingTools} pending`;
  badge.setAttribute('aria-label', `${c.pendingTools} ${c.pendingTools === 1 ? 'tool' : 'tools'} pending approval`);
  const count = document.getElementById('approvals-count');
  count.hidden = !c.pendingApprovals;
  count.textContent = String(c.pendingApprovals);
  count.setAttribute('aria-label', `${c.pendingApprovals} waiting`);
}

// ----- the scope: personal or an organisation -------------------------------------------------

/** What each role may do in its organisation, said beside its name. */
const ROLE_MAY = {
  viewer: 'you may read and run what it holds, not change it',
  editor: 'you may read, run and change what it holds',
  admin: 'you may read, run and change what it holds, and manage its members',
  owner: 'you may read, run and change what it holds, manage its members and delete it',
};

/** The person's organisations with their role (GET /api/v1/organizations, always as the person). */
async function loadOrganizations() {
  let list = [];
  // A token bound to an agent acts for its own user only, and one that may not read reads no
  // organisation: neither has organisations to choose.
  const s = state.session;
  if (s && !s.agentId && (s.scopes.includes('tools:read') || s.scopes.includes('admin') || s.organization)) {
    try {
      const answer = await get('/organizations');
      list = (answer && answer.organizations) || [];
    } catch {
      // None to offer (the list could not be read): the switcher stays hidden, the person
      // acts as themselves.
    }
  }
  state.organizations = list;
  drawScope();
}

/**
 * The switcher (shown when the person belongs to an organisation, or this tab acts in one) and
 * the line saying which organisation and role the tab acts in.
 */
function drawScope() {
  const box = document.getElementById('scope');
  const select = document.getElementById('scope-select');
  const note = document.getElementById('scope-note');
  const current = state.session && state.session.organization;
  const mine = [...state.organizations];
  if (current && !mine.some((o) => o.id === current.id)) mine.push(current);
  box.hidden = !state.session || !mine.length;
  const label = (o) => `${o.displayName || o.name} (${o.role})`;
  select.replaceChildren(h('option', { value: '', text: 'Personal' }),
    ...mine.map((o) => h('option', { value: o.id, text: label(o) })));
  select.value = current ? current.id : '';
  note.hidden = !current;
  if (current) {
    replace(note, 'Organisation ', h('strong', { text: current.displayName || current.name }),
      ` (${current.name}), as ${current.role}: ${ROLE_MAY[current.role] || 'your role decides what you may do'}. What you see and make here is the organisation's, not yours.`);
  } else {
    replace(note);
  }
}

/** The person chose another scope: the session, the organisations and the page read again. */
async function switchScope(id) {
  setOrganization(id || null);
  // A page of one thing (a tool, an agent) belongs to the scope it was opened in: the switch
  // lands on its list. The organisations' pages are the person's in every scope.
  const { parts } = parseRoute();
  if (parts.length > 1 && parts[0] !== 'organizations') window.history.replaceState(null, '', `#/${parts[0]}`);
  if (state.page && state.page.destroy) state.page.destroy();
  state.page = null;
  await start();
  const current = state.session && state.session.organization;
  toast(current ? `Now acting in ${current.displayName || current.name} as ${current.role}.` : 'Now acting as yourself.');
}

// ----- theme and menu -------------------------------------------------------------------------

function applyTheme(theme) {
  const dark = theme === 'dark' || (!theme && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  // The button names the theme it switches to.
  const button = document.getElementById('theme-toggle');
  button.removeAttribute('aria-pressed');
  button.textContent = dark ? 'Light theme' : 'Dark theme';
}

function closeMenu() {
  document.getElementById('menu-toggle').setAttribute('aria-expanded', 'false');
  document.getElementById('nav').classList.remove('open');
}

function init() {
  applyTheme(localStorage.getItem('toolsmith.theme'));
  document.getElementById('theme-toggle').addEventListener('click', () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    localStorage.setItem('toolsmith.theme', next);
    applyTheme(next);
  });
  document.getElementById('menu-toggle').addEventListener('click', (e) => {
    const open = e.currentTarget.getAttribute('aria-expanded') !== 'true';
    e.currentTarget.setAttribute('aria-expanded', String(open));
    document.getElementById('nav').classList.toggle('open', open);
  });
  document.getElementById('sign-out').addEventListener('click', () => {
    setToken(null);
    setOrganization(null);
    if (state.page && state.page.destroy) state.page.destroy();
    state.page = null;
    signIn();
    toast('Signed out.');
  });
  document.getElementById('scope-select').addEventListener('change', (e) => switchScope(e.currentTarget.value));
  window.addEventListener('hashchange', route);
  window.addEventListener('toolsmith:unauthorized', () => {
    if (state.session && state.session.authRequired) signIn('The token was refused (revoked or expired).');
  });
  returnFromProvider().then((ok) => { if (ok) start(); });
}

init();
