"""The intrinsic evaluation data sets: one registry (name → file, parser, task) and strict parsers.

Files are read from a data directory (default ``<resources.mirror>/eval``, i.e. ``../shared/data/eval``)
laid out as below. Every parser raises :class:`InputFileError` naming the file and line of a
malformed record; blank lines are not records. Nothing else is skipped, with one documented
exception: the ``vecto`` categorization CSVs separate their classes by rows with an empty word
(AP has 21 of them); those rows are counted (``blank_rows``) and passed over.

========== ============== ============================================== ========= =================
name        task           file (under the data directory)                 records   source / notes
========== ============== ============================================== ========= =================
ws353       similarity     similarity/EN-WS-353-ALL.txt                    353       Faruqui's eval-word-vectors
ws353_sim   similarity     similarity/EN-WS-353-SIM.txt                    203       Agirre et al. split
ws353_rel   similarity     similarity/EN-WS-353-REL.txt                    252
simlex999   similarity     similarity/EN-SIMLEX-999.txt                    999
rw          similarity     similarity/EN-RW-STANFORD.txt                   2034
men         similarity     similarity/EN-MEN-TR-3k.txt                     3000      natural form (see below)
rg65        similarity     similarity/EN-RG-65.txt                         65
simverb3500 similarity     similarity/EN-SimVerb-3500.txt                  3500      no final newline, CRLF
google      analogy        analogy/questions-words.txt                     19544     14 sections, first 5 semantic
msr         analogy        analogy/msr.csv                                 8000      vecto CSV: type,w1,w2,w3,target
semeval2012 relational     analogy/semeval2012_task2/                      3218      79 relations (10 train + 69 test)
ap          categorization categorization/ap.csv                           402       21 classes
battig      categorization categorization/battig.csv                       5231      56 classes, 946 multi-word items
esslli_n    categorization categorization/esslli2008_1a_nouns.tsv          44        6 classes (column ``class``)
esslli_v    categorization categorization/essli-2008.csv                   45        9 classes
========== ============== ============================================== ========= =================

Notes on fidelity:

- **MEN**: the file here is the *natural-form* MEN-3k (``sun sunlight 50.0``). The ``web`` benchmarks
  (used by SemGloVe and Context-to-Vec) load the *lemmatised* file (``sun-n sunlight-n``) and cut the
  POS suffix, so a handful of inflected words (plurals, verb forms) differ between the two. Scores on
  the two versions are close but not identical.
- **Battig**: ``web`` and ``vecto`` ship the same 5,231-row list (Battig & Montague norms, frequency > 1).
  A word listed under two categories is two items (as in ``web``); multi-word items ("star sapphire")
  are out of vocabulary for word-level embeddings and count as OOV.
- **ESSLLI 2008 nouns** (task 1a, 44 concrete nouns, 6 classes) come from ``cran/wordspace`` with a POS
  suffix (``chicken_N``) that is removed here; the 6-way ``class`` column is the gold labelling.
- **SemEval-2012 Task 2**: see :func:`parse_semeval2012` and :mod:`staticvec.evaluate.relational`.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from staticvec.errors import InputFileError, StaticvecError


# ------------------------------------------------------------------ parsed data


@dataclass
class SimilarityData:
    """Word pairs with a human score each."""

    pairs: list[tuple[str, str]]
    scores: np.ndarray


@dataclass
class AnalogyData:
    """Questions ``a : b :: c : d`` (``d`` is the answer), each with a section and a group."""

    questions: list[tuple[str, str, str, str]]
    sections: list[str]
    groups: list[str]  # google: semantic / syntactic; msr: adjective / noun / verb


@dataclass
class Relation:
    """One SemEval-2012 Task 2 relation (subcategory): paradigm pairs and the rated pairs."""

    id: str                    # e.g. "1a"
    broad: str                 # e.g. "CLASS-INCLUSION"
    name: str                  # e.g. "Taxonomic"
    split: str                 # "train" (10 relations) or "test" (69)
    prototypes: list[tuple[str, str]]
    pairs: list[tuple[str, str]]
    gold: np.ndarray           # MaxDiff scale: % most illustrative - % least illustrative
    gold_text: list[str]       # the ratings as printed (web ranks these strings, see relational.py)


@dataclass
class RelationalData:
    relations: list[Relation]


@dataclass
class CategorizationData:
    words: list[str]
    labels: list[str]
    blank_rows: int = 0


# ------------------------------------------------------------------ helpers


def _read_lines(path: Path):
    """Yield (line number, text without line end) of a UTF-8 file, naming bad bytes by line."""
    from staticvec.files import iter_utf8_lines

    yield from iter_utf8_lines(path)


def _number(path: Path, text: str, lineno: int, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputFileError(path, f"{what} {text!r} is not a number", lineno) from None
    if not math.isfinite(value):
        raise InputFileError(path, f"{what} {text!r} is not finite", lineno)
    return value


def _csv_rows(path: Path, header: list[str], delimiter: str = ","):
    """Yield (line number, fields) of a CSV/TSV file whose first row must equal ``header``."""
    lines = list(_read_lines(path))  # decoding checked line by line first
    reader = csv.reader(io.StringIO("\n".join(text for _, text in lines)), delimiter=delimiter)
    for row in reader:
        lineno = reader.line_num
        if lineno == 1:
            if [h.strip() for h in row] != header:
                raise InputFileError(path, f"expected the header {delimiter.join(header)!r}, found {delimiter.join(row)!r}", 1)
            continue
        if not row or all(not f.strip() for f in row):
            continue
        if len(row) != len(header):
            raise InputFileError(path, f"expected {len(header)} fields ({delimiter.join(header)}), found {len(row)}", lineno)
        yield lineno, [f.strip() for f in row]


# ------------------------------------------------------------------ parsers


def parse_similarity(path: Path) -> SimilarityData:
    """``word1 word2 score`` per line, tab- or space-separated; ``#`` lines are comments."""
    pairs, scores = [], []
    for lineno, line in _read_lines(path):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 3:
            raise InputFileError(path, f"expected 'word1 word2 score', found {len(fields)} fields", lineno)
        pairs.append((fields[0], fields[1]))
        scores.append(_number(path, fields[2], lineno, "score"))
    return SimilarityData(pairs, np.asarray(scores, dtype=np.float64))


