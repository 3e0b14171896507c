"""The release layout: tables in parts under the size limit, one dataset card,
and where the Downloads page says each file is."""

from __future__ import annotations

import hashlib
import html
import json
import math
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from dualboard.csv_download import download_csv
from dualboard.release.dataset_card import dataset_card
from dualboard.release.tables import first_split, write_table
from dualboard.release_files import SITE_FILE_LIMIT, ReleaseError, load_release
from dualboard.render.reference_pages import downloads_page
from dualboard.render.shared_files import SharedFiles


def _source(rows: int):
    """A scored-like table carrying key-value metadata (as a published table does)."""
    frame = pd.DataFrame(
        {
            "run_id": [f"run-{i % 7}" for i in range(rows)],
            "question_id": [f"q{i}" for i in range(rows)],
            "response": [f"=cmd|{i}|" + "x" * (i % 97) for i in range(rows)],
            "score": [i % 101 for i in range(rows)],
        }
    )
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**table.schema.metadata, b"dualboard": b"store revision 000007"})
    return frame, table


def test_a_small_table_is_one_parquet_file_and_one_safe_csv(tmp_path):
    frame, source = _source(50)
    written = write_table(source, tmp_path / "out" / "scored", "demo")
    assert [p.name for p in written] == ["demo.parquet", "demo.csv"]
    assert pq.read_table(written[0]).equals(source)
    assert pq.read_schema(written[0]).metadata[b"dualboard"] == b"store revision 000007"
    csv = pd.read_csv(written[1])
    assert len(csv) == 50 and csv["response"].str.startswith("'=cmd").all(), "formulas neutralised in the CSV"


def test_a_large_table_is_split_into_parts_each_under_the_limit(tmp_path):
    frame, source = _source(3000)
    limit = 40_000
    pq.write_table(source, tmp_path / "whole.parquet")
    assert (tmp_path / "whole.parquet").stat().st_size > limit
    written = write_table(source, tmp_path / "out" / "scored", "demo", limit=limit)
    parquet = sorted(p for p in written if p.suffix == ".parquet")
    csvs = sorted(p for p in written if p.suffix == ".csv")
    n = len(parquet)
    assert n > 1 and len(csvs) == n
    assert [p.name for p in parquet] == [f"demo-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    assert all(p.stat().st_size < limit for p in written), [(p.name, p.stat().st_size) for p in written]
    back = pd.concat([pd.read_parquet(p) for p in parquet], ignore_index=True)
    pd.testing.assert_frame_equal(back, frame)
    assert sum(len(pd.read_csv(p)) for p in csvs) == len(frame)
    assert all(pq.read_schema(p).metadata[b"dualboard"] == b"store revision 000007" for p in parquet)


def test_the_first_split_is_sized_by_the_csv_when_the_parquet_is_small(tmp_path):
    frame = pd.DataFrame({"run_id": ["r"] * 400, "response": ["same words " * 100] * 400})  # compresses ~1000x
    source, limit = pa.Table.from_pandas(frame, preserve_index=False), 100_000
    pq.write_table(source, tmp_path / "demo.parquet")
    size = (tmp_path / "demo.parquet").stat().st_size
    csv_size = len(download_csv(frame).encode("utf-8"))
    assert size < limit < csv_size, "the case: a small Parquet file of a large CSV"
    parts = first_split(source, size, limit)
    assert parts >= math.ceil(csv_size / limit), (parts, csv_size)
    written = write_table(source, tmp_path / "out", "demo", limit=limit)
    assert len(written) == 2 * parts, "the first split tried is the one written"
    assert all(p.stat().st_size < limit for p in written)
    assert first_split(source.slice(0, 5), 100, limit) == 1


def test_a_row_larger_than_the_limit_says_so(tmp_path):
    _, source = _source(3)
    with pytest.raises(ValueError, match="a single row"):
        write_table(source, tmp_path / "out", "demo", limit=200)


MANIFEST = {
    "version": "1.0",
    "released": "2026-11-29",
    "generator_version": "0",
    "store_revision": "000002",
    "benchmarks": {"demo": {"version": "1", "runs": {"a": {}}}},
}


def test_one_card_with_train_splits_and_the_hub_prefix():
    files = [
        "scored/demo-00000-of-00002.parquet",
        "scored/demo-00001-of-00002.parquet",
        "scored/demo.csv",
        "verdicts/demo.parquet",
        "stats/demo/models.csv",
        "manifest.json",
    ]
    for prefix in ("", "releases/1.0/"):
        card = dataset_card(MANIFEST, files, prefix=prefix)
        front = yaml.safe_load(card.split("---\n")[1])
        assert front["configs"] == [
            {
                "config_name": "scored",
                "default": True,
                "data_files": [{"split": "train", "path": f"{prefix}scored/*.parquet"}],
            },
            {"config_name": "verdicts", "data_files": [{"split": "train", "path": f"{prefix}verdicts/*.parquet"}]},
        ]
    assert "releases/1.0/" in card and "`verdicts/`" in card


def _release_folder(tmp_path, *, hub: dict | None, big: bool, version: str = "1.0"):
    folder = tmp_path / "releases" / version
    (folder / "scored").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({**MANIFEST, "version": version, **(hub or {})}), "utf-8")
    (folder / "README.md").write_text("---\nconfigs: []\n---\n# card\n", "utf-8")
    (folder / "scored" / "demo.csv").write_text("a\n1\n", "utf-8")
    with (folder / "scored" / "demo.parquet").open("wb") as handle:  # sparse: only its size matters here
        handle.truncate(SITE_FILE_LIMIT + 1 if big else 10)
    names = ["README.md", "manifest.json", "scored/demo.csv", "scored/demo.parquet"]
    sums = "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names)
    (folder / "SHA256SUMS").write_text(sums, "utf-8")
    return load_release(folder)


