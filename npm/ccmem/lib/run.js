'use strict';
// The JavaScript stand-in for a native program. install.js replaces the stand-ins in bin/
// with the native programs on Linux and macOS, so this runs only where it could not: on
// Windows (npm's .cmd shims start node whatever bin/ holds) and after an install that ran
// no scripts (--ignore-scripts, pnpm and bun unless the package is allowed). It runs the
// native program with the same arguments, standard streams and exit status.
//
// It never replaces itself: launchers such as pnpm's run `node <this file>` whatever it
// holds, and two first runs at once would race with the rename. `npm rebuild -g ccmem`
// runs install.js, which does it once; `ccmemctl doctor` says when hooks start node.

const { spawnSync } = require('child_process');
const { binaryPath } = require('./native');

module.exports = function run(program) {
  const args = process.argv.slice(2);
  let exe;
  try {
    exe = binaryPath(program);
  } catch (e) {
    return fail(program, args, e.message);
  }
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
