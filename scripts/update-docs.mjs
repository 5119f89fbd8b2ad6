#!/usr/bin/env node
// Regenerates the generated tables of docs/ from the code (run `npm run build` first): the
// settings of docs/configuration.md and the column types of docs/database.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { configMarkdownTable } from '../dist/config/index.js';
import { columnTypesMarkdown } from '../dist/db/schema/docs.js';

/** Replaces what lies between `<!-- name:start ... -->` and `<!-- name:end -->` in `doc`. */
function replaceBetween(doc, name, table) {
  const text = readFileSync(doc, 'utf8');
  const startMarker = text.indexOf(`<!-- ${name}:start`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (startMarker < 0 || end < 0) throw new Error(`${doc} lacks the ${name} markers`);
  const start = text.indexOf('\n', startMarker) + 1;
  writeFileSync(doc, `${text.slice(0, start)}\n${table.trim()}\n\n${text.slice(end)}`);
}

replaceBetween('docs/configuration.md', 'config-table', configMarkdownTable());
replaceBetween('docs/database.md', 'column-types', columnTypesMarkdown());
