// Records what was built, for GET /version: run by `npm run build` after the compiler, writes
// dist/build-info.json = { gitCommit, gitTreeState, buildDate }. Without git (a source tarball,
// the Docker build context) the commit and tree state are "unknown"; the date is always known.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

let gitCommit = 'unknown';
let gitTreeState = 'unknown';
try {
  gitCommit = git('rev-parse', 'HEAD');
  // As kube's build (hack/lib/version.sh): any change or untracked file makes the tree dirty.
  gitTreeState = git('status', '--porcelain') === '' ? 'clean' : 'dirty';
} catch {
  // not a git checkout, or no git: keep "unknown"
}
const info = { gitCommit, gitTreeState, buildDate: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') };
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'build-info.json'), `${JSON.stringify(info, null, 2)}\n`);
