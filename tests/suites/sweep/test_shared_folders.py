"""The start-up check that every Ray node sees the sweep's out and store folders.

One machine cannot show two nodes with different disks, so the refusal is shown with a stand-in
for Ray whose second node runs the real node task against another folder of the same name (a
node that mounts another disk there); the real check on a live Ray instance runs in every Ray
test (`run_ray` calls it before any worker starts) and is checked here to leave nothing behind.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from suites.sweep.errors import SweepError
from suites.sweep.shared_folders import (
    TOKEN_PREFIX,
    answer,
    check_shared_folders,
    reply_path,
    token_path,
    unseen_reply,
    worker_nodes,
)


def test_a_node_that_sees_the_token_writes_its_reply(tmp_path):
    out, store = tmp_path / "out", tmp_path / "store"
    for folder in (out, store):
        folder.mkdir()
        token_path(folder, "abc").write_text("abc")
    assert answer({"out": str(out), "store": str(store)}, "abc", "node1") is None
    assert reply_path(store, "abc", "node1").read_text() == "abc"
    assert unseen_reply({"out": out, "store": store}, "abc", "node1") is None


def test_a_node_without_the_folder_or_with_another_token_names_which(tmp_path):
    missing = answer({"out": str(tmp_path / "nowhere")}, "abc", "n")
    assert missing is not None and missing[0] == "out" and "shows no token" in missing[1]
    token_path(tmp_path, "abc").write_text("xyz")
    other = answer({"store": str(tmp_path)}, "abc", "n")
    assert other == ("store", "holds another token than the driver wrote")
    unseen = unseen_reply({"store": tmp_path}, "abc", "n")
    assert unseen is not None and "does not see the reply" in unseen


def test_only_live_nodes_that_hold_a_worker_are_checked():
    nodes = [
        {"NodeID": "head", "Alive": True, "Resources": {"CPU": 0.0}},
        {"NodeID": "dead", "Alive": False, "Resources": {"CPU": 4.0}},
        {"NodeID": "cpu", "Alive": True, "Resources": {"CPU": 4.0}},
        {"NodeID": "gpu", "Alive": True, "Resources": {"CPU": 4.0, "GPU": 1.0}},
    ]
    assert [n["NodeID"] for n in worker_nodes(nodes, 1.0, 0.0)] == ["cpu", "gpu"]
    assert [n["NodeID"] for n in worker_nodes(nodes, 2.0, 1.0)] == ["gpu"]


class TwoNodeRay:
    """Stands in for a Ray cluster of two nodes; node "b" mounts `elsewhere` where the driver
    has its folders (the folders' names are the same, their content is not)."""

    def __init__(self, driver_root: Path, elsewhere: Path) -> None:
        self.driver_root, self.elsewhere = driver_root, elsewhere
        self.exceptions = SimpleNamespace(GetTimeoutError=TimeoutError, RayError=RuntimeError)

    def nodes(self) -> list[dict[str, Any]]:
        return [
            {"NodeID": "a" * 56, "Alive": True, "Resources": {"CPU": 2.0}},
            {
                "NodeID": "b" * 56,
                "Alive": True,
                "Resources": {"CPU": 2.0},
                "NodeManagerAddress": "10.0.0.2",
            },
        ]

    def remote(self, function: Any) -> Any:
        ray = self

        class Task:
            def options(self, **_: Any) -> Task:
                return self

            def remote(self, folders: dict[str, str], token: str, node: str) -> Any:
                if node.startswith("b"):
                    folders = {
                        label: path.replace(str(ray.driver_root), str(ray.elsewhere))
                        for label, path in folders.items()
                    }
                return function(folders, token, node)

        return Task()

    def get(self, result: Any, timeout: float) -> Any:
        return result


def test_a_node_that_does_not_see_the_folders_stops_the_sweep_before_it_starts(tmp_path):
    root, elsewhere = tmp_path / "shared", tmp_path / "node-b-disk"
    (elsewhere / "out").mkdir(parents=True)
    folders = {"out": root / "out", "store": root / "store"}
    with pytest.raises(SweepError) as caught:
        check_shared_folders(TwoNodeRay(root, elsewhere), folders, 1.0, 0.0)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("Ray node 10.0.0.2 (bbbbbbbbbbbb) cannot be used: the out folder")
    assert str(root / "out") in message and "shows no token the driver wrote" in message
    assert message.endswith("every Ray node mounts at the same path (NFS, a cluster filesystem)")
    for folder in folders.values():  # the driver's tokens and node a's replies are removed
        assert not list(folder.glob(f"{TOKEN_PREFIX}*"))


def test_nodes_that_see_the_folders_pass_and_leave_nothing_behind(tmp_path):
    folders = {"out": tmp_path / "out", "store": tmp_path / "store"}
    ray = TwoNodeRay(tmp_path, tmp_path)  # both nodes see the driver's folders
    assert check_shared_folders(ray, folders, 1.0, 0.0) == ["a" * 56, "b" * 56]
    assert not [p for f in folders.values() for p in f.iterdir()]
