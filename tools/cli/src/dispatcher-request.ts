import { RemoteError } from '@hermes/bus';
import { CliError, EXIT } from './command.js';

/** Runs a request to the dispatcher about one task, turning its typical failures into CLI errors. */
export async function askDispatcher<T>(taskId: string, ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (err) {
    if (err instanceof RemoteError && err.code === 'not_found') throw new CliError(`task ${taskId} not found`, EXIT.failed, { cause: err });
    if (err instanceof RemoteError && (err.code === 'no_responders' || err.code === 'timeout')) {
      throw new CliError(`no dispatcher answered (is Hermes running on this NATS?): ${err.wire.message}`, EXIT.failed, { cause: err });
    }
    throw err;
  }
}
