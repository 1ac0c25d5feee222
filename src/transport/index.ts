export { LineMessageReader, DEFAULT_MAX_LINE_BYTES, type LineReaderOptions } from './line-reader.js';
export { LineMessageWriter, Base64Payload } from './line-writer.js';
export { classify } from './classify.js';
export { encodeOutputLine, decodeOutputLine, type OutputLine } from './output-line.js';
