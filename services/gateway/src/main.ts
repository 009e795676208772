import { hostService } from '@hermes/bus';
import { ConfigError } from '@hermes/config';
import { startGateway } from './gateway.js';
import { gatewaySettings } from './settings.js';

try {
  await hostService({ service: 'gateway', settings: gatewaySettings, uses: ['taskSubmit', 'taskEvents'], start: startGateway });
} catch (err) {
  // A bad HERMES_API_KEYS_FILE is only found once the keys are read; exit as hostService does for env settings.
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(78);
}
