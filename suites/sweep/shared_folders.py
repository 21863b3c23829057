"""Checking, before a Ray sweep starts, that every node sees the sweep's output and store folders.

Ray workers write unit folders under `out` and features under the store, and the driver reads
them back, so on a cluster both must sit on a filesystem every node mounts at the same path
(NFS, a cluster filesystem). The driver writes a token file with a random content into each
folder; a task pinned to every node that can hold a worker reads it back and writes its own
reply next to it; the driver then reads every reply. A node that cannot read the token (the
folder is missing there, or is another disk under the same name) or whose reply the driver
cannot see stops the sweep with a `SweepError` naming the node, the folder and the fix, before
any model loads. The token files are removed afterwards.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lingprobe.atomic import atomic_write_bytes
from suites.sweep.errors import SweepError

TOKEN_PREFIX = ".lingprobe-shared-"
REPLY_TIMEOUT_S = 120.0  # a num_cpus=0 task starts within seconds on a live node
FIX = (
    "put [sweep] out and store on a filesystem every Ray node mounts at the same path"
    " (NFS, a cluster filesystem)"
)


def token_path(folder: Path, token: str) -> Path:
    """The driver's token file in `folder`."""
    return folder / f"{TOKEN_PREFIX}{token}"


def reply_path(folder: Path, token: str, node: str) -> Path:
    """The reply a node's task writes next to the token."""
    return folder / f"{TOKEN_PREFIX}{token}.{node}"


def answer(folders: Mapping[str, str], token: str, node: str) -> tuple[str, str] | None:
    """What a node's task does: read the token in each folder and write the node's reply.

    `folders` maps a label ("out", "store") to a path. Returns the first problem as (label,
    what is wrong), or None when every folder holds the driver's token and took the reply."""
    for label, name in folders.items():
        folder = Path(name)
        try:
            seen = token_path(folder, token).read_text()
        except OSError as error:
            return label, f"shows no token the driver wrote ({error.strerror})"
        if seen != token:
            return label, "holds another token than the driver wrote"
        try:
            atomic_write_bytes(reply_path(folder, token, node), token.encode())
        except OSError as error:
            return label, f"is not writable there ({error.strerror})"
    return None


def worker_nodes(nodes: list[dict[str, Any]], cpus: float, gpus: float) -> list[dict[str, Any]]:
    """The live nodes (`ray.nodes()` entries) that can hold one worker."""
    return [
        node
        for node in nodes
        if node.get("Alive")
        and node.get("Resources", {}).get("CPU", 0.0) >= cpus
        and node.get("Resources", {}).get("GPU", 0.0) >= gpus
    ]


def check_shared_folders(
    ray: Any, folders: Mapping[str, Path], cpus: float, gpus: float
) -> list[str]:
    """Refuse (`SweepError`) when a node that can hold a worker does not see every folder in
    `folders` (label -> path) as the driver does; returns the ids of the nodes checked."""
    token = secrets.token_hex(16)
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(token_path(folder, token), token.encode())
    try:
        nodes = worker_nodes(ray.nodes(), cpus, gpus)
        names = {label: str(path) for label, path in folders.items()}
        task = ray.remote(answer)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        pending = {
            node["NodeID"]: task.options(
                num_cpus=0,
                max_retries=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(names, token, node["NodeID"])
            for node in nodes
        }
        for node in nodes:
            node_id = node["NodeID"]
            where = f"Ray node {node.get('NodeManagerAddress', '?')} ({node_id[:12]})"
            try:
                seen = ray.get(pending[node_id], timeout=REPLY_TIMEOUT_S)
                problem = f"the {seen[0]} folder {folders[seen[0]]} {seen[1]}" if seen else None
            except ray.exceptions.GetTimeoutError:
                problem = f"it did not answer the folder check within {REPLY_TIMEOUT_S:.0f} s"
            except ray.exceptions.RayError as error:
                problem = f"its folder check failed ({str(error).splitlines()[0]})"
            problem = problem or unseen_reply(folders, token, node_id)
            if problem:
                raise SweepError(f"{where} cannot be used: {problem}; {FIX}")
        return [node["NodeID"] for node in nodes]
    finally:
        for folder in folders.values():
            for leftover in folder.glob(f"{TOKEN_PREFIX}{token}*"):
                leftover.unlink(missing_ok=True)


def unseen_reply(folders: Mapping[str, Path], token: str, node: str) -> str | None:
    """A problem when the driver cannot read a node's reply in one of the folders."""
    for label, folder in folders.items():
        path = reply_path(folder, token, node)
        try:
            if path.read_text() == token:
                continue
        except OSError:
            pass
        return (
            f"the driver does not see the reply the node wrote into the {label} folder {folder}"
            " (the node writes to another disk under the same path)"
        )
    return None
