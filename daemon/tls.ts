// HTTPS on the API: the PEM pair named by TLS_CERT / TLS_KEY, read at boot and again on SIGHUP
// (certbot and similar renew the files in place; a reload swaps the secure context for new
// connections while open ones finish on the old one, so nothing is dropped).
import { errorText } from './errors.ts';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { SecureContextOptions } from 'node:tls';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config.ts';

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

function readPem(variable: string, path: string, marker: RegExp): Buffer {
  let content: Buffer;
  try {
    content = readFileSync(path);
  } catch (error) {
    throw new ConfigError(variable, `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
  if (!marker.test(content.toString('latin1')))
    throw new ConfigError(variable, `${path} is not a PEM file (no "-----BEGIN …-----" block).`);
  return content;
}

/** A certificate and key read from PEM files, checked to be usable together (a key that does not match its certificate fails here, not at the first client). */
export function readPemPair(
  cert: { variable: string; path: string },
  key: { variable: string; path: string },
): TlsPair {
  const pair = {
    cert: readPem(cert.variable, cert.path, /-----BEGIN CERTIFICATE-----/),
    key: readPem(key.variable, key.path, /-----BEGIN [A-Z ]*PRIVATE KEY-----/),
  };
  try {
    createSecureContext(pair);
  } catch (error) {
    throw new ConfigError(
      key.variable,
      `the key does not fit the certificate in ${cert.variable} (${errorText(error)}).`,
    );
  }
  return pair;
}

/** The API's configured pair (TLS_CERT / TLS_KEY), or null for plain HTTP. */
export function readTlsPair(config: Pick<Config, 'tlsCertFile' | 'tlsKeyFile'>): TlsPair | null {
  if (!config.tlsCertFile || !config.tlsKeyFile) return null;
  return readPemPair(
    { variable: 'TLS_CERT', path: config.tlsCertFile },
    { variable: 'TLS_KEY', path: config.tlsKeyFile },
  );
}

interface SecureServer {
  setSecureContext(options: SecureContextOptions): void;
}

/**
 * Re-reads a pair on SIGHUP with `read` and hands it to `apply`; a broken new pair is logged and the
 * old one kept. Returns the unsubscribe.
 */
export function onHangupReload(
  what: string,
  read: () => TlsPair | null,
  apply: (pair: TlsPair) => void,
  log: Logger,
  file: string | null,
): () => void {
  const reload = () => {
    try {
      const pair = read();
      if (!pair) return;
      apply(pair);
      log.info({ cert: file }, `${what} reloaded`);
    } catch (error) {
      log.error(
        { err: errorText(error) },
        `${what.replace(/ certificate$/, '')} reload failed: still serving the previous certificate`,
      );
    }
  };
  process.on('SIGHUP', reload);
  return () => process.off('SIGHUP', reload);
}

/** The API's pair again on SIGHUP. Returns the unsubscribe. */
export function reloadTlsOnHangup(server: SecureServer, config: Config, log: Logger): () => void {
  return onHangupReload(
    'TLS certificate',
    () => readTlsPair(config),
    (pair) => server.setSecureContext(pair),
    log,
    config.tlsCertFile,
  );
}
