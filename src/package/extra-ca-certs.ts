/**
 * NODE_EXTRA_CA_CERTS makes every Node process read and parse that bundle
 * before any of its code runs, which can cost more than the rest of the
 * server's start (`npm run bench -- --only startup` prints both). The server
 * needs those certificates only for `http/request`, so the client hands the
 * variable to a server it spawns under another name: the server puts it back
 * and reads the file at once (its children see what they always saw) and
 * gives the certificates to its HTTP agent (`server/http/trusted-cas.ts`).
 */

/** The name the variable travels under from the client to the server it spawns. */
export const DEFERRED_CA_VARIABLE = 'EXEC_SERVER_DEFERRED_EXTRA_CA_CERTS';

/**
 * Node options that choose another certificate store: with them, Node's own
 * reading of NODE_EXTRA_CA_CERTS is kept, as the server could not rebuild
 * that store for its agent (it trusts Node's bundled roots and the file).
 */
const CA_STORE_OPTIONS = /--use-openssl-ca|--use-bundled-ca|--use-system-ca|--openssl-/;

/** Whether this Node (the one the server runs on) was built to trust OpenSSL's store, not its bundled roots. */
const buildUsesOpenSslStore = (): boolean =>
  (process.config.target_defaults as { defines?: string[] } | undefined)?.defines?.includes('NODE_OPENSSL_CERT_STORE') ?? false;

/**
 * The environment for a server this package spawns, with NODE_EXTRA_CA_CERTS
 * deferred; `env` unchanged (`undefined`: inherit) when there is nothing to
 * defer, or when Node's store is not its bundled roots (an option, the
 * environment or the build says so).
 */
export function deferExtraCaCerts(
  env: NodeJS.ProcessEnv | undefined,
  opensslStore = buildUsesOpenSslStore(),
): NodeJS.ProcessEnv | undefined {
  const source = env ?? process.env;
  const file = source.NODE_EXTRA_CA_CERTS;
  if (!file || opensslStore || source.NODE_USE_SYSTEM_CA || CA_STORE_OPTIONS.test(source.NODE_OPTIONS ?? '')) return env;
  const deferred: NodeJS.ProcessEnv = { ...source, [DEFERRED_CA_VARIABLE]: file };
  delete deferred.NODE_EXTRA_CA_CERTS;
  return deferred;
}

/**
 * In the server, at start: puts NODE_EXTRA_CA_CERTS back into `env` (for its
 * children) and returns the file that Node did not read, if the client
 * deferred one.
 */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv): string | undefined {
  const file = env[DEFERRED_CA_VARIABLE];
  delete env[DEFERRED_CA_VARIABLE];
  if (!file) return undefined;
  env.NODE_EXTRA_CA_CERTS = file;
  return file;
}
