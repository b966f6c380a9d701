// Organisations (issue 41, docs/organisations.md): the ones you belong to, with your role; one
// made here (you become its first owner); one organisation's members with their roles — added,
// changed and removed by its admins and owners (the owner role by owners only), left by
// anyone —, renamed by admins and owners, deleted by owners. These routes always act as the
// person, whichever scope the tab acts in; "Act in it" switches the tab's scope.
//
//   #/organizations         yours, and "New organisation"
//   #/organizations/{name}  one: its members, rename, delete, leave
//
// REST: /api/v1/organizations…

import { ApiError, del, get, patch, post, put, seg } from '../api.js';
import { confirmDialog, field, h, replace, table, toast } from '../dom.js';
import { dateTime } from '../format.js';

const ROLES = ['viewer', 'editor', 'admin', 'owner'];
const MANAGES = ['admin', 'owner'];

function errorText(e) {
  return e instanceof ApiError ? e.message : String(e && e.message ? e.message : e);
}

export async function render(main, ctx, { parts }) {
  if (ctx.session.agentId) {
    replace(main, h('h1', { text: 'Organisations' }),
      h('p', { class: 'empty', text: 'Organisations are managed by a person: this token acts as an agent.' }));
    return null;
  }
  if (parts[1]) return one(main, ctx, parts[1]);
  return list(main, ctx);
}

/** The scope the tab acts in, for a button that enters `org` or says it is entered. */
function actButton(ctx, org) {
  const current = ctx.session.organization;
  if (current && current.id === org.id) return h('span', { class: 'pill status active', text: 'acting in it' });
  return h('button', { type: 'button', class: 'btn small', text: `Act in ${org.displayName || org.name}`, onclick: () => ctx.switchScope(org.id) });
}

// ----- the list ---------------------------------------------------------------------------

async function list(main, ctx) {
  const out = h('div');
  const name = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', required: true });
  const display = h('input', { type: 'text', autocomplete: 'off' });
  const fName = field('Name', name, 'Its handle: 1 to 64 lowercase letters, digits, - and _. It never changes.');
  const fDisplay = field('Display name', display, 'How people see it (optional; the name otherwise).');
  const form = h('form', { class: 'card org-form', 'aria-labelledby': 'new-org-title' },
    h('h2', { id: 'new-org-title', text: 'New organisation' }), fName.wrap, fDisplay.wrap,
    h('p', { class: 'muted', text: 'You become its first owner. Then add members and give them roles.' }),
    h('button', { type: 'submit', class: 'btn primary', text: 'Create organisation' }));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    fName.error('');
    fDisplay.error('');
    const body = { name: name.value.trim() };
    if (display.value.trim()) body.displayName = display.value.trim();
    try {
      const made = await post('/organizations', body);
      toast(`Created ${made.displayName || made.name}; you are its owner.`);
      await ctx.refreshOrganizations();
      ctx.navigate(`#/organizations/${seg(made.name)}`);
    } catch (err) {
      (/display/i.test(err.message) ? fDisplay : fName).error(errorText(err));
    }
  });
  replace(main, h('h1', { text: 'Organisations' }),
    h('p', { class: 'muted', text: 'An organisation owns tools, prompts, Config Center services, policies and agents its members share. Choose the scope you act in with "Acting in" at the top.' }),
    out, form);

  async function load() {
    const { organizations } = await get('/organizations');
    replace(out, table('Your organisations', [
      { label: 'Organisation', cell: (o) => h('a', { href: `#/organizations/${seg(o.name)}`, text: o.displayName || o.name }) },
      { label: 'Name', cell: (o) => h('code', { text: o.name }) },
      { label: 'Your role', cell: (o) => o.role },
      { label: 'Created', cell: (o) => dateTime(o.createdAt) },
      { label: 'Scope', cell: (o) => actButton(ctx, o) },
    ], organizations, 'You belong to no organisation yet.'));
  }
  await load();
  return null;
}

// ----- one organisation ---------------------------------------------------------------------

