import { hostService } from '@hermes/bus';
import { toolbusService } from './toolbus-service.js';

await hostService(toolbusService);
