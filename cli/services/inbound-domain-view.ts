// How `svc inbound domains …` print a receiving domain and its MX check.
import chalk from 'chalk';
import { keyValue, shortDate } from '../format.ts';
import type { InboundDomain } from '../../shared/schemas/inbound.ts';

export function describeInboundDomain(domain: InboundDomain): string {
  return keyValue([
    ['id', domain.id],
    ['name', domain.name],
    ['status', domain.status === 'verified' ? chalk.green('verified') : chalk.yellow(domain.status)],
    ['expected MX', domain.expectedMx],
    ['MX found', domain.mxFound.join(', ') || null],
    ['checked', domain.checkedAt ? shortDate(domain.checkedAt) : null],
    ['problem', domain.explanation],
  ]);
}
