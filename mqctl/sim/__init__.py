"""A simulated RocketMQ cluster that speaks the real remoting protocol on 127.0.0.1.

    from mqctl.sim import SimCluster, SimThread, load_scenario
    with SimThread("demo", clock="manual") as sim:
        sim.namesrv_addr          # "127.0.0.1:PORT"
        sim.advance(60)           # one simulated minute
        sim.request_log           # what external clients (mqctl) sent

See docs/scenario.md for the scenario format.
"""

from mqctl.sim.cluster import FaultController, SimCluster, SimThread
from mqctl.sim.scenario import Scenario, bundled, load_scenario
from mqctl.sim.server import RequestRecord

__all__ = ["FaultController", "RequestRecord", "Scenario", "SimCluster", "SimThread", "bundled",
           "load_scenario"]
