import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { DistributedSemaphore, type PoolSettings, type SemaphoreOptions } from '../src/index.js';

/** One "process": its own NATS connection and semaphore client on a shared bucket. */
export interface Member {
  nc: NatsConnection;
  kv: KV;
  sem: DistributedSemaphore;
  close(): Promise<void>;
}

export async function member(
  url: string,
  bucket: string,
  settings: Record<string, PoolSettings> | ((pool: string) => PoolSettings),
  opts: Partial<SemaphoreOptions> = {},
): Promise<Member> {
  const nc = await connect({ servers: url });
  const kv = await new Kvm(jetstream(nc)).create(bucket, { history: 1 });
  const poolSettings = typeof settings === 'function' ? settings : (p: string) => settings[p] ?? { capacity: 1 };
  const sem = await DistributedSemaphore.open({ kv, poolSettings, ...opts });
  return {
    nc,
    kv,
    sem,
    close: async () => {
      await sem.close();
      await nc.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
