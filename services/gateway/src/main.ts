import { hostService } from '@hermes/bus';
import { gatewayService } from './gateway.js';

await hostService(gatewayService);
