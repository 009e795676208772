import { hostService } from '@hermes/service-host';
import { toolbusService } from './toolbus-service.js';

await hostService(toolbusService);
