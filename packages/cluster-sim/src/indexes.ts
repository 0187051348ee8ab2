/** The index of objects by namespace the simulator adds to its informers (names prefixed: informers may be shared). */
export const byNamespace = 'cluster-sim/byNamespace';
