// Public API of @probeyard/formats. Each area adds its own named exports below.
export { FormatError, type FormatErrorCode, type FormatErrorContext, isFormatError } from './errors.js';
