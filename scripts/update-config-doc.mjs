#!/usr/bin/env node
// Regenerates the settings table of docs/configuration.md from the settings (after `npm run build`).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const doc = 'docs/configuration.md';
const text = readFileSync(doc, 'utf8');
const table = execFileSync(process.execPath, ['dist/cli/bin.js', 'help', 'config', '--markdown'], {
  encoding: 'utf8',
});
const start = text.indexOf('\n', text.indexOf('<!-- config-table:start')) + 1;
const end = text.indexOf('<!-- config-table:end -->');
writeFileSync(doc, `${text.slice(0, start)}\n${table.trim()}\n\n${text.slice(end)}`);
