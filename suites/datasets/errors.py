"""Exception types of the data layer; each names the dataset or file and the way out."""

from __future__ import annotations

from lingprobe.errors import LingprobeError


class DataError(LingprobeError):
    """Base class of the data layer's errors."""


class UnknownDatasetError(DataError, LookupError):
    """A dataset name or file key that the registry does not have."""


class DataNotFoundError(DataError, FileNotFoundError):
    """A data file is neither in the data folder, nor shipped, nor downloadable from here."""


class DataIntegrityError(DataError, ValueError):
    """A file's bytes do not match the registry's sha256: a download or extraction is rejected
    (nothing kept); a file in a folder the user named is left as it is."""
