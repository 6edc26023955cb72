/**
 * PEM text of a certificate, ending with a newline as OpenSSL and Go write it: files built by
 * concatenation (`cat ca.crt other.crt > bundle.crt`) then hold every certificate whole.
 */
import 'reflect-metadata';
import type * as x509 from '@peculiar/x509';

/** The certificate as PEM text with a final newline. */
export function certificatePem(cert: x509.X509Certificate): string {
  const pem = cert.toString('pem');
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}
