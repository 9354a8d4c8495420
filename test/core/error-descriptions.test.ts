/**
 * RFC 6749 5.2 (and RFC 6750 3, RFC 7591 3.2.2): an `error_description` holds %x20-21 / %x23-5B /
 * %x5D-7E alone: no double quote, no backslash, nothing past printable ASCII. Every one the
 * service writes is an `OAuthError`'s, which keeps to them whatever it quotes of a request, or a
 * literal of a route's own; the words the source writes for them are read from it here, so none
 * is written with a character its answer would have to change.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { BEARER_REFUSALS, insufficientScope } from '../../src/core/api/bearer.js';
import { OAuthError, asErrorDescription } from '../../src/core/errors.js';
import { SCOPES, type Scope } from '../../src/core/oauth/scopes.js';
import { staticFileRefusal } from '../../src/http/plugins/errors.js';

/** RFC 6749 5.2's `error_description` characters. */
const ALLOWED = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;

test('an OAuthError\'s description keeps to the characters of RFC 6749 5.2 whatever it quotes, and one already in them is kept as written', () => {
  for (const text of ['send "Authorization: Bearer <token>"', 'a\\b', 'caf\u00e9', 'two\nlines', 'a\ttab', '\u4e2d\u6587', 'a\u0000b']) {
    const error = new OAuthError('invalid_request', text);
    assert.match(error.description, ALLOWED, JSON.stringify(text));
    assert.equal(error.description, asErrorDescription(text));
  }
  assert.equal(new OAuthError('invalid_request', 'the value \'x\' (RFC 6749 5.2): 100% [ok] {y} ~z').description, 'the value \'x\' (RFC 6749 5.2): 100% [ok] {y} ~z');
});

test('the bearer gates\' refusals and the /static refusals are written in those characters, as they read in their source', () => {
  const refusals: OAuthError[] = [...Object.values(BEARER_REFUSALS)];
  for (const scope of Object.keys(SCOPES) as Scope[]) {
    for (const kind of ['access', 'personal'] as const) refusals.push(insufficientScope(scope, 'Bearer', kind), insufficientScope(scope, 'DPoP', kind));
  }
  for (const statusCode of [400, 403, 412, 416]) refusals.push(staticFileRefusal({ statusCode, headers: { 'Content-Range': 'bytes */10' } }) as OAuthError);
  for (const refusal of refusals) {
    assert.ok(refusal instanceof OAuthError);
    assert.match(refusal.description, ALLOWED, refusal.description);
  }
});

/** Constructors and builders whose argument at this index becomes an `error_description`. */
const DESCRIBED: Readonly<Record<string, number>> = {
  OAuthError: 1, DpopProofError: 1, DocumentFetchesBusyError: 0, PasswordsBusyError: 0, ClientDocumentError: 0,
  invalidToken: 0, rateLimited: 0, pageError: 0,
  // `required(params, name, what)`: "The <name> parameter is required: <what>".
  required: 2,
};

/** Builders of one file alone: their names mean other things elsewhere. */
const DESCRIBED_IN: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  'src/core/oauth/dpop/proof.ts': { invalid: 0 },
  // `clientErrorHandler`'s answers, written before any route.
  'src/http/plugins/errors.ts': { answer: 1 },
};

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name).split('\\').join('/'))
    .sort();
}

/** The text a description's expression is sure to hold: its literals, through templates, `+`, `?:` and the file's constants. */
function literalParts(node: ts.Expression, constants: ReadonlyMap<string, ts.Expression>, seen = new Set<string>()): string[] {
  if (ts.isStringLiteralLike(node)) return [node.text];
  if (ts.isTemplateExpression(node)) {
    return [node.head.text, ...node.templateSpans.flatMap((span) => [...literalParts(span.expression, constants, seen), span.literal.text])];
  }
  if (ts.isParenthesizedExpression(node)) return literalParts(node.expression, constants, seen);
  if (ts.isConditionalExpression(node)) return [...literalParts(node.whenTrue, constants, seen), ...literalParts(node.whenFalse, constants, seen)];
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return [...literalParts(node.left, constants, seen), ...literalParts(node.right, constants, seen)];
  }
  if (ts.isIdentifier(node) && constants.has(node.text) && !seen.has(node.text)) {
    seen.add(node.text);
    return literalParts(constants.get(node.text)!, constants, seen);
  }
  return [];
}

/** Every literal part of a description written in `file` that holds a character RFC 6749 5.2 keeps out. */
function outsideCharacters(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const constants = new Map<string, ts.Expression>();
  const descriptions: ts.Expression[] = [];
  const builders = { ...DESCRIBED, ...DESCRIBED_IN[file] };
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) constants.set(node.name.text, node.initializer);
    if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && Object.hasOwn(builders, node.expression.text)) {
      const argument = node.arguments?.[builders[node.expression.text]!];
      if (argument) descriptions.push(argument);
    }
    if (ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) && node.name.text === 'error_description') {
      descriptions.push(node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return descriptions.flatMap((description) => literalParts(description, constants)
    .filter((part) => !ALLOWED.test(part))
    .map((part) => `${file}:${source.getLineAndCharacterOfPosition(description.getStart()).line + 1}: ${JSON.stringify(part)}`));
}

test('the reader of descriptions finds the literals of a description, through templates, conditions and constants', () => {
  const file = 'x.ts';
  const constants = new Map<string, ts.Expression>();
  const source = ts.createSourceFile(file, 'const A = \'a"\'; f(`b${x ? \'c\' : A}d` + \'e\');', ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const statement = source.statements[0] as ts.VariableStatement;
  constants.set('A', statement.declarationList.declarations[0]!.initializer!);
  const call = ((source.statements[1] as ts.ExpressionStatement).expression as ts.CallExpression).arguments[0]!;
  assert.deepEqual(literalParts(call, constants), ['b', 'c', 'a"', 'd', 'e']);
});

test('every error_description the source writes is written in the characters of RFC 6749 5.2: none would be changed on its way out', () => {
  assert.deepEqual(sourceFiles('src').flatMap(outsideCharacters), []);
});
