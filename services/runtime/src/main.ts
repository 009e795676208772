import { hostService } from '@hermes/bus';
import { runtimeService } from './runtime-service.js';

await hostService(runtimeService);