def _rows(page: str) -> dict[str, str]:
    """File name → its table row (HTML) on the page."""
    return {
        html.unescape(re.sub(r"<[^>]+>", "", m.group(1))): m.group(0)
        for m in re.finditer(r"<tr><td>(.*?)</td>.*?</tr>", page)
    }


def test_downloads_page_carries_small_files_and_links_large_ones_at_the_hub_tag(tmp_path):
    record = _release_folder(
        tmp_path, hub={"hub_dataset": "org/board", "hub_endpoint": "https://hub.example"}, big=True
    )
    shared = SharedFiles()
    page, assets = downloads_page([], [record], "1.0", shared)
    rows = _rows(page.content)
    assert set(rows) == {"README.md", "manifest.json", "scored/demo.csv", "scored/demo.parquet", "SHA256SUMS"}
    assert assets == {}, "a release's files are shared by every version, not copied into this one"
    carried = {"README.md": "README.md.txt", "manifest.json": "manifest.json", "scored/demo.csv": "scored/demo.csv"}
    carried["SHA256SUMS"] = "SHA256SUMS"
    for name, site_name in carried.items():
        data = (record.folder / name).read_bytes()
        path = f"shared/{hashlib.sha256(data).hexdigest()}/{site_name}"
        assert shared.data[path] == data, name
        assert f'href="../../{path}"' in html.unescape(rows[name]), "a versioned page finds shared/ above its root"
    assert len(shared.data) == len(carried), "the large file stays out of the site"
    hub_link = "https://hub.example/datasets/org/board/resolve/1.0/releases/1.0/scored/demo.parquet"
    assert f'href="{hub_link}"' in html.unescape(rows["scored/demo.parquet"])
    assert "Hugging Face Hub" in rows["scored/demo.parquet"] and "this site" in rows["scored/demo.csv"]
    assert "## Release `1.0`" in page.content and "Release 1&#46;0" not in page.content
    assert "`org/board`" in page.content
    assert not [span for span in re.findall(r"`[^`\n]*`", page.content) if "&#" in span], (
        "code spans show entities literally"
    )


def test_without_a_hub_large_files_are_release_assets(tmp_path):
    record = _release_folder(tmp_path, hub=None, big=True)
    shared = SharedFiles()
    page, _ = downloads_page([], [record], "1.0", shared)
    row = _rows(page.content)["scored/demo.parquet"]
    assert "href" not in row and "release assets" in row
    assert not [path for path in shared.data if path.endswith("demo.parquet")]
    assert "releases&#47;1&#46;0&#47;" not in page.content and "`releases/1.0/`" in page.content


@pytest.mark.parametrize(
    "field, value",
    [
        ("hub_endpoint", "javascript:alert(1)//"),
        ("hub_endpoint", 'https://x.example/"><script>'),
        ("hub_dataset", "org/board/../../x"),
        ("hub_dataset", 7),
    ],
)
def test_a_manifest_cannot_turn_hub_fields_into_links(tmp_path, field, value):
    hub = {"hub_dataset": "org/board", "hub_endpoint": "https://hub.example", field: value}
    with pytest.raises(ReleaseError, match=f"manifest.json: {field}: .* — restore the manifest"):
        _release_folder(tmp_path, hub=hub, big=False)


def test_other_releases_link_their_own_versions(tmp_path):
    old = _release_folder(tmp_path, hub=None, big=False, version="1.0")
    new = _release_folder(tmp_path, hub=None, big=False, version="1.1")
    shared = SharedFiles()
    deployed, _ = downloads_page([], [old, new], "1.1", shared)
    others = deployed.content.split("## Other releases")[1]
    assert "- `1.0` (2026-11-29): " in html.unescape(others) and 'href="../../1.0/downloads/"' in html.unescape(others)
    assert "`1.1`" not in others
    carried = set(shared.data)
    preview, assets = downloads_page([], [old, new], None, shared)
    assert "## Releases" in preview.content and "href" not in preview.content.split("## Releases")[1]
    assert set(shared.data) == carried and not [a for a in assets if "manifest" in a], (
        "a build that is no release carries no release files"
    )


def test_a_release_page_without_its_shared_files_is_refused(tmp_path):
    record = _release_folder(tmp_path, hub=None, big=False)
    with pytest.raises(ValueError, match="needs the SharedFiles"):
        downloads_page([], [record], "1.0")
