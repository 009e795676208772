/**
 * Leases are compared across machines, so they use the NATS server's clock rather than each
 * process's own: every KV entry carries the server's write time, and an entry seen moments after
 * it was written tells us the offset (minus the delivery latency, which only makes leases look a
 * little younger). The largest recent sample is the least delayed one.
 */
export class ServerClock {
  private samples: number[] = [];
  private offset = 0;

  now(): number {
    return Date.now() + this.offset;
  }

  /** Records a freshly delivered entry's server write time. */
  observe(serverTime: Date): void {
    this.samples.push(serverTime.getTime() - Date.now());
    if (this.samples.length > 32) this.samples.shift();
    this.offset = Math.max(...this.samples);
  }
}
