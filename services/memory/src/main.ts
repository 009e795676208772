import { hostService } from '@hermes/bus';
import { memoryService } from './memory-host.js';

await hostService(memoryService);