def parse_google(path: Path) -> AnalogyData:
    """word2vec's ``questions-words.txt``: ``: section`` headers, then ``a b c d`` lines.

    The first five sections are semantic and the rest (``gram*``) syntactic, as in word2vec's
    ``compute-accuracy``, GloVe's ``evaluate.py`` and ``web``.
    """
    questions, sections, groups = [], [], []
    section, n_sections = None, 0
    for lineno, line in _read_lines(path):
        if not line.strip():
            continue
        if line.startswith(":"):
            section = line[1:].strip()
            if not section:
                raise InputFileError(path, "section header without a name", lineno)
            n_sections += 1
            continue
        if section is None:
            raise InputFileError(path, "question before the first ': section' header", lineno)
        words = line.split()
        if len(words) != 4:
            raise InputFileError(path, f"expected 4 words 'a b c d', found {len(words)}", lineno)
        questions.append(tuple(words))
        sections.append(section)
        groups.append("semantic" if n_sections <= 5 else "syntactic")
    return AnalogyData(questions, sections, groups)


_MSR_GROUPS = {"JJ": "adjective", "NN": "noun", "VB": "verb"}


def parse_msr(path: Path) -> AnalogyData:
    """The MSR syntactic analogies as ``vecto`` ships them: ``,type,word1,word2,word3,target``."""
    questions, sections, groups = [], [], []
    for lineno, row in _csv_rows(path, ["", "type", "word1", "word2", "word3", "target"]):
        kind, words = row[1], row[2:]
        if not re.fullmatch(r"(JJ|NN|VB)[A-Z]*_(JJ|NN|VB)[A-Z]*", kind):
            raise InputFileError(path, f"unknown question type {kind!r} (expected e.g. JJ_JJR, NN_NNS, VB_VBD)", lineno)
        if not all(words) or any(" " in w for w in words):
            raise InputFileError(path, f"expected four single words, found {words!r}", lineno)
        questions.append(tuple(words))
        sections.append(kind)
        groups.append(_MSR_GROUPS[kind[:2]])
    return AnalogyData(questions, sections, groups)


_GOLD_LINE = re.compile(r'^\s*(\S+)\s+"([^":]*):([^":]*)"\s*$')


