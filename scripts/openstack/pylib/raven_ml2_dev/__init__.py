"""ML2 mechanism driver `raven_dev` for real-openstack.sh (loaded from scripts/openstack/pylib via PYTHONPATH).

Neutron's own ML2 `test` driver (neutron.tests.unit.plugins.ml2.drivers.mechanism_test, shipped by Debian's
python3-neutron) binds a port whose binding:host_id is `host-ovs-filter-active` as `ovs` and makes it ACTIVE at once
(docs/openstack.md, "Real services on loopback"). But it also asserts its own in-process bookkeeping (the ports *this process* bound) on every
port operation, so with it:
  - binding an existing port by `PUT binding:host_id` fails (`binding_failed`, status DOWN);
  - updating or deleting a bound port through another neutron-server process, or after a restart, is HTTP 500
    (AssertionError).
This subclass keeps the test driver's binding rules (host names below) and drops those checks:
  host-ovs-filter-active -> vif_type ovs, port_filter true, status ACTIVE
  host-ovs-no_filter     -> vif_type ovs, port_filter false (status stays DOWN: no agent)
  host-bridge-filter     -> vif_type bridge, port_filter true (status stays DOWN)
  any other host         -> not bound (binding_failed), status DOWN

It also declares a trunk driver, because the `trunk` service plugin refuses to load without one
(IncompatibleTrunkPluginConfiguration). It wires nothing and cannot trunk a bound port: a trunk stays DOWN, its
subports' ports stay as they are, as under the OVS agent's driver with no agent running (docs/openstack.md, "Trunks").
"""
from neutron.services.trunk.drivers import base as trunk_base
from neutron.tests.unit.plugins.ml2.drivers import mechanism_test
from oslo_config import cfg

NAME = 'raven_dev'


class RavenDevTrunkDriver(trunk_base.DriverBase):

    @property
    def is_loaded(self):
        return NAME in cfg.CONF.ml2.mechanism_drivers


class _NoBookkeeping(set):
    """The test driver records bound (port, host) pairs in memory; keep nothing (no growth, no KeyError)."""

    def add(self, _item):
        pass

    def remove(self, _item):
        pass


class RavenDevMechanismDriver(mechanism_test.TestMechanismDriver):

    def initialize(self):
        self.bound_ports = _NoBookkeeping()
        # Registers itself with the trunk plugin when that starts (after ML2): VLAN only, no agent, bound parents no.
        self.trunk_driver = RavenDevTrunkDriver(NAME, ('ovs', 'bridge'), ('vlan',), None, can_trunk_bound_port=False)

    def _check_network_context(self, context, original_expected):
        pass

    def _check_subnet_context(self, context, original_expected):
        pass

    def _check_port_context(self, context, original_expected):
        pass

    def bind_port(self, context):
        # only the three non-hierarchical test hosts: host-hierarchical needs a physnet1 VLAN range, host-fail
        # sets a binding without a segment
        if context.host in ('host-ovs-filter-active', 'host-ovs-no_filter', 'host-bridge-filter'):
            super().bind_port(context)
