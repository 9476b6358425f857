"""Paper-scale corpus stage: a multistream pages-articles dump is extracted in parts, each reading
only its own bz2 streams (byte ranges from the dump's index); the parts together give exactly the
articles of the whole dump, in order."""

import bz2
import random
import re

import pytest
import yaml

from staticvec.corpus.sources import dump_part_ranges, extract_dump, iter_documents, stream_offsets
from staticvec.errors import InputFileError


def _documents(out_dir):
    files = sorted(p for p in out_dir.rglob("wiki_*") if p.is_file())
    return [(d.id, d.title, d.paragraphs) for f in files for d in iter_documents(f)]


@pytest.fixture(scope="module")
def multistream(tmp_path_factory, shared_data):
    """The sample dump rewritten as Wikimedia writes multistream dumps: a header stream, then one bz2
    stream per 10 pages, and the index (offset:page_id:title per page)."""
    xml = bz2.decompress((shared_data / "corpus" / "enwiki-sample-pages-articles.xml.bz2").read_bytes()).decode()
    first = xml.index("  <page>")
    end = xml.rindex("</mediawiki>")
    pages = re.findall(r"  <page>.*?</page>\n", xml[first:end], flags=re.S)
    assert len(pages) > 30
    root = tmp_path_factory.mktemp("multistream")
    dump, index = root / "dump-multistream.xml.bz2", root / "dump-multistream-index.txt"
    lines = []
    with open(dump, "wb") as fh:
        fh.write(bz2.compress(xml[:first].encode()))
        for g in range(0, len(pages), 10):
            offset = fh.tell()
            group = pages[g : g + 10]
            tail = xml[end:] if g + 10 >= len(pages) else ""
            fh.write(bz2.compress(("".join(group) + tail).encode()))
            for page in group:
                pid = re.search(r"<id>(\d+)</id>", page).group(1)
                title = re.search(r"<title>(.*?)</title>", page).group(1)
                lines.append(f"{offset}:{pid}:{title}\n")
    index.write_text("".join(lines))
    whole = root / "whole"
    extract_dump(shared_data / "corpus" / "enwiki-sample-pages-articles.xml.bz2", whole)
    return {"dump": dump, "index": index, "streams": len(range(0, len(pages), 10)), "whole": _documents(whole)}


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_parts_together_are_the_whole_dump(tmp_path, multistream, parts):
    docs = []
    for part in range(parts):
        extract_dump(multistream["dump"], tmp_path / f"p{part}", index=multistream["index"], part=part, parts=parts)
        part_docs = _documents(tmp_path / f"p{part}")
        assert part_docs, f"part {part} of {parts} is empty"
        docs += part_docs
    assert docs == multistream["whole"]


def test_index_offsets_and_errors(tmp_path, multistream):
    offsets = stream_offsets(multistream["index"])
    assert len(offsets) == multistream["streams"] and offsets == sorted(offsets) and offsets[0] > 0
    bad = tmp_path / "bad-index.txt"
    bad.write_text("12:3:A\nnot an index line\n")
    with pytest.raises(InputFileError, match=r"bad-index.txt.*line 2"):
        stream_offsets(bad)
    with pytest.raises(InputFileError, match="only .* page streams: set corpus.dump_parts"):
        extract_dump(multistream["dump"], tmp_path / "x", index=multistream["index"], part=0, parts=multistream["streams"] + 1)


def test_part_ranges_cover_every_stream_once_in_balanced_contiguous_ranges():
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 60)
        sizes = [rng.randint(1, 100) for _ in range(n)]
        header = rng.randint(1, 50)
        offsets = [header + sum(sizes[:i]) for i in range(n)]
        size = header + sum(sizes)
        parts = rng.randint(1, 70)
        ranges = dump_part_ranges(offsets, size, parts)
        assert len(ranges) == min(parts, n)
        assert ranges[0][0] == offsets[0] and ranges[-1][1] == size
        assert all(a < b for a, b in ranges) and all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
        assert all(a in offsets for a, _ in ranges)
        if parts <= n:  # each cut is the stream boundary nearest its ideal position, so no range exceeds
            ideal = (size - offsets[0]) / parts  # the ideal size by more than two streams
            assert max(b - a for a, b in ranges) <= ideal + 2 * max(sizes)


def test_paper_config_plans_one_bounded_job_per_dump_part(repo_root, tmp_path):
    from staticvec.config import load_config
    from staticvec.errors import StaticvecError
    from staticvec.dag.workflow import Workflow

    config = load_config([repo_root / "config/config.yaml", repo_root / "config/paper.yaml"])
    w = Workflow(config, repo_root)
    inputs = w.corpus_inputs()
    parts = config["corpus"]["dump_parts"]
    assert len(inputs) == parts > 1 and [i.part for i in inputs] == list(range(parts))
    assert len({i.id for i in inputs}) == parts and all(i.index.name.endswith("-index.txt.bz2") for i in inputs)
    assert f"--part 7 --parts {parts}" in w.extract_flags(inputs[7].id) and "--index" in w.extract_flags(inputs[7].id)
    assert set(w.extract_inputs(inputs[0].id)) == {"dump", "index"}
    # runtimes follow the part's share of the dump (not here: the planning model's plan.source_gb stands for it)
    from staticvec.dag.costs import CostModel, Wildcards
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan

    def extract_minutes(source_gb):
        config["plan"]["source_gb"] = source_gb
        model = CostModel(config, w, TeacherPlan(config), SemgloveRules(config), manifest={}, root=repo_root)
        cost = model.job("extract_dump", Wildcards(corpus_input=inputs[0].id))
        rate = model.unit.value("extract_mb_per_s") * config["corpus"]["extract_processes"]
        assert cost.work_s == pytest.approx(source_gb * 1e9 / parts / 2**20 / rate)  # the part's MB at the measured rate
        return model.runtime_minutes(cost)

    minutes = extract_minutes(21)
    assert 5 <= minutes < 60 and extract_minutes(2100) > minutes  # start-up dominates a part of 21 GB / 256
    # without the index in the registry, the parts cannot be located: a plan-time error that says so
    registry = yaml.safe_load((repo_root / "config/resources.yaml").read_text())
    members = registry[config["corpus"]["source"]]["members"]
    del members[next(m for m in members if m.endswith("-index.txt.bz2"))]
    (tmp_path / "resources.yaml").write_text(yaml.safe_dump(registry))
    config["resources"]["registry"] = str(tmp_path / "resources.yaml")
    with pytest.raises(StaticvecError, match=r"multistream index .*\(or set dump_parts: 1\)"):
        Workflow(config, repo_root).corpus_inputs()
