import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HERMES_SERVICES, inboxPrefixFor, passwordVariableFor } from '@hermes/contracts/nats-permissions';
import { teamPasswordVariableFor } from '@hermes/contracts/nats-accounts';
import { root } from './chart-files.js';

// docker-compose.yml without a Docker engine: the file is parsed (YAML merge keys resolved as
// compose does) and checked against the contracts and docs/configuration.md; `docker compose
// config` (or docker-compose) validates it where one is installed.
interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  read_only?: boolean;
  restart?: string;
  profiles?: string[];
}
const compose = parse(readFileSync(`${root}docker-compose.yml`, 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const documented = readFileSync(`${root}docs/configuration.md`, 'utf8');

/** The variables of an env file (`NAME=value` lines; comments and blank lines skipped). */
const envFile = (path: string): Record<string, string> =>
  Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
const clusterEnv = envFile(`${root}deploy/compose/cluster.env`);
const NATS_NODES = ['nats', 'nats-2', 'nats-3'];

/** Whether a command runs at all (`--version`), so a test can ask for it. */
const runs = (cmd: string): boolean => {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** `docker compose` (v2 plugin) or `docker-compose` (v1), whichever is installed. */
const composeCommand = ((): string[] | undefined => {
  for (const candidate of [['docker', 'compose'], ['docker-compose']]) {
    try {
      execFileSync(candidate[0]!, [...candidate.slice(1), 'version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not installed
    }
  }
  return undefined;
})();

describe('docker-compose.yml', () => {
  it('runs every service of the contracts from the one image, read-only, with a readiness health check', () => {
    for (const name of HERMES_SERVICES) {
      const s = services[name];
      expect(s, name).toBeDefined();
      expect(s!.image).toBe('hermes:local');
      expect(s!.command).toEqual(['node', `services/${name}/dist/main.js`]);
      expect(s!.read_only).toBe(true);
      expect(s!.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${s!.environment?.HEALTH_PORT}/readyz`);
      // Loopback is the services' default; the published gateway port and Prometheus come from outside.
      expect(s!.environment?.HERMES_BIND_HOST, name).toBe('0.0.0.0');
    }
  });

  it('connects each service to NATS as its own generated user, with its inbox prefix and the password nats-server checks', () => {
    const natsEnv = services.nats!.environment!;
    for (const name of HERMES_SERVICES) {
      const env = services[name]!.environment!;
      // The one nats-server, unless the cluster profile's env file names all three nodes.
      expect(env.NATS_URL).toBe('${HERMES_NATS_URL:-nats://nats:4222}');
      expect(env.NATS_USER).toBe(name);
      expect(env.NATS_INBOX_PREFIX).toBe(inboxPrefixFor(name));
      // Both sides read the same variable with the same development default.
      expect(env.NATS_PASSWORD).toBe(natsEnv[passwordVariableFor(name)]);
      expect(env.NATS_PASSWORD).toMatch(new RegExp(`^\\$\\{${passwordVariableFor(name)}:-`));
    }
  });

  it('configures services only through settings named in docs/configuration.md', () => {
    const undocumented = HERMES_SERVICES.flatMap((name) =>
      Object.keys(services[name]!.environment!)
        // Standard OpenTelemetry variables, documented as such.
        .filter((key) => !key.startsWith('OTEL_') && !documented.includes(`\`${key}\``))
        .map((key) => `${name}: ${key}`),
    );
    expect(undocumented).toEqual([]);
  });

  it('runs NATS with JetStream, the generated users and the monitoring port, with its data on a volume', () => {
    const nats = services.nats!;
    expect(nats.ports).toEqual(expect.arrayContaining(['4222:4222', '8222:8222']));
    expect(nats.volumes).toEqual(expect.arrayContaining(['./deploy/nats:/etc/nats:ro', 'nats-data:/data']));
    expect(nats.healthcheck?.test.join(' ')).toContain('8222/healthz?js-enabled-only=true');
    const conf = readFileSync(`${root}deploy/nats/nats-server.conf`, 'utf8');
    expect(conf).toMatch(/^jetstream \{\n\s+store_dir: \/data/m);
    expect(conf).toMatch(/^http: 0\.0\.0\.0:8222$/m);
    expect(conf).toMatch(/^include \.\/hermes-users\.conf$/m);
    expect(compose.volumes).toHaveProperty('nats-data');
  });

  it('can run NATS with teams as accounts: the accounts file is included and every team of teams.json has a password', () => {
    const conf = readFileSync(`${root}deploy/nats/nats-server-accounts.conf`, 'utf8');
    expect(conf).toMatch(/^include \.\/hermes-accounts\.conf$/m);
    expect(conf).toMatch(/^jetstream \{\n\s+store_dir: \/data/m);
    expect(services.nats!.command).toEqual(['-c', '/etc/nats/${HERMES_NATS_CONFIG:-nats-server.conf}']);
    const teams = JSON.parse(readFileSync(`${root}deploy/nats/teams.json`, 'utf8')) as string[];
    for (const team of teams) expect(services.nats!.environment, team).toHaveProperty(teamPasswordVariableFor(team));
  });

  it('gives memory Redis and Qdrant (healthy first) and keeps Qdrant data on a volume', () => {
    const memory = services.memory!;
    expect(memory.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379', QDRANT_URL: 'http://qdrant:6333' });
    expect(memory.depends_on).toMatchObject({ redis: { condition: 'service_healthy' }, qdrant: { condition: 'service_healthy' } });
    expect(services.qdrant!.volumes).toContain('qdrant-data:/qdrant/storage');
    expect(services.qdrant!.healthcheck).toBeDefined();
    expect(services.redis!.healthcheck).toBeDefined();
  });

  it('sends spans through the OpenTelemetry collector to Jaeger, whose UI is published', () => {
    expect(services.jaeger!.ports).toContain('16686:16686');
    const collector = services['otel-collector']!;
    expect(collector.volumes).toContain('./deploy/otel/collector.yaml:/etc/otelcol/config.yaml:ro');
    const config = parse(readFileSync(`${root}deploy/otel/collector.yaml`, 'utf8')) as {
      exporters: Record<string, { endpoint: string }>;
      service: { pipelines: Record<string, { receivers: string[]; exporters: string[] }> };
    };
    expect(config.service.pipelines.traces).toMatchObject({ receivers: ['otlp'], exporters: ['otlp/jaeger'] });
    expect(config.exporters['otlp/jaeger']!.endpoint).toBe('jaeger:4317');
    for (const name of HERMES_SERVICES) {
      expect(services[name]!.environment!.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4318');
      // Metrics reach the collector once, over OTLP: it must not also scrape the services' own endpoints.
      expect(services[name]!.environment!.OTEL_METRICS_EXPORTER).not.toBe('none');
      expect(JSON.stringify(config)).not.toContain(`${name}:${services[name]!.environment!.METRICS_PORT}`);
    }
    expect(config.service.pipelines.metrics).toMatchObject({ receivers: ['otlp'], exporters: ['prometheus'] });
  });

  it('has a cluster profile: three NATS nodes of one JetStream cluster, each with its own store, and every service on all three at R3', () => {
    expect(services.nats!.profiles).toBeUndefined();
    for (const node of ['nats-2', 'nats-3']) {
      const s = services[node]!;
      expect(s.profiles, node).toEqual(['cluster']);
      expect(s.command).toEqual(['-c', '/etc/nats/nats-cluster.conf']);
      expect(s.volumes).toEqual(['./deploy/nats:/etc/nats:ro', `${node}-data:/data`]);
      expect(s.healthcheck?.test.join(' ')).toContain('8222/healthz?js-enabled-only=true');
      expect(compose.volumes).toHaveProperty(`${node}-data`);
    }
    // Each node names itself, and the config file names every node as a route.
    expect(NATS_NODES.map((n) => services[n]!.environment!.HERMES_NATS_NODE)).toEqual(NATS_NODES);
    const conf = readFileSync(`${root}deploy/nats/nats-cluster.conf`, 'utf8');
    expect(conf).toMatch(/^server_name: \$HERMES_NATS_NODE$/m);
    expect(conf).toMatch(/^jetstream \{\n\s+store_dir: \/data/m);
    expect(conf).toMatch(/^include \.\/hermes-users\.conf$/m);
    expect([...conf.matchAll(/nats-route:\/\/([\w-]+):6222/g)].map((m) => m[1])).toEqual(NATS_NODES);

    // The profile's env file turns it on: the first node runs the cluster config, the services find all three and keep three copies.
    expect(clusterEnv).toEqual({
      COMPOSE_PROFILES: 'cluster',
      HERMES_NATS_CONFIG: 'nats-cluster.conf',
      HERMES_NATS_URL: NATS_NODES.map((n) => `nats://${n}:4222`).join(','),
      HERMES_JS_REPLICAS: '3',
    });
    for (const name of HERMES_SERVICES) expect(services[name]!.environment!.HERMES_JS_REPLICAS, name).toBe('${HERMES_JS_REPLICAS:-1}');
    // The dispatcher (which declares the R3 streams, the others start after it) is started again until
    // the other two nodes are up: a depends_on with `required: false` is refused by docker-compose 1.x.
    expect(services.dispatcher!.restart).toBe('unless-stopped');
    expect(Object.keys(services.dispatcher!.depends_on ?? {})).toEqual(['nats']);
  });

  it.runIf(runs('nats-server'))('nats-cluster.conf is a valid nats-server config for each node (nats-server -t)', () => {
    const passwords = Object.fromEntries(
      Object.keys(services.nats!.environment!)
        .filter((k) => k.startsWith('HERMES_NATS_PASSWORD_'))
        .map((k) => [k, 'dev']),
    );
    for (const node of NATS_NODES) {
      // Throws (failing the test) with nats-server's message when the file does not parse.
      execFileSync('nats-server', ['-t', '-c', `${root}deploy/nats/nats-cluster.conf`], {
        stdio: 'pipe',
        env: { ...process.env, ...passwords, HERMES_NATS_NODE: node },
      });
    }
  });

  it('runs Redis with the append-only file in every profile', () => {
    const redises = Object.entries(services).filter(([, s]) => s.image?.startsWith('redis:'));
    expect(redises.map(([name]) => name)).toEqual(['redis']);
    const redis = services.redis!;
    expect(redis.profiles).toBeUndefined();
    expect(redis.command?.join(' ')).toMatch(/--appendonly yes/);
    expect(redis.volumes).toEqual(['redis-data:/data']);
    expect(compose.volumes).toHaveProperty('redis-data');
  });

  it.runIf(composeCommand)('is valid for docker compose, with the cluster profile too', () => {
    const [cmd, ...args] = composeCommand!;
    execFileSync(cmd!, [...args, '-f', `${root}docker-compose.yml`, '--env-file', `${root}deploy/compose/cluster.env`, 'config', '--quiet'], {
      stdio: 'pipe',
      cwd: root,
    });
  });

  it.runIf(composeCommand)('is valid for docker compose', () => {
    const [cmd, ...args] = composeCommand!;
    // Throws (failing the test) with compose's message when the file is invalid.
    execFileSync(cmd!, [...args, '-f', `${root}docker-compose.yml`, 'config', '--quiet'], { stdio: 'pipe', cwd: root });
  });
});

describe('Dockerfile', () => {
  const text = readFileSync(`${root}Dockerfile`, 'utf8');
  const stages = text.split(/^FROM /m).slice(1);

  it('builds in stages on a current Node LTS and ships only production dependencies', () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m);
    expect(text).toMatch(/npm ci --omit=dev/);
    for (const name of HERMES_SERVICES) expect(text).toContain(`--workspace services/${name}`);
  });

  it('runs as a non-root user with tini as PID 1 and node (never npm) as the service process', () => {
    const last = stages.at(-1)!;
    expect(last).toMatch(/^USER node$/m);
    expect(last).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(last).toMatch(/^CMD \["sh", "-c", "exec node services\/\$\{HERMES_SERVICE\}\/dist\/main\.js"\]$/m);
    expect(last).not.toMatch(/npm (start|run)/);
    expect(existsSync(`${root}.dockerignore`)).toBe(true);
  });
});
