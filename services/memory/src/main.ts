import { hostService } from '@hermes/service-host';
import { memoryService } from './memory-host.js';

await hostService(memoryService);
