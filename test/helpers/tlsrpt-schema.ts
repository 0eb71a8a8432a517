// RFC 8460's aggregate report (§4.4, its JSON fields; §4.3, the result types) as a JSON schema, and
// an ajv validator over it: every required member, its type, the date-time formats, and no members
// beyond the RFC's in date-range, summary and failure details. Shared by the collector's tests and the
// daily job's end to end test.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

export const RESULT_TYPES = [
  'starttls-not-supported',
  'certificate-host-mismatch',
  'certificate-expired',
  'certificate-not-trusted',
  'validation-failure',
  'tlsa-invalid',
  'dnssec-invalid',
  'dane-required',
  'sts-policy-fetch-error',
  'sts-policy-invalid',
  'sts-webpki-invalid',
];
export const REPORT_SCHEMA = {
  type: 'object',
  required: ['organization-name', 'date-range', 'contact-info', 'report-id', 'policies'],
  properties: {
    'organization-name': { type: 'string' },
    'date-range': {
      type: 'object',
      required: ['start-datetime', 'end-datetime'],
      additionalProperties: false,
      properties: {
        'start-datetime': { type: 'string', format: 'date-time' },
        'end-datetime': { type: 'string', format: 'date-time' },
      },
    },
    'contact-info': { type: 'string' },
    'report-id': { type: 'string' },
    policies: {
      type: 'array',
      items: {
        type: 'object',
        required: ['policy', 'summary'],
        properties: {
          policy: {
            type: 'object',
            required: ['policy-type', 'policy-domain'],
            properties: {
              'policy-type': { enum: ['tlsa', 'sts', 'no-policy-found'] },
              'policy-string': { type: 'array', items: { type: 'string' } },
              'policy-domain': { type: 'string' },
              'mx-host': { type: 'array', items: { type: 'string' } },
            },
          },
          summary: {
            type: 'object',
            required: ['total-successful-session-count', 'total-failure-session-count'],
            additionalProperties: false,
            properties: {
              'total-successful-session-count': { type: 'integer', minimum: 0 },
              'total-failure-session-count': { type: 'integer', minimum: 0 },
            },
          },
          'failure-details': {
            type: 'array',
            items: {
              type: 'object',
              required: ['result-type', 'failed-session-count'],
              additionalProperties: false,
              properties: {
                'result-type': { enum: RESULT_TYPES },
                'sending-mta-ip': { type: 'string' },
                'receiving-mx-hostname': { type: 'string' },
                'receiving-mx-helo': { type: 'string' },
                'receiving-ip': { type: 'string' },
                'failed-session-count': { type: 'integer', minimum: 1 },
                'additional-information': { type: 'string' },
                'failure-reason-code': { type: 'string' },
              },
            },
          },
        },
      },
    },
  },
};

let compiled: ReturnType<Ajv['compile']> | null = null;

/** The schema's complaints about `report` (empty: valid). */
export function validateTlsReport(report: unknown): string[] {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    compiled = ajv.compile(REPORT_SCHEMA);
  }
  return compiled(report) ? [] : (compiled.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
