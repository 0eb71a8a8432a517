// The DMARC reports attached to one raw message, and the attachments refused with why. CPU-heavy
// by nature (MIME, bounded decompression, XML: fast-xml-parser takes ~0.3 s per MB), so it runs in
// the inbound reader's thread (inbound-mail/reader.ts), never on the daemon's event loop.
import { errorText } from '../../errors.ts';
import { parseAggregateReport, reportXml, type DmarcAggregateReport } from './parse.ts';

export type AttachmentOutcome =
  | { kind: 'report'; filename: string | null; report: DmarcAggregateReport }
  | { kind: 'unreadable'; filename: string | null; reason: string };

export async function readDmarcAttachments(raw: Buffer): Promise<AttachmentOutcome[]> {
  // Loaded on first use: mailparser and its charsets cost ≈ 0.3 s of every boot otherwise (docs/boot.md).
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const outcomes: AttachmentOutcome[] = [];
  for (const attachment of parsed.attachments) {
    const filename = attachment.filename?.slice(0, 200) ?? null;
    try {
      const xml = await reportXml(attachment.content);
      if (xml === null) continue;
      outcomes.push({ kind: 'report', filename, report: parseAggregateReport(xml) });
    } catch (error) {
      // Ours (UnreadableReportError, with the reason) or the XML parser's: a broken attachment either way.
      outcomes.push({ kind: 'unreadable', filename, reason: errorText(error) });
    }
  }
  return outcomes;
}
