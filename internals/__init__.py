"""lingprobe `internals`: activations from any layer of any model, pooled to words and spans."""

from internals import sites
from internals.errors import (
    ExtractionMemoryError,
    InterventionError,
    ItemError,
    LingprobeError,
    ModelNotFoundError,
    OptionError,
    SiteError,
    TokenizerError,
    TruncationWarning,
    UnsupportedModelError,
    VectorsFileError,
)
from internals.items import SpanItem
from internals.load import load_subject
from internals.pool import TokenSegments, pool_spans
from internals.progress import ProgressStep
from internals.sites import Site
from internals.subject import Subject
from lingprobe.errors import FeatureSetError
from lingprobe.feature_set import FeatureSet

__all__ = [
    "ExtractionMemoryError",
    "FeatureSet",
    "FeatureSetError",
    "InterventionError",
    "ItemError",
    "LingprobeError",
    "ModelNotFoundError",
    "OptionError",
    "ProgressStep",
    "Site",
    "SiteError",
    "SpanItem",
    "Subject",
    "TokenSegments",
    "TokenizerError",
    "TruncationWarning",
    "UnsupportedModelError",
    "VectorsFileError",
    "load_subject",
    "pool_spans",
    "sites",
]
