// The non-terminal side of the live commands (`svc logs tail`, `svc inbound tail`): follow a feed until
// --count lines were printed, --timeout passed, or Ctrl-C / SIGTERM, then close it.

/** Follows `source`, passing each item to `print` (true when it printed a line), until one of the ends. */
export async function followLines<T>(
  source: (signal: AbortSignal) => AsyncIterable<T>,
  ends: { count?: number; timeoutSeconds?: number },
  print: (item: T) => boolean,
): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const timer = ends.timeoutSeconds ? setTimeout(stop, ends.timeoutSeconds * 1000) : undefined;
  let printed = 0;
  try {
    for await (const item of source(controller.signal)) {
      if (print(item)) printed += 1;
      if (ends.count && printed >= ends.count) break;
    }
  } finally {
    controller.abort();
    clearTimeout(timer);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
