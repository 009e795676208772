import { cancelCommand } from './cancel-command.js';
import { answerCommand } from './answer-command.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { RemoteError, type Bus } from '@hermes/bus';
import { approveCommand } from './approve-command.js';
import { auditCommand } from './audit-command.js';
import { connectBus } from './bus-connection.js';
import { CliError, EXIT, UsageError, writeLine, type CliIo, type Command, type OptionValues } from './command.js';
import { llmCapacityCommand, llmStatusCommand } from './llm-commands.js';
import { MCP_COMMANDS } from './mcp-commands.js';
import { DEADLETTER_COMMANDS } from './deadletter-commands.js';
import { MEMORY_COMMANDS } from './memory-commands.js';
import { runCommand } from './run-command.js';
import { SCHEDULE_COMMANDS } from './schedule-commands.js';
import { TRIGGER_COMMANDS } from './trigger-commands.js';
import { sessionDeleteCommand, sessionListCommand, sessionShowCommand, sessionSummarizeCommand } from './session-commands.js';
import { statusCommand } from './status-command.js';
import { traceCommand } from './trace-command.js';
import { tasksCommand } from './tasks-command.js';
import { recordShowCommand, replayCommand } from './record-commands.js';
import { EVAL_COMMANDS } from './eval-commands.js';

/** Every subcommand. A nested one (`hermes llm status`) is an entry with `path: ['llm', 'status']`. */
export const COMMANDS: readonly Command[] = [
  runCommand,
  statusCommand,
  traceCommand,
  tasksCommand,
  cancelCommand,
  answerCommand,
  llmStatusCommand,
  llmCapacityCommand,
  approveCommand,
  auditCommand,
  sessionSummarizeCommand,
  sessionListCommand,
  sessionShowCommand,
  sessionDeleteCommand,
  ...MEMORY_COMMANDS,
  ...MCP_COMMANDS,
  ...DEADLETTER_COMMANDS,
  ...SCHEDULE_COMMANDS,
  ...TRIGGER_COMMANDS,
  recordShowCommand,
  replayCommand,
  ...EVAL_COMMANDS,
];

const ENVIRONMENT = [
  ['NATS_URL', 'NATS servers, comma-separated (default nats://127.0.0.1:4222)'],
  ['HERMES_SUBJECT_PREFIX', 'first token of every subject (default hermes)'],
  ['HERMES_USER', 'user for `run` when --user is not given (default cli-user)'],
  ['NATS_USER, NATS_PASSWORD, NATS_TOKEN, NATS_CREDS_FILE', 'NATS credentials'],
];

/** Parses argv, runs the selected command and resolves to the exit code; never throws. */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly Command[] = COMMANDS): Promise<number> {
  const first = argv[0];
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    io.stdout.write(usage(commands));
    return EXIT.ok;
  }
  const command = selectCommand(argv, commands);
  if (!command) {
    const group = commands.filter((c) => c.path.length > 1 && c.path[0] === first);
    writeLine(io.stderr, group.length > 0 ? `hermes ${first}: name a subcommand` : `hermes: unknown command "${first}"`);
    io.stderr.write(group.length > 0 ? commandList(group) : 'Run "hermes --help" for the list of commands.\n');
    return EXIT.usage;
  }
  const name = `hermes ${command.path.join(' ')}`;
  let bus: Bus | undefined;
  try {
    const input = parseCommandArgs(command, argv.slice(command.path.length));
    if (input === 'help') {
      io.stdout.write(commandHelp(command));
      return EXIT.ok;
    }
    return await command.execute(input, { ...io, bus: async () => (bus ??= await connectBus(io)) });
  } catch (err) {
    return report(err, name, command, io);
  } finally {
    await bus?.drain().catch(() => undefined);
  }
}

/** The command whose path matches the most leading words of argv. */
function selectCommand(argv: readonly string[], commands: readonly Command[]): Command | undefined {
  const matching = commands.filter((c) => c.path.every((word, i) => argv[i] === word));
  return matching.sort((a, b) => b.path.length - a.path.length)[0];
}

function parseCommandArgs(command: Command, args: string[]): 'help' | { values: OptionValues; positionals: string[] } {
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [long, spec] of Object.entries(command.options)) {
    options[long] = { type: spec.type, ...(spec.short ? { short: spec.short } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs explains the problem ("Unknown option '--x'"); pass that on as a usage error.
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help === true) return 'help';
  const n = parsed.positionals.length;
  if (n < command.minArgs) throw new UsageError(`missing ${command.args}`);
  if (n > command.maxArgs) throw new UsageError(`too many arguments${command.args.includes('"') ? ' (quote a goal that has spaces)' : ''}`);
  // No option is declared `multiple`, so parseArgs gives single values only.
  return { values: parsed.values as OptionValues, positionals: parsed.positionals };
}

function report(err: unknown, name: string, command: Command, io: CliIo): number {
  if (err instanceof UsageError) {
    writeLine(io.stderr, `${name}: ${err.message}`);
    writeLine(io.stderr, `usage: ${usageLine(command)}  (see ${name} --help)`);
    return EXIT.usage;
  }
  if (err instanceof CliError) {
    writeLine(io.stderr, `${name}: ${err.message}`);
    return err.exitCode;
  }
  if (err instanceof RemoteError) {
    writeLine(io.stderr, `${name}: ${err.wire.code}: ${err.wire.message}`);
    return EXIT.failed;
  }
  writeLine(io.stderr, `${name}: ${(err as Error).message ?? String(err)}`);
  return EXIT.failed;
}

const usageLine = (c: Command) => `hermes ${c.path.join(' ')} ${c.args} [options]`.replace(/ +/g, ' ');

function commandList(commands: readonly Command[]): string {
  const heads = commands.map((c) => `${c.path.join(' ')} ${c.args}`.trim());
  const width = Math.max(...heads.map((h) => h.length)) + 2;
  return commands.map((c, i) => `  ${heads[i]!.padEnd(width)}${c.summary}\n`).join('');
}

function usage(commands: readonly Command[]): string {
  const env = ENVIRONMENT.map(([k, v]) => `  ${k}\n      ${v}\n`).join('');
  return `usage: hermes <command> [options]\n\ncommands:\n${commandList(commands)}\nenvironment:\n${env}\nRun "hermes <command> --help" for a command's options.\n`;
}

function commandHelp(command: Command): string {
  const rows = Object.entries(command.options).map(([long, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ''}--${long}${spec.valueName ? ` <${spec.valueName}>` : ''}`;
    return [flag, spec.description] as const;
  });
  rows.push(['-h, --help', 'show this help']);
  const width = Math.max(...rows.map(([f]) => f.length)) + 2;
  return `usage: ${usageLine(command)}\n\n${command.summary}\n${command.help ? `\n${command.help}\n` : ''}\noptions:\n${rows.map(([f, d]) => `  ${f.padEnd(width)}${d}\n`).join('')}`;
}
