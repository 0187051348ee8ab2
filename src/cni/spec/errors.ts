import { RavenError } from '../../core/index.ts';
import { CniErrorCode, type CniErrorBody, type CniErrorCodeValue } from './types.ts';

const codeNames = Object.fromEntries(Object.entries(CniErrorCode).map(([name, code]) => [code, name])) as Record<
  CniErrorCodeValue,
  string
>;

/**
 * A failure a plugin reports to the runtime: printed on stdout as the spec's error object, with a non-zero exit.
 * `code` (the RavenError code) is the stable name; `cniCode` the number the spec puts on the wire.
 */
export class CniError extends RavenError {
  readonly cniCode: CniErrorCodeValue;
  readonly details: string | undefined;

  constructor(cniCode: CniErrorCodeValue, message: string, options: { details?: string; cause?: unknown } = {}) {
    super(`CNI_${codeNames[cniCode]}`, message, options);
    this.cniCode = cniCode;
    this.details = options.details;
  }

  body(cniVersion: string): CniErrorBody {
    return {
      cniVersion,
      code: this.cniCode,
      msg: this.message,
      ...(this.details !== undefined ? { details: this.details } : {}),
    };
  }
}
