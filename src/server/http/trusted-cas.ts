/**
 * The certificates `http/request` trusts when the client deferred
 * NODE_EXTRA_CA_CERTS (see `package/extra-ca-certs.ts`): Node's own roots and
 * that file's, as Node itself would have trusted them at start. The file is
 * read at start, as Node reads it; its certificates are parsed into one TLS
 * context on the first request, shared by every connection and session.
 */
import fs from 'node:fs';
import type { SecureContext } from 'node:tls';

/** Node's own reading takes plain certificates only; the `ca` option would also take these. */
const TRUSTED_CERTIFICATE = /-----BEGIN TRUSTED CERTIFICATE-----[\s\S]*?-----END TRUSTED CERTIFICATE-----/g;

export class ExtraCaCerts {
  private context: Promise<SecureContext> | undefined;

  /** `bundle`: the file's bytes, as they are (a comment line need not be UTF-8). */
  constructor(private readonly bundle: Buffer) {}

  /** The TLS context for every HTTPS connection (building it parses every root certificate). */
  secureContext(): Promise<SecureContext> {
    this.context ??= import('node:tls').then((tls) => {
      const plain = Buffer.from(this.bundle.toString('latin1').replace(TRUSTED_CERTIFICATE, ''), 'latin1');
      return tls.createSecureContext({ ca: [...tls.rootCertificates, plain] });
    });
    return this.context;
  }
}

/**
 * Reads the deferred file now, as Node would have at start; like Node, a
 * file that cannot be read is ignored with a warning.
 */
export function readExtraCaCerts(file: string): ExtraCaCerts | undefined {
  try {
    return new ExtraCaCerts(fs.readFileSync(file));
  } catch (error) {
    process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(error as Error).message}`);
    return undefined;
  }
}
