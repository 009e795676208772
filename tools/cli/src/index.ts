export { runCli, COMMANDS } from './cli.js';
export { runCommand } from './run-command.js';
export { statusCommand } from './status-command.js';
export { tasksCommand } from './tasks-command.js';
export { llmStatusCommand, llmCapacityCommand } from './llm-commands.js';
export { formatPoolTable } from './pool-format.js';
export { formatTaskEvent, formatTaskView } from './event-format.js';
export { EXIT, UsageError, CliError } from './command.js';
export type { Command, CommandContext, CliIo, OptionSpec, OptionValues } from './command.js';
