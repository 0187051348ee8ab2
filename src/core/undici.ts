/**
 * undici's `Agent` and `ProxyAgent`, without the rest of undici. Its index loads all of it — fetch, WebSocket,
 * EventSource, caches, mocks: about 3 MB of heap and 8 MB of resident memory a controller never uses. So this loads
 * the two dispatchers, and mixes the request API into their base class as undici's index does. undici is pinned to an
 * exact version; every client test fails at once if a new one moves these files. Not in core's index: only the
 * clients import it, so nothing else (raven-cni's small entry) pays for it.
 */
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import Agent from 'undici/lib/dispatcher/agent.js';
import ProxyAgent from 'undici/lib/dispatcher/proxy-agent.js';

Object.assign(Dispatcher.prototype, api);

export { Agent, ProxyAgent };
