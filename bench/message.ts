// The one message every measurement sends: a small HTML newsletter with its text part, so neither
// the daemon nor the baselines spend time deriving one from the other.
export const BENCH_FROM = 'Bench News <news@bench.example>';

const paragraph =
  'Thanks for trying the service. This paragraph stands for the body of a typical transactional message, long enough that the MIME encoder and the database both have some bytes to move. ';

export const BENCH_HTML = `<!doctype html><html><body><h1>Your weekly summary</h1>${Array.from({ length: 4 }, () => `<p>${paragraph}</p>`).join('')}<p><a href="https://bench.example/account">Your account</a></p></body></html>`;
export const BENCH_TEXT = `Your weekly summary\n\n${Array.from({ length: 4 }, () => paragraph).join('\n\n')}\n\nYour account: https://bench.example/account\n`;

/** The body of POST /emails/send (and of the baselines' routes, which read the same fields). */
export function sendBody(to: string, subject: string): Record<string, unknown> {
  return { from: BENCH_FROM, to, subject, htmlBody: BENCH_HTML, textBody: BENCH_TEXT, tags: ['bench'] };
}
