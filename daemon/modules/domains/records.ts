// The records a domain must publish, built from its DKIM key and the platform's sending settings.
import type { DnsRecordKind, PublishRecord } from '../../../shared/schemas/domains.ts';
import type { SendingDnsSettings } from './sending-settings.ts';
import { returnPathName } from '../../mail/addresses.ts';

export interface DomainKeyFacts {
  name: string;
  dkimSelector: string;
  dkimPublicKey: string;
}

export interface ExpectedRecord extends PublishRecord {
  note?: string;
  required: boolean;
}

export function spfValue(settings: SendingDnsSettings): string {
  return `v=spf1 ${settings.spfMechanism} ~all`;
}

export function dkimRecordName(domain: DomainKeyFacts): string {
  return `${domain.dkimSelector}._domainkey.${domain.name}`;
}

export function dkimValue(publicKey: string): string {
  return `v=DKIM1; k=rsa; p=${publicKey}`;
}

export function dmarcValue(domainName: string, settings: SendingDnsSettings): string {
  return `v=DMARC1; p=quarantine; rua=${settings.dmarcRua ?? `mailto:dmarc-reports@${domainName}`}`;
}

export function expectedRecords(domain: DomainKeyFacts, settings: SendingDnsSettings): ExpectedRecord[] {
  const records: ExpectedRecord[] = [
    {
      record: 'spf',
      type: 'TXT',
      name: domain.name,
      value: spfValue(settings),
      required: true,
      ...(settings.spfNote ? { note: settings.spfNote } : {}),
    },
    {
      record: 'dkim',
      type: 'TXT',
      name: dkimRecordName(domain),
      value: dkimValue(domain.dkimPublicKey),
      required: true,
    },
    {
      record: 'dmarc',
      type: 'TXT',
      name: `_dmarc.${domain.name}`,
      value: dmarcValue(domain.name, settings),
      required: false,
    },
  ];
  const returnPath = settings.returnPath;
  if (returnPath?.type === 'CNAME') {
    records.push({
      record: 'returnPath',
      type: 'CNAME',
      name: returnPathName(domain.name),
      value: returnPath.target,
      required: false,
    });
  } else if (returnPath?.type === 'MX') {
    records.push({
      record: 'returnPath',
      type: 'MX',
      name: returnPathName(domain.name),
      value: returnPath.target,
      priority: returnPath.priority,
      required: false,
    });
  }
  return records;
}

export function expectedRecord(records: ExpectedRecord[], kind: DnsRecordKind): ExpectedRecord | undefined {
  return records.find((record) => record.record === kind);
}

export function toPublish(record: ExpectedRecord, value = record.value): PublishRecord {
  const { required: _required, ...rest } = record;
  return { ...rest, value };
}
