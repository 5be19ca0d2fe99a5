"""torchrun command lines: a static rendezvous on node 0 (or ``--standalone`` on one node),
for the probes under SkyPilot/dstack and for a recommended training plan as a shell script.

torchrun's options (``--nnodes``, ``--nproc-per-node``, ``--node-rank``, ``--master-addr``,
``--master-port``, ``--standalone``) are documented at
https://docs.pytorch.org/docs/stable/elastic/run.html; 29500 is its default port.
"""

from __future__ import annotations

import shlex

from catalog import shell_word

from ._spec import LaunchBundle, LaunchFile, LaunchSpec, comment_lines, mark_generated

MASTER_PORT = 29500  # torchrun's default rendezvous port


def torchrun_command(*, nodes: int, gpus_per_node: int, node_rank: str, master_addr: str,
                     program: str, port: int = MASTER_PORT) -> str:
    """torchrun for ``nodes`` × ``gpus_per_node`` with a static rendezvous on node 0.

    ``program`` is ``-m MODULE …`` or ``SCRIPT.py …``; one node uses ``--standalone``.
    """
    if nodes == 1:
        return f"torchrun --standalone --nnodes 1 --nproc-per-node {gpus_per_node} {program}"
    return (f"torchrun --nnodes {nodes} --nproc-per-node {gpus_per_node} "
            f"--node-rank {node_rank} --master-addr {master_addr} --master-port {port} "
            f"{program}")


def training_script(spec: LaunchSpec, *, task_path: str, header: tuple[str, ...],
                    env: dict[str, str], program: str) -> LaunchBundle:
    """The plan as a bash script to run on every node (NODE_RANK and MASTER_ADDR set)."""
    body = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                            node_rank='"${NODE_RANK:?set NODE_RANK to 0..' +
                            f'{spec.nodes - 1}' + '}"',
                            master_addr='"${MASTER_ADDR:?set MASTER_ADDR to node 0}"',
                            program=program)
    lines = ["#!/usr/bin/env bash", *comment_lines(header)]
    if spec.nodes > 1:
        lines.append(f"# Run on each of the {spec.nodes} nodes with NODE_RANK and "
                     "MASTER_ADDR (node 0's private IP) set.")
    lines += ["set -euo pipefail", *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
              body]
    text = mark_generated("\n".join(lines) + "\n")
    return LaunchBundle(target="torchrun", files=(LaunchFile(path=task_path, text=text),),
                        commands=(f"bash {shell_word(task_path)}",))
