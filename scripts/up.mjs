#!/usr/bin/env node
// `npm run up`: from a fresh clone to a running Hermes. Uses only Node built-ins, because it
// runs before dependencies are installed.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    console.error(`\n${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}).`);
    process.exit(1);
  }
};
const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`Hermes needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}

// 1. Dependencies, when missing or older than the lock file.
const lock = `${root}package-lock.json`;
const installed = `${root}node_modules/.package-lock.json`;
if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
  console.log('installing dependencies (npm ci)...');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

// 2. nats-server and redis-server, unless both are provided from outside.
const needed = [...(process.env.NATS_URL ? [] : [['nats-server', 'nats-server']]), ...(process.env.REDIS_URL ? [] : [['redis-server', 'redis-server']])].filter(
  ([bin]) => !has(bin),
);
if (needed.length > 0) {
  const pkgs = needed.map(([, pkg]) => pkg);
  const isRoot = process.getuid?.() === 0;
  if (has('apt-get') && (isRoot || has('sudo'))) {
    console.log(`installing ${pkgs.join(' ')} with apt-get...`);
    const sudo = isRoot ? [] : ['sudo'];
    run(sudo[0] ?? 'apt-get', [...sudo.slice(1), ...(isRoot ? [] : ['apt-get']), 'update', '-qq']);
    run(sudo[0] ?? 'apt-get', [...sudo.slice(1), ...(isRoot ? [] : ['apt-get']), 'install', '-y', '-qq', ...pkgs]);
  } else {
    console.error(`Hermes needs ${pkgs.join(' and ')} on PATH (or NATS_URL / REDIS_URL pointing at running servers).`);
    console.error('Install them, e.g.:  Debian/Ubuntu: sudo apt-get install nats-server redis-server');
    console.error('                     macOS:         brew install nats-server redis');
    process.exit(1);
  }
}

// 3. Build, then hand over to the runner, which owns the processes until it is told to stop.
console.log('building...');
run('npm', ['run', 'build', '--silent']);
const child = spawn(process.execPath, [`${root}tools/devstack/dist/main.js`], {
  cwd: root,
  stdio: 'inherit',
  // The runner stops everything when this process is gone, even if it was killed with SIGKILL.
  env: { ...process.env, HERMES_DEVSTACK_PARENT_PID: String(process.pid) },
});
// A signal to this pid alone (`kill <pid>`, or npm passing on its own SIGTERM: the script
// `exec`s node, so no shell sits in between to die and orphan us) goes on to the runner. A
// Ctrl-C reaches the runner twice, from the terminal and from here; it stops once.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
// Run by npm (`npm run up`): should npm itself go away (SIGKILL), stop as if told to.
if (process.env.npm_lifecycle_event === 'up') {
  const npmPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== npmPid) child.kill('SIGTERM');
  }, 1000).unref();
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
