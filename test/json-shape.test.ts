// The byte scanner that bounds a JSON body's depth and members before it is parsed
// (daemon/plugins/json-shape.ts): the same answer however the body is cut into chunks, strings (with
// escaped quotes and brackets) not counted, the field of a too-deep body named as the parsed walk names it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonShapeScanner, type JsonShapeProblem } from '../daemon/plugins/json-shape.ts';
import { unstorablePart } from '../daemon/db/storable-text.ts';

/** Feeds `text` cut every `step` bytes. */
function scan(text: string, maxDepth: number, maxMembers: number, step: number): JsonShapeProblem | null {
  const bytes = Buffer.from(text);
  const scanner = new JsonShapeScanner(maxDepth, maxMembers);
  for (let at = 0; at < bytes.length; at += step) {
    const problem = scanner.feed(bytes.subarray(at, at + step));
    if (problem) return problem;
  }
  return null;
}

/** Members as the definition says: every object key and array item, at any depth. */
function membersOf(value: unknown): number {
  if (Array.isArray(value)) return value.length + value.reduce((sum: number, item) => sum + membersOf(item), 0);
  if (value && typeof value === 'object')
    return Object.values(value).reduce((sum: number, item) => sum + 1 + membersOf(item), 0);
  return 0;
}

const SAMPLES = [
  '{}',
  '[]',
  '"a string with { [ , ] } and \\" quotes"',
  '{"a":1,"b":[1,2,3],"c":{"d":"x,y","e":[]},"f":[{},{"g":null}]}',
  ' { "k\\"ey" : "va\\\\lue" , "n" : [ true , false , 1.5e3 ] } ',
  '{"nested":[[[["deep"]]]],"s":"\\u005b\\u007b","t":"ü,é"}',
];

test('members are counted exactly, whatever the chunks, strings left out', () => {
  for (const text of SAMPLES) {
    const exact = membersOf(JSON.parse(text));
    for (const step of [1, 2, 3, 7, 1000]) {
      assert.is(scan(text, 32, exact, step), null, `${text} at ${step}`);
      if (exact > 0) assert.equal(scan(text, 32, exact - 1, step), { kind: 'members', maxMembers: exact - 1 }, text);
    }
  }
});

test('a body one level too deep is refused at that level, its field named as the parsed walk names it', () => {
  const bodies = [
    `{"attributes":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
    `{"slug":"x","data":{"list":[${'{"a":'.repeat(40)}1${'}'.repeat(40)}]}}`,
    `{"k\\"q\\u00e9":[[${'['.repeat(40)}${']'.repeat(40)}]]}`,
    '['.repeat(40) + ']'.repeat(40),
  ];
  for (const body of bodies) {
    const walked = unstorablePart(JSON.parse(body), 32)!;
    const expected = walked.path.split('.').slice(0, 8).join('.');
    for (const step of [1, 5, 64, 100_000])
      assert.equal(
        scan(body, 32, 1_000_000, step),
        { kind: 'depth', maxDepth: 32, path: expected },
        `${body} at ${step}`,
      );
  }
  // 32 levels are allowed.
  assert.is(scan('['.repeat(32) + ']'.repeat(32), 32, 100, 3), null);
});

test('a long string is jumped, not counted: 13 MB of base64 in one member', () => {
  const body = JSON.stringify({ content: Buffer.alloc(10_000_000, 7).toString('base64'), x: [1, 2] });
  assert.is(scan(body, 32, 4, 65_536), null);
  assert.equal(scan(body, 32, 3, 65_536), { kind: 'members', maxMembers: 3 });
});

test.run();
