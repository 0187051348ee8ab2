/**
 * The seed's start/stop contract: the first SIGINT or SIGTERM asks for a clean stop (the returned signal aborts, with
 * the signal's name as its reason); a second one exits at once.
 */
export function shutdownSignal(): AbortSignal {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(1);
    controller.abort(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return controller.signal;
}

/** Resolves with the signal's name on the first SIGINT or SIGTERM. */
export function untilShutdown(): Promise<string> {
  const signal = shutdownSignal();
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(String(signal.reason)), { once: true }),
  );
}