async function one(main, ctx, ref) {
  let org = await get(`/organizations/${seg(ref)}`);
  const me = ctx.session.organization ? ctx.session.organization.member : ctx.session.userId;
  const head = h('div');
  const membersEl = h('div');
  const manageEl = h('div');

  async function act(what, fn) {
    try {
      await fn();
      return true;
    } catch (err) {
      toast(`${what}: ${errorText(err)}`, 'error');
      return false;
    }
  }

  function drawHead() {
    const admin = MANAGES.includes(org.role);
    const renameInput = h('input', { type: 'text', autocomplete: 'off', value: org.displayName || '' });
    const fRename = field('Display name', renameInput);
    const rename = h('form', { class: 'inline-fields', 'aria-label': `Rename ${org.name}` }, fRename.wrap,
      h('button', { type: 'submit', class: 'btn', text: 'Rename' }));
    rename.addEventListener('submit', async (e) => {
      e.preventDefault();
      fRename.error('');
      try {
        org = { ...(await patch(`/organizations/${seg(org.name)}`, { displayName: renameInput.value.trim() })), role: org.role };
        toast(`Renamed to ${org.displayName}.`);
        drawHead();
        await ctx.refreshOrganizations();
      } catch (err) { fRename.error(errorText(err)); }
    });
    replace(head,
      h('h1', { text: org.displayName || org.name }),
      h('p', { class: 'muted', text: `${org.name} · your role: ${org.role} · created ${dateTime(org.createdAt)} by ${org.createdBy}` }),
      h('div', { class: 'actions' }, actButton(ctx, org)),
      admin ? rename : null);
  }

  function memberRow(m) {
    const self = m.userId === me;
    const canManage = MANAGES.includes(org.role) && (org.role === 'owner' || m.role !== 'owner');
    let roleCell = m.role;
    if (canManage) {
      const choices = org.role === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner');
      const select = h('select', { 'aria-label': `Role of ${m.userId}` },
        choices.map((r) => h('option', { value: r, text: r, selected: r === m.role })));
      select.addEventListener('change', async () => {
        const ok = await act(`Role of ${m.userId}`, () => put(`/organizations/${seg(org.name)}/members/${seg(m.userId)}`, { role: select.value }));
        if (ok) toast(`${m.userId} is ${select.value} now.`);
        await load();
      });
      roleCell = select;
    }
    const remove = self || canManage
      ? h('button', { type: 'button', class: 'btn small danger', text: self ? 'Leave' : 'Remove', 'aria-label': self ? `Leave ${org.name}` : `Remove ${m.userId}`, onclick: async () => {
        const title = self ? `Leave ${org.displayName || org.name}?` : `Remove ${m.userId}?`;
        const text = self ? 'You no longer see or act on what it owns.' : 'They no longer see or act on what it owns.';
        if (!(await confirmDialog(title, text, self ? 'Leave' : 'Remove member'))) return;
        const ok = await act(self ? 'Leaving' : `Removing ${m.userId}`, () => del(`/organizations/${seg(org.name)}/members/${seg(m.userId)}`));
        if (!ok) return;
        if (self) {
          toast(`You left ${org.displayName || org.name}.`);
          const current = ctx.session.organization;
          if (current && current.id === org.id) await ctx.switchScope(null);
          else await ctx.refreshOrganizations();
          ctx.navigate('#/organizations');
        } else {
          toast(`Removed ${m.userId}.`);
          await load();
        }
      } })
      : null;
    return { ...m, roleCell, remove, self };
  }

  function drawManage() {
    if (!MANAGES.includes(org.role)) { replace(manageEl); return; }
    const user = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
    const role = h('select', {}, (org.role === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner'))
      .map((r) => h('option', { value: r, text: r, selected: r === 'editor' })));
    const fUser = field('User id', user, 'The person\'s user id (as their token names them).');
    const fRole = field('Role', role);
    const add = h('form', { class: 'card org-form', 'aria-labelledby': 'add-member-title' },
      h('h2', { id: 'add-member-title', text: 'Add a member' }),
      h('div', { class: 'inline-fields' }, fUser.wrap, fRole.wrap),
      h('button', { type: 'submit', class: 'btn primary', text: 'Add member' }));
    add.addEventListener('submit', async (e) => {
      e.preventDefault();
      fUser.error('');
      if (!user.value.trim()) { fUser.error('Say whom: a user id.'); user.focus(); return; }
      try {
        await put(`/organizations/${seg(org.name)}/members/${seg(user.value.trim())}`, { role: role.value });
        toast(`${user.value.trim()} is ${role.value} of ${org.displayName || org.name}.`);
        user.value = '';
        await load();
      } catch (err) { fUser.error(errorText(err)); user.focus(); }
    });
    const remove = org.role === 'owner'
      ? h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn danger', text: 'Delete organisation', onclick: async () => {
        if (!(await confirmDialog(`Delete ${org.displayName || org.name}?`, 'Its memberships go. It is refused while it still owns tools or other things (the message says what, and how to move them).', 'Delete organisation'))) return;
        const ok = await act('Not deleted', () => del(`/organizations/${seg(org.name)}`));
        if (!ok) return;
        toast(`Deleted ${org.displayName || org.name}.`);
        const current = ctx.session.organization;
        if (current && current.id === org.id) await ctx.switchScope(null);
        else await ctx.refreshOrganizations();
        ctx.navigate('#/organizations');
      } }))
      : null;
    replace(manageEl, add, remove);
  }

  async function load() {
    const { members } = await get(`/organizations/${seg(org.name)}/members`);
    const rows = members.map(memberRow);
    replace(membersEl, table(`Members of ${org.name}`, [
      { label: 'User', cell: (m) => (m.self ? `${m.userId} (you)` : m.userId) },
      { label: 'Role', cell: (m) => m.roleCell },
      { label: 'Added', cell: (m) => dateTime(m.addedAt) },
      { label: 'Action', cell: (m) => m.remove || '—' },
    ], rows, 'No members.'));
  }

  replace(main,
    h('p', {}, h('a', { href: '#/organizations', text: '← Organisations' })),
    head, h('h2', { text: 'Members' }), membersEl, manageEl);
  drawHead();
  drawManage();
  await load();
  return null;
}
