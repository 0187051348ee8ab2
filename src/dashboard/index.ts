/**
 * dashboard: the live topology view — a read-only page and its JSON/SSE API as a `fetch(Request) → Response` app
 * (`createTopologyApp`), over a {@link TopologySource} it declares itself. Imports core only; the daemon binds it to a
 * port (docs/topology.md).
 */
export * from './shape.ts';
export {
  createTopologyApp,
  TOPOLOGY_PATH,
  type TopologyApp,
  type TopologyAppOptions,
  type TopologyAssets,
} from './app.ts';
export { topologyAssets, bundleTopologyUi, BUILT_ASSETS_DIR } from './assets.ts';
export { SnapshotHub, type SnapshotHubOptions } from './stream.ts';