def parse_semeval2012(path: Path) -> RelationalData:
    """SemEval-2012 Task 2: the official data package plus the gold-rating package.

    For each of the 79 relations (subcategories ``1a`` … ``10f``; 10 in ``Training``, 69 in
    ``Testing``) this reads

    - the *paradigm* pairs shown to the annotators (3 per relation; 4 or 5 for seven), from
      ``SemEval-2012-Complete-Data-Package/<split>/Phase1Questions/Phase1Questions-<id>.txt``
      (the lines after "Consider the following word pairs:"). These are the prototypes the
      pairs are compared with (``web`` takes the same three pairs from its own copy);
    - the rated pairs and their gold ratings from
      ``SemEval-2012-Gold-Ratings/<split>/GoldRatings-<id>.txt`` (``score "x:y"``), the
      organisers' conversion of the Phase 2 MaxDiff answers to a scale
      (% chosen most illustrative − % chosen least illustrative);
    - the names of the relations from ``subcategories-list.txt``.
    """
    root = Path(path)
    package = root / "SemEval-2012-Complete-Data-Package"
    gold_root = root / "SemEval-2012-Gold-Ratings"
    names_file = package / "subcategories-list.txt"
    if not names_file.exists():
        raise InputFileError(names_file, "SemEval-2012 subcategory list not found (is this the official data package?)")
    names = {}
    for lineno, line in _read_lines(names_file):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4 or not parts[0].isdigit() or not re.fullmatch(r"[a-z]", parts[1]):
            raise InputFileError(names_file, "expected 'number, letter, CATEGORY, Name'", lineno)
        names[parts[0] + parts[1]] = (parts[2], parts[3])
    relations = []
    for split, folder in (("train", "Training"), ("test", "Testing")):
        gold_dir = gold_root / folder
        if not gold_dir.is_dir():
            raise InputFileError(gold_dir, "gold-rating folder not found")
        for gold_file in sorted(gold_dir.glob("GoldRatings-*.txt"), key=_relation_order):
            rel_id = gold_file.stem.split("-", 1)[1]
            if rel_id not in names:
                raise InputFileError(gold_file, f"relation {rel_id!r} is not in {names_file}")
            question_file = package / folder / "Phase1Questions" / f"Phase1Questions-{rel_id}.txt"
            prototypes = _semeval_paradigms(question_file)
            pairs, gold, gold_text = [], [], []
            for lineno, line in _read_lines(gold_file):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                match = _GOLD_LINE.match(line)
                if not match or not match.group(2) or not match.group(3):
                    raise InputFileError(gold_file, 'expected a rating line \'score "x:y"\'', lineno)
                gold.append(_number(gold_file, match.group(1), lineno, "rating"))
                gold_text.append(match.group(1))
                pairs.append((match.group(2), match.group(3)))
            if not pairs:
                raise InputFileError(gold_file, "no rated pairs")
            broad, name = names[rel_id]
            relations.append(Relation(rel_id, broad, name, split, prototypes, pairs, np.asarray(gold), gold_text))
    if len(relations) != len(names):
        missing = sorted(set(names) - {r.id for r in relations}, key=_relation_order)
        raise InputFileError(gold_root, f"gold ratings missing for relations {', '.join(missing)}")
    return RelationalData(relations)


def _relation_order(item) -> tuple[int, str]:
    rel_id = item if isinstance(item, str) else Path(item).stem.split("-", 1)[1]
    match = re.fullmatch(r"(\d+)([a-z])", rel_id)
    return (int(match.group(1)), match.group(2)) if match else (10**6, rel_id)


def _semeval_paradigms(path: Path) -> list[tuple[str, str]]:
    """The paradigm pairs: the block of lines after "Consider the following word pairs:".

    A few files put two pairs on a line ("popular:shy. right:bad", "eat:satiation flee:escape")
    or a space after the colon ("bulwark: flimsy"); like ``web``, the block is read as pairs
    separated by spaces, commas or full stops.
    """
    if not path.exists():
        raise InputFileError(path, "Phase 1 question file (the paradigm pairs) not found")
    block, start, state = [], None, "before"
    for lineno, line in _read_lines(path):
        text = line.strip()
        if state == "before":
            if text.startswith("Consider the following word pairs"):
                state = "block"
            continue
        if not text:
            if block:
                break
            continue
        start = start or lineno
        block.append(text)
    pairs = []
    for token in re.split(r"[\s,]+", " ".join(block).replace(": ", ":")):
        token = token.strip(".")
        if not token:
            continue
        x, sep, y = token.partition(":")
        if not sep or not x or not y or ":" in y:
            raise InputFileError(path, f"expected paradigm pairs 'x:y', found {token!r}", start)
        pairs.append((x, y))
    if not pairs:
        raise InputFileError(path, "no paradigm pairs after 'Consider the following word pairs:'")
    return pairs


