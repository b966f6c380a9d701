// A line diff (longest common subsequence), for comparing two versions of a tool, and its
// hunks: the changed lines with a few unchanged ones around them, as `diff -u` shows them.

/** Lines of a and b as [{op: ' '|'-'|'+', text, old, new}] (1-based line numbers; 0 where absent). */
export function diffLines(a, b) {
  const x = String(a).split('\n');
  const y = String(b).split('\n');
  // What both start and end with is kept out of the table, so a small change in a long
  // document costs little.
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head += 1;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail += 1;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  const out = [];
  for (let k = 0; k < head; k += 1) out.push({ op: ' ', text: x[k], old: k + 1, new: k + 1 });
  let i = 0;
  let j = 0;
  const n = xs.length;
  const m = ys.length;
  const push = (op) => {
    if (op === ' ') { out.push({ op, text: xs[i], old: head + i + 1, new: head + j + 1 }); i += 1; j += 1; }
    else if (op === '-') { out.push({ op, text: xs[i], old: head + i + 1, new: 0 }); i += 1; }
    else { out.push({ op, text: ys[j], old: 0, new: head + j + 1 }); j += 1; }
  };
  if (n * m > 4_000_000) {
    while (i < n) push('-');
    while (j < m) push('+');
  } else {
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let p = n - 1; p >= 0; p -= 1) {
      for (let q = m - 1; q >= 0; q -= 1) {
        lcs[p][q] = xs[p] === ys[q] ? lcs[p + 1][q + 1] + 1 : Math.max(lcs[p + 1][q], lcs[p][q + 1]);
      }
    }
    while (i < n && j < m) {
      if (xs[i] === ys[j]) push(' ');
      else if (lcs[i + 1][j] >= lcs[i][j + 1]) push('-');
      else push('+');
    }
    while (i < n) push('-');
    while (j < m) push('+');
  }
  for (let k = 0; k < tail; k += 1) {
    out.push({ op: ' ', text: x[x.length - tail + k], old: x.length - tail + k + 1, new: y.length - tail + k + 1 });
  }
  return out;
}

/**
 * The changes of a diff as hunks with `context` unchanged lines around each:
 * [{header: '@@ -a,b +c,d @@', skipped (unchanged lines before it), lines}], and `after`
 * (unchanged lines after the last). `section(line)` names the part a hunk is in (its header's
 * tail), from the nearest line before it for which it returns a name.
 */
export function hunks(lines, context = 3, section = () => null) {
  const changed = [];
  lines.forEach((l, k) => { if (l.op !== ' ') changed.push(k); });
  const out = [];
  let k = 0;
  let shownUpTo = 0;
  while (k < changed.length) {
    const start = Math.max(shownUpTo, changed[k] - context);
    let end = changed[k];
    while (k + 1 < changed.length && changed[k + 1] - end <= context * 2 + 1) { k += 1; end = changed[k]; }
    end = Math.min(lines.length - 1, end + context);
    const part = lines.slice(start, end + 1);
    const first = (key) => { const hit = part.find((l) => l[key]); return hit ? hit[key] : 0; };
    const count = (op) => part.filter((l) => l.op === ' ' || l.op === op).length;
    let name = null;
    for (let s = start; s >= 0 && name === null; s -= 1) name = section(lines[s].text);
    out.push({
      header: `@@ -${first('old')},${count('-')} +${first('new')},${count('+')} @@${name ? ` ${name}` : ''}`,
      skipped: start - shownUpTo,
      lines: part,
    });
    shownUpTo = end + 1;
    k += 1;
  }
  return { hunks: out, after: lines.length - shownUpTo };
}
