// The layout check of the web UI's browser tests (issue 36), shared by every page's flows:
//
//   import { layoutProblems } from './ui_layout.mjs';
//   const problems = await layoutProblems(page, 'executions (dark, 390 px)');
//   assert.deepEqual(problems, [], problems.join('\n'));
//
// It reads the page as laid out now and reports, one line each:
// - a word split across lines: a text node whose box is narrower than its longest word (the
//   word measured in the element's own font), so "mcp_greeter" or a status pill cannot break
//   mid-word. Text that cannot wrap (white-space: pre / nowrap) is checked by the next rule
//   instead; tokens of 32 characters or more (ids, hashes, URLs, JSON strings) may break where
//   they must, and so may an element that opts in with `data-wrap="anywhere"`;
// - something overflowing: an element reaching past the viewport's right edge that no
//   scrolling container (overflow-x auto or scroll, e.g. `.table-wrap`, `pre`) holds, or a page
//   that scrolls sideways;
// - a row that wrapped: an element marked `data-one-line` (the header: brand, nav, actions)
//   whose shown children do not all sit on one line — at 1280 px the nav's links and the theme
//   button went to a second line while every other check passed (issue 36).
// Hidden elements (display none, visibility hidden, zero size, `hidden`, closed `details`) are
// not checked.

/** Words at least this long are identifiers or data, allowed to break. */
export const LONG_TOKEN = 32;

/** The layout problems of `page` as it is now, each line prefixed with `where`. */
export async function layoutProblems(page, where) {
  const found = await page.evaluate((longToken) => {
    const out = [];
    const viewport = document.documentElement.clientWidth;
    const canvas = document.createElement('canvas');
    const pen = canvas.getContext('2d');
    const label = (el) => {
      const cls = (el.getAttribute('class') || '').trim().split(/\s+/).filter(Boolean).slice(0, 2).join('.');
      return `<${el.tagName.toLowerCase()}${cls ? `.${cls}` : ''}>`;
    };
    const shown = (el) => {
      for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
        if (e.hidden) return false;
        if (e.tagName === 'DETAILS' && !e.open && e !== el && !(el.closest('summary'))) return false;
        const s = getComputedStyle(e);
        if (s.display === 'none' || s.visibility === 'hidden') return false;
      }
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    };
    const scroller = (el) => {
      for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
        const x = getComputedStyle(e).overflowX;
        if (x === 'auto' || x === 'scroll' || x === 'hidden' || x === 'clip') return e;
      }
      return null;
    };
    // The width a text node may use: its nearest block-level ancestor's content box.
    const room = (el) => {
      let box = el;
      while (box && getComputedStyle(box).display.startsWith('inline') && box.parentElement) box = box.parentElement;
      const s = getComputedStyle(box);
      const r = box.getBoundingClientRect();
      return r.width - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)
        - parseFloat(s.borderLeftWidth) - parseFloat(s.borderRightWidth);
    };

    // 1. Words split across lines.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      if (!text.trim()) continue;
      const el = node.parentElement;
      if (!el || el.closest('script, style, [data-wrap="anywhere"], .visually-hidden') || !shown(el)) continue;
      const style = getComputedStyle(el);
      if (style.whiteSpace === 'pre' || style.whiteSpace === 'nowrap') continue;
      const words = text.split(/\s+/).filter((w) => w && w.length < longToken);
      if (!words.length) continue;
      pen.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const spacing = parseFloat(style.letterSpacing) || 0;
      let longest = '';
      let widest = 0;
      for (const w of words) {
        const width = pen.measureText(w).width + spacing * w.length;
        if (width > widest) { widest = width; longest = w; }
      }
      const available = room(el);
      if (widest > available + 1) {
        const key = `${label(el)} ${longest}`;
        if (!seen.has(key)) {
          seen.add(key);
          out.push(`the word "${longest}" (${Math.ceil(widest)} px) is split in ${label(el)} ${Math.floor(available)} px wide`);
        }
      }
    }

    // 2. Overflow past the right edge, outside every scrolling container.
    const sideways = document.documentElement.scrollWidth - viewport;
    if (sideways > 1) out.push(`the page scrolls sideways by ${sideways} px`);
    for (const el of document.body.querySelectorAll('*')) {
      if (el.closest('script, style, dialog:not([open])') || !shown(el)) continue;
      const r = el.getBoundingClientRect();
      if (r.right <= viewport + 1) continue;
      if (scroller(el)) continue;
      // Report the outermost offender only.
      const parent = el.parentElement;
      if (parent && parent !== document.body && parent.getBoundingClientRect().right > viewport + 1) continue;
      out.push(`${label(el)} "${(el.textContent || '').trim().slice(0, 40)}" reaches ${Math.ceil(r.right)} px of a ${viewport} px viewport`);
    }

    // 3. Rows that must stay one line: every shown child's box overlaps the first one's line
    // (an open menu, laid out below on purpose, is left out).
    for (const row of document.querySelectorAll('[data-one-line]')) {
      if (!shown(row)) continue;
      const items = [...row.children].filter((c) => shown(c) && !c.classList.contains('open'));
      const boxes = items.map((c) => c.getBoundingClientRect());
      // The deepest top and the highest bottom: all on one line when they still overlap.
      const lowestTop = Math.max(...boxes.map((b) => b.top));
      const highestBottom = Math.min(...boxes.map((b) => b.bottom));
      if (items.length > 1 && lowestTop >= highestBottom) {
        const below = items.filter((_, i) => boxes[i].top >= highestBottom).map(label);
        out.push(`${label(row)} wraps: ${below.join(', ')} went to another line`);
      }
    }
    return out;
  }, LONG_TOKEN);
  return found.map((line) => `${where}: ${line}`);
}
