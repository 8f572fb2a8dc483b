'use strict';
// The JavaScript stand-in for a native program. install.js replaces the stand-ins in bin/
// with the native programs on Linux and macOS, so this runs only where it could not: on
// Windows (npm's .cmd shims start node whatever bin/ holds) and after an install that ran
// no scripts (--ignore-scripts, or a policy that blocks them). It runs the native program
// with the same arguments, standard streams and exit status; on Linux and macOS it first
// does what install.js would have done, so that only this first run goes through node.

const { spawnSync } = require('child_process');
const { binaryPath, linkNatives } = require('./native');

module.exports = function run(program) {
  const args = process.argv.slice(2);
  let exe;
  try {
    exe = binaryPath(program);
  } catch (e) {
    return fail(program, args, e.message);
  }
  // Best effort and silent: a read-only install (a system prefix) keeps its stand-ins.
  linkNatives();
  const r = spawnSync(exe, args, { stdio: 'inherit', windowsHide: true });
  if (r.error) return fail(program, args, `ccmem: cannot run ${exe}: ${r.error.message}`);
  if (r.signal) {
    process.kill(process.pid, r.signal);
    return;
  }
  process.exit(r.status === null ? 1 : r.status);
};

function fail(program, args, message) {
  // An agent's hook must never fail or speak because of ccmem: `ccmemctl hook` exits 0
  // with nothing on its output whatever happens (its stdout would reach the agent).
  if (program === 'ccmemctl' && args[0] === 'hook') process.exit(0);
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
