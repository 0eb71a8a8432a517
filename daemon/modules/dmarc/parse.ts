// DMARC aggregate reports (RFC 7489 §7.2, appendix C): the XML document, sent plain, gzip'd or zipped
// (RFC 7489 §7.2.1.1 names both; Google zips, Microsoft and Yahoo gzip). Recognised by their first
// bytes, not the attachment's declared type, which reporters get wrong (application/octet-stream).
// Runs in the report reader's worker thread (report-reader.ts), never on the daemon's event loop:
// inflating and parsing megabytes of XML takes seconds of CPU.
import { errorText } from '../../errors.ts';
import { XMLParser } from 'fast-xml-parser';
import { gunzipBounded, isGzip, isZip, UnreadableReportError, unzipBounded } from './archive.ts';

export { UnreadableReportError };

/** Larger uncompressed reports are refused, whatever their headers claim (real reports are kilobytes). */
export const MAX_REPORT_XML_BYTES = 20 * 1024 * 1024;

export interface DmarcRecord {
  sourceIp: string;
  count: number;
  disposition: string;
  headerFrom: string | null;
  dkimAligned: boolean;
  spfAligned: boolean;
  dkimDomain: string | null;
  dkimResult: string | null;
  spfDomain: string | null;
  spfResult: string | null;
}

export interface DmarcAggregateReport {
  orgName: string;
  orgEmail: string | null;
  reportId: string;
  dateBegin: Date;
  dateEnd: Date;
  /** The policy_published domain: which of our tenants' domains the report is about. */
  domain: string;
  policy: Record<string, string>;
  records: DmarcRecord[];
}

/**
 * The XML text of an attachment: gzip (1f 8b), zip (PK\x03\x04, its first .xml entry) or plain XML;
 * null when none of those. Throws UnreadableReportError (with the reason) for an archive that is
 * too large once inflated, truncated, corrupt, nested or crowded.
 */
export async function reportXml(content: Uint8Array): Promise<string | null> {
  if (isGzip(content)) return (await gunzipBounded(content, MAX_REPORT_XML_BYTES)).toString('utf8');
  if (isZip(content)) {
    const xml = (await unzipBounded(content, MAX_REPORT_XML_BYTES)).find((entry) => /\.xml$/i.test(entry.name));
    return xml ? xml.content.toString('utf8') : null;
  }
  const text = Buffer.from(content.subarray(0, 512))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return text.startsWith('<') && content.length <= MAX_REPORT_XML_BYTES ? Buffer.from(content).toString('utf8') : null;
}

const asList = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const str = (value: unknown): string | null =>
  value === undefined || value === null || value === '' ? null : String(value).trim();

type Node = Record<string, unknown>;

function toDate(seconds: unknown, field: string): Date {
  const value = Number(seconds);
  if (!Number.isFinite(value) || value < 0) throw new UnreadableReportError(`date_range ${field} is not a Unix time`);
  return new Date(value * 1000);
}

/** The first auth result for the header-From domain when there is one (a relay may add its own signature), else the first. */
function pick(results: Node[], headerFrom: string | null): Node | undefined {
  return results.find((result) => str(result.domain)?.toLowerCase() === headerFrom) ?? results[0];
}

function readRecord(record: Node): DmarcRecord {
  const row = (record.row ?? {}) as Node;
  const evaluated = (row.policy_evaluated ?? {}) as Node;
  const identifiers = (record.identifiers ?? {}) as Node;
  const auth = (record.auth_results ?? {}) as Node;
  const headerFrom = str(identifiers.header_from)?.toLowerCase() ?? null;
  const dkim = pick(asList(auth.dkim as Node | Node[]), headerFrom);
  const spf = pick(asList(auth.spf as Node | Node[]), headerFrom);
  const sourceIp = str(row.source_ip);
  if (!sourceIp) throw new UnreadableReportError('a record has no source_ip');
  return {
    sourceIp,
    count: Math.max(0, Math.trunc(Number(row.count) || 0)),
    disposition: str(evaluated.disposition) ?? 'none',
    headerFrom,
    // policy_evaluated carries the DMARC verdicts: pass there means the mechanism passed *and* aligned.
    dkimAligned: str(evaluated.dkim) === 'pass',
    spfAligned: str(evaluated.spf) === 'pass',
    dkimDomain: str(dkim?.domain)?.toLowerCase() ?? null,
    dkimResult: str(dkim?.result),
    spfDomain: str(spf?.domain)?.toLowerCase() ?? null,
    spfResult: str(spf?.result),
  };
}

export function parseAggregateReport(xml: string): DmarcAggregateReport {
  let document: Node;
  try {
    document = new XMLParser({ ignoreAttributes: true, parseTagValue: false, processEntities: false }).parse(
      xml,
    ) as Node;
  } catch (error) {
    throw new UnreadableReportError(`not XML: ${errorText(error)}`);
  }
  const feedback = document.feedback as Node | undefined;
  if (!feedback) throw new UnreadableReportError('no <feedback> element: not a DMARC aggregate report');
  const metadata = (feedback.report_metadata ?? {}) as Node;
  const range = (metadata.date_range ?? {}) as Node;
  const published = (feedback.policy_published ?? {}) as Node;
  const orgName = str(metadata.org_name);
  const reportId = str(metadata.report_id);
  const domain = str(published.domain)?.toLowerCase().replace(/\.$/, '');
  if (!orgName || !reportId || !domain)
    throw new UnreadableReportError('report_metadata org_name/report_id or policy_published domain missing');
  const policy: Record<string, string> = {};
  for (const key of ['adkim', 'aspf', 'p', 'sp', 'pct', 'fo']) {
    const value = str(published[key]);
    if (value !== null) policy[key] = value;
  }
  return {
    orgName: orgName.slice(0, 300),
    orgEmail: str(metadata.email)?.slice(0, 300) ?? null,
    reportId: reportId.slice(0, 300),
    dateBegin: toDate(range.begin, 'begin'),
    dateEnd: toDate(range.end, 'end'),
    domain,
    policy,
    records: asList(feedback.record as Node | Node[]).map(readRecord),
  };
}
