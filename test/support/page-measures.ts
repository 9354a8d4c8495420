/**
 * What the browser tests measure on a page, in headless Chromium, as WCAG 2.2 measures it: pointer
 * targets big enough for a finger (SC 2.5.8), a page no wider than its window, and every control's
 * name starting with the words it shows (SC 2.5.3). Each returns every problem it finds, as lines
 * to report, so a test lists them all rather than the first. The member's pages
 * (test/site/phone-browser.test.ts) and the staff console's (test/staff/console-targets-browser.test.ts)
 * are measured by the same rules.
 */
import type { Page } from 'playwright-core';

/** WCAG 2.2 SC 2.5.8: a target is at least 24 by 24 CSS pixels. */
export const MINIMUM_TARGET = 24;

/** What the elements a pointer or a voice command acts on are, on our pages. */
const TARGETS = 'a[href], button, input:not([type=hidden]), select, textarea, summary';

/** Every visible pointer target under 24 × 24 CSS px that is not a link inside a sentence, as `a.class "words" W×H`. */
export function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(({ selector, minimum }) => [...document.querySelectorAll(selector)].flatMap((element) => {
    const box = element.getBoundingClientRect();
    // Not shown, or moved off the page until focused (the skip link, measured where it appears).
    if (box.width === 0 || box.height === 0 || box.right <= 0 || getComputedStyle(element).visibility === 'hidden') return [];
    // The SC's "inline" exception, concretely: a link whose parent is a paragraph, list item,
    // definition or table cell holding words (a letter or digit) of its own beside the link,
    // so the link's height is the line's. Header, footer and navigation hold standalone links,
    // whatever separates them.
    const parent = element.parentElement;
    if (element.localName === 'a' && parent && /^(p|li|dd|td)$/.test(parent.localName) && !element.closest('header, footer, nav')
      && /[\p{L}\p{N}]/u.test([...parent.childNodes].filter((node) => node !== element).map((node) => node.textContent).join(''))) return [];
    if (box.width >= minimum - 0.01 && box.height >= minimum - 0.01) return [];
    const words = (element as HTMLElement).innerText?.trim() || element.getAttribute('aria-label') || element.getAttribute('type') || '';
    return [`${element.localName}${element.className ? `.${element.className.split(' ').join('.')}` : ''} "${words.slice(0, 30)}" ${box.width.toFixed(1)}×${box.height.toFixed(1)}`];
  }), { selector: TARGETS, minimum: MINIMUM_TARGET });
}

/** How wide the page is laid out, in CSS px: wider than the window scrolls sideways. */
export function pageWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

/**
 * Every link and button that shows words whose accessible name, as Chromium gives it to assistive
 * technology, does not start with those words (WCAG 2.5.3 Label in Name), as
 * `shows "…", named "…": markup`.
 */
export async function namesNotStartingWithLabel(page: Page): Promise<string[]> {
  // The words each control shows, then its name as Chromium gives it to assistive technology.
  const shown = await page.evaluate((selector) => [...document.querySelectorAll(selector)].flatMap((element, index) => {
    element.removeAttribute('data-label-in-name');
    const box = element.getBoundingClientRect();
    const words = element instanceof HTMLInputElement ? element.value : (element as HTMLElement).innerText;
    if (box.width === 0 || box.height === 0 || !words.trim()) return [];
    element.setAttribute('data-label-in-name', String(index));
    return [{ words, markup: element.outerHTML.slice(0, 160) }];
  }), 'a[href], button, summary, input[type=submit], input[type=button]');
  const cdp = await page.context().newCDPSession(page);
  const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
  const { nodeIds } = await cdp.send('DOM.querySelectorAll', { nodeId: root.nodeId, selector: '[data-label-in-name]' });
  if (nodeIds.length !== shown.length) throw new Error(`${shown.length} controls marked, ${nodeIds.length} found`);
  // Compared as a voice command hears them: case, spaces and punctuation aside.
  const spoken = (text: string) => text.toLowerCase().replace(/[\s\p{P}\p{S}]/gu, '');
  const problems: string[] = [];
  for (const [i, nodeId] of nodeIds.entries()) {
    const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: false });
    const name = String(nodes[0]?.name?.value ?? '');
    if (!spoken(name).startsWith(spoken(shown[i]!.words))) problems.push(`shows "${shown[i]!.words.trim()}", named "${name}": ${shown[i]!.markup}`);
  }
  await cdp.detach();
  return problems;
}
