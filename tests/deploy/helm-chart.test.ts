import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { subjectsFor } from '@hermes/contracts';
import { HERMES_SERVICES } from '@hermes/contracts/nats-permissions';
import { chartDir, ciValuesFiles, helmAvailable, helmTemplate, mergeValues, readJson, readYaml, type Manifest, type Values } from './chart-files.js';

// Without the helm binary: every values file parses and passes values.schema.json (as `helm
// install` would check it), bad values fail it, and every service has its templates. With helm on
// PATH, the chart is also rendered and the manifests checked.
const defaults = readYaml(`${chartDir}/values.yaml`);
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const validate = ajv.compile(readJson(`${chartDir}/values.schema.json`));
const check = (values: Values) => (validate(values) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
const withValues = (over: Values) => mergeValues(defaults, over);
const templates = (name: string) => readFileSync(`${chartDir}/templates/${name}`, 'utf8');

describe('helm/hermes values', () => {
  it('values.yaml and every ci values file pass values.schema.json', () => {
    expect(check(defaults)).toEqual([]);
    const files = ciValuesFiles();
    expect(files.map((f) => f.split('/').pop())).toEqual(expect.arrayContaining(['keda-values.yaml', 'hpa-values.yaml']));
    for (const file of files) expect(check(withValues(readYaml(file))), file).toEqual([]);
  });

  it('the KEDA values turn KEDA on and the HPA values the HPA, never both', () => {
    const keda = withValues(readYaml(`${chartDir}/ci/keda-values.yaml`)) as { keda: { enabled: boolean }; runtime: { autoscaling: { enabled: boolean } } };
    expect([keda.keda.enabled, keda.runtime.autoscaling.enabled]).toEqual([true, false]);
    const hpa = withValues(readYaml(`${chartDir}/ci/hpa-values.yaml`)) as typeof keda;
    expect([hpa.keda.enabled, hpa.runtime.autoscaling.enabled]).toEqual([false, true]);
  });

  it.each([
    ['KEDA and the HPA on the runtime at once', { keda: { enabled: true }, runtime: { autoscaling: { enabled: true } } }],
    ['a subject prefix that is not one NATS token', { subjectPrefix: 'acme.hermes' }],
    ['replicas as a string', { runtime: { replicas: '3' } }],
    ['a misspelt key', { gateway: { replica: 3 } }],
    ['a root container', { podSecurityContext: { runAsNonRoot: false } }],
    ['privilege escalation', { containerSecurityContext: { allowPrivilegeEscalation: true } }],
    ['the embedded memory store on two replicas', { memory: { store: 'embedded', replicas: 2 } }],
    ['an unknown log level', { common: { logLevel: 'verbose' } }],
    ['a NATS URL without a scheme', { nats: { url: 'nats.example:4222' } }],
    ['an LLM pool without capacity', { llm: { pools: [{ name: 'main' }] } }],
    ['an API key shorter than 16 characters', { gateway: { apiKeys: { keys: [{ key: 'short', user_id: 'u', roles: [] }] } } }],
    ['an environment variable name in lower case', { runtime: { env: { agent_max_steps: 5 } } }],
    ['JetStream replicas of 0', { nats: { jetstreamReplicas: 0 } }],
    ['JetStream replicas as a string', { nats: { jetstreamReplicas: '3' } }],
    ['a Sentinel list that is not host:port,...', { memory: { redisSentinel: { sentinels: 'redis://sentinel-0:26379' } } }],
    ['an empty Sentinel master name', { memory: { redisSentinel: { sentinels: 'sentinel-0:26379', name: '' } } }],
  ])('rejects %s', (_what, over) => {
    expect(check(withValues(over as Values)).length).toBeGreaterThan(0);
  });

  it('keeps three copies of every stream and bucket by default: HERMES_JS_REPLICAS=3 in the ConfigMap every service reads', () => {
    expect(defaults.nats).toMatchObject({ jetstreamReplicas: 3 });
    expect(templates('configmap.yaml')).toMatch(/^ {2}HERMES_JS_REPLICAS: \{\{ \.Values\.nats\.jetstreamReplicas \| quote \}\}$/m);
    expect(templates('_helpers.tpl')).toContain('- configMapRef: { name: {{ include "hermes.fullname" $root }}-common }');
  });

  it('takes Redis behind Sentinel: the Sentinels and their master name become REDIS_SENTINELS and REDIS_SENTINEL_NAME of the memory service', () => {
    expect(check(withValues({ memory: { redisSentinel: { sentinels: 'sentinel-0.redis:26379,sentinel-1.redis:26379', name: 'sessions' } } }))).toEqual([]);
    expect(defaults.memory).toMatchObject({ redisSentinel: { sentinels: '', name: 'mymaster' } });
    const memory = templates('memory.yaml');
    expect(memory).toContain('"name" "REDIS_SENTINELS" "value" .');
    expect(memory).toContain('"name" "REDIS_SENTINEL_NAME" "value" $m.redisSentinel.name');
  });

  it('has a section with replicas, resources and a PDB per service, and a NATS user per service', () => {
    const users = (defaults.nats as { auth: { users: Record<string, string> } }).auth.users;
    expect(Object.keys(users).sort()).toEqual([...HERMES_SERVICES].sort());
    for (const service of HERMES_SERVICES) {
      expect(defaults[service], service).toMatchObject({ replicas: expect.any(Number), resources: { requests: expect.any(Object) }, pdb: { enabled: true } });
      expect(users[service]).toBe(service);
    }
  });
});

describe('helm/hermes templates', () => {
  it('Chart.yaml is a v2 application chart named hermes', () => {
    expect(readYaml(`${chartDir}/Chart.yaml`)).toMatchObject({ apiVersion: 'v2', name: 'hermes', type: 'application', version: expect.any(String) });
  });

  it('every service in the contracts has a template rendering its Deployment and PDB', () => {
    const files = readdirSync(`${chartDir}/templates`);
    for (const service of HERMES_SERVICES) {
      expect(files, service).toContain(`${service}.yaml`);
      const text = templates(`${service}.yaml`);
      expect(text).toMatch(new RegExp(`include "hermes\\.deployment" \\(dict "root" \\. "name" "${service}"`));
      expect(text).toContain(`include "hermes.pdb" (dict "root" . "name" "${service}")`);
    }
  });

  it('the shared Deployment probes /healthz and /readyz on the health port and runs node directly', () => {
    const helpers = templates('_helpers.tpl');
    expect(helpers).toContain('livenessProbe:\n            httpGet: { path: /healthz, port: health }');
    expect(helpers).toContain('readinessProbe:\n            httpGet: { path: /readyz, port: health }');
    expect(helpers).toContain('{ name: health, containerPort: {{ $root.Values.common.healthPort }} }');
    expect(helpers).toContain('{ name: metrics, containerPort: {{ $root.Values.telemetry.metricsPort }} }');
    expect(helpers).toContain('args: ["node", "services/{{ $name }}/dist/main.js"]');
    expect(templates('configmap.yaml')).toContain('HEALTH_PORT: {{ .Values.common.healthPort | quote }}');
    expect(templates('configmap.yaml')).toContain('METRICS_PORT: {{ .Values.telemetry.metricsPort | quote }}');
    // The services listen on loopback by default; kubelet probes and Services reach the pod IP.
    expect(templates('configmap.yaml')).toContain('HERMES_BIND_HOST: {{ .Values.common.bindHost | quote }}');
    expect((defaults.common as { bindHost: string }).bindHost).toBe('0.0.0.0');
  });

  it('scales the runtime with a KEDA ScaledObject on the runtime jobs consumer, or else an HPA', () => {
    const text = templates('runtime-autoscaling.yaml');
    expect(text.indexOf('{{- if .Values.keda.enabled }}')).toBeLessThan(text.indexOf('kind: ScaledObject'));
    expect(text.indexOf('kind: ScaledObject')).toBeLessThan(text.indexOf('{{- else if .Values.runtime.autoscaling.enabled }}'));
    expect(text.indexOf('{{- else if .Values.runtime.autoscaling.enabled }}')).toBeLessThan(text.indexOf('kind: HorizontalPodAutoscaler'));
    expect(text).toContain('type: nats-jetstream');
    expect(text).toContain(`consumer: "${subjectsFor().consumers.runtimeJobs}"`);
    expect(text).toContain(`consumer: "${subjectsFor().consumers.runtimeJobsAhead}"`);
    // The helper derives the stream from the prefix as subjectsFor() does.
    expect(templates('_helpers.tpl')).toContain('printf "%s_RUNTIME_JOBS" (.Values.subjectPrefix | upper | replace "-" "_")');
    for (const prefix of ['hermes', 'acme-prod', 'team_a']) {
      expect(`${prefix.toUpperCase().replace(/-/g, '_')}_RUNTIME_JOBS`).toBe(subjectsFor(prefix).streams.runtimeJobs);
      expect(`${prefix.toUpperCase().replace(/-/g, '_')}_RUNTIME_JOBS_AHEAD`).toBe(subjectsFor(prefix).streams.runtimeJobsAhead);
    }
  });

  it('every include names a template the chart defines, and template actions are balanced', () => {
    const files = readdirSync(`${chartDir}/templates`);
    const all = files.map((f) => templates(f)).join('\n');
    const defined = new Set([...all.matchAll(/\{\{-? define "([^"]+)"/g)].map((m) => m[1]));
    const used = new Set([...all.matchAll(/include "([^"]+)"/g)].map((m) => m[1]));
    for (const name of used) expect(defined, name).toContain(name);
    for (const f of files) {
      const text = templates(f);
      expect(text.split('{{').length, f).toBe(text.split('}}').length);
      const opens = (text.match(/\{\{-? (if|range|with|define)\b/g) ?? []).length;
      const ends = (text.match(/\{\{-? end -?\}\}/g) ?? []).length;
      expect(ends, `${f}: if/range/with/define without end`).toBe(opens);
    }
  });
});

const hasHelm = helmAvailable();

describe.runIf(hasHelm)('helm template (helm on PATH)', () => {
  const kinds = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
  const deployments = (ms: Manifest[]) => new Map(kinds(ms, 'Deployment').map((d) => [d.metadata.labels?.['app.kubernetes.io/component'], d]));

  it('renders a Deployment per service with probes and a read-only root filesystem, and no autoscaler by default', () => {
    const ms = helmTemplate();
    const byService = deployments(ms);
    expect([...byService.keys()].sort()).toEqual([...HERMES_SERVICES].sort());
    for (const d of byService.values()) {
      const c = ((d.spec as Values).template as { spec: { containers: Values[] } }).spec.containers[0]!;
      expect(c.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'health' } });
      expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'health' } });
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    }
    expect(kinds(ms, 'PodDisruptionBudget')).toHaveLength(HERMES_SERVICES.length);
    expect(kinds(ms, 'ScaledObject')).toHaveLength(0);
    expect(kinds(ms, 'HorizontalPodAutoscaler')).toHaveLength(0);
    const common = ms.find((m) => m.kind === 'ConfigMap' && m.metadata.name.endsWith('-common')) as (Manifest & { data: Record<string, string> }) | undefined;
    expect(common?.data.HERMES_JS_REPLICAS).toBe('3');
  });

  it('with KEDA on renders a ScaledObject on the runtime jobs consumer and no HPA', () => {
    const ms = helmTemplate([`${chartDir}/ci/keda-values.yaml`]);
    const [scaled] = kinds(ms, 'ScaledObject');
    expect(kinds(ms, 'HorizontalPodAutoscaler')).toHaveLength(0);
    expect(scaled?.spec).toMatchObject({
      triggers: [
        { type: 'nats-jetstream', metadata: { stream: subjectsFor().streams.runtimeJobs, consumer: subjectsFor().consumers.runtimeJobs } },
        { type: 'nats-jetstream', metadata: { stream: subjectsFor().streams.runtimeJobsAhead, consumer: subjectsFor().consumers.runtimeJobsAhead } },
      ],
    });
    expect(deployments(ms).get('runtime')?.spec).not.toHaveProperty('replicas');
  });

  it('with the HPA on renders an HPA and no ScaledObject', () => {
    const ms = helmTemplate([`${chartDir}/ci/hpa-values.yaml`]);
    expect(kinds(ms, 'HorizontalPodAutoscaler')).toHaveLength(1);
    expect(kinds(ms, 'ScaledObject')).toHaveLength(0);
  });
});
