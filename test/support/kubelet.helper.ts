/** What the tests that stand in for kubelets share. */
import { join } from 'node:path';

/**
 * The server flags that make the admin certificate of the PKI in `pkiDir` the API server's
 * kubelet client certificate and its CA the one kubelets' serving certificates are checked
 * against (a stand-in kubelet serves with that PKI's server certificate).
 */
export function kubeletClientFlags(pkiDir: string): string[] {
  return [
    '--kubelet-client-certificate',
    join(pkiDir, 'admin.crt'),
    '--kubelet-client-key',
    join(pkiDir, 'admin.key'),
    '--kubelet-certificate-authority',
    join(pkiDir, 'ca.crt'),
  ];
}
