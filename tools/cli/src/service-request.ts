import { RemoteError } from '@hermes/bus';
import { CliError, EXIT } from './command.js';

export interface AskOptions {
  /** The message when the service answers not_found, from its own (default: rethrown as is). */
  notFound?: (serviceMessage: string) => string;
  /** Turn every other structured error into `<code>: <message>` for the person at the terminal. */
  explainErrors?: boolean;
}

/** Runs a request to a Hermes service, turning its typical failures into CLI errors. */
export async function askService<T>(service: 'dispatcher' | 'toolbus' | 'memory', ask: () => Promise<T>, opts: AskOptions = {}): Promise<T> {
  try {
    return await ask();
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
    if (err.code === 'not_found' && opts.notFound !== undefined) throw new CliError(opts.notFound(err.wire.message), EXIT.failed, { cause: err });
    if (err.code === 'no_responders' || err.code === 'timeout') {
      throw new CliError(`no ${service} answered (is Hermes running on this NATS?): ${err.wire.message}`, EXIT.failed, { cause: err });
    }
    if (opts.explainErrors) throw new CliError(`${err.code}: ${err.wire.message}`, EXIT.failed, { cause: err });
    throw err;
  }
}
