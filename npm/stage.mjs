#!/usr/bin/env node
// Builds ccmem's npm packages from release builds, the way esbuild and Codex ship theirs:
//
//   ccmem              the command: JavaScript stand-ins in bin/, install.js, and one
//                      optional dependency per platform at this exact version
//   @ccmem/<platform>  one per build: the native ccmemctl, ccmemd and ccmem-mcp, with "os"
//                      and "cpu" so that npm installs only the one for the machine
//
// Usage: node npm/stage.mjs --out DIR [--version X.Y.Z] [--repository URL] [--pack] PLATFORM=BINDIR...
//   PLATFORM  a key of npm/ccmem/lib/platforms.json (linux-x64, darwin-arm64, win32-x64, ...)
//   BINDIR    the directory holding that platform's three programs (a release build)
//   --pack    also `npm pack` each package into DIR (ccmem-X.Y.Z.tgz, ccmem-PLATFORM-X.Y.Z.tgz)
// The version and repository default to the workspace's, in Cargo.toml (npm's provenance
// wants the repository that built the packages: the release workflow gives its own). Each
// program is checked to be an executable for its platform's OS and CPU, so that no
// package carries another's build.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);
const platforms = JSON.parse(fs.readFileSync(path.join(here, 'ccmem/lib/platforms.json'), 'utf8'));
const PROGRAMS = ['ccmemctl', 'ccmemd', 'ccmem-mcp'];
const LICENSES = ['LICENSE-MIT', 'LICENSE-APACHE'];

function die(message) {
  process.stderr.write(`stage: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { out: null, version: null, repository: null, pack: false, builds: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) die(`${a} needs a value`);
      return v;
    };
    if (a === '--out') opts.out = value();
    else if (a === '--version') opts.version = value();
    else if (a === '--repository') opts.repository = value();
    else if (a === '--pack') opts.pack = true;
    else if (/^[a-z0-9]+-[a-z0-9]+=/.test(a)) {
      const [key, dir] = [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)];
      if (!platforms[key]) die(`unknown platform ${key} (known: ${Object.keys(platforms).join(', ')})`);
      if (opts.builds.some((b) => b.key === key)) die(`${key} is given twice`);
      opts.builds.push({ key, dir: path.resolve(dir) });
    } else die(`unexpected argument ${JSON.stringify(a)}; usage: stage.mjs --out DIR [--version V] [--repository URL] [--pack] PLATFORM=BINDIR...`);
  }
  if (!opts.out) die('--out DIR is required');
  if (opts.builds.length === 0) die('give at least one PLATFORM=BINDIR');
  return opts;
}

const cargoToml = fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8');

/** One `key = "value"` of a TOML table in Cargo.toml (enough for the root manifest's fields). */
function cargoField(table, key) {
  const start = cargoToml.indexOf(`\n[${table}]\n`);
  if (start < 0) return null;
  const body = cargoToml.slice(start + table.length + 4).split(/\n\[/)[0];
  const m = body.match(new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, 'm'));
  return m ? m[1] : null;
}

/** What an executable is built for, read from its header: [os, cpu] in npm's names. */
function executableKind(file) {
  const fd = fs.openSync(file, 'r');
  const b = Buffer.alloc(4096);
  const n = fs.readSync(fd, b, 0, b.length, 0);
  fs.closeSync(fd);
  if (n >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
    const machine = b[5] === 1 ? b.readUInt16LE(18) : b.readUInt16BE(18);
    return ['linux', { 62: 'x64', 183: 'arm64' }[machine] ?? `machine ${machine}`];
  }
  if (n >= 8 && b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4);
    return ['darwin', { 0x01000007: 'x64', 0x0100000c: 'arm64' }[cpu] ?? `cputype ${cpu}`];
  }
  if (n >= 64 && b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(60);
    if (pe + 6 <= n && b.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      const machine = b.readUInt16LE(pe + 4);
      return ['win32', { 0x8664: 'x64', 0xaa64: 'arm64' }[machine] ?? `machine ${machine}`];
    }
  }
  return ['unknown', 'unknown'];
}

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function copyCommon(dir) {
  for (const f of LICENSES) fs.copyFileSync(path.join(repo, f), path.join(dir, f));
}

function stagePlatform(out, version, common, { key, dir }) {
  const { os, cpu, target } = platforms[key];
  const ext = os === 'win32' ? '.exe' : '';
  const pkgDir = path.join(out, `ccmem-${key}`);
  fs.rmSync(pkgDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(pkgDir, 'bin'), { recursive: true });
  for (const program of PROGRAMS) {
    const from = path.join(dir, program + ext);
    if (!fs.existsSync(from)) die(`${from} is missing: build ${target} first`);
    const [isOs, isCpu] = executableKind(from);
    if (isOs !== os || isCpu !== cpu) die(`${from} is built for ${isOs} ${isCpu}, not ${key}`);
    const to = path.join(pkgDir, 'bin', program + ext);
    fs.copyFileSync(from, to);
    fs.chmodSync(to, 0o755);
  }
  copyCommon(pkgDir);
  writeJson(path.join(pkgDir, 'package.json'), {
    name: `@ccmem/${key}`,
    version,
    description: `ccmem's programs (ccmemctl, ccmemd, ccmem-mcp) for ${key} (${target}); install the ccmem package, which picks this one`,
    ...common,
    os: [os],
    cpu: [cpu],
    files: ['bin', ...LICENSES],
    preferUnplugged: true,
  });
  fs.writeFileSync(
    path.join(pkgDir, 'README.md'),
    `# @ccmem/${key}\n\nThe native programs of [ccmem](https://www.npmjs.com/package/ccmem) for ${key}, built for \`${target}\`.\nInstall \`ccmem\` (\`npm i -g ccmem\`): it depends on this package where it applies.\n`
  );
  return pkgDir;
}

