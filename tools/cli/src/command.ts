import type { Writable } from 'node:stream';
import type { Bus } from '@hermes/bus';
import { DEFAULT_TEAM, Id, isTeamName, validate } from '@hermes/contracts';

/** Where a command writes and what it may read; injected so tests capture the output. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM: commands that follow a stream stop and return. */
  signal?: AbortSignal;
}

export interface CommandContext extends CliIo {
  /** The bus connection, opened on first use (so `--help` and usage errors need no NATS). */
  bus(): Promise<Bus>;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Shown in help as `--name <valueName>`. */
  valueName?: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | undefined>;

/** One entry of the command table. Adding a subcommand means adding one of these. */
export interface Command {
  /** The words that select it: `['run']`, or `['llm', 'status']` for a nested command. */
  readonly path: readonly string[];
  readonly summary: string;
  /** More than the summary says, printed by `--help` only (paragraphs, wrapped by hand). */
  readonly help?: string;
  /** Positional arguments as shown in usage, e.g. `"<goal>"`. */
  readonly args: string;
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Resolves to the process exit code. */
  execute(input: { values: OptionValues; positionals: string[] }, ctx: CommandContext): Promise<number>;
}

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** The user typed something we cannot run: reported with the command's usage, exit 2. */
export class UsageError extends Error {
  readonly code = 'usage';
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A task id given on the command line, checked against the contracts' id format. */
export function taskIdArg(value: string | undefined): string {
  const taskId = value ?? '';
  if (!validate(Id, taskId).ok) throw new UsageError(`"${taskId}" is not a task id`);
  return taskId;
}

/** A failure already explained in `message` (no stack trace for the user), with its exit code. */
export class CliError extends Error {
  readonly code = 'cli_error';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Reads a string option that parseArgs typed as string. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function writeLine(out: Writable, line: string): void {
  out.write(`${line}\n`);
}

/** The `--team` option of every command whose user ids belong to a team. */
export const TEAM_OPTION = {
  team: {
    type: 'string',
    valueName: 'team',
    description: 'the team the user belongs to (default: $HERMES_TEAM or the default team); a user id means a user only inside its team',
  },
} as const satisfies Record<string, OptionSpec>;

/** The team of `--team` (or $HERMES_TEAM), checked before anything is sent; the default team when neither is given. */
export function teamOption(values: OptionValues, env: NodeJS.ProcessEnv): string {
  const team = stringOption(values, 'team') ?? env.HERMES_TEAM ?? DEFAULT_TEAM;
  if (!isTeamName(team)) throw new UsageError(`--team must be a team name: lower-case letters, digits and - (got "${team}")`);
  return team;
}
