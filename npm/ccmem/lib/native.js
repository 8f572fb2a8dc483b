'use strict';
// Where this machine's native ccmem programs are: in the optional package
// @ccmem/<platform>-<arch> that npm installed with this one (the pattern of esbuild and
// Codex: npm picks the one package whose "os" and "cpu" match, and skips the others).

const fs = require('fs');
const path = require('path');
const platforms = require('./platforms.json');

/** This machine's platform key, as the platform packages are named. */
const key = `${process.platform}-${process.arch}`;

/** The directory of the platform package for this machine; throws a sentence for the user. */
function packageDir() {
  if (!Object.prototype.hasOwnProperty.call(platforms, key)) {
    throw new Error(
      `ccmem has no prebuilt programs for ${key} (only ${Object.keys(platforms).join(', ')}); ` +
        'build it from source instead: see "From source" in the README'
    );
  }
  const name = `@ccmem/${key}`;
  try {
    return path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    throw new Error(
      `ccmem: the package ${name}, which holds the programs for this machine, is not installed ` +
        '(npm leaves optional packages out with --omit=optional or --no-optional); ' +
        'install again without that option: npm i -g ccmem'
    );
  }
}

/** The native program `program` (ccmemctl, ccmemd or ccmem-mcp) for this machine. */
function binaryPath(program) {
  return path.join(packageDir(), 'bin', program + (process.platform === 'win32' ? '.exe' : ''));
}

/** The programs each platform package carries. */
const PROGRAMS = ['ccmemctl', 'ccmemd', 'ccmem-mcp'];

/**
 * Puts each native program in place of its JavaScript stand-in in this package's bin/ (a
 * hard link, else a copy, renamed over the stand-in), so that the command npm linked onto
 * PATH is the native program. Not on Windows, where npm's .cmd shims run node whatever
 * bin/ holds. Returns one sentence per program it could not put in place.
 */
function linkNatives() {
  if (process.platform === 'win32') return [];
  const failures = [];
  for (const program of PROGRAMS) {
    const standIn = path.join(__dirname, '..', 'bin', program);
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

module.exports = { key, platforms, packageDir, binaryPath, linkNatives, PROGRAMS };
