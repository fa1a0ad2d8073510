// `createMockLimeRuntime()`: the SDK's in-memory `lime` runtime for app authors' unit tests.
// The implementation lives in mock/, one module per capability; this module is its public face
// (re-exported by index.ts; `dist/mock.js` stays importable).
export * from "./mock/index.js";
