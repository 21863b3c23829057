"""`lingprobe report DIR --html`: one self-contained interactive HTML explorer of a results
folder (any suite's or a sweep's), built from its parquet files and manifest alone."""

from suites.html.page import write_html

__all__ = ["write_html"]
