// fast-check arbitraries built from an OpenAPI 3 document: values that follow a JSON schema, and
// broken ones (wrong types, missing or extra fields, junk) for the fuzz test.
import fc from 'fast-check';

export interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const MAX_DEPTH = 4;
const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '\r\nBcc: victim@example.com',
    '../../etc/passwd',
    "' OR 1=1 --",
    '%00',
    '{{7*7}}',
    '<script>',
    'null',
    '-1',
    '1e309',
    'Infinity',
    '-Infinity',
    'NaN',
    '9007199254740993',
    '1e20',
    'x'.repeat(5000),
  ),
);

/**
 * JSON text nested far past the daemon's bound (MAX_JSON_DEPTH = 32), objects and arrays mixed. Kept as
 * text: fast-check would overflow its own stack describing a value 5,000 levels deep.
 */
const deeplyNestedJson = fc.tuple(fc.integer({ min: 33, max: 5000 }), fc.boolean()).map(([levels, arrays]) => {
  let json = '1';
  for (let level = 0; level < levels; level++) json = arrays && level % 2 === 0 ? `[${json}]` : `{"a":${json}}`;
  return json;
});

/** Paging and number extremes: a bound ± 1, huge, fractional, exponent forms (spec §8's paging bounds). */
function numberExtremes(schema: Schema): fc.Arbitrary<string> {
  const bounds = [schema.minimum, schema.maximum].filter((bound): bound is number => typeof bound === 'number');
  return fc.constantFrom(
    ...bounds.flatMap((bound) => [String(bound - 1), String(bound + 1)]),
    '0',
    '-0',
    '-1',
    '1.5',
    '1e308',
    '-1e308',
    '99999999999999999999',
    '9007199254740993',
    '0x10',
    ' 1',
    '',
  );
}

function resolve(schema: Schema, doc: OpenApiDocument): Schema {
  let current = schema;
  for (let hops = 0; current.$ref && hops < 10; hops++) {
    const name = current.$ref.split('/').pop()!;
    current = doc.components?.schemas?.[name] ?? {};
  }
  return current;
}

/** Values that follow the schema (as far as a generator can: patterns are not honoured). */
export function valid(input: Schema, doc: OpenApiDocument, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(input, doc);
  if (depth > MAX_DEPTH) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants?.length) return fc.oneof(...variants.map((variant) => valid(variant, doc, depth + 1)));
  if (schema.allOf?.length) return valid(schema.allOf[0], doc, depth + 1);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => valid({ ...schema, type }, doc, depth)));
  const base = byType(types[0], schema, doc, depth);
  return schema.nullable ? fc.option(base, { nil: null }) : base;
}

function byType(type: string | undefined, schema: Schema, doc: OpenApiDocument, depth: number): fc.Arbitrary<unknown> {
  switch (type ?? '') {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({ min: Math.ceil(schema.minimum ?? -1000), max: Math.floor(schema.maximum ?? 100_000) });
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = Math.min(schema.minItems ?? 0, 5);
      return fc.array(schema.items ? valid(schema.items, doc, depth + 1) : fc.jsonValue({ maxDepth: 1 }), {
        minLength,
        maxLength: Math.max(minLength, Math.min(schema.maxItems ?? 3, 3)),
      });
    }
    case 'object':
      return objectOf(schema, doc, depth);
    default:
      return schema.properties ? objectOf(schema, doc, depth) : fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  switch (schema.format ?? '') {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((date) => date.toISOString());
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((date) => date.toISOString().slice(0, 10));
    case 'uri':
      return fc.webUrl();
    case 'hostname':
      return fc.domain();
  }
  const minLength = Math.min(schema.minLength ?? 0, 64);
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 40, 40)) });
}

function objectOf(schema: Schema, doc: OpenApiDocument, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, property] of Object.entries(properties)) record[key] = valid(property, doc, depth + 1);
  const requiredKeys = (schema.required ?? []).filter((key) => key in record);
  return fc.record(record, { requiredKeys });
}

/** Valid-looking values with one thing wrong, or plain junk. */
export function broken(input: Schema, doc: OpenApiDocument): fc.Arbitrary<unknown> {
  const schema = resolve(input, doc);
  const keys = Object.keys(schema.properties ?? {});
  const options: Array<fc.Arbitrary<unknown>> = [junk];
  if (keys.length > 0) {
    const base = objectOf(schema, doc, 0);
    options.push(
      fc.tuple(base, fc.constantFrom(...keys), junk).map(([value, key, wrong]) => ({ ...value, [key]: wrong })),
      fc.tuple(base, fc.constantFrom(...keys)).map(([value, key]) => {
        const copy = { ...value };
        delete copy[key];
        return copy;
      }),
      fc
        .tuple(base, fc.string({ minLength: 1, maxLength: 12 }), junk)
        .map(([value, key, extra]) => ({ ...value, [key]: extra })),
    );
  }
  return fc.oneof(...options);
}

