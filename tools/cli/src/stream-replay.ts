// The replay of a stream's subject lives in libs/bus (the runtime reads recordings with it too).
export { replaySubject, lastSeqOf } from '@hermes/bus';
