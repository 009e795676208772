import { hostService } from '@hermes/bus';
import { dispatcherService } from './dispatcher-service.js';

await hostService(dispatcherService);
