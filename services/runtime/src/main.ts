import { hostService } from '@hermes/service-host';
import { runtimeService } from './runtime-service.js';

await hostService(runtimeService);
