import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const chartDir = `${root}helm/hermes`;

export type Values = { [key: string]: unknown };

export const readYaml = (path: string): Values => parse(readFileSync(path, 'utf8')) as Values;
export const readJson = (path: string): Values => JSON.parse(readFileSync(path, 'utf8')) as Values;

/** The values files of the chart's test cases (`ci/*-values.yaml`, as chart-testing names them). */
export const ciValuesFiles = (): string[] =>
  readdirSync(`${chartDir}/ci`)
    .filter((f) => f.endsWith('-values.yaml'))
    .map((f) => `${chartDir}/ci/${f}`);

const isObject = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's merge of a values file over the chart's defaults: maps merge, everything else replaces. */
export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? mergeValues(current, value) : value;
  }
  return out;
}

/** Whether a `helm` binary is on PATH (it is not on every development machine). */
export function helmAvailable(): boolean {
  try {
    execFileSync('helm', ['version', '--short'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Values;
}

/** `helm template` of the chart with extra values files, as parsed manifests. */
export function helmTemplate(valuesFiles: string[] = []): Manifest[] {
  const out = execFileSync('helm', ['template', 'hermes', chartDir, ...valuesFiles.flatMap((f) => ['-f', f])], { encoding: 'utf8' });
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}
