/**
 * The app in this process, as `oas serve` runs it (`createApp`, then `listen` on an ephemeral
 * loopback port), its engines pointed at the upstream fakes: for tests of its HTTP surface.
 */
import { after, before } from 'node:test';
import { createApp, type App } from '../../src/app.js';
import { listen, type RunningServer } from '../../src/server/listen.js';
import { configFor, startUpstreams, type UpstreamOptions, type Upstreams } from './upstreams.js';

export interface AppOnUpstreams {
  upstreams: Upstreams;
  /** The configuration written for the upstreams (`configFor`). */
  config: ReturnType<typeof configFor>;
  app: App;
  server: RunningServer;
  /** Closes the server and the app, then starts a new app on the same configuration. */
  restart(): Promise<void>;
}

/**
 * Before the suite (or the file, when called at its top level): the upstream fakes, a
 * configuration for them with `config` added, and the app listening; after it, all closed. The
 * fields are set once `before` has run.
 */
export function appOnUpstreams(options: { upstreams?: UpstreamOptions; config?: Record<string, unknown> } = {}): AppOnUpstreams {
  const served = {} as AppOnUpstreams;
  const start = async () => {
    served.app = await createApp({ file: served.config.file, flags: { port: 0 }, env: {} });
    served.server = await listen(served.app);
  };
  served.restart = async () => {
    await served.server.close();
    await served.app.close();
    await start();
  };
  before(async () => {
    served.upstreams = await startUpstreams(options.upstreams);
    served.config = configFor(served.upstreams, options.config);
    await start();
  });
  after(async () => {
    await served.server?.close();
    await served.app?.close();
    await served.upstreams?.close();
  });
  return served;
}
