#!/usr/bin/env python3
"""Checks the profile of `nasa eval --fused --json` (read from stdin): PE utilization is
MACs / (PEs x cycles) for the run, every op and every node; the ops' and the nodes' cycles plus
the control cycles are the run's cycles, their MACs the run's MACs."""
import json
import sys


def main():
    j = json.load(sys.stdin)
    pes = j["pe_array"][0] * j["pe_array"][1]
    errors = []

    def util(macs, cycles):
        return macs / (pes * cycles) if cycles else 0.0

    def close(a, b):
        return abs(a - b) <= 1e-9 * max(1.0, abs(b))

    if not close(j["pe_utilization"], util(j["macs_executed"], j["cycles"])):
        errors.append(f"run: pe_utilization {j['pe_utilization']} is not MACs / (PEs x cycles)")
    for part in ("by_op", "by_node"):
        rows = j[part]
        cycles = sum(r["cycles"] for r in rows) + j["control_cycles"]
        macs = sum(r["macs"] for r in rows)
        if cycles != j["cycles"]:
            errors.append(f"{part}: cycles + control {cycles} != run cycles {j['cycles']}")
        if macs != j["macs_executed"]:
            errors.append(f"{part}: MACs {macs} != run MACs {j['macs_executed']}")
        for r in rows:
            if not close(r["pe_utilization"], util(r["macs"], r["cycles"])):
                errors.append(f"{part} row {r}: pe_utilization is not MACs / (PEs x cycles)")
    if len(j["by_node"]) != j["nodes"]:
        errors.append(f"by_node has {len(j['by_node'])} rows for {j['nodes']} nodes")
    if errors:
        print("\n".join(errors))
        return 1
    print(f"PROFILE OK: utilization {j['pe_utilization']:.3f}, {len(j['by_op'])} ops, "
          f"{len(j['by_node'])} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
