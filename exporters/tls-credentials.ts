import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { OmniOptionError } from '../views/common/option-checks';

export interface PrometheusTlsOptions {
  /** PEM private key file (unencrypted). */
  readonly keyFile: string;
  /** PEM certificate (chain) file; its first certificate must be the one of the key. */
  readonly certFile: string;
}

export interface TlsCredentials {
  readonly key: Buffer;
  readonly cert: Buffer;
}

const OPTION = 'prometheus.tls';

/**
 * Reads the key and certificate files and checks them as a pair before anything listens: OpenSSL
 * itself accepts an EC key beside an RSA certificate, and the server would then fail every
 * handshake; a wrong or garbled file would otherwise surface as a bare OpenSSL message that names
 * no option and no file.
 */
export function readTlsCredentials(options: PrometheusTlsOptions): TlsCredentials {
  const key = readPem(options.keyFile, 'keyFile');
  const cert = readPem(options.certFile, 'certFile');
  const privateKey = parsed(() => createPrivateKey(key), `keyFile ${options.keyFile} is not a PEM private key (unencrypted)`);
  const certificate = parsed(() => new X509Certificate(cert), `certFile ${options.certFile} is not a PEM certificate`);
  if (!matches(certificate, privateKey)) {
    throw new OmniOptionError(
      OPTION,
      `${OPTION}: the key in keyFile ${options.keyFile} (${privateKey.asymmetricKeyType ?? 'unknown type'}) is not the key of the certificate in certFile ${options.certFile} (${certificate.publicKey.asymmetricKeyType ?? 'unknown type'} public key); every TLS handshake would fail`,
    );
  }
  parsed(() => createSecureContext({ key, cert }), `keyFile ${options.keyFile} and certFile ${options.certFile} are refused by OpenSSL`);
  return { key, cert };
}

function matches(certificate: X509Certificate, privateKey: KeyObject): boolean {
  try {
    return certificate.checkPrivateKey(privateKey);
  } catch {
    return false;
  }
}

function parsed<T>(parse: () => T, problem: string): T {
  try {
    return parse();
  } catch (error) {
    throw new OmniOptionError(OPTION, `${OPTION}: ${problem} (${(error as Error).message})`, { cause: error });
  }
}

function readPem(file: string, field: 'keyFile' | 'certFile'): Buffer {
  const option = `${OPTION}.${field}`;
  if (typeof file !== 'string' || file === '') throw new OmniOptionError(option, `${option} must be a file path`);
  try {
    return readFileSync(file);
  } catch (error) {
    throw new OmniOptionError(option, `${option}: cannot read ${file} (${(error as Error).message})`, { cause: error });
  }
}
