// Formatting of values for people: statuses, creators, times, numbers.

export const STATUS_LABELS = {
  active: 'Active',
  disabled: 'Disabled',
  pending_approval: 'Pending Approval',
  rejected: 'Rejected',
};

export const KIND_LABELS = { js: 'JavaScript', command: 'Command', http: 'HTTP' };

export function statusLabel(status) {
  return STATUS_LABELS[status] || String(status);
}

export function creatorLabel(createdBy) {
  return createdBy === 'llm' ? 'AI Created' : 'User Created';
}

export function dateTime(value) {
  if (!value) return 'never';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toLocaleString();
}

export function ago(value) {
  if (!value) return 'never';
  const seconds = Math.round((Date.now() - new Date(value).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return String(value);
  if (seconds < 60) return `${Math.max(seconds, 0)} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

export function number(n) {
  return typeof n === 'number' ? n.toLocaleString() : '–';
}

export function ms(n) {
  return typeof n === 'number' ? `${n < 10 ? n.toFixed(1) : Math.round(n)} ms` : '–';
}

export function percent(r) {
  return typeof r === 'number' ? `${(r * 100).toFixed(1)} %` : '–';
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}
