#!/usr/bin/env node
// Writes schema/exec-server.schema.json from the protocol table (run after `npm run build`).
import fs from 'node:fs';
import { protocolJsonSchemaText } from '../dist/protocol/json-schema.js';

const target = new URL('../schema/exec-server.schema.json', import.meta.url);
fs.mkdirSync(new URL('.', target), { recursive: true });
fs.writeFileSync(target, protocolJsonSchemaText());
process.stderr.write(`wrote ${target.pathname}\n`);
