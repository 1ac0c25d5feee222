/**
 * The shape of a `sandbox` member (Codex 0.169's `WireFileSystemSandboxContext`)
 * checked as the reference's parser checks it, and refused in its words: the
 * required `permissions` and `windowsSandboxLevel`, the permission types and
 * Windows levels it knows. What each permission type asks for is read in
 * `policy.ts`.
 */
import { describeValue2 } from '../../protocol/decode.js';
import { Errors } from '../../protocol/errors.js';
import { readUnitVariant } from '../../protocol/tagged-enum.js';

const PERMISSION_TYPES = ['managed', 'disabled', 'external'];
const WINDOWS_LEVELS = ['disabled', 'restricted-token', 'elevated', 'mxc'];

const isMap = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** serde's words for what an enum expects: `` `a` or `b` ``, or `` one of `a`, `b`, `c` ``. */
function expecting(names: readonly string[]): string {
  const quoted = names.map((name) => `\`${name}\``);
  return quoted.length === 2 ? `${quoted[0]} or ${quoted[1]}` : `one of ${quoted.join(', ')}`;
}

/**
 * An externally tagged unit enum of the sandbox, refused in the parser's words
 * (`readUnitVariant`); `{}` as a unit where the reference takes it.
 */
export function unitVariant<Name extends string>(
  value: unknown,
  names: readonly Name[],
  describe: (value: unknown) => string,
  emptyMapIsUnit: boolean,
): Name {
  const read = readUnitVariant(value, { names, expected: expecting(names), describe, emptyMapIsUnit });
  if ('problem' in read) throw Errors.invalidSandboxMember(read.problem);
  return read.name as Name;
}

function checkPermissions(permissions: unknown): void {
  if (permissions === undefined) throw Errors.invalidSandboxMember('missing field `permissions`');
  if (!isMap(permissions)) {
    throw Errors.invalidSandboxMember(
      `invalid type: ${describeValue2(permissions)}, expected internally tagged enum ExecPermissionProfile`,
    );
  }
  const type = permissions.type;
  if (type === undefined) throw Errors.invalidSandboxMember('missing field `type`');
  if (typeof type !== 'string' || !PERMISSION_TYPES.includes(type)) {
    const named = typeof type === 'string' ? `unknown variant \`${type}\`` : `invalid type: ${describeValue2(type)}`;
    throw Errors.invalidSandboxMember(`${named}, expected ${expecting(PERMISSION_TYPES)}`);
  }
}

/** A `sandbox` the reference's parser takes; its permissions are read in `policy.ts`. */
export interface SandboxShape {
  permissions: {
    type: 'managed' | 'disabled' | 'external';
    network?: unknown;
    file_system?: { type?: unknown; entries?: unknown };
  };
  workspaceRoots?: unknown[];
  cwd?: unknown;
}

/** `sandbox` (not null) as the reference's parser takes it, or refused in its words. */
export function checkSandboxShape(sandbox: unknown): SandboxShape {
  if (Array.isArray(sandbox)) throw Errors.sandboxUnenforceable('a sandbox given as a sequence');
  if (!isMap(sandbox)) {
    throw Errors.invalidSandboxMember(`invalid type: ${describeValue2(sandbox)}, expected struct WireFileSystemSandboxContext`);
  }
  checkPermissions(sandbox.permissions);
  if (sandbox.workspaceRoots !== undefined && !Array.isArray(sandbox.workspaceRoots)) {
    throw Errors.invalidSandboxMember(`invalid type: ${describeValue2(sandbox.workspaceRoots)}, expected a sequence`);
  }
  if (sandbox.windowsSandboxLevel === undefined) throw Errors.invalidSandboxMember('missing field `windowsSandboxLevel`');
  unitVariant(sandbox.windowsSandboxLevel, WINDOWS_LEVELS, describeValue2, false);
  return sandbox as unknown as SandboxShape;
}
