import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Absolute path of a built file of this library; child processes run dist/, not the TS sources. */
export function builtFile(name: string): string {
  const path = fileURLToPath(new URL(`../dist/${name}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${path} is missing: build first (npx tsc -b libs/testkit/tsconfig.json, or npm test at the root)`);
  return path;
}
