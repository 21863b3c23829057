"""Which of the Holmes leaderboard's 208 probing datasets lingprobe builds, and why not the rest.

`suites.holmes.inventory.holmes_datasets()` lists the 208 datasets with the phenomenon type,
phenomenon and probe type the published leaderboard gives them. A dataset is built when
`suites.holmes.catalog.available_tasks()` names it, i.e. when its canonical source is in the
dataset registry, pinned with a sha256 per file. Every other one carries the reason found when
its source was checked (`REASONS`).

`python -m suites.holmes.coverage [OUT]` writes the table (default
`docs/methods/holmes-coverage.md`); `--check` exits 1 when that file is not current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

from lingprobe.atomic import atomic_write_bytes
from suites.holmes.catalog import available_tasks
from suites.holmes.inventory import holmes_datasets

PAGE = Path("docs/methods/holmes-coverage.md")
LDC = "LDC-licensed source ({}): not openly redistributable"
NOT_FOUND = (
    "no openly licensed, pinnable source found: Holmes distributes its derived file only in its"
    " Google Drive release (`holmes-free.zip`), which states no licence"
)
UDS_UNDOCUMENTED = (
    "open (UDS 2.0 {}, decomp, CC BY-SA 4.0; lingprobe reads UDS), but Holmes does not document"
    " how it turns these annotations into its labels (or, for factuality, into its token pairs)"
)
# (dataset name or prefix ending in "-", the registry dataset it is built from)
BUILT_FROM = (
    ("blimp-", "blimp"),
    ("zorro-", "zorro"),
    ("protoroles-", "uds"),
    ("arg-is-", "uds"),
    ("pred-is-", "uds"),
    ("upos", "ud-english-ewt"),
    ("xpos", "ud-english-ewt"),
    ("dep", "ud-english-ewt"),
    ("relation-classification", "semeval-2010-task8"),
)
# (dataset name or prefix ending in "-", why it is not built); the first match counts
REASONS = (
    (
        "olmpics-",
        "oLMpics (Talmor et al. 2020): the data lives in an S3 bucket, not in the repository"
        " (alontalmor/oLMpics), which states no licence: nothing to pin",
    ),
    (
        "gum-rst-",
        "GUM's RST trees are open (amir-zeldes/gum, CC BY 4.0 for most documents), but Holmes"
        " does not document how it derives these EDU tasks from them: not reimplemented",
    ),
    ("rst-edu-", LDC.format("RST Discourse Treebank, LDC2002T07")),
    ("drt-", LDC.format("Penn Discourse Treebank 3.0, LDC2019T05")),
    ("discourse-connective", LDC.format("Penn Discourse Treebank 3.0, LDC2019T05")),
    ("coref", LDC.format("OntoNotes 5.0, LDC2013T19")),
    ("ner", LDC.format("OntoNotes 5.0, LDC2013T19")),
    ("pos", LDC.format("OntoNotes 5.0, LDC2013T19")),
    ("srl", LDC.format("OntoNotes 5.0, LDC2013T19")),
    ("const", LDC.format("OntoNotes 5.0, LDC2013T19")),
    ("bridging-", LDC.format("bridging annotations over OntoNotes / Penn Treebank text")),
    (
        "senteval-",
        "SentEval probing data (facebookresearch/SentEval, BSD): every `data/probing/*.txt` is"
        " over the snapshot's size limit, so no file could be hashed and pinned here",
    ),
    (
        "protoroles-",
        "an SPR1 property (Reisinger et al. 2015), annotated on Penn Treebank text (LDC); UDS"
        " 2.0 carries the SPR2 properties only",
    ),
    (
        "event_structure-",
        "open (UDS 2.0 event structure, decomp, CC BY-SA 4.0), but Holmes does not document how"
        " it derives its labels, and the snapshot lacks the normalized natural-parts file",
    ),
    ("factuality", UDS_UNDOCUMENTED.format("factuality")),
    ("time", UDS_UNDOCUMENTED.format("time")),
    ("wordsense", UDS_UNDOCUMENTED.format("word sense")),
    (
        "flesch",
        "Holmes does not document the text it scores or how it bins Flesch reading ease into"
        " classes: not reimplemented",
    ),
    ("", NOT_FOUND),
)


def _matches(name: str, key: str) -> bool:
    return name.startswith(key) if key.endswith("-") or not key else name == key


def coverage() -> pl.DataFrame:
    """Every leaderboard dataset with `built`, `source` (the registry dataset) and `reason`."""
    built = set(available_tasks())
    rows = []
    for row in holmes_datasets().iter_rows(named=True):
        name = row["dataset"]
        if name in built:
            source = next(s for key, s in BUILT_FROM if _matches(name, key))
            rows.append({**row, "built": True, "source": source, "reason": ""})
        else:
            reason = next(r for key, r in REASONS if _matches(name, key))
            rows.append({**row, "built": False, "source": "", "reason": reason})
    return pl.DataFrame(rows)


def render(frame: pl.DataFrame) -> str:
    """The coverage page (Markdown): counts by phenomenon type, then one row per dataset."""
    n_built = int(frame["built"].sum())
    lines = [
        "# Holmes coverage",
        "",
        "Which of the Holmes leaderboard's probing datasets lingprobe builds from openly",
        "licensed, pinned sources (`lingprobe run holmes --tasks NAME`), and why each other one",
        "is not built.",
        "Generated by `python -m suites.holmes.coverage`; the test suite checks it is current.",
        "",
        f"**{n_built} of {frame.height} built.**",
        "",
        "| phenomenon type | built | not built |",
        "| --- | --- | --- |",
    ]
    by_type = frame.group_by("phenomenon_type", maintain_order=True).agg(
        built=pl.col("built").sum(), total=pl.len()
    )
    for kind, built, total in by_type.sort("phenomenon_type").iter_rows():
        lines.append(f"| {kind} | {built} | {total - built} |")
    lines += [
        "",
        "| dataset | type | phenomenon | probe type | built from / reason not built |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in frame.sort("built", "dataset", descending=[True, False]).iter_rows(named=True):
        status = f"built (`{row['source']}`)" if row["built"] else f"not built: {row['reason']}"
        lines.append(
            f"| `{row['dataset']}` | {row['phenomenon_type']} | {row['phenomenon']} |"
            f" {row['probe_type']} | {status} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the coverage page, or with `--check` say whether the written one is current."""
    parser = argparse.ArgumentParser(prog="python -m suites.holmes.coverage")
    parser.add_argument("out", nargs="?", default=str(PAGE), help="the page (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    frame = coverage()
    page, out = render(frame), Path(args.out)
    if args.check:
        current = out.is_file() and out.read_text("utf-8") == page
        if not current:
            print(f"{out} is stale: run `python -m suites.holmes.coverage {out}`", file=sys.stderr)
        return 0 if current else 1
    atomic_write_bytes(out, page.encode("utf-8"))
    print(f"{out}: {int(frame['built'].sum())} of {frame.height} Holmes datasets built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
