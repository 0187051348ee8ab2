// The undici modules core/undici.ts loads on their own (CommonJS: each exports one class, or the request API).
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import { Dispatcher } from 'undici';
  export = Dispatcher;
}
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export = Agent;
}
declare module 'undici/lib/dispatcher/proxy-agent.js' {
  import { ProxyAgent } from 'undici';
  export = ProxyAgent;
}
declare module 'undici/lib/api/index.js' {
  import type { Dispatcher } from 'undici';
  const api: Pick<Dispatcher, 'request' | 'stream' | 'pipeline' | 'upgrade' | 'connect'>;
  export = api;
}
