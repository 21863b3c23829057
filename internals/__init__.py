"""lingprobe `internals`: activations from any layer of any model, pooled to words and spans."""

from internals import sites
from internals.errors import (
    InterventionError,
    ItemError,
    LingprobeError,
    ModelNotFoundError,
    SiteError,
    TokenizerError,
    VectorsFileError,
)
from internals.items import SpanItem
from internals.load import load_subject
from internals.pool import TokenSegments, pool_spans
from internals.sites import Site
from internals.subject import Subject

__all__ = [
    "InterventionError",
    "ItemError",
    "LingprobeError",
    "ModelNotFoundError",
    "Site",
    "SiteError",
    "SpanItem",
    "Subject",
    "TokenSegments",
    "TokenizerError",
    "VectorsFileError",
    "load_subject",
    "pool_spans",
    "sites",
]
