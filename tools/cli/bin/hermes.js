#!/usr/bin/env node
// A committed entry, so npm links the `hermes` bin even before the first build creates dist/.
await import('../dist/main.js');
