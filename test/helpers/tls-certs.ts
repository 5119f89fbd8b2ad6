import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate authority made for one test, and a helper to issue server certificates. */
export interface TestCa {
  /** The CA certificate (PEM file): what a client is told to trust. */
  caFile: string;
  /**
   * Issues a certificate for 127.0.0.1 (or the subjectAltName entries given, e.g. DNS:localhost)
   * into `<dir>/<name>.crt` and `.key`.
   */
  issue(name: string, altNames?: string[]): { certFile: string; keyFile: string };
}

/**
 * Creates a self-signed CA in `dir` with the openssl command line tool (Node can verify
 * certificates but not issue them). Throws with a clear message when openssl is missing.
 */
export function createTestCa(dir: string): TestCa {
  const openssl = (args: string[]) => {
    try {
      execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    } catch (error) {
      throw new Error(
        `openssl failed (the TLS tests need the openssl command): ${(error as Error).message}`,
      );
    }
  };
  const caFile = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', caFile].concat([
      '-days',
      '2',
      '-subj',
      '/CN=transport-sync test CA',
    ]),
  );
  return {
    caFile,
    issue(name, altNames = ['IP:127.0.0.1']) {
      const keyFile = join(dir, `${name}.key`);
      const certFile = join(dir, `${name}.crt`);
      const csr = join(dir, `${name}.csr`);
      const ext = join(dir, `${name}.ext`);
      writeFileSync(ext, `subjectAltName=${altNames.join(',')}\n`);
      openssl(
        ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', csr].concat([
          '-subj',
          `/CN=${name}`,
        ]),
      );
      openssl(
        ['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial'].concat([
          '-out',
          certFile,
          '-days',
          '2',
          '-extfile',
          ext,
        ]),
      );
      return { certFile, keyFile };
    },
  };
}
