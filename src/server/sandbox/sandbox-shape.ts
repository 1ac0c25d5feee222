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

/** serde's words for what an enum expects: `` `a` or `b` ``, or `` one of `a`, `b`, `c` ``. */
function expecting(names: readonly string[]): string {
  const quoted = names.map((name) => `\`${name}\``);
  return quoted.length === 2 ? `${quoted[0]} or ${quoted[1]}` : `one of ${quoted.join(', ')}`;
}

/** How the reference's parser reads one enum member: how it describes a value, and whether `{}` is a unit. */
export interface UnitEnum<Name extends string> {
  names: readonly Name[];
  describe: (value: unknown) => string;
  emptyMapIsUnit: boolean;
}

/**
 * The name in an externally tagged unit enum, in either of serde's forms: the
 * name, or a map from the name to null. Refused in the parser's words.
 */
export function unitVariant<Name extends string>(value: unknown, { names, describe, emptyMapIsUnit }: UnitEnum<Name>): Name {
  if (typeof value !== 'string' && !isMap(value))
    throw Errors.invalidSandboxMember(`invalid type: ${describe(value)}, expected string or map`);
  const entries: Array<[string, unknown]> = typeof value === 'string' ? [[value, null]] : Object.entries(value);
  if (entries.length !== 1) throw Errors.invalidSandboxMember('invalid value: map, expected map with a single key');
  const [name, unit] = entries[0]!;
  if (!names.includes(name as Name)) throw Errors.invalidSandboxMember(`unknown variant \`${name}\`, expected ${expecting(names)}`);
  const isUnit = unit === null || (emptyMapIsUnit && isMap(unit) && Object.keys(unit).length === 0);
  if (!isUnit) throw Errors.invalidSandboxMember(`invalid type: ${describe(unit)}, expected unit`);
  return name as Name;
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
  unitVariant(sandbox.windowsSandboxLevel, { names: WINDOWS_LEVELS, describe: describeValue2, emptyMapIsUnit: false });
}
