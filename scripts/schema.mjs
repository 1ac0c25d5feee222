#!/usr/bin/env node
// Writes the generated reference files (run after `npm run build`):
// schema/exec-server.schema.json from the protocol table, docs/errors.md from the error constructors.
import fs from 'node:fs';
import { ClientErrors } from '../dist/client/errors.js';
import { Errors, ErrorTexts } from '../dist/protocol/errors.js';
import { protocolJsonSchemaText } from '../dist/protocol/json-schema.js';
import { errorTableMarkdown } from './error-table.mjs';

function write(relative, text) {
  const target = new URL(`../${relative}`, import.meta.url);
  fs.mkdirSync(new URL('.', target), { recursive: true });
  fs.writeFileSync(target, text);
  process.stderr.write(`wrote ${relative}\n`);
}

write('schema/exec-server.schema.json', protocolJsonSchemaText());
write('docs/errors.md', errorTableMarkdown({ Errors, ErrorTexts, ClientErrors }));