function stageMain(out, version, common) {
  const pkgDir = path.join(out, 'ccmem');
  fs.rmSync(pkgDir, { recursive: true, force: true });
  fs.cpSync(path.join(here, 'ccmem'), pkgDir, { recursive: true });
  for (const program of PROGRAMS) fs.chmodSync(path.join(pkgDir, 'bin', program), 0o755);
  copyCommon(pkgDir);
  writeJson(path.join(pkgDir, 'package.json'), {
    name: 'ccmem',
    version,
    description: cargoField('package', 'description') ?? 'Session memory for AI coding agents',
    ...common,
    bin: Object.fromEntries(PROGRAMS.map((p) => [p, `bin/${p}`])),
    scripts: { postinstall: 'node install.js' },
    optionalDependencies: Object.fromEntries(Object.keys(platforms).map((k) => [`@ccmem/${k}`, version])),
    engines: { node: '>=18' },
    files: ['bin', 'lib', 'install.js', 'README.md', ...LICENSES],
    keywords: ['claude-code', 'coding-agent', 'memory', 'session', 'hooks', 'mcp'],
  });
  return pkgDir;
}

const opts = parseArgs(process.argv.slice(2));
const version = opts.version ?? cargoField('workspace.package', 'version');
if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) die(`not a version: ${version}`);
const repository = (opts.repository ?? cargoField('workspace.package', 'repository'))?.replace(/\/+$/, '');
const common = {
  license: cargoField('workspace.package', 'license') ?? 'MIT OR Apache-2.0',
  ...(repository ? { repository: { type: 'git', url: `git+${repository}.git` }, homepage: repository } : {}),
};
const out = path.resolve(opts.out);
// The packages are made in DIR/ccmem and DIR/ccmem-<platform>, each emptied first: never
// where the sources are.
if (out === repo || path.join(out, 'ccmem').startsWith(here)) die(`--out ${opts.out} would overwrite the sources in ${here}`);
fs.mkdirSync(out, { recursive: true });
const dirs = [stageMain(out, version, common), ...opts.builds.map((b) => stagePlatform(out, version, common, b))];
for (const dir of dirs) {
  if (opts.pack) {
    const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: dir, encoding: 'utf8' });
    process.stdout.write(`${path.join(out, name.trim().split('\n').pop())}\n`);
  } else process.stdout.write(`${dir}\n`);
}
