// Rewrites a bundled file so that it holds no character above U+00FF, each written as the escape
// that means exactly the same. V8 keeps every loaded module's source text for the process's
// life, and one such character makes it a string of two bytes a character: the bundle's largest
// chunk, 3.84 MB, was held as 7.67 MB (docs/performance.md, decision 61). esbuild's ASCII output
// escapes strings and identifiers but not comments, regular expressions or the text of tagged
// templates (a tag may read the raw text, which an escape changes).
//
// Where each character lies is told by the TypeScript parser, which knows a regular expression
// from a division and a template's text from its `${…}`:
// - comments: any text will do;
// - strings, regular expressions, untagged templates: `\uXXXX` for each UTF-16 unit (a pair of
//   escapes is one code point in a `u` or `v` expression, as the literal pair was: ECMA-262
//   §22.2.1, RegExpUnicodeEscapeSequence); an identity escape `\…` becomes the escape of `…`,
//   and a backslash before U+2028 or U+2029, a line continuation, is nothing as it was;
// - identifiers: `\uXXXX`, or `\u{XXXXX}` above U+FFFF;
// - a tagged template only when its tag reads the cooked strings alone (our `html`), checked in
//   the file itself; any other place fails the build, naming it.
import ts from 'typescript';

const WIDE = /[^\0-\xff]/;
/** An escape sequence (a backslash and what it escapes) or one character above U+00FF. */
const ESCAPE_OR_WIDE = /\\[\s\S]|[^\0-\xff]/g;
const LINE_CONTINUATION = /^\\[\u2028\u2029]$/;

export class OneByteSourceError extends Error {}

