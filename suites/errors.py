"""Errors of the suites' task layer (the readers, the task schema, dataset inputs)."""

from __future__ import annotations

from lingprobe.errors import LingprobeError


class TaskError(LingprobeError, ValueError):
    """A task or its data is malformed; the message names the row or field and the fix."""


class ReportError(LingprobeError, ValueError):
    """A report cannot be made from a folder or to a path; the message says what to give."""
