import { validateSchema } from '@app/apimachinery';
import { SecretSchema } from './secret.schema.js';

describe('Secret schema', () => {
  it('accepts base64 data and plain stringData, and refuses data that is not base64', () => {
    expect(validateSchema({ metadata: { name: 's' }, data: { k: 'aGk=' }, stringData: { p: 'plain' }, type: 'Opaque' }, SecretSchema)).toEqual([]);
    expect(validateSchema({ data: { k: 'not base64' } }, SecretSchema)[0].field).toBe('data[k]');
  });
});
