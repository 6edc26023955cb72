/**
 * The operator commands (`npm run snapshot`, `npm run pki`, `npm run cluster`, built) when their
 * output's reader goes away early, as `| head -1` does: the command finishes with its own exit
 * code instead of dying on the closed pipe with a stack trace.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './support/server.js';

describe('operator commands whose output pipe closes early', () => {
  it.each(['snapshot.cli.js', 'pki.cli.js', 'launcher.cli.js'])('%s --help exits 0 without a stack trace', async (cli) => {
    const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'cluster', cli), '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reader is gone before the command writes: its writes meet a closed pipe (EPIPE).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
