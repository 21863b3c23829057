"""Structural probes (Hewitt & Manning 2019) on UD trees, and concept erasure runs (LEACE, INLP,
amnesic LM loss), pretrained against random twins: `lingprobe run structural` and
`lingprobe amnesic`."""

from suites.structural.config import StructuralSuiteConfig
from suites.structural.data import Treebank, read_treebank
from suites.structural.experiment import run_structural
from suites.structural.report import best_layers, by_layer, write_structural

__all__ = [
    "StructuralSuiteConfig",
    "Treebank",
    "best_layers",
    "by_layer",
    "read_treebank",
    "run_structural",
    "write_structural",
]
