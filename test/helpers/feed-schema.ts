import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';

/*
 * The change document's JSON Schema as docs/feed.md publishes it, compiled by an off-the-shelf
 * validator: what a sink sends is checked against the document a consumer reads, not against
 * our own types.
 */

const FEED_DOC = new URL('../../docs/feed.md', import.meta.url);

/** The JSON block between docs/feed.md's schema markers. */
export function changeDocumentSchema(): object {
  const text = readFileSync(FEED_DOC, 'utf8');
  const block = /<!-- change-document-schema:start -->\s*```json\n([\s\S]*?)```/.exec(text);
  if (!block) throw new Error('docs/feed.md has no change document schema between its markers');
  return JSON.parse(block[1]!) as object;
}

// ajv-formats is CommonJS: under NodeNext its default export is the module object, whose own
// `default` is the function.
const addFormats = addFormatsModule.default;

/** A validator of change documents; `expectValid` fails with the validator's own words. */
export function changeDocumentValidator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(changeDocumentSchema());
  return {
    expectValid(document: unknown): void {
      const isValid = validate(document);
      expect(isValid, `${ajv.errorsText(validate.errors)} in ${JSON.stringify(document)}`).toBe(
        true,
      );
    },
    isValid: (document: unknown) => validate(document) === true,
  };
}
