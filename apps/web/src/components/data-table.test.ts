// The list table's markup, rendered to HTML as a server page renders it: the semantics the pages'
// CSS and browser tests rely on (table.list, th scope, num cells, caption, test ids, empty state).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { type Column, DataTable, type DataTableProps } from './data-table';

interface Row {
  id: string;
  name: string;
  count: number;
  state: 'running' | 'stopped';
}

const rows: Row[] = [
  { id: 'a', name: 'alpha', count: 3, state: 'running' },
  { id: 'b', name: 'beta', count: 1200, state: 'stopped' },
];

const render = (props: DataTableProps<Row>) => renderToStaticMarkup(createElement(DataTable<Row>, props));

describe('DataTable', () => {
  it('draws a list table: caption, column headers, one row per item, cell classes', () => {
    const columns: Column<Row>[] = [
      { header: 'Name', cell: (r) => createElement('strong', null, r.name) },
      { header: 'Count', numeric: true, className: 'small', cell: (r) => r.count },
      { header: 'State', className: (r) => `status s-${r.state}`, title: (r) => `since ${r.id}`, testId: 'state', cell: (r) => r.state },
    ];
    expect(render({ rows, rowKey: (r) => r.id, columns, caption: 'Things, by name', testId: 'things' })).toBe(
      '<table class="list" data-testid="things"><caption class="visually-hidden">Things, by name</caption>' +
        '<thead><tr><th scope="col">Name</th><th scope="col" class="num">Count</th><th scope="col">State</th></tr></thead>' +
        '<tbody>' +
        '<tr><td><strong>alpha</strong></td><td class="num small">3</td><td class="status s-running" title="since a" data-testid="state">running</td></tr>' +
        '<tr><td><strong>beta</strong></td><td class="num small">1200</td><td class="status s-stopped" title="since b" data-testid="state">stopped</td></tr>' +
        '</tbody></table>',
    );
  });

  it('leaves out columns given as false (a column only some roles see), and marks row headers', () => {
    const html = render({
      rows: rows.slice(0, 1),
      rowKey: (r) => r.id,
      className: 'side-by-side',
      columns: [{ header: 'Name', rowHeader: true, className: 'mono', cell: (r) => r.name }, false, null, { header: 'Extra', headerClassName: 'mono', cell: () => 'x' }],
    });
    expect(html).toBe(
      '<table class="list side-by-side"><thead><tr><th scope="col">Name</th><th scope="col" class="mono">Extra</th></tr></thead>' +
        '<tbody><tr><th scope="row" class="mono">alpha</th><td>x</td></tr></tbody></table>',
    );
  });

  it('says the empty state instead of an empty table when given one, and draws an empty body when not', () => {
    const columns: Column<Row>[] = [{ header: 'Name', cell: (r) => r.name }];
    expect(render({ rows: [], rowKey: (r) => r.id, columns, empty: 'Nothing yet.', emptyTestId: 'none' })).toBe('<p class="empty" data-testid="none">Nothing yet.</p>');
    expect(render({ rows: [], rowKey: (r) => r.id, columns, empty: 'None.', emptyClassName: 'muted' })).toBe('<p class="muted">None.</p>');
    expect(render({ rows: [], rowKey: (r) => r.id, columns })).toBe('<table class="list"><thead><tr><th scope="col">Name</th></tr></thead><tbody></tbody></table>');
  });

  it('draws no header row for a key/value table', () => {
    const html = render({ rows: rows.slice(1), rowKey: (r) => r.id, noHead: true, columns: [{ header: 'Key', rowHeader: true, cell: (r) => r.name }, { header: 'Value', numeric: true, cell: (r) => r.count }] });
    expect(html).toBe('<table class="list"><tbody><tr><th scope="row">beta</th><td class="num">1200</td></tr></tbody></table>');
  });
});
