import { describe, expect, it } from 'vitest';
import { checkSandboxShape } from '../../../../src/server/sandbox/sandbox-shape.js';

const full = {
  permissions: { type: 'disabled' },
  cwd: 'file:///tmp',
  workspaceRoots: ['file:///tmp'],
  windowsSandboxLevel: 'disabled',
  windowsSandboxProxySettingsMode: 'reconcile',
  useLegacyLandlock: false,
};
const without = (member: keyof typeof full) => Object.fromEntries(Object.entries(full).filter(([key]) => key !== member));
const refused = (sandbox: unknown) => {
  try {
    checkSandboxShape(sandbox);
    return undefined;
  } catch (error) {
    return { code: (error as { code: number }).code, message: (error as Error).message };
  }
};

// Each text is Codex 0.169.0's answer to the same `sandbox` on process/start.
describe('checkSandboxShape', () => {
  it('takes what the reference takes: cwd, workspaceRoots and the proxy settings may go, windowsSandboxLevel in either form', () => {
    for (const sandbox of [full, without('cwd'), without('workspaceRoots'), without('useLegacyLandlock'), { ...full, cwd: null }]) {
      expect(refused(sandbox)).toBeUndefined();
    }
    expect(refused({ ...full, windowsSandboxLevel: { elevated: null } })).toBeUndefined();
  });

  it.each([
    [{}, 'missing field `permissions`'],
    [without('windowsSandboxLevel'), 'missing field `windowsSandboxLevel`'],
    [{ ...full, permissions: null }, 'invalid type: null, expected internally tagged enum ExecPermissionProfile'],
    [{ ...full, permissions: {} }, 'missing field `type`'],
    [{ ...full, permissions: { type: 'bogus' } }, 'unknown variant `bogus`, expected one of `managed`, `disabled`, `external`'],
    [
      { ...full, windowsSandboxLevel: 'bogus' },
      'unknown variant `bogus`, expected one of `disabled`, `restricted-token`, `elevated`, `mxc`',
    ],
    [{ ...full, windowsSandboxLevel: null }, 'invalid type: null, expected string or map'],
    [{ ...full, windowsSandboxLevel: { disabled: 5 } }, 'invalid type: number, expected unit'],
    [{ ...full, windowsSandboxLevel: { disabled: {} } }, 'invalid type: map, expected unit'],
    [{ ...full, windowsSandboxLevel: {} }, 'invalid value: map, expected map with a single key'],
    [{ ...full, windowsSandboxLevel: { disabled: null, elevated: null } }, 'invalid value: map, expected map with a single key'],
    [{ ...full, workspaceRoots: null }, 'invalid type: null, expected a sequence'],
    [true, 'invalid type: boolean `true`, expected struct WireFileSystemSandboxContext'],
    [5, 'invalid type: number, expected struct WireFileSystemSandboxContext'],
  ])('refuses %j as the reference words it', (sandbox, message) => {
    expect(refused(sandbox)).toEqual({ code: -32602, message });
  });

  it('refuses the positional (sequence) form, which it does not read', () => {
    expect(refused([1, 2])).toMatchObject({ code: -32602, message: expect.stringMatching(/cannot enforce/) });
  });
});
