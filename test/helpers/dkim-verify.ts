// DKIM verification as a receiving server does it: dkimpy (python3-dkim) with its key looked up in the
// test DNS server (dnspython over UDP). Installed by .ci/run; a missing peer fails with how to install it.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { splitTxt, type TestZone } from './dns-server.ts';

const DKIM_VERIFY_PY = `
import sys, dkim, dns.message, dns.query, dns.rdatatype
host, port = sys.argv[1].rsplit(':', 1)
def dnsfunc(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    answer = dns.query.udp(dns.message.make_query(name, 'TXT'), host, port=int(port), timeout=timeout)
    for rrset in answer.answer:
        for rd in rrset:
            if rd.rdtype == dns.rdatatype.TXT:
                return b''.join(rd.strings)
    return b''
ok = dkim.verify(sys.stdin.buffer.read(), dnsfunc=dnsfunc)
print('pass' if ok else 'fail')
`;

/** The first command that runs `args` successfully, or an error naming the install step. */
export function requirePeer(commands: string[], args: string[], install: string): string {
  const problems: string[] = [];
  for (const command of commands) {
    const probe = spawnSync(command, args, { encoding: 'utf8' });
    if (!probe.error && probe.status === 0) return command;
    problems.push(`${command}: ${probe.error?.message ?? probe.stderr.trim().split('\n').pop()}`);
  }
  throw new Error(
    `${commands[0]} ${args.join(' ')} did not run (${problems.join('; ')}): install it with \`${install}\` (bash .ci/run does).`,
  );
}

/** The python that has dkimpy: the Debian package installs it for the system interpreter, which a pyenv shim may hide. */
export function dkimPython(): string {
  return requirePeer(
    ['/usr/bin/python3', 'python3'],
    ['-c', 'import dkim, dns.query'],
    'apt-get install python3-dkim python3-dnspython',
  );
}

/** Runs a peer with `input` on stdin, without blocking this process (the DNS server it asks lives here). */
export function runPeer(
  command: string,
  args: string[],
  input: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** dkimpy's verdict on `raw`, `pass` or `fail`, its key asked of the DNS server at `dnsAddress`. */
export async function dkimVerify(python: string, dnsAddress: string, raw: string): Promise<string> {
  const result = await runPeer(python, ['-c', DKIM_VERIFY_PY, dnsAddress], raw);
  if (result.status !== 0) throw new Error(`dkimpy failed: ${result.stderr}`);
  return result.stdout.trim();
}

const DKIM_SIGN_PY = `
import os, sys, dkim
domain, selector = sys.argv[1], sys.argv[2]
signature = dkim.sign(sys.stdin.buffer.read(), selector.encode(), domain.encode(),
                      os.environ['DKIM_PRIVATE_KEY'].encode(), canonicalize=(b'relaxed', b'relaxed'))
sys.stdout.buffer.write(signature)
`;

/**
 * `raw` signed by dkimpy as a mailbox provider signs (relaxed/relaxed, its default header list: From
 * over-signed, Content-Type and the other singletons once); answers the message with its
 * DKIM-Signature on top. `privateKey` is PEM (PKCS#8 or PKCS#1).
 */
export async function dkimpySign(
  python: string,
  raw: string,
  signer: { domain: string; selector: string; privateKey: string },
): Promise<string> {
  // The key goes by the environment, not argv, where any process listing would show it.
  const result = await runPeer(python, ['-c', DKIM_SIGN_PY, signer.domain, signer.selector], raw, {
    ...process.env,
    DKIM_PRIVATE_KEY: signer.privateKey,
  });
  if (result.status !== 0) throw new Error(`dkimpy could not sign: ${result.stderr}`);
  return `${result.stdout.replace(/\r?\n/g, '\r\n')}${raw}`;
}

/**
 * A sender's DKIM key as a mail provider has one: a new 2048-bit RSA pair whose public half is published
 * at `<selector>._domainkey.<domain>` in the test zone. Answers the private key (PEM) for dkimpySign.
 */
export function publishedDkimKey(zone: TestZone, domain: string, selector: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  zone.txt.set(`${selector}._domainkey.${domain}`, [splitTxt(`v=DKIM1; k=rsa; p=${p}`)]);
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
