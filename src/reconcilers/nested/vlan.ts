/** VLAN ids a trunk's subports may take (0 and 4095 are reserved: Neutron answers 400). */
export const VLAN_MIN = 1;
export const VLAN_MAX = 4094;

/**
 * The lowest VLAN id neither on the trunk (`taken`: its `sub_ports` as Neutron last said) nor in flight (picked for an
 * add whose answer has not come back), or undefined when all 4094 are used. Neutron's 409 on a taken id is the arbiter
 * between two pickers; this only keeps one Raven from racing itself.
 */
export function pickVlan(taken: Iterable<number>, inFlight: Iterable<number> = []): number | undefined {
  const used = new Set([...taken, ...inFlight]);
  for (let id = VLAN_MIN; id <= VLAN_MAX; id++) if (!used.has(id)) return id;
  return undefined;
}
