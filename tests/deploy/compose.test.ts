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
}
const compose = parse(readFileSync(`${root}docker-compose.yml`, 'utf8'), { merge: true }) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };
const services = compose.services;
const documented = readFileSync(`${root}docs/configuration.md`, 'utf8');

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
      expect(env.NATS_URL).toBe('nats://nats:4222');
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
