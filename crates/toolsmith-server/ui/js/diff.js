// A line diff (longest common subsequence), for comparing two versions of a tool.

/** Lines of a and b as [{op: ' '|'-'|'+', text}]. Large inputs fall back to a plain listing. */
export function diffLines(a, b) {
  const x = String(a).split('\n');
  const y = String(b).split('\n');
  if (x.length * y.length > 4_000_000) {
    return [...x.map((text) => ({ op: '-', text })), ...y.map((text) => ({ op: '+', text }))];
  }
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ op: ' ', text: x[i] }); i += 1; j += 1; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) { out.push({ op: '-', text: x[i] }); i += 1; }
    else { out.push({ op: '+', text: y[j] }); j += 1; }
  }
  while (i < n) { out.push({ op: '-', text: x[i] }); i += 1; }
  while (j < m) { out.push({ op: '+', text: y[j] }); j += 1; }
  return out;
}
