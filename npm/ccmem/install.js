'use strict';
// npm runs this after installing ccmem (esbuild's install script is the model). It checks
// that this machine's native programs run and are this version, then, on Linux and macOS,
// puts each one in place of its JavaScript stand-in in bin/. The command npm links onto
// PATH (ccmemctl) is then the native program itself, so an agent's hook costs what starting
// ccmemctl costs, never node's start-up (about 100 ms, fifty times the hook).
//
// Where install scripts do not run (--ignore-scripts, pnpm and bun unless ccmem is allowed)
// the stand-ins work, through node; `npm rebuild -g ccmem` runs this later. On Windows npm's
// .cmd shims start node whatever bin/ holds: `ccmemctl hooks install` writes the native
// program's own path into the agent's settings instead.

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { binaryPath } = require('./lib/native');
const { version } = require('./package.json');

/** The programs each platform package carries. */
const PROGRAMS = ['ccmemctl', 'ccmemd', 'ccmem-mcp'];

/**
 * Puts each native program in place of its JavaScript stand-in in ccmem's bin/ (a
 * hard link, else a copy, renamed over the stand-in), so that the command npm linked onto
 * PATH is the native program. Not on Windows, where npm's .cmd shims run node whatever
 * bin/ holds. Returns one sentence per program it could not put in place.
 */
function linkNatives() {
  if (process.platform === 'win32') return [];
  const failures = [];
  for (const program of PROGRAMS) {
    const standIn = path.join(__dirname, 'bin', program);
    const tmp = `${standIn}.${process.pid}.tmp`;
    try {
      const native = binaryPath(program);
      fs.rmSync(tmp, { force: true });
      try {
        fs.linkSync(native, tmp);
      } catch {
        fs.copyFileSync(native, tmp);
      }
      fs.chmodSync(tmp, 0o755);
      fs.renameSync(tmp, standIn);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      failures.push(`could not put the native ${program} in place of ${standIn} (${e.message})`);
    }
  }
  return failures;
}

function main() {
  // No programs for this machine (an unsupported platform, or --omit=optional) fails the
  // install with the sentence that says why: npm shows a failing script's output only.
  const ctl = binaryPath('ccmemctl');
  // The programs must run on this machine and be this package's version: a stale or
  // foreign platform package would otherwise fail later, silently, inside an agent's hook.
  let said;
  try {
    said = execFileSync(ctl, ['--version'], { encoding: 'utf8', timeout: 30000, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`ccmem: ${ctl} does not run on this machine: ${e.message}`);
  }
  if (said.trim() !== `ccmemctl ${version}`) {
    throw new Error(`ccmem: ${ctl} says "${said.trim()}", but this is ccmem ${version}; install again`);
  }
  for (const failure of linkNatives()) {
    // The stand-in still works, through node: say what that costs.
    process.stderr.write(`ccmem: ${failure}; it will start through node, about 100 ms slower\n`);
  }
}

try {
  main();
} catch (e) {
  // The sentence alone, not a stack trace around it.
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}
