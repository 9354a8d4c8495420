/** markdown-it's own rules, imported to be wrapped (markdown.ts); the package declares only its entry. */
declare module 'markdown-it/lib/rules_block/blockquote.mjs' {
  import type { StateBlock } from 'markdown-it';

  export default function blockquote(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean;
}
