#!/usr/bin/env python3
"""Checks the profile of `nasa eval --fused --json` (read from stdin): PE utilization is
MACs / (PEs x cycles) for the run, every op and every node; the ops' and the nodes' cycles plus
the control cycles are the run's cycles, their MACs the run's MACs. The energy (docs/energy.md):
every breakdown row is its count times its energy, the rows sum to energy_pj, the MAC row counts
the run's MACs, the DRAM row its DRAM bytes and the control row its cycles, and the DRAM share
and the energy per candidate follow."""
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
    rows = {r["event"]: r for r in j["energy_breakdown"]}
    total = sum(r["pj"] for r in rows.values())
    if not close(total, j["energy_pj"]):
        errors.append(f"energy: rows sum to {total} pJ, energy_pj {j['energy_pj']}")
    for r in rows.values():
        if not close(r["pj"], r["count"] * r["pj_each"]) or r["count"] < 0 or r["pj_each"] <= 0:
            errors.append(f"energy row {r}: pj is not count x pj_each")
    for event, want in (("mac", j["macs_executed"]), ("dram", j["dram_bytes"]),
                        ("control", j["cycles"])):
        if rows.get(event, {}).get("count") != want:
            errors.append(f"energy row {event}: count {rows.get(event)} != {want}")
    if not close(j["energy_dram_share"], rows["dram"]["pj"] / total):
        errors.append(f"energy_dram_share {j['energy_dram_share']} is not DRAM pJ / total")
    if not close(j["energy_per_candidate_pj"], total / len(j["candidates"])):
        errors.append("energy_per_candidate_pj is not energy_pj / candidates")
    if errors:
        print("\n".join(errors))
        return 1
    print(f"PROFILE OK: utilization {j['pe_utilization']:.3f}, {len(j['by_op'])} ops, "
          f"{len(j['by_node'])} nodes, energy {j['energy_pj'] * 1e-9:.3f} mJ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
