/**
 * The shape of a `sandbox` member (Codex 0.169's `WireFileSystemSandboxContext`)
 * checked as the reference's parser checks it, and refused in its words: the
 * required `permissions` and `windowsSandboxLevel`, the permission types and
 * Windows levels it knows. What each permission type asks for is read in
 * `policy.ts`.
 */
import { describeValue2 } from '../../protocol/decode.js';
import { Errors } from '../../protocol/errors.js';

const PERMISSION_TYPES = ['managed', 'disabled', 'external'];
const WINDOWS_LEVELS = ['disabled', 'restricted-token', 'elevated', 'mxc'];

const isMap = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** serde's words for a list of names: `` `a`, `b`, `c` ``. */
const oneOf = (names: string[]) => `one of ${names.map((name) => `\`${name}\``).join(', ')}`;

/** An externally tagged unit enum: the name, or a map from the name to null. */
function checkUnitVariant(value: unknown, names: string[]): void {
  if (typeof value !== 'string' && !isMap(value)) {
    throw Errors.invalidSandboxMember(`invalid type: ${describeValue2(value)}, expected string or map`);
  }
  const entries: Array<[string, unknown]> = typeof value === 'string' ? [[value, null]] : Object.entries(value);
  if (entries.length !== 1) throw Errors.invalidSandboxMember('invalid value: map, expected map with a single key');
  const [name, unit] = entries[0]!;
  if (!names.includes(name)) throw Errors.invalidSandboxMember(`unknown variant \`${name}\`, expected ${oneOf(names)}`);
  if (unit !== null) throw Errors.invalidSandboxMember(`invalid type: ${describeValue2(unit)}, expected unit`);
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
    throw Errors.invalidSandboxMember(`${named}, expected ${oneOf(PERMISSION_TYPES)}`);
  }
}

/** Refuses a `sandbox` (not null) that the reference's parser refuses. */
export function checkSandboxShape(sandbox: unknown): void {
  if (Array.isArray(sandbox)) throw Errors.sandboxUnenforceable('a sandbox given as a sequence');
  if (!isMap(sandbox)) {
    throw Errors.invalidSandboxMember(`invalid type: ${describeValue2(sandbox)}, expected struct WireFileSystemSandboxContext`);
  }
  checkPermissions(sandbox.permissions);
  if (sandbox.workspaceRoots !== undefined && !Array.isArray(sandbox.workspaceRoots)) {
    throw Errors.invalidSandboxMember(`invalid type: ${describeValue2(sandbox.workspaceRoots)}, expected a sequence`);
  }
  if (sandbox.windowsSandboxLevel === undefined) throw Errors.invalidSandboxMember('missing field `windowsSandboxLevel`');
  checkUnitVariant(sandbox.windowsSandboxLevel, WINDOWS_LEVELS);
}
