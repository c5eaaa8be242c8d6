// One list table for every page: a real <table className="list"> (the class globals.css styles),
// a <th scope="col"> per column, numeric columns right-aligned (`num`), an optional visually hidden
// caption (the table's accessible name), and when there are no rows either the page's empty-state
// paragraph or the table with an empty body. No hooks and no 'use client': server pages pass cell
// functions to it directly, and the client components that import it bundle it with themselves.
import type { ReactNode } from 'react';

export interface Column<Row> {
  /** The column's header cell content (`<th scope="col">`). */
  header: ReactNode;
  /** The body cell's content for one row. */
  cell: (row: Row) => ReactNode;
  /** React key of the column (columns made from data, one per probe); defaults to its index. */
  key?: string;
  /** Classes of the body cell (`small`, `mono small`), or per row (`status s-running`). */
  className?: string | ((row: Row) => string | undefined);
  /** Classes of the header cell besides `num` (`mono`). */
  headerClassName?: string;
  /** Right-aligned tabular figures: `num` on the header and on every body cell (`className: 'num'` for the cells alone). */
  numeric?: boolean;
  /** The body cell is the row's header: `<th scope="row">` instead of `<td>`. */
  rowHeader?: boolean;
  /** The body cell's `title` (shown on hover), per row. */
  title?: (row: Row) => string | undefined;
  /** `data-testid` of every body cell of this column. */
  testId?: string;
}

export interface DataTableProps<Row> {
  rows: readonly Row[];
  /** A stable key per row (an id, `system/event`; the index only where rows have none). */
  rowKey: (row: Row, index: number) => string | number;
  /** The columns in order; `false`, `null` and `undefined` entries are left out (a column only some roles see). */
  columns: readonly (Column<Row> | false | null | undefined)[];
  /** The table's accessible name, as a visually hidden `<caption>`. */
  caption?: ReactNode;
  /** When there are no rows, this text in a `<p>` instead of the table; without it an empty table is drawn. */
  empty?: ReactNode;
  /** The empty-state paragraph's classes: `empty` (a dashed box) unless the page says `muted`. */
  emptyClassName?: string;
  emptyTestId?: string;
  /** Classes besides `list` (`side-by-side`). */
  className?: string;
  testId?: string;
  /** Draw no header row (a two-column key/value table whose row headers say everything). */
  noHead?: boolean;
}

function classes(...names: (string | undefined | false)[]): string | undefined {
  const joined = names.filter(Boolean).join(' ');
  return joined || undefined;
}

function columnKey<Row>(column: Column<Row>, index: number): string {
  return column.key ?? String(index);
}

export function DataTable<Row>({ rows, rowKey, columns, caption, empty, emptyClassName = 'empty', emptyTestId, className, testId, noHead }: DataTableProps<Row>) {
  if (rows.length === 0 && empty !== undefined) {
    return (
      <p className={emptyClassName} data-testid={emptyTestId}>
        {empty}
      </p>
    );
  }
  const shown = columns.filter((c): c is Column<Row> => Boolean(c));
  return (
    <table className={classes('list', className)} data-testid={testId}>
      {caption !== undefined ? <caption className="visually-hidden">{caption}</caption> : null}
      {noHead ? null : (
        <thead>
          <tr>
            {shown.map((c, i) => (
              <th key={columnKey(c, i)} scope="col" className={classes(c.numeric && 'num', c.headerClassName)}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
      )}
      <tbody>
        {rows.map((row, index) => (
          <tr key={rowKey(row, index)}>
            {shown.map((c, i) => {
              const props = {
                className: classes(c.numeric && 'num', typeof c.className === 'function' ? c.className(row) : c.className),
                title: c.title?.(row),
                'data-testid': c.testId,
              };
              return c.rowHeader ? (
                <th key={columnKey(c, i)} scope="row" {...props}>
                  {c.cell(row)}
                </th>
              ) : (
                <td key={columnKey(c, i)} {...props}>
                  {c.cell(row)}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
