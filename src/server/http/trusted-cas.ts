/**
 * The certificates `http/request` trusts when the client deferred
 * NODE_EXTRA_CA_CERTS (see `package/extra-ca-certs.ts`): Node's own roots and
 * that file's, as Node itself would have trusted them at start. Like Node, a
 * file that cannot be read is ignored with a warning.
 */
import fs from 'node:fs';

/** The `ca` option for the HTTP agent; undefined for Node's own store. */
export async function trustedCas(deferredFile: string | undefined): Promise<string[] | undefined> {
  if (deferredFile === undefined) return undefined;
  let extra: string;
  try {
    extra = fs.readFileSync(deferredFile, 'utf8');
  } catch (error) {
    process.emitWarning(`Ignoring extra certs from \`${deferredFile}\`, load failed: ${(error as Error).message}`);
    return undefined;
  }
  // Loaded with the first request's agent: tls is on the way there anyway.
  const { rootCertificates } = await import('node:tls');
  return [...rootCertificates, extra];
}
