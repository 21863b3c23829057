"""Edge probing with annotation-artifact filters (Sahu et al.), pretrained vs random encoders."""

from suites.edge.heuristics import HEURISTICS, classify, filtered_test_sets, heuristics
from suites.edge.jiant import read_jiant
from suites.readers.conllu import read_conllu, read_sentences
from suites.readers.semeval import read_semeval

__all__ = [
    "HEURISTICS",
    "classify",
    "filtered_test_sets",
    "heuristics",
    "read_conllu",
    "read_jiant",
    "read_semeval",
    "read_sentences",
]
