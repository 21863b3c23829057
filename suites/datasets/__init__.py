"""lingprobe's datasets: a registry of pinned, hashed sources, embedded samples, and a cache.

Like `sklearn.datasets`: small samples ship inside the package; full datasets are downloaded on
first use into a cache (`data_home=`, else `$LINGPROBE_DATA`, else the user cache folder), checked
against the registry's sha256. `lingprobe data list|fetch|path|verify` is the command line.

>>> from suites.datasets import DataSource
>>> path = DataSource(samples=True).path("ud-english-ewt", "dev")  # shipped: no network
>>> path.name
'en_ewt-ud-dev.conllu'
"""

from suites.datasets.errors import (
    DataError,
    DataIntegrityError,
    DataNotFoundError,
    UnknownDatasetError,
)
from suites.datasets.home import data_home
from suites.datasets.references import registry_reference, resolve_file
from suites.datasets.registry import DataFile, Dataset, get_dataset, registry, sample_for
from suites.datasets.source import FULL, SAMPLES, DataSource, as_source

__all__ = [
    "FULL",
    "SAMPLES",
    "DataError",
    "DataFile",
    "DataIntegrityError",
    "DataNotFoundError",
    "DataSource",
    "Dataset",
    "UnknownDatasetError",
    "as_source",
    "data_home",
    "get_dataset",
    "registry",
    "registry_reference",
    "resolve_file",
    "sample_for",
]
