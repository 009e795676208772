import { describe, expect, it } from 'vitest';
import { ConfigError } from '@hermes/config';
import { memoryConfig } from '../src/memory-host.js';
import { sentinelsOf } from '../src/redis-client.js';

describe('Redis Sentinel settings', () => {
  it('without REDIS_SENTINELS the service uses REDIS_URL alone', () => {
    expect(sentinelsOf(memoryConfig({}))).toBeUndefined();
  });

  it('reads REDIS_SENTINELS as host:port entries, with the master group name and the Sentinels password', () => {
    const config = memoryConfig({
      REDIS_SENTINELS: 'sentinel-0.redis:26379,10.0.0.7:26380',
      REDIS_SENTINEL_NAME: 'sessions',
      REDIS_SENTINEL_PASSWORD: 's3cret',
    });
    expect(sentinelsOf(config)).toEqual({
      sentinels: [
        { host: 'sentinel-0.redis', port: 26379 },
        { host: '10.0.0.7', port: 26380 },
      ],
      name: 'sessions',
      password: 's3cret',
    });
    expect(sentinelsOf(memoryConfig({ REDIS_SENTINELS: 'localhost:26379' }))).toEqual({ sentinels: [{ host: 'localhost', port: 26379 }], name: 'mymaster' });
  });

  it.each(['sentinel-0', 'sentinel-0:', ':26379', 'a:26379,', 'a:26379, b:26379', 'redis://a:26379', 'a:port'])(
    'refuses REDIS_SENTINELS=%j at start, naming the setting',
    (value) => {
      let thrown: unknown;
      try {
        memoryConfig({ REDIS_SENTINELS: value });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect(thrown).toMatchObject({ code: 'invalid_config', fault: 'caller' });
      expect((thrown as ConfigError).problems.map((p) => p.setting)).toEqual(['REDIS_SENTINELS']);
    },
  );
});
