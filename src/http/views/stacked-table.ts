/**
 * A table of records that a phone shows as one block per row (`table.stack` in the stylesheet):
 * the first cell is the block's title, and every other cell follows its column's name, which the
 * cell carries as `data-label` because a stacked table's headings are out of sight.
 *
 * Each element names its table role: a phone's stylesheet makes them `display: block`, and
 * WebKit (Safari, VoiceOver) then drops the table from the accessibility tree, so a screen reader
 * would read the cells as loose text with no column to relate them to (WAI-ARIA 1.2, "table").
 */
import { type Html, type Interpolation, html } from './html.js';

export interface StackedColumn {
  /** The column's name: its heading, and the label before each of its cells on a phone. */
  heading: string;
  /** Each of its cells' class (`links` for a cell of links, which must be 24 px tall). */
  cellClass?: string;
  /** A column of buttons, each named for what it acts on: its heading is for screen readers only, and its cells have no label. */
  buttons?: boolean;
}

export interface StackedRow {
  cells: readonly Interpolation[];
  /** What the row records, as `data-kind`, for a reader of the page's markup (a test) to find it by. */
  kind?: string;
}

/** `tableClass`: a class beside `stack` for this table's own styles (`staff-log`). */
export function stackedTable(columns: readonly StackedColumn[], rows: readonly StackedRow[], options: { tableClass?: string } = {}): Html {
  const label = (column: StackedColumn, index: number) => (index === 0 || column.buttons ? undefined : column.heading);
  return html`<div class="table-wrap"><table role="table" class="stack${options.tableClass === undefined ? '' : ` ${options.tableClass}`}">
<thead role="rowgroup"><tr role="row">${columns.map((column) => html`<th role="columnheader" scope="col">${column.buttons ? html`<span class="visually-hidden">${column.heading}</span>` : column.heading}</th>`)}</tr></thead>
<tbody role="rowgroup">${rows.map((row) => html`<tr role="row"${attribute('data-kind', row.kind)}>${columns.map((column, i) => html`<td role="cell"${attribute('class', column.cellClass)}${attribute('data-label', label(column, i))}>${row.cells[i]}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

function attribute(name: string, value: string | undefined): Html | '' {
  return value === undefined ? '' : html` ${name}="${value}"`;
}
