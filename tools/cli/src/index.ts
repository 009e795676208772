export { runCli, COMMANDS } from './cli.js';
export { runCommand } from './run-command.js';
export { statusCommand } from './status-command.js';
export { formatTaskEvent, formatTaskView } from './event-format.js';
export { EXIT, UsageError, CliError } from './command.js';
export type { Command, CommandContext, CliIo, OptionSpec, OptionValues } from './command.js';
