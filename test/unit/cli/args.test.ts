import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCli, UsageError } from '../../../src/cli/args.js';

describe('parseCli', () => {
  it('gives, without arguments, what the parser gives for the defaults spelled out', () => {
    for (const env of [{}, { EXEC_SERVER_LOG: 'debug' }, { EXEC_SERVER_LOG: 'error' }]) {
      expect(parseCli([], env)).toEqual(parseCli(['--listen', 'stdio'], env));
    }
    expect(parseCli([], {})).toMatchObject({ help: false, version: false, logLevel: 'warn', webSocket: undefined, bwrap: undefined });
  });

  it("leaves retention to the client's generation unless --retention-ms is given", () => {
    expect(parseCli([], {}).retentionMs).toBeUndefined();
    expect(parseCli(['--retention-ms', '0'], {}).retentionMs).toBe(0);
  });

  it('refuses a bad default from the environment as it refuses the flag, naming the variable', () => {
    expect(() => parseCli([], { EXEC_SERVER_LOG: 'loud' })).toThrow(UsageError);
    expect(() => parseCli([], { EXEC_SERVER_LOG: 'loud' })).toThrow('EXEC_SERVER_LOG: expected error, warn, info or debug, got "loud"');
    expect(() => parseCli(['--log-level=loud'], {})).toThrow('--log-level: expected error, warn, info or debug, got "loud"');
    expect(parseCli(['--log-level', 'debug'], { EXEC_SERVER_LOG: 'loud' }).logLevel).toBe('debug');
    // Set but empty is unset; --help and --version answer whatever the variable says.
    expect(parseCli([], { EXEC_SERVER_LOG: '' }).logLevel).toBe('warn');
    expect(parseCli(['--help'], { EXEC_SERVER_LOG: 'loud' })).toMatchObject({ help: true, logLevel: 'warn' });
    expect(parseCli(['--version'], { EXEC_SERVER_LOG: 'loud' })).toMatchObject({ version: true });
  });

  it('refuses an empty token flag instead of taking it for an absent one', () => {
    const listen = ['--listen', 'ws://127.0.0.1:0'];
    for (const empty of [['--ws-token-file='], ['--ws-token-sha256=']])
      expect(() => parseCli([...listen, ...empty], {}), empty[0]).toThrow('need --ws-auth capability-token');
    expect(() => parseCli([...listen, '--ws-auth=capability-token', '--ws-token-file='], {})).toThrow(UsageError);
    expect(() => parseCli([...listen, '--ws-auth=capability-token', '--ws-token-sha256='], {})).toThrow('expected 64 hexadecimal digits');
  });

  it('takes numbers as plain decimal digits only, within their bounds', () => {
    for (const bad of ['', ' 5 ', '0x10', '1e3', '0b1', '-1', '1.5', '99999999999999999999'])
      for (const flag of ['--retention-ms', '--max-line-bytes', '--answer-budget-bytes'])
        expect(() => parseCli([`${flag}=${bad}`], {}), `${flag}=${bad}`).toThrow(UsageError);
    expect(parseCli(['--retention-ms', '007'], {}).retentionMs).toBe(7);
    expect(parseCli(['--max-line-bytes', String(64 * 1024 * 1024)], {}).maxLineBytes).toBe(64 * 1024 * 1024);
    expect(() => parseCli(['--listen', 'ws://127.0.0.1:0', '--detached-session-ttl-ms', '1e3'], {})).toThrow(UsageError);
  });

  it('holds 64 MiB of answers for a client that is not reading unless --answer-budget-bytes says otherwise', () => {
    expect(parseCli([], {}).answerBudgetBytes).toBe(64 * 1024 * 1024);
    expect(parseCli(['--answer-budget-bytes', '1'], {}).answerBudgetBytes).toBe(1);
    expect(() => parseCli(['--answer-budget-bytes', '0'], {})).toThrow(
      `--answer-budget-bytes: expected an integer from 1 to ${Number.MAX_SAFE_INTEGER}, got "0"`,
    );
  });

  it('refuses the WebSocket flags over stdio instead of ignoring them, and takes stdio:// as stdio', () => {
    for (const flags of [
      ['--ws-auth', 'bogus'],
      ['--ws-token-sha256', 'zz'],
      ['--ws-token-file', '/nonexistent'],
      ['--ws-allow-origin', 'https://a.example'],
      ['--detached-session-ttl-ms=abc'],
    ])
      expect(() => parseCli(flags, {}), flags.join(' ')).toThrow(
        /^--(ws-auth|ws-token-sha256|ws-token-file|ws-allow-origin|detached-session-ttl-ms) applies only to --listen ws:\/\/IP:PORT$/,
      );
    expect(parseCli(['--listen', 'stdio://'], {})).toEqual(parseCli([], {}));
    expect(parseCli(['--listen', 'ws://127.0.0.1:0', '--detached-session-ttl-ms', '0'], {}).webSocket?.detachedTtlMs).toBe(0);
    expect(parseCli(['--listen', 'ws://127.0.0.1:0'], {}).webSocket?.detachedTtlMs).toBe(30_000);
  });

  it('refuses both token flags at once rather than ignoring one of them', () => {
    const hex = 'ab'.repeat(32);
    const args = [
      '--listen',
      'ws://127.0.0.1:0',
      '--ws-auth',
      'capability-token',
      '--ws-token-sha256',
      hex,
      '--ws-token-file',
      '/dev/null',
    ];
    expect(() => parseCli(args, {})).toThrow('--ws-token-file and --ws-token-sha256: give one of them, not both');
    expect(parseCli(args.slice(0, -2), {}).webSocket?.tokenSha256?.toString('hex')).toBe(hex);
  });

  it('warns about a token file other users can read, and not about one only its owner can', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-mode-'));
    try {
      const file = path.join(dir, 'token');
      fs.writeFileSync(file, 'secret\n', { mode: 0o644 });
      fs.chmodSync(file, 0o644);
      const args = ['--listen', 'ws://127.0.0.1:0', '--ws-auth', 'capability-token', '--ws-token-file', file];
      expect(parseCli(args, {}).webSocket?.warnings).toEqual([
        `--ws-token-file ${file} can be read by users other than its owner (mode 0644); chmod 600 it`,
      ]);
      fs.chmodSync(file, 0o600);
      expect(parseCli(args, {}).webSocket?.warnings).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses unknown flags and positionals', () => {
    expect(() => parseCli(['--nope'])).toThrow(UsageError);
    expect(() => parseCli(['extra'])).toThrow(UsageError);
  });
});