def parse_categorization_csv(path: Path) -> CategorizationData:
    """``vecto`` categorization CSV: ``,category,word``; rows with an empty word separate classes."""
    words, labels, blank = [], [], 0
    for lineno, row in _csv_rows(path, ["", "category", "word"]):
        category, word = row[1], row[2]
        if not category:
            raise InputFileError(path, "empty category", lineno)
        if not word:
            blank += 1
            continue
        words.append(word)
        labels.append(category)
    return CategorizationData(words, labels, blank)


def parse_esslli_nouns(path: Path) -> CategorizationData:
    """ESSLLI 2008 task 1a as converted from ``cran/wordspace``: ``word class class2 class3 freq.bnc``."""
    words, labels = [], []
    for lineno, row in _csv_rows(path, ["word", "class", "class2", "class3", "freq.bnc"], delimiter="\t"):
        word, label = row[0], row[1]
        match = re.fullmatch(r"(.+)_[A-Z]", word)
        if not match or not label:
            raise InputFileError(path, f"expected 'lemma_N<TAB>class…', found {word!r}", lineno)
        words.append(match.group(1))
        labels.append(label)
    return CategorizationData(words, labels)


# ------------------------------------------------------------------ registry


@dataclass(frozen=True)
class Dataset:
    """One evaluation data set, described once: everything else (the printed labels of tables, figures and
    model cards, the summary's columns, the resource groups an evaluation job waits for) is derived from
    :data:`DATASETS`. A new data set of an existing task is one entry here, its checksum in the group's
    checksum file and its record count in tests/test_evaluate_datasets.py (CONTRIBUTING.md's worked
    example 3); the run summary shows it without a sheet edit, a paper table or figure where a column names it."""

    name: str            # the result key (``staticvec evaluate intrinsic``'s JSON), the sheets' column paths
    task: str            # one of TASKS: which scorer of staticvec.evaluate.intrinsic reads it
    path: str            # relative to the data directory
    parser: Callable
    records: int         # pairs / questions / rated pairs / items in the distributed file
    label: str           # how it is printed (the transcribed paper tables' spelling, resources/paper_tables/)
    group: str           # the resource group of config/resources.yaml that holds (and checksums) its file
    classes: int | None = None
    extra: dict = field(default_factory=dict)
    in_summary: bool = True  # a column of the run summary's default table (figures sheet: summary.columns)


_SIMILARITY, _CATEGORIZATION = "eval-similarity", "eval-categorization"  # resource groups of several sets

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in [
        Dataset("ws353", "similarity", "similarity/EN-WS-353-ALL.txt", parse_similarity, 353, "WS353", _SIMILARITY),
        Dataset("ws353_sim", "similarity", "similarity/EN-WS-353-SIM.txt", parse_similarity, 203, "WS353S", _SIMILARITY),
        Dataset("ws353_rel", "similarity", "similarity/EN-WS-353-REL.txt", parse_similarity, 252, "WS353R", _SIMILARITY),
        Dataset("simlex999", "similarity", "similarity/EN-SIMLEX-999.txt", parse_similarity, 999, "SimLex-999", _SIMILARITY),
        Dataset("rw", "similarity", "similarity/EN-RW-STANFORD.txt", parse_similarity, 2034, "RW", _SIMILARITY),
        Dataset("men", "similarity", "similarity/EN-MEN-TR-3k.txt", parse_similarity, 3000, "MEN", _SIMILARITY),
        Dataset("rg65", "similarity", "similarity/EN-RG-65.txt", parse_similarity, 65, "RG-65", _SIMILARITY),
        Dataset("simverb3500", "similarity", "similarity/EN-SimVerb-3500.txt", parse_similarity, 3500, "SimVerb-3500", _SIMILARITY),
        Dataset("google", "analogy", "analogy/questions-words.txt", parse_google, 19544, "Google", "eval-analogy-google"),
        Dataset("msr", "analogy", "analogy/msr.csv", parse_msr, 8000, "MSR", "eval-analogy-msr"),
        Dataset("semeval2012", "relational", "analogy/semeval2012_task2", parse_semeval2012, 3218, "SemEval-2012",
                "eval-semeval2012", extra={"relations": 79}),
        Dataset("ap", "categorization", "categorization/ap.csv", parse_categorization_csv, 402, "AP", _CATEGORIZATION, classes=21),
        Dataset("battig", "categorization", "categorization/battig.csv", parse_categorization_csv, 5231, "Battig", _CATEGORIZATION,
                classes=56),
        Dataset("esslli_n", "categorization", "categorization/esslli2008_1a_nouns.tsv", parse_esslli_nouns, 44,
                "ESSLLI(N)", _CATEGORIZATION, classes=6),
        Dataset("esslli_v", "categorization", "categorization/essli-2008.csv", parse_categorization_csv, 45,
                "ESSLLI(V)", _CATEGORIZATION, classes=9),
    ]
}

