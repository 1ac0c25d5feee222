export * from './errors.js';
export * from './methods.js';
export * from './types.js';
export { decodeBase64, encodeBase64 } from './base64.js';
export { decodeParams, describeValue } from './decode.js';
export * as Schemas from './schemas.js';
