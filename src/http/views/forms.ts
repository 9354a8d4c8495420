/**
 * A form sent back with problems (docs/site.md, "Forms"): every field at fault is named, in a
 * summary at the top that is read out when the page loads, and again right below the field, whose
 * control is marked `aria-invalid` and described by that message (WCAG 2.2 SC 3.3.1, 3.3.3).
 * Everything is in the markup: no script.
 */
import type { FieldProblem } from '../../core/errors.js';
import { type Html, html } from './html.js';

export type FormError = FieldProblem;

/** The problems a page shows: one, several, or none. */
export type FormErrors = FormError | readonly FormError[] | undefined;

/** Messages start lower-case in the core ("name must be…"); a page shows a sentence. */
export function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?。！？]$/.test(text) ? text : `${text}.`;
}

export function errorList(errors: FormErrors): readonly FormError[] {
  if (errors === undefined) return [];
  return Array.isArray(errors) ? errors : [errors as FormError];
}

/** The problems among `errors` that belong to one of `fields`: a page with several forms gives each its own. */
export function errorsFor(errors: FormErrors, ...fields: string[]): FormError[] {
  return errorList(errors).filter((e) => fields.includes(e.field));
}

/** What is wrong with `field`, as one sentence or more, or `undefined` when nothing is. */
function messageOf(errors: FormErrors, field: string): string | undefined {
  const messages = errorList(errors).filter((e) => e.field === field).map((e) => sentence(e.message));
  return messages.length === 0 ? undefined : messages.join(' ');
}

/**
 * The top of a form sent back with problems: each problem once, in one alert (`id="form-error"`).
 * A problem of the whole form (a throttled one, say) is only here.
 */
export function errorSummary(errors: FormErrors): Html | '' {
  const list = errorList(errors);
  if (list.length === 0) return '';
  if (list.length === 1) return html`<p class="alert" role="alert" id="form-error">${sentence(list[0]!.message)}</p>`;
  return html`<div class="alert" role="alert" id="form-error">
  <p>${list.length} things need fixing:</p>
  <ul>${list.map((e) => html`<li>${sentence(e.message)}</li>`)}</ul>
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
export function fieldMessage(errors: FormErrors, field: string, options: { id?: string } = {}): Html | '' {
  const message = messageOf(errors, field);
  return message === undefined ? '' : html`<p class="field-error" id="${options.id ?? field}-error">${message}</p>`;
}

/**
 * For a control whose message is only in the summary: `aria-invalid` and a description pointing
 * at the summary. Prefer `control` with `fieldMessage`.
 */
export function invalid(errors: FormErrors, ...fields: string[]): Html | string {
  return errorsFor(errors, ...fields).length > 0 ? html`aria-invalid="true" aria-describedby="form-error"` : '';
}
