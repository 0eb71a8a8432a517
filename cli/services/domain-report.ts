// Renders a domain's DNS state and a diagnosis as text: one block per record, with a mark,
// the problems found and the exact record to publish.
import chalk from 'chalk';
import type { DiagnosisBody, DnsRecord, DomainBody } from '../../shared/schemas/domains.ts';
import { CliFailure, EXIT } from '../errors.ts';
import type { SvcClient } from '../client.ts';

const RECORD_LABELS: Record<string, string> = {
  spf: 'SPF',
  dkim: 'DKIM',
  dmarc: 'DMARC',
  returnPath: 'Return path',
  domain: 'Domain',
};

export function recordMark(status: DnsRecord['status'] | 'error' | 'warning' | 'ok'): string {
  switch (status) {
    case 'verified':
    case 'ok':
      return chalk.green('✓');
    case 'missing':
    case 'mismatch':
    case 'error':
      return chalk.red('✗');
    case 'pending':
    case 'warning':
      return chalk.yellow('!');
  }
}

export function formatRecordLine(record: { type: string; name: string; value: string; priority?: number }): string {
  return `${record.type.padEnd(5)} ${record.name}  ${record.priority !== undefined ? `${record.priority} ` : ''}${JSON.stringify(record.value)}`;
}

export function renderDnsRecords(domain: DomainBody): string {
  const lines = [
    `${chalk.bold(domain.unicodeName)}  ${domain.status}${domain.verifiedAt ? chalk.dim(` since ${domain.verifiedAt}`) : ''}`,
  ];
  for (const record of domain.records) {
    lines.push(
      `${recordMark(record.status)} ${RECORD_LABELS[record.record] ?? record.record}${record.required ? '' : chalk.dim(' (recommended)')}  ${chalk.dim(record.status)}`,
    );
    lines.push(`    ${formatRecordLine(record)}`);
    if (record.note) lines.push(chalk.yellow(`    note: ${record.note}`));
    if (record.found.length && record.status !== 'verified')
      lines.push(chalk.dim(`    found: ${record.found.map((value) => JSON.stringify(value)).join(', ')}`));
  }
  return lines.join('\n');
}

export function renderDiagnosis(diagnosis: DiagnosisBody, domain?: DomainBody): string {
  const kinds = [
    ...new Set([
      'domain',
      ...(domain?.records.map((r) => r.record as string) ?? []),
      ...diagnosis.problems.map((p) => p.record as string),
      ...diagnosis.publish.map((p) => p.record as string),
    ]),
  ];
  const lines = [
    `${diagnosis.ok ? chalk.green('✓') : chalk.red('✗')} ${chalk.bold(diagnosis.domain)} ${diagnosis.ok ? 'can send' : 'has problems'}${chalk.dim(` · checked ${diagnosis.checkedAt}`)}`,
  ];
  for (const kind of kinds) {
    const problems = diagnosis.problems.filter((problem) => problem.record === kind);
    const toPublish = diagnosis.publish.filter((p) => p.record === kind);
    if (kind === 'domain' && problems.length === 0) continue;
    const required = domain?.records.find((r) => r.record === kind)?.required ?? true;
    let worst: 'error' | 'warning' | 'ok' = problems.some((p) => p.severity === 'error')
      ? 'error'
      : problems.some((p) => p.severity === 'warning')
        ? 'warning'
        : 'ok';
    // A record still to publish is not fine even when the only problem was reported on the domain.
    if (worst === 'ok' && toPublish.length) worst = required ? 'error' : 'warning';
    lines.push(
      '',
      `${recordMark(worst)} ${chalk.bold(RECORD_LABELS[kind] ?? kind)}${required ? '' : chalk.dim(' (recommended)')}`,
    );
    for (const problem of problems) {
      const colour =
        problem.severity === 'error' ? chalk.red : problem.severity === 'warning' ? chalk.yellow : chalk.dim;
      lines.push(`    ${colour(problem.message)}`, `    ${chalk.dim('fix:')} ${problem.fix}`);
    }
    if (problems.length === 0 && toPublish.length) lines.push(`    ${chalk.dim('not published as expected yet')}`);
    for (const record of toPublish) lines.push(`    ${chalk.cyan('publish:')} ${formatRecordLine(record)}`);
  }
  lines.push(
    '',
    `${chalk.bold('Sender rules')} ${chalk.dim(diagnosis.senderRules.enforced ? '(enforced: direct delivery refuses a send that breaks one)' : '(not enforced: mail goes through a relay)')}`,
  );
  for (const rule of diagnosis.senderRules.rules) {
    const mark =
      rule.status === 'pass' ? chalk.green('✓') : rule.status === 'fail' ? chalk.red('✗') : chalk.yellow('?');
    lines.push(`${mark} ${SENDER_RULE_LABELS[rule.rule]}  ${chalk.dim(rule.message)}`);
    if (rule.fix) lines.push(`    ${chalk.dim('fix:')} ${rule.fix}`);
  }
  return lines.join('\n');
}

const SENDER_RULE_LABELS: Record<DiagnosisBody['senderRules']['rules'][number]['rule'], string> = {
  dkimAligned: 'DKIM aligned with From',
  dmarcRecord: 'DMARC record',
};

/** Accepts a domain name or id, as people type either. */
export async function findDomain(client: SvcClient, nameOrId: string): Promise<DomainBody> {
  const wanted = nameOrId.trim().toLowerCase().replace(/\.$/, '');
  const domains = await client.listDomains();
  const found = domains.find(
    (domain) => domain.id === wanted || domain.name === wanted || domain.unicodeName.toLowerCase() === wanted,
  );
  if (!found)
    throw new CliFailure(
      `No domain "${nameOrId}" in this tenant: add it with \`svc domains add ${nameOrId}\`.`,
      EXIT.refused,
      'NOT_FOUND',
    );
  return found;
}