const unit = (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
const units = (text) => text.replace(/[^\0-\xff]/g, unit);

/** The text of a string, regular expression or template, each wide character escaped. */
function escapeLiteral(text) {
  return text.replace(ESCAPE_OR_WIDE, (match) => {
    if (match.length === 1) return unit(match);
    if (!WIDE.test(match)) return match;
    return LINE_CONTINUATION.test(match) ? '' : unit(match[1]);
  });
}

function escapeIdentifier(text) {
  return text.replace(/[^\0-\xff]/gu, (c) => {
    const point = c.codePointAt(0);
    return point > 0xffff ? `\\u{${point.toString(16).toUpperCase()}}` : unit(c);
  });
}

/** Nothing to read beside the one file: no library, no import followed, nothing written. */
const ALONE = { noLib: true, noResolve: true, allowJs: true, types: [], noEmit: true };

/**
 * The syntax errors TypeScript's parser met in `source`, through its public API: a program of
 * that one file, already parsed, whose syntactic diagnostics are the parser's own (and, for
 * JavaScript, syntax only TypeScript has). The parser's `parseDiagnostics` is internal.
 */
function syntaxErrors(source) {
  const host = {
    getSourceFile: (name) => (name === source.fileName ? source : undefined),
    fileExists: (name) => name === source.fileName,
    readFile: (name) => (name === source.fileName ? source.text : undefined),
    getDefaultLibFileName: () => 'lib.d.ts',
    writeFile: () => {},
    getCurrentDirectory: () => '/',
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
  };
  return ts.createProgram({ rootNames: [source.fileName], options: ALONE, host }).getSyntacticDiagnostics(source);
}

/** Returns `text` with every character above U+00FF escaped; throws OneByteSourceError where that would change what it does. */
export function oneByteSource(text, file) {
  if (!WIDE.test(text)) return text;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const cookedTags = new Map();
  const place = (at) => {
    const { line, character } = source.getLineAndCharacterOfPosition(at);
    return `${file}:${line + 1}:${character + 1}`;
  };
  const fail = (at, what) => {
    throw new OneByteSourceError(`${place(at)}: ${what} (U+${text.codePointAt(at).toString(16).toUpperCase()}); write it escaped in the source`);
  };
  // A file the parser misread (syntax newer than it knows) would have its places misjudged.
  const misread = syntaxErrors(source).reduce((first, one) => (first === undefined || one.start < first.start ? one : first), undefined);
  if (misread) throw new OneByteSourceError(`${place(misread.start)}: TypeScript cannot parse this (${ts.flattenDiagnosticMessageText(misread.messageText, ' ')}), so where its characters above U+00FF stand is not known`);

  /** Whether a tag is a function of this file that reads only `strings[i]` and `strings.length`. */
  function readsCookedOnly(tag) {
    if (!ts.isIdentifier(tag)) return false;
    const name = tag.text;
    if (!cookedTags.has(name)) cookedTags.set(name, checkCookedOnly(name));
    return cookedTags.get(name);
  }
  function checkCookedOnly(name) {
    const declarations = source.statements.filter((s) => ts.isFunctionDeclaration(s) && s.name?.text === name);
    const [declaration] = declarations;
    const strings = declaration?.parameters[0]?.name;
    if (declarations.length !== 1 || !declaration.body || !strings || !ts.isIdentifier(strings)) return false;
    let safe = true;
    const visit = (node) => {
      if (!safe) return;
      // Every use of the name in the file calls this function: none declares or assigns it again
      // (an export is read-only where it is imported).
      if (ts.isIdentifier(node) && node.text === name) {
        const p = node.parent;
        safe = p === declaration || (ts.isTaggedTemplateExpression(p) && p.tag === node) || (ts.isCallExpression(p) && p.expression === node)
          || ((ts.isPropertyAccessExpression(p) || ts.isPropertyAssignment(p)) && p.name === node) || (ts.isBindingElement(p) && p.propertyName === node)
          || ts.isExportSpecifier(p);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    // The strings are only read, by an index of numbers and names (never `strings['raw']`) or
    // `.length`, and passed nowhere. Writes need no check: the array is frozen.
    const isIndex = (node) => ts.isNumericLiteral(node) || ts.isIdentifier(node)
      || (ts.isBinaryExpression(node) && [ts.SyntaxKind.PlusToken, ts.SyntaxKind.MinusToken].includes(node.operatorToken.kind) && isIndex(node.left) && isIndex(node.right));
    const visitBody = (node) => {
      if (!safe) return;
      if (ts.isIdentifier(node) && node.text === strings.text) {
        const p = node.parent;
        safe = p.expression === node && ((ts.isElementAccessExpression(p) && isIndex(p.argumentExpression)) || (ts.isPropertyAccessExpression(p) && p.name.text === 'length'));
      }
      ts.forEachChild(node, visitBody);
    };
    if (safe) ts.forEachChild(declaration.body, visitBody);
    return safe;
  }

  /** The token holding position `at`: its start, end and escaped text. */
  function rewrite(at) {
    let node = source;
    let gapStart = source.pos;
    for (;;) {
      let inside;
      ts.forEachChild(node, (child) => {
        if (child.pos <= at && at < child.end) inside = child;
        else if (child.end <= at) gapStart = child.end;
        return inside;
      });
      if (!inside) break;
      node = inside;
      gapStart = node.pos;
    }
    const start = node.getStart(source);
    const token = text.slice(start, node.end);
    if (node !== source && at >= start) {
      switch (node.kind) {
        case ts.SyntaxKind.Identifier:
        case ts.SyntaxKind.PrivateIdentifier:
          return { start, end: node.end, escaped: escapeIdentifier(token) };
        case ts.SyntaxKind.StringLiteral:
        case ts.SyntaxKind.RegularExpressionLiteral:
          return { start, end: node.end, escaped: escapeLiteral(token) };
        case ts.SyntaxKind.NoSubstitutionTemplateLiteral:
        case ts.SyntaxKind.TemplateHead:
        case ts.SyntaxKind.TemplateMiddle:
        case ts.SyntaxKind.TemplateTail: {
          const template = ts.isTemplateSpan(node.parent) ? node.parent.parent : ts.isTemplateExpression(node.parent) ? node.parent : node;
          const tagged = ts.isTaggedTemplateExpression(template.parent) && template.parent.template === template ? template.parent : undefined;
          if (tagged && !readsCookedOnly(tagged.tag)) fail(at, `a character in a template tagged by \`${tagged.tag.getText(source)}\`, which may read its raw text`);
          return { start, end: node.end, escaped: escapeLiteral(token) };
        }
      }
    }
    // Between the tokens the nodes hold: punctuation, keywords, whitespace and comments.
    scanner.resetTokenState(gapStart);
    let kind = scanner.scan();
    while (scanner.getTokenEnd() <= at && kind !== ts.SyntaxKind.EndOfFileToken) kind = scanner.scan();
    if (kind !== ts.SyntaxKind.SingleLineCommentTrivia && kind !== ts.SyntaxKind.MultiLineCommentTrivia) fail(at, `a character in a ${ts.SyntaxKind[kind]}`);
    const comment = scanner.getTokenStart();
    return { start: comment, end: scanner.getTokenEnd(), escaped: units(text.slice(comment, scanner.getTokenEnd())) };
  }

  let out = '';
  let done = 0;
  const wide = new RegExp(WIDE.source, 'g');
  for (let found = wide.exec(text); found; found = wide.exec(text)) {
    const { start, end, escaped } = rewrite(found.index);
    out += text.slice(done, start) + escaped;
    done = end;
    wide.lastIndex = end;
  }
  return out + text.slice(done);
}