/** A body (as JSON text) nested too deep: as a whole, or in one field of an otherwise valid body. */
function nestedBody(input: Schema | undefined, doc: OpenApiDocument): fc.Arbitrary<string> {
  const schema = input ? resolve(input, doc) : {};
  const keys = Object.keys(schema.properties ?? {});
  if (keys.length === 0) return deeplyNestedJson;
  const inField = fc
    .tuple(objectOf(schema, doc, 0), fc.constantFrom(...keys), deeplyNestedJson)
    .map(([value, key, json]) => {
      const rest = { ...value };
      delete rest[key];
      const head = JSON.stringify(rest).slice(0, -1);
      return `${head}${head === '{' ? '' : ','}${JSON.stringify(key)}:${json}}`;
    });
  return fc.oneof(deeplyNestedJson, inField);
}

/** A body for the operation: mostly valid, often broken, sometimes absent or not JSON at all. */
export function bodyArbitrary(schema: Schema | undefined, doc: OpenApiDocument, method: string) {
  const none = fc.constant({ present: false, value: undefined, raw: false });
  const notJson = fc
    .constantFrom('{', '{"a":', 'nul', '[1,]', '\u0000')
    .map((value) => ({ present: true, value, raw: true }));
  const nested = nestedBody(schema, doc).map((value) => ({ present: true, value, raw: true }));
  if (!schema)
    return method === 'GET' || method === 'DELETE'
      ? none
      : fc.oneof(
          none,
          notJson,
          nested,
          junk.map((value) => ({ present: true, value, raw: false })),
        );
  return fc.oneof(
    { weight: 1, arbitrary: nested },
    { weight: 4, arbitrary: valid(schema, doc).map((value) => ({ present: true, value, raw: false })) },
    { weight: 3, arbitrary: broken(schema, doc).map((value) => ({ present: true, value, raw: false })) },
    { weight: 1, arbitrary: notJson },
    { weight: 1, arbitrary: none },
  );
}

function isNumeric(schema: Schema): boolean {
  const types = [schema.type].flat();
  return (
    types.includes('integer') ||
    types.includes('number') ||
    [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(isNumeric)
  );
}

function encodeValue(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** A query string from the operation's query parameters: valid values, junk, unknown names. */
export function queryArbitrary(parameters: Parameter[], doc: OpenApiDocument): fc.Arbitrary<string> {
  const query = parameters.filter((parameter) => parameter.in === 'query');
  const entries = query.map((parameter) =>
    fc
      .option(
        fc.oneof(
          { weight: 3, arbitrary: valid(parameter.schema ?? {}, doc) },
          { weight: 1, arbitrary: junk },
          ...(isNumeric(resolve(parameter.schema ?? {}, doc))
            ? [{ weight: 2, arbitrary: numberExtremes(resolve(parameter.schema ?? {}, doc)) }]
            : []),
        ),
        { nil: undefined, freq: parameter.required ? 10 : 3 },
      )
      .map((value) => [parameter.name, value] as const),
  );
  const extra = fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), junk), { nil: undefined, freq: 4 });
  return fc.tuple(fc.tuple(...entries), extra).map(([pairs, unknown]) => {
    const params = new URLSearchParams();
    for (const [name, value] of pairs) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) params.append(name, encodeValue(item));
      else params.append(name, encodeValue(value));
    }
    if (unknown) params.append(unknown[0], encodeValue(unknown[1]));
    return params.toString();
  });
}

/** The path with each {param} filled: a known id, a stranger's id, a schema value, or junk. */
export function pathArbitrary(
  template: string,
  parameters: Parameter[],
  knownIds: string[],
  doc: OpenApiDocument,
): fc.Arbitrary<string> {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
  if (names.length === 0) return fc.constant(template);
  const values = names.map((name) => {
    const schema = parameters.find((parameter) => parameter.in === 'path' && parameter.name === name)?.schema ?? {
      type: 'string',
    };
    return fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...knownIds) },
      { weight: 2, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: valid(schema, doc).map(encodeValue) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }) },
    );
  });
  return fc.tuple(...values).map((filled) => {
    let path = template;
    names.forEach((name, index) => {
      const value = filled[index] || 'x';
      const encoded = name === '*' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
      path = path.replace(`{${name}}`, encoded);
    });
    return path;
  });
}
