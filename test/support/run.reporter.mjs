/**
 * A Jest reporter that keeps two honest records of a run under .tmp/test-run/:
 *  - running.txt: the test files running now, each with the test case it is in, rewritten at
 *    every start and finish. When a run is cut off (.ci/run's timeout), that file names what
 *    hung.
 *  - durations[-<projects>].txt: every test file finished, with its wall time, slowest first (where the
 *    run's time goes); the ten slowest are printed at the end.
 *  - at the end, one summary line naming every path that was not covered because the run
 *    opted out of a prerequisite (KAPI_TEST_WITHOUT; recorded by test/support/prereq.ts under
 *    .tmp/test-run/uncovered/).
 * Plain JavaScript: Jest loads reporters without transforming them.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export default class RunReporter {
  constructor(globalConfig) {
    this.root = globalConfig.rootDir;
    this.dir = path.join(this.root, '.tmp', 'test-run');
    this.uncoveredDir = path.join(this.dir, 'uncovered');
    /** test file (relative) -> the test case running in it, or '' between cases. */
    this.running = new Map();
    // One durations file per selection of projects, so that runs in a row keep theirs.
    const at = process.argv.indexOf('--selectProjects');
    const projects = at < 0 ? [] : process.argv.slice(at + 1).filter((a, i, all) => !all.slice(0, i + 1).some((b) => b.startsWith('-')));
    this.durationsFile = projects.length ? `durations-${projects.join('-')}.txt` : 'durations.txt';
    /** test file (relative) -> its wall time in seconds. */
    this.durations = new Map();
  }

  writeRunning() {
    const lines = [...this.running].map(([file, test]) => (test ? `${file} › ${test}` : file));
    writeFileSync(path.join(this.dir, 'running.txt'), lines.length ? `${lines.join('\n')}\n` : '');
  }

  onRunStart() {
    rmSync(this.uncoveredDir, { recursive: true, force: true });
    mkdirSync(this.uncoveredDir, { recursive: true });
    this.writeRunning();
  }

  onTestFileStart(test) {
    this.running.set(path.relative(this.root, test.path), '');
    this.writeRunning();
  }

  onTestCaseStart(test, info) {
    this.running.set(path.relative(this.root, test.path), info.fullName);
    this.writeRunning();
  }

  onTestFileResult(test, result) {
    const file = path.relative(this.root, test.path);
    this.running.delete(file);
    this.writeRunning();
    const { start, end } = result?.perfStats ?? {};
    if (start && end) this.durations.set(file, (end - start) / 1000);
  }

  writeDurations() {
    if (this.durations.size === 0) return;
    const sorted = [...this.durations].sort((a, b) => b[1] - a[1]);
    const total = sorted.reduce((sum, [, s]) => sum + s, 0);
    writeFileSync(path.join(this.dir, this.durationsFile), sorted.map(([f, s]) => `${s.toFixed(1)}\t${f}\n`).join(''));
    const top = sorted.slice(0, 10).map(([f, s]) => `  ${s.toFixed(1).padStart(7)} s  ${f}`);
    process.stderr.write(`\nSlowest test files (of ${sorted.length}, ${total.toFixed(0)} s in all; .tmp/test-run/${this.durationsFile}):\n${top.join('\n')}\n`);
  }

  onRunComplete() {
    this.writeDurations();
    let files = [];
    try {
      files = readdirSync(this.uncoveredDir).filter((f) => f.endsWith('.json'));
    } catch {
      // nothing recorded
    }
    const byPrerequisite = new Map();
    for (const f of files.sort()) {
      try {
        const { prerequisite, needs } = JSON.parse(readFileSync(path.join(this.uncoveredDir, f), 'utf8'));
        if (!byPrerequisite.has(prerequisite)) byPrerequisite.set(prerequisite, new Set());
        byPrerequisite.get(prerequisite).add(needs);
      } catch {
        // a half-written record of a killed worker: nothing to add
      }
    }
    if (byPrerequisite.size === 0) return;
    const parts = [...byPrerequisite].map(([p, needs]) => `without ${p}: ${[...needs].join('; ')}`);
    process.stderr.write(`\nNOT COVERED in this run (KAPI_TEST_WITHOUT=${process.env.KAPI_TEST_WITHOUT ?? ''}): ${parts.join(' | ')}\n`);
  }

  getLastError() {
    return undefined;
  }
}
