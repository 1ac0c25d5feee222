#!/usr/bin/env node
/**
 * A scripted exec-server for client tests: answers initialize, then plays a
 * scenario when it sees process/start. Usage: fake-server.mjs <scenario>
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

const scenario = process.argv[2];
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const output = (processId, seq, text) =>
  send({ method: 'process/output', params: { processId, seq, stream: 'stdout', chunk: Buffer.from(text).toString('base64') } });
const exited = (processId, seq, exitCode) => send({ method: 'process/exited', params: { processId, seq, exitCode } });
const closed = (processId, seq) => send({ method: 'process/closed', params: { processId, seq } });

const scenarios = {
  reorder(id, processId) {
    // Everything out of order, with a duplicate and a stale seq; the response comes last.
    closed(processId, 5);
    output(processId, 2, 'b');
    exited(processId, 4, 7);
    output(processId, 1, 'a');
    output(processId, 2, 'b');
    output(processId, 3, 'c');
    output(processId, 1, 'stale');
    send({ id, result: { processId } });
  },
  'disconnect-after-start'(id, processId) {
    send({ id, result: { processId } });
    output(processId, 1, 'partial');
    setTimeout(() => process.exit(0), 50);
  },
  'key-order'(id, processId) {
    // Valid JSON-RPC in shapes the client's fast path does not take: other key order, escapes.
    send({ id, result: { processId } });
    send({ params: { chunk: Buffer.from('one;').toString('base64'), stream: 'stdout', seq: 1, processId }, method: 'process/output' });
    const escapedId = `"${[...processId].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
    process.stdout.write(
      `{"method":"process/output","params":{"processId":${escapedId},"seq":2,"stream":"stderr","chunk":"${Buffer.from('two').toString('base64')}"}}\n`,
    );
    exited(processId, 3, 0);
    closed(processId, 4);
  },
  'last-words'(id, processId) {
    // The answer, the process's end and the end of output in one write: the client reads them at once.
    const lines = [
      { id, result: { processId } },
      { method: 'process/exited', params: { processId, seq: 1, exitCode: 3 } },
      { method: 'process/closed', params: { processId, seq: 2 } },
    ];
    process.stdout.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''), () => process.exit(0));
  },
  'early-both'(id, processId) {
    // Output on both streams before the answer: each of the session's streams must get its own.
    send({ method: 'process/output', params: { processId, seq: 1, stream: 'stderr', chunk: Buffer.from('ERR\n').toString('base64') } });
    output(processId, 2, 'OUT\n');
    send({ id, result: { processId } });
    exited(processId, 3, 0);
    closed(processId, 4);
  },
  gap(id, processId) {
    // seq 2 never comes as a notification; process/read has it (scenario gap), or has lost it (gap-lost).
    send({ id, result: { processId } });
    output(processId, 1, 'a');
    output(processId, 3, 'c');
    exited(processId, 4, 0);
    closed(processId, 5);
  },
  'bad-chunk'(id, processId) {
    send({ id, result: { processId } });
    send({ method: 'process/output', params: { processId, seq: 1, stream: 'stdout', chunk: 5 } });
  },
  'dies-mid-line'(id, processId) {
    send({ id, result: { processId } });
    process.stdout.write(`{"method":"process/output","params":{"processId":"${processId}","seq":1,"stre`, () => process.exit(134));
  },
  'dies-mid-character'(id, processId) {
    // Cut inside a two-byte UTF-8 character: the line is not even text.
    send({ id, result: { processId } });
    process.stdout.write(Buffer.from([...Buffer.from(`{"method":"x","params":{"name":"`), 0xc3]), () => process.exit(134));
  },
  'fractional-seq'(id, processId) {
    // seq counts from 1 in whole numbers: 1.5 is no event of any order.
    send({ id, result: { processId } });
    output(processId, 1.5, 'half');
    output(processId, 1, 'a');
  },
  'zero-seq'(id, processId) {
    send({ id, result: { processId } });
    output(processId, 0, 'before the first');
  },
  'fractional-exit'(id, processId) {
    send({ id, result: { processId } });
    exited(processId, 1, 2.5);
  },
  'ignores-after-seq'(id, processId) {
    // As gap, but its process/read answers seq 1 whatever afterSeq asks.
    scenarios.gap(id, processId);
  },
  'answer-then-garbage'(id, processId) {
    // The answer and an event, then a line that is not JSON, in one write.
    const answer = JSON.stringify({ id, result: { processId } });
    const event = JSON.stringify({ method: 'process/output', params: { processId, seq: 1, stream: 'stdout', chunk: 'YQ==' } });
    process.stdout.write(`${answer}\n${event}\nNOT JSON\n`);
  },
  'bad-base64'(id, processId) {
    send({ id, result: { processId } });
    send({ method: 'process/output', params: { processId, seq: 1, stream: 'stdout', chunk: 'YW*J' } });
  },
  'bad-base64-reordered'(id, processId) {
    send({ id, result: { processId } });
    send({ params: { chunk: 'YW*J', stream: 'stdout', seq: 1, processId }, method: 'process/output' });
  },
  'closed-on-taken-seq'(id, processId) {
    send({ id, result: { processId } });
    output(processId, 1, 'a');
    output(processId, 2, 'b');
    closed(processId, 2);
  },
  'two-exits'(id, processId) {
    send({ id, result: { processId } });
    exited(processId, 1, 1);
    exited(processId, 2, 2);
    closed(processId, 3);
  },
  'deep-notification'(id, processId) {
    // A notification nested 20,000 deep, a \u escape inside, then the process ends as usual.
    send({ id, result: { processId } });
    process.stdout.write(`{"method":"x/deep","params":${'['.repeat(20_000)}"\\u0041"${']'.repeat(20_000)}}\n`);
    exited(processId, 1, 0);
    closed(processId, 2);
  },
  pair(id, processId) {
    send({ id, result: { processId } });
  },
  'noisy-quiet'(id, processId) {
    send({ id, result: { processId } });
    if (processId !== 'quiet') return;
    for (let seq = 1; seq <= 4097; seq++) output('noisy', seq, 'x');
    exited('quiet', 1, 17);
  },
};

if (scenario === 'deaf-daemon') {
  // A daemon in a session of its own holds our stdout open (a wrapper's leftover would), its pid in
  // $FAKE_DAEMON_PIDFILE for the test to kill. It answers, but stays at EOF.
  const daemon = spawn('sleep', ['60'], { detached: true, stdio: ['ignore', 'inherit', 'ignore'] });
  fs.writeFileSync(process.env.FAKE_DAEMON_PIDFILE, String(daemon.pid));
  daemon.unref();
  setInterval(() => undefined, 60_000);
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.method === 'initialize') send({ id: message.id, result: { sessionId: 'fake-session' } });
  });
} else if (scenario === 'malformed') {
  readline.createInterface({ input: process.stdin }).once('line', () => process.stdout.write('not-json\n'));
} else {
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.id === undefined) return;
    if (message.method === 'initialize' && scenario === 'answers-then-dies') {
      // A whole answer, but its newline never comes: the server exits right after.
      process.stderr.write('FATAL: gone\n');
      return process.stdout.write(`{"id":${message.id},"result":{"sessionId":"s"}}`, () => process.exit(1));
    }
    if (message.method === 'initialize' && scenario === 'dies-mid-answer') {
      // A crash while writing: a last word on stderr, half a line on stdout.
      process.stderr.write('FATAL: out of memory\n');
      return process.stdout.write(`{"id":${message.id},"result":{"sessionId":"ab`, () => process.exit(134));
    }
    if (message.method === 'initialize')
      return send({ id: message.id, result: scenario === 'bad-initialize' ? 42 : { sessionId: 'fake-session' } });
    if (message.method === 'process/start') return scenarios[scenario.replace(/-lost$/, '')](message.id, message.params.processId);
    if (message.method === 'process/read' && scenario === 'ignores-after-seq') {
      const chunks = [{ seq: 1, stream: 'stdout', chunk: Buffer.from('a').toString('base64') }];
      return send({ id: message.id, result: { chunks, nextSeq: 6, exited: true, exitCode: 0, closed: true, failure: null } });
    }
    if (message.method === 'process/read' && scenario.startsWith('gap')) {
      const kept = scenario === 'gap' ? [{ seq: 2, stream: 'stdout', chunk: Buffer.from('b').toString('base64') }] : [];
      const chunks = kept.filter((chunk) => chunk.seq > message.params.afterSeq);
      return send({ id: message.id, result: { chunks, nextSeq: 6, exited: true, exitCode: 0, closed: true, failure: null } });
    }
    if (message.method === 'test/emitPair') {
      // One write holding b#1, a#1, b#2 (scenario pair).
      const { a, b } = message.params;
      const line = (processId, seq) =>
        `${JSON.stringify({ method: 'process/output', params: { processId, seq, stream: 'stdout', chunk: Buffer.from(`${processId}${seq}`).toString('base64') } })}\n`;
      process.stdout.write(line(b, 1) + line(a, 1) + line(b, 2));
    }
    send({ id: message.id, result: {} });
  });
}