def eval_groups() -> tuple[str, ...]:
    """The resource groups that hold the data sets, in the order of DATASETS (what an evaluation job waits for)."""
    return tuple(dict.fromkeys(d.group for d in DATASETS.values()))


def dataset_label(name: str) -> str:
    """The printed name of the data set ``name`` (``name`` itself when it is not one)."""
    return DATASETS[name].label if name in DATASETS else name


def summary_columns() -> list[str]:
    """The data sets the run summary shows by default, in the order of DATASETS."""
    return [d.name for d in DATASETS.values() if d.in_summary]


TASKS = ("similarity", "analogy", "relational", "categorization", "neighbours")


def datasets_for(selection) -> list[str]:
    """Dataset names for a selection of dataset names, task names and/or ``all`` (order kept)."""
    chosen: list[str] = []
    for item in selection or ["all"]:
        if item == "all":
            names = list(DATASETS)
        elif item in TASKS:
            names = [n for n, d in DATASETS.items() if d.task == item]
        elif item in DATASETS:
            names = [item]
        else:
            raise StaticvecError(
                f"unknown evaluation task or data set {item!r}; known tasks: {', '.join(TASKS)}; "
                f"data sets: {', '.join(DATASETS)}"
            )
        chosen += [n for n in names if n not in chosen]
    return chosen


def selected(tasks) -> tuple[list[str], bool]:
    """What a ``tasks`` list asks for: its data sets (:func:`datasets_for` of the items other than
    ``neighbours``; none when only ``neighbours`` is asked) and whether the neighbour lists are wanted
    (``all`` or ``neighbours``)."""
    tasks = list(tasks)
    rest = [t for t in tasks if t != "neighbours"]
    return (datasets_for(rest) if rest else []), ("all" in tasks or "neighbours" in tasks)


def words_of(data) -> list[str]:
    """Every word a data set asks about (pairs, questions, SemEval prototypes and pairs, items)."""
    if isinstance(data, SimilarityData):
        return [w for pair in data.pairs for w in pair]
    if isinstance(data, AnalogyData):
        return [w for question in data.questions for w in question]
    if isinstance(data, RelationalData):
        return [w for r in data.relations for pair in r.prototypes + r.pairs for w in pair]
    return list(data.words)


def evaluation_words(names: Iterable[str], data_dir: str | os.PathLike, lowercase: bool = True) -> list[str]:
    """The distinct words of the named data sets, in first-seen order (data sets in the given order)."""
    words: dict[str, None] = {}
    for name in names:
        for w in words_of(load_dataset(name, data_dir)):
            words.setdefault(w.lower() if lowercase else w, None)
    return list(words)


def load_dataset(name: str, data_dir: str | os.PathLike):
    """Parse data set ``name`` from ``data_dir``; a missing file is a clear error."""
    dataset = DATASETS[name]
    path = Path(data_dir) / dataset.path
    if not path.exists():
        raise InputFileError(path, f"data set {name!r} not found under the evaluation data directory {data_dir}")
    return dataset.parser(path)
