#!/usr/bin/env node
// Checks the package boundaries of CONTRIBUTING.md: each workspace package imports only the Hermes
// packages its row allows, never another package's files by path, and only packages its own
// package.json declares (src: dependencies; test: dependencies or devDependencies), and that a
// published package (not private) depends only on published Hermes packages, by a semver range.
// Run by tests/deploy/boundaries.test.ts (part of `npm test`); `node scripts/check-boundaries.mjs` prints the problems.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIBS = ['contracts', 'config', 'telemetry', 'bus', 'service-host', 'semaphore', 'llm', 'tool-sdk', 'testkit'].map((l) => `@hermes/${l}`);
const SERVICE_LIBS = LIBS.filter((l) => l !== '@hermes/testkit');

/** The CONTRIBUTING table: which Hermes packages each package's sources may import (null: any). */
export const ALLOWED = {
  '@hermes/contracts': [],
  // The leaf libraries take only the contracts (for HermesError, the one error base).
  '@hermes/config': ['@hermes/contracts'],
  '@hermes/telemetry': [],
  '@hermes/bus': ['@hermes/contracts', '@hermes/telemetry'],
  '@hermes/service-host': ['@hermes/contracts', '@hermes/config', '@hermes/telemetry', '@hermes/bus'],
  '@hermes/semaphore': ['@hermes/contracts'],
  '@hermes/llm': ['@hermes/contracts', '@hermes/telemetry', '@hermes/semaphore'],
  '@hermes/tool-sdk': ['@hermes/contracts'],
  '@hermes/testkit': ['@hermes/contracts'],
  '@hermes/gateway': SERVICE_LIBS,
  '@hermes/dispatcher': SERVICE_LIBS,
  '@hermes/runtime': SERVICE_LIBS,
  '@hermes/toolbus': SERVICE_LIBS,
  '@hermes/memory': SERVICE_LIBS,
  '@hermes/cli': ['@hermes/contracts', '@hermes/bus', '@hermes/config', '@hermes/telemetry', '@hermes/semaphore'],
  '@hermes/devstack': ['@hermes/testkit'],
};

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
const SOURCE = /\.(?:ts|mts|mjs|js)$/;

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === 'results') return [];
    return statSync(path).isDirectory() ? filesUnder(path) : SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
const builtin = (spec) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]);

/** Every boundary problem in the workspace at `root`, as `file: problem` lines. */
export function checkBoundaries(root) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dirs = manifest.workspaces.flatMap((w) => (w.endsWith('/*') ? readdirSync(join(root, w.slice(0, -2))).map((d) => join(w.slice(0, -2), d)) : [w]));
  const problems = [];
  const packageDirs = dirs.map((d) => resolve(root, d)).filter((d) => existsSync(join(d, 'package.json')));
  const privateByName = new Map(packageDirs.map((d) => JSON.parse(readFileSync(join(d, 'package.json'), 'utf8'))).map((p) => [p.name, p.private === true]));
  for (const dir of dirs) {
    const pkgDir = resolve(root, dir);
    if (!existsSync(join(pkgDir, 'package.json'))) continue;
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    const deps = new Set(Object.keys(pkg.dependencies ?? {}));
    const devDeps = new Set([...deps, ...Object.keys(pkg.devDependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})]);
    const allowed = ALLOWED[pkg.name] ?? null;
    if (pkg.private !== true) problems.push(...publishedDependencyProblems(relative(root, join(pkgDir, 'package.json')), pkg, privateByName));
    for (const file of filesUnder(pkgDir)) {
      const rel = relative(root, file);
      const inSrc = relative(pkgDir, file).split(sep)[0] === 'src';
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        if (spec.startsWith('.')) {
          // A relative path into another package reaches into its files (root files such as vitest.shared.ts are no package's).
          const target = resolve(file, '..', spec);
          const other = packageDirs.find((d) => d !== pkgDir && target.startsWith(d + sep));
          if (other) problems.push(`${rel}: imports ${spec} by path (use the package's entry)`);
          continue;
        }
        if (builtin(spec)) continue;
        const name = packageOf(spec);
        if (name === pkg.name) continue;
        if (!(inSrc ? deps : devDeps).has(name))
          problems.push(`${rel}: imports ${name}, not in its package.json ${inSrc ? 'dependencies' : 'dependencies or devDependencies'}`);
        if (name.startsWith('@hermes/') && allowed && !allowed.includes(name) && !(name === '@hermes/testkit' && !inSrc)) {
          problems.push(`${rel}: ${pkg.name} may not depend on ${name} (CONTRIBUTING.md, packages table)`);
        }
      }
    }
  }
  return problems;
}

/** A published package installs its Hermes dependencies from the registry: each must be published too, at a version range. */
function publishedDependencyProblems(rel, pkg, privateByName) {
  return Object.entries(pkg.dependencies ?? {})
    .filter(([name]) => name.startsWith('@hermes/'))
    .flatMap(([name, range]) => [
      ...(privateByName.get(name) !== false ? [`${rel}: published ${pkg.name} depends on ${name}, which is not published`] : []),
      ...(/^\^?\d+\.\d+\.\d+$/.test(range) ? [] : [`${rel}: published ${pkg.name} depends on ${name} at "${range}", not a version range`]),
    ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // --root DIR checks another workspace (the test's deliberately broken one).
  const at = process.argv.indexOf('--root');
  const problems = checkBoundaries(at > 0 ? resolve(process.argv[at + 1]) : fileURLToPath(new URL('..', import.meta.url)));
  for (const p of problems) console.error(p);
  console.log(problems.length === 0 ? 'package boundaries hold' : `${problems.length} boundary problem(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}
