/**
 * What a page in Chinese must not show: an English sentence a translator missed. Proper nouns
 * (an app's or a member's name, a scope, a URL, code) are the caller's to allow.
 */

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&nbsp;': ' ' };

/** The text a reader sees: no script, style, code or tags; attributes a reader meets (title, placeholder, aria-label, alt) kept. */
export function visibleText(html: string): string {
  const attributes = [...html.matchAll(/\s(?:title|placeholder|aria-label|alt)="([^"]*)"/g)].map((m) => m[1]).join('\n');
  const body = html
    .replace(/<(script|style|code|pre|kbd|samp)\b[\s\S]*?<\/\1>/gi, '\n')
    .replace(/<[^>]+>/g, '\n');
  return `${body}\n${attributes}`.replace(/&(?:amp|lt|gt|quot|#39|nbsp);/g, (e) => ENTITIES[e]!);
}

/**
 * Runs of three or more English words in the page's visible text, less those `allowed` matches:
 * a Chinese page with any has an untranslated sentence.
 */
export function englishSentences(html: string, allowed: readonly (string | RegExp)[] = []): string[] {
  const found = visibleText(html).match(/[A-Za-z][A-Za-z'’-]*(?:[ ,]+[A-Za-z][A-Za-z'’-]*){2,}/g) ?? [];
  return found.filter((run) => !allowed.some((a) => (typeof a === 'string' ? run.includes(a) || a.includes(run) : a.test(run))));
}
