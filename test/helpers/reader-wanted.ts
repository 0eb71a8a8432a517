// What the inbound listener asks the reader threads for a message to a tenant's route (no report parts
// to split, no unsubscribe tokens), with the verdicts computed against the test DNS server for a
// client at 192.0.2.10: the tests that drive the reader directly ask the same.
import type { ReadWanted } from '../../daemon/modules/inbound-mail/reader.ts';

export function routedReadWanted(dnsAddress: string, sender: { heloName: string; mailFrom: string }): ReadWanted {
  return {
    report: false,
    dmarc: false,
    unsubscribeTokens: false,
    feedbackSignatures: null,
    routed: { authservId: 'mx.svc.test', dnsServers: [dnsAddress], clientIp: '192.0.2.10', ...sender },
  };
}
