'use strict';
// Where this machine's native ccmem programs are: in the optional package
// @ccmem/<platform>-<arch> that npm installed with this one (the pattern of esbuild and
// Codex: npm picks the one package whose "os" and "cpu" match, and skips the others).

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

module.exports = { key, platforms, packageDir, binaryPath };
