import { hostService } from '@hermes/service-host';
import { dispatcherService } from './dispatcher-service.js';

await hostService(dispatcherService);
