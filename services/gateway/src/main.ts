import { hostService } from '@hermes/service-host';
import { gatewayService } from './gateway.js';

await hostService(gatewayService);
