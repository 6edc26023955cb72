// Regenerates the table of docs/conformance.md from the conformance rows
// (test/conformance/*.rows.ts): the text between the BEGIN/END markers is replaced, the
// rest of the document is kept. The rows are transpiled with TypeScript's transpileModule into
// a temporary directory (they import only types and each other), then imported.
//
//   node scripts/conformance-doc.mjs
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'test/conformance');
const out = mkdtempSync(join(tmpdir(), 'conformance-'));
try {
  for (const f of readdirSync(src).filter((n) => n.endsWith('.ts'))) {
    const js = ts.transpileModule(readFileSync(join(src, f), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(out, f.replace(/\.ts$/, '.js')), js);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  const { GROUPS } = await import(pathToFileURL(join(out, 'conformance.rows.js')).href);

  const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const request = (r) => {
    if (r.kubectl) return `\`kubectl ${r.kubectl.args.join(' ')}\``;
    if (r.req) return `\`${r.req.method} ${r.req.path}\``;
    return '';
  };
  const ours = (r) => {
    const e = r.expect ?? (r.req ? { status: 200 } : undefined);
    const parts = [];
    if (e) parts.push(`${e.status}${e.reason ? ` ${e.reason}` : ''}`);
    else if (r.kubectl) parts.push(r.kubectl.fail ? 'kubectl fails' : 'kubectl succeeds');
    if (e && e.message) parts.push(typeof e.message === 'string' ? `"${e.message}"` : `message ~ \`${e.message.source}\``);
    if (r.then && r.then.length) parts.push(`then ${r.then.map((t) => `${t.req.method} → ${t.expect.status}`).join(', ')}`);
    return parts.join('; ');
  };
  const lines = [];
  let total = 0;
  const divergences = [];
  for (const g of GROUPS) {
    lines.push(`### ${g.name}`, '', '| Id | Rule | Source | Request | Upstream | Ours | Test |', '|---|---|---|---|---|---|---|');
    for (const r of g.rows) {
      total++;
      const o = r.divergence ? `${ours(r)} (kept divergence)` : ours(r);
      lines.push(
        `| \`${r.id}\` | ${cell(r.rule)} | ${cell(r.source)} | ${cell(request(r))} | ${cell(r.upstream)} | ${cell(o)} | conformance.test.ts › ${cell(g.name)} › ${r.id} |`,
      );
      if (r.divergence) divergences.push(`- \`${r.id}\` ${cell(r.rule)}: ${cell(r.divergence)}`);
    }
    lines.push('');
  }
  lines.push(`${total} rows.`, '', '### Divergences kept on purpose', '', ...(divergences.length ? divergences : ['None.']), '');
  const docPath = join(root, 'docs/conformance.md');
  const doc = readFileSync(docPath, 'utf8');
  const begin = '<!-- BEGIN GENERATED TABLE -->';
  const end = '<!-- END GENERATED TABLE -->';
  const a = doc.indexOf(begin);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`docs/conformance.md lacks the ${begin} / ${end} markers`);
  const text = `${doc.slice(0, a + begin.length)}\n${lines.join('\n')}\n${doc.slice(b)}`;
  const options = (await prettier.resolveConfig(docPath)) ?? {};
  writeFileSync(docPath, await prettier.format(text, { ...options, filepath: docPath }));
  console.log(`docs/conformance.md: ${total} rows, ${divergences.length} kept divergences`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
