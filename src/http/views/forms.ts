/**
 * A form sent back with problems (docs/site.md, "Forms"): every field at fault is named, in a
 * summary at the top that is read out when the page loads, and again right below the field, whose
 * control is marked `aria-invalid` and described by that message (WCAG 2.2 SC 3.3.1, 3.3.3).
 * Everything is in the markup: no script.
 */
import type { FieldProblem } from '../../core/errors.js';
import type { Translator } from '../../core/locales.js';
import { Html, html } from './html.js';
import { problemText } from './words.js';

export type FormError = FieldProblem;

/** The problems a page shows: one, several, or none. */
export type FormErrors = FormError | readonly FormError[] | undefined;

/** Messages start lower-case in the core ("name must be…"); a page shows a sentence. */
export function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?。！？]$/.test(text) ? text : `${text}.`;
}

/**
 * What sets a sentence apart from the next in one paragraph: a space, as English sets them, but
 * none after a full-width stop, as Chinese sets them ("每行一个。使用 https…"). A line break in a
 * template is such a space too, as browsers render it.
 */
export function sentenceGap(sentence: string | Html): string {
  const text = sentence instanceof Html ? sentence.value.replace(/<[^>]*>/g, '') : sentence;
  return /[。！？]$/.test(text) ? '' : ' ';
}

/** The space between two runs of words: none after a full-width stop or bracket, nor before a full-width bracket, as Chinese sets them. */
export function spaceBetween(before: string, after: string): string {
  return /[。！？）」]$/.test(before) || /^[（「]/.test(after) ? '' : ' ';
}

/** Sentences as one text, each set apart from the next by `sentenceGap`. */
export function sentences(parts: readonly string[]): string {
  return parts.reduce((text, next) => (text === '' ? next : text + sentenceGap(text) + next), '');
}

export function errorList(errors: FormErrors): readonly FormError[] {
  if (errors === undefined) return [];
  return Array.isArray(errors) ? errors : [errors as FormError];
}

/** The problems among `errors` that belong to one of `fields`: a page with several forms gives each its own. */
export function errorsFor(errors: FormErrors, ...fields: string[]): FormError[] {
  return errorList(errors).filter((e) => fields.includes(e.field));
}

/**
 * How a page words its problems: in the reader's language (the core's words when it has them), and
 * in the summary after the name of the field at fault, since a worded problem ("At most 160
 * characters.") leaves the field unsaid. Without it, the core's English sentences, for the pages
 * not translated yet.
 */
export interface ProblemWords {
  t: Translator;
  /** The label of each field, by name, as the form shows it. */
  labels?: Readonly<Record<string, string>>;
}

function problemSentence(problem: FormError, words: ProblemWords | undefined): string {
  return words ? sentence(problemText(words.t, problem)) : sentence(problem.message);
}

/** What is wrong with `field`, as one sentence or more, or `undefined` when nothing is. */
function messageOf(errors: FormErrors, field: string, words?: ProblemWords): string | undefined {
  const messages = errorList(errors).filter((e) => e.field === field).map((e) => problemSentence(e, words));
  return messages.length === 0 ? undefined : sentences(messages);
}

/** A problem in the summary: after its field's label when the form names one. */
function summaryLine(problem: FormError, words: ProblemWords | undefined): string {
  const text = problemSentence(problem, words);
  const label = words?.labels?.[problem.field];
  return label === undefined ? text : words!.t.text('common.problemOfField', { field: label, problem: text });
}

/**
 * The top of a form sent back with problems: each problem once, in one alert (`id="form-error"`).
 * A problem of the whole form (a throttled one, say) is only here.
 */
export function errorSummary(errors: FormErrors, words?: ProblemWords): Html | '' {
  const list = errorList(errors);
  if (list.length === 0) return '';
  if (list.length === 1) return html`<p class="alert" role="alert" id="form-error">${summaryLine(list[0]!, words)}</p>`;
  return html`<div class="alert" role="alert" id="form-error">
  <p>${words ? words.t.text('common.problemCount', { count: list.length }) : `${list.length} things need fixing:`}</p>
  <ul>${list.map((e) => html`<li>${summaryLine(e, words)}</li>`)}</ul>
</div>`;
}

export interface ControlOptions {
  /** The control's id when it is not the field's name (a page with two forms for one field). */
  id?: string;
  /** The id of the control's hint, which describes it too. */
  hint?: string;
}

/**
 * The attributes of `field`'s control: `aria-describedby` naming its message (when it is at
 * fault, see `fieldMessage`) and its hint, and `aria-invalid="true"` when at fault. One
 * attribute each: a second `aria-describedby` on an element would be ignored.
 */
export function control(errors: FormErrors, field: string, options: ControlOptions = {}): Html {
  const id = options.id ?? field;
  const wrong = messageOf(errors, field) !== undefined;
  const described = [wrong ? `${id}-error` : undefined, options.hint].filter((d) => d !== undefined).join(' ');
  return html`${described === '' ? '' : html`aria-describedby="${described}"`} ${wrong ? html`aria-invalid="true"` : ''}`;
}

/** `field`'s message, placed right below its control (which `control` points at it). */
export function fieldMessage(errors: FormErrors, field: string, options: { id?: string; words?: ProblemWords } = {}): Html | '' {
  const message = messageOf(errors, field, options.words);
  return message === undefined ? '' : html`<p class="field-error" id="${options.id ?? field}-error">${message}</p>`;
}

/**
 * For a control whose message is only in the summary: `aria-invalid` and a description pointing
 * at the summary. Prefer `control` with `fieldMessage`.
 */
export function invalid(errors: FormErrors, ...fields: string[]): Html | string {
  return errorsFor(errors, ...fields).length > 0 ? html`aria-invalid="true" aria-describedby="form-error"` : '';
}

/**
 * "Show password" for the password field `field`, shown by /static/show-password.js and hidden
 * without it (the form works as is): a person typing a new password on a phone sees what they
 * typed before it is the account's.
 */
export function showPasswordSwitch(t: Translator, field: string): Html {
  return html`<div class="check" hidden><input type="checkbox" id="show-${field}" data-show-password="${field}"><label for="show-${field}">${t.text('common.showPassword')}</label></div>`;
}
