import type { Page } from '@playwright/test';
import { getTextTool } from './browser.ts';
import type { Tool } from './registry.ts';

/**
 * `get_text` as markdown: the page's content with its structure (headings, lists, data tables,
 * links as `[text](url)`), without what is not content (navigation, header and footer, scripts,
 * hidden elements, form controls). Generic: it reads HTML semantics and computed style, no site's
 * selectors. Its answer has get_text's shape, so whatever reads get_text reads it.
 */
export function markdownTextTool(page: () => Page, textLimit: number): Tool {
  return getTextTool(page, 'The page as markdown, without navigation or boilerplate: lists, tables and links ([text](url)) kept', pageMarkdown, textLimit);
}

/** The page's body as markdown. */
export function pageMarkdown(page: Page): Promise<string> {
  return page.evaluate(TO_MARKDOWN_SOURCE);
}

/**
 * Runs in the page: one walk of the body. A table with headers (`th`, `thead`, `caption`) is data
 * and becomes a markdown table; one without is layout (a table-built page's whole body is), so each of its rows
 * is a line. Self-contained, as code passed to the page must be.
 */
function toMarkdown(): string {
  const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'NAV', 'HEADER', 'FOOTER', 'ASIDE', 'INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'LABEL', 'OPTION']);
  const SKIPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search', 'form']);
  const BLOCKS = new Set(['P', 'DIV', 'SECTION', 'ARTICLE', 'MAIN', 'FORM', 'CENTER', 'BLOCKQUOTE', 'DL', 'DT', 'DD', 'FIGURE', 'TR', 'TBODY', 'THEAD', 'TABLE', 'UL', 'OL']);
  const squeeze = (text: string) => text.replace(/\s+/g, ' ');
  const skipped = (element: Element) => {
    if (SKIPPED.has(element.tagName.toUpperCase()) || element.hasAttribute('hidden') || element.getAttribute('aria-hidden') === 'true') return true;
    if (SKIPPED_ROLES.has(element.getAttribute('role') ?? '')) return true;
    const style = getComputedStyle(element);
    return style.display === 'none' || style.visibility === 'hidden';
  };
  /** A table is data when it says what its columns are. */
  const isDataTable = (table: Element) => table.querySelector(':scope > caption, :scope > thead, :scope > tbody > tr > th, :scope > tr > th') !== null;

  const inline = (node: Node): string => {
    if (node.nodeType === Node.TEXT_NODE) return squeeze(node.textContent ?? '');
    if (node.nodeType !== Node.ELEMENT_NODE) return '';
    const element = node as Element;
    if (skipped(element)) return '';
    const tag = element.tagName.toUpperCase();
    if (tag === 'BR') return '\n';
    if (tag === 'IMG') return element.getAttribute('alt') ? squeeze(element.getAttribute('alt')!) : '';
    if (tag === 'TABLE') return `\n\n${table(element)}\n\n`;
    if (tag === 'UL' || tag === 'OL') return `\n${list(element, tag === 'OL')}\n`;
    if (/^H[1-6]$/.test(tag)) return `\n\n${'#'.repeat(Number(tag[1]))} ${children(element).trim()}\n\n`;
    if (tag === 'PRE') return `\n\n\`\`\`\n${element.textContent ?? ''}\n\`\`\`\n\n`;
    const text = children(element);
    // A script link (`javascript:`) goes nowhere a model can open: its text stays, as text.
    if (tag === 'A' && element.hasAttribute('href') && !/^\s*javascript:/i.test(element.getAttribute('href')!)) {
      // A link without text (an icon, an arrow) is named by its title or label, if it has one.
      const label = text.trim() || element.getAttribute('title') || element.getAttribute('aria-label') || element.querySelector('[title]')?.getAttribute('title') || '';
      return label ? `[${label.trim()}](${(element as HTMLAnchorElement).href})` : '';
    }
    if (tag === 'CODE') return text.trim() ? `\`${text.trim()}\`` : '';
    if ((tag === 'B' || tag === 'STRONG') && text.trim()) return `**${text.trim()}**`;
    if ((tag === 'I' || tag === 'EM') && text.trim()) return `_${text.trim()}_`;
    if (tag === 'TD' || tag === 'TH') return ` ${text} `;
    return BLOCKS.has(tag) ? `\n${text}\n` : text;
  };
  const children = (element: Element) => [...element.childNodes].map(inline).join('');
  const line = (text: string) => squeeze(text).trim();

  const list = (element: Element, ordered: boolean): string => {
    const items = [...element.children].filter((child) => child.tagName.toUpperCase() === 'LI' && !skipped(child));
    return items
      .map((item, index) => {
        const [first = '', ...rest] = children(item).split('\n').map((part) => part.trimEnd()).filter((part) => part.trim() !== '');
        const marker = ordered ? `${index + 1}.` : '-';
        return [`${marker} ${first.trim()}`, ...rest.map((part) => `  ${part}`)].join('\n');
      })
      .join('\n');
  };

  const rowsOf = (tableElement: Element) =>
    [...tableElement.querySelectorAll(':scope > tr, :scope > thead > tr, :scope > tbody > tr, :scope > tfoot > tr')].filter((row) => !skipped(row));

  const table = (element: Element): string => {
    if (!isDataTable(element)) {
      // Layout: a row's cells on one line, a nested table's rows as lines of their own.
      return rowsOf(element)
        .map((row) => children(row).split('\n').map(line).filter(Boolean).join('\n'))
        .filter(Boolean)
        .join('\n');
    }
    const cells = rowsOf(element).map((row) => [...row.children].filter((cell) => !skipped(cell)).map((cell) => line(children(cell)).replaceAll('|', '\\|')));
    const width = Math.max(...cells.map((row) => row.length), 0);
    if (width === 0) return '';
    const padded = cells.map((row) => [...row, ...Array<string>(width - row.length).fill('')]);
    const markdownRow = (row: string[]) => `| ${row.join(' | ')} |`;
    const caption = element.querySelector(':scope > caption');
    return [...(caption ? [line(caption.textContent ?? ''), ''] : []), markdownRow(padded[0]!), markdownRow(padded[0]!.map(() => '---')), ...padded.slice(1).map(markdownRow)].join('\n');
  };

  return inline(document.body)
    .split('\n')
    .map((part) => (/^\s*([-|#]|\d+\.|```)/.test(part) ? part.trimEnd() : line(part)))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * The walk, sent as source (built once), with a no-op `__name`: a transpiler that keeps function
 * names (esbuild's keepNames, as tsx runs) wraps the walk's helpers in calls to it, which the page lacks.
 */
const TO_MARKDOWN_SOURCE = `(() => { const __name = (target) => target; return (${toMarkdown.toString()})(); })()`;
