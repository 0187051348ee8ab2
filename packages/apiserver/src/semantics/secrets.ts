import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import type { KindHooks } from './types.ts';

/**
 * Secrets, as the real server decodes them: `stringData` is write-only, folded into `data` (base64 of its UTF-8,
 * winning over a `data` key of the same name) on create, update and patch, and never stored or returned
 * (`Convert_v1_Secret_To_core_Secret`); `type` defaults to `Opaque` (`SetDefaults_Secret`).
 */
export const secretHooks: KindHooks = {
  defaults(obj: KubeObject) {
    obj.type ??= 'Opaque';
    const stringData = obj.stringData;
    if (stringData === undefined) return;
    delete obj.stringData;
    if (stringData === null) return;
    // The real server cannot decode anything else into its map[string]string, so it never stores it.
    if (typeof stringData !== 'object' || Array.isArray(stringData))
      throw apiErrors.badRequest('Secret.stringData: expected a map of strings');
    const values = Object.entries(stringData);
    const data = (typeof obj.data === 'object' && obj.data !== null ? obj.data : {}) as Record<string, unknown>;
    for (const [key, value] of values) {
      if (typeof value !== 'string')
        throw apiErrors.badRequest(`Secret.stringData[${JSON.stringify(key)}]: expected a string`);
      data[key] = Buffer.from(value, 'utf8').toString('base64');
    }
    obj.data = data;
  },
};
