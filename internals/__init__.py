"""lingprobe `internals`: activations from any layer of any model, pooled to words and spans.

Everything a caller needs is exported here (`internals.sites` too, for naming sites); the other
module paths are where the code lives, not what to import. A test holds this list fixed.
"""

from internals import sites
from internals.cache_dir import cache_root
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
from internals.extract import extract_shards, shards_per_window
from internals.intervene import lm_loss
from internals.items import SpanItem
from internals.load import Backend, Init, load_subject
from internals.packaged import MINILM, SMOLLM2, canonical_name, packaged_path
from internals.pool import PoolHow, TokenSegments, pool_spans
from internals.progress import ProgressBar, ProgressStep
from internals.random_init import seeded_global_rng
from internals.reading import Reading
from internals.sites import Site, SiteSpec
from internals.span_attention import span_attention
from internals.steer import Steering, steer
from internals.steering_effect import steering_effect
from internals.store import fingerprint
from internals.subject import Subject
from internals.transformer_subject import TransformerSubject
from lingprobe.errors import FeatureSetError
from lingprobe.feature_set import FeatureSet

__all__ = [
    "MINILM",
    "SMOLLM2",
    "Backend",
    "ExtractionMemoryError",
    "FeatureSet",
    "FeatureSetError",
    "Init",
    "InterventionError",
    "ItemError",
    "LingprobeError",
    "ModelNotFoundError",
    "OptionError",
    "PoolHow",
    "ProgressBar",
    "ProgressStep",
    "Reading",
    "Site",
    "SiteError",
    "SiteSpec",
    "SpanItem",
    "Steering",
    "Subject",
    "TokenSegments",
    "TokenizerError",
    "TransformerSubject",
    "TruncationWarning",
    "UnsupportedModelError",
    "VectorsFileError",
    "cache_root",
    "canonical_name",
    "extract_shards",
    "fingerprint",
    "lm_loss",
    "load_subject",
    "packaged_path",
    "pool_spans",
    "seeded_global_rng",
    "shards_per_window",
    "sites",
    "span_attention",
    "steer",
    "steering_effect",
]
