// /health/ready polled every 50 ms, as a load balancer would, while a test makes the daemon work:
// the probes' statuses and times say whether it kept answering.
export interface ReadinessProbes {
  probes: { status: number; ms: number }[];
  /** Stops polling once the probe in flight has answered. */
  stop(): Promise<void>;
}

export function pollReadiness(baseUrl: string, intervalMs = 50): ReadinessProbes {
  const probes: { status: number; ms: number }[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const started = performance.now();
      const status = await fetch(`${baseUrl}/health/ready`).then(
        (res) => res.status,
        () => 0,
      );
      probes.push({ status, ms: performance.now() - started });
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    probes,
    async stop() {
      polling = false;
      await poller;
    },
  };
}
