import { HermesError } from '@hermes/contracts';

/** Base class of every error thrown by the test kit. */
export class TestkitError extends HermesError {}

/** A process or server did not become ready; the message carries its log tail. */
export class ProcessStartError extends TestkitError {
  readonly process: string;

  constructor(details: { process: string; reason: string; logTail: readonly string[] }, options?: ErrorOptions) {
    super('TESTKIT_START_FAILED', `${details.process} failed to start: ${details.reason}${formatLogTail(details.logTail)}`, options);
    this.process = details.process;
  }
}

/** `waitForLog` gave up, either on its deadline or because the process exited first. */
export class WaitForLogError extends TestkitError {
  readonly pattern: RegExp;

  constructor(details: { process: string; pattern: RegExp; reason: string; logTail: readonly string[] }) {
    super('TESTKIT_LOG_WAIT_FAILED', `${details.process}: no log line matched ${String(details.pattern)} (${details.reason})${formatLogTail(details.logTail)}`);
    this.pattern = details.pattern;
  }
}

function formatLogTail(lines: readonly string[]): string {
  if (lines.length === 0) return '\n(no output)';
  return `\n--- last ${lines.length} log lines ---\n${lines.join('\n')}`;
}
