"""Sequence-labelling data sets: readers for their file formats and the train/dev/test splits.

Tasks and the data each accepts (``load_task(task, fmt, directory)``):

========= =============== ==============================================================
task      format          files in the directory
========= =============== ==============================================================
chunk     ``conll2000``   ``train.txt``, ``test.txt``: ``word POS chunk`` per line, blank
                          line between sentences. No dev split exists: a fixed, seeded
                          ``dev_fraction`` of the training sentences is held out as dev.
pos       ``ptb``         Penn Treebank WSJ, standard split 00-18 / 19-21 / 22-24, as one of
                          (a) ``train.*``, ``dev.*``, ``test.*`` column files (already split);
                          (b) per-section column files named ``NN.*``, ``wsj_NN.*``,
                          ``secNN.*`` or ``sectionNN.*``;
                          (c) section folders ``00/`` ... ``24/`` (LDC ``parsed/mrg/wsj``)
                          holding ``*.mrg`` bracketed trees or column files.
                          Column files: ``word TAB tag`` (or space) per line, blank line
                          between sentences. Trees: -NONE- traces are dropped.
pos       ``ud``          Universal Dependencies ``*-ud-{train,dev,test}.conllu``; the tag is
                          the XPOS column (Penn Treebank tags in UD English EWT).
ner       ``conll2003``   ``eng.train``, ``eng.testa`` (dev), ``eng.testb`` (test), or
                          ``train.txt``, ``valid.txt``, ``test.txt``: ``word POS chunk NER``;
                          ``-DOCSTART-`` lines skipped; IOB1 tags converted to IOB2.
ner       ``ontonotes``   ``train.*``, ``dev.*`` (or ``development.*``), ``test.*`` column files
                          with the word first and the BIO/IOB1/BIOES tag last, or folders
                          ``train/``, ``development/``, ``test/`` of CoNLL-2012
                          ``*gold_conll`` files (bracketed named-entity column 11).
========= =============== ==============================================================

Every reader is strict: a line with the wrong number of columns, a missing file or a missing
section raises :class:`InputFileError` / :class:`StaticvecError` naming the file and line.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, NamedTuple

from staticvec.errors import InputFileError, StaticvecError
from staticvec.files import open_any

TASKS = ("chunk", "pos", "ner")
FORMATS = ("conll2000", "ud", "ptb", "conll2003", "ontonotes")
TASK_FORMATS = {"chunk": ("conll2000",), "pos": ("ptb", "ud"), "ner": ("conll2003", "ontonotes")}
# Token accuracy for POS; chunk-level F1 (conlleval) for the span tasks.
TASK_METRIC = {"chunk": "f1", "pos": "accuracy", "ner": "f1"}
SOURCE_NAMES = {
    "conll2000": "CoNLL-2000",
    "ud": "UD English EWT (PTB XPOS)",
    "ptb": "PTB WSJ",
    "conll2003": "CoNLL-2003 English",
    "ontonotes": "OntoNotes",
}
PTB_SPLIT = {"train": range(0, 19), "dev": range(19, 22), "test": range(22, 25)}


class Sentence(NamedTuple):
    words: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass
class TaskData:
    """One task's three splits and where they came from."""

    task: str
    fmt: str
    train: list[Sentence]
    dev: list[Sentence]
    test: list[Sentence]
    files: dict[str, list[str]] = field(default_factory=dict)
    dev_note: str | None = None

    @property
    def source(self) -> str:
        return SOURCE_NAMES[self.fmt]

    @property
    def metric(self) -> str:
        return TASK_METRIC[self.task]

    def splits(self) -> dict[str, list[Sentence]]:
        return {"train": self.train, "dev": self.dev, "test": self.test}

    def tagset(self) -> list[str]:
        """All tags of the three splits, sorted (a tag seen only in dev/test still gets an id)."""
        return sorted({t for split in self.splits().values() for s in split for t in s.tags})

    def describe(self) -> dict:
        return {
            "task": self.task,
            "format": self.fmt,
            "source": self.source,
            "metric": self.metric,
            "sentences": {k: len(v) for k, v in self.splits().items()},
            "tokens": {k: sum(len(s.words) for s in v) for k, v in self.splits().items()},
            "files": self.files,
            "dev": self.dev_note or "the data set's own dev split",
        }


# ------------------------------------------------------------------ tag schemes
def to_iob2(tags: Iterable[str]) -> list[str]:
    """Convert IOB1, IOB2, IOBES/BIOES tags to IOB2 (BIO): every chunk starts with B-.

    In IOB1 a chunk starts with I- unless it follows a chunk of the same type; E- ends and
    S- is a single-token chunk in IOBES. IOB2 input comes back unchanged.
    """
    out: list[str] = []
    prev_type = None  # type of the chunk open at the previous token, None after O / chunk end
    for tag in tags:
        if tag == "O" or "-" not in tag:
            out.append(tag)
            prev_type = None
            continue
        prefix, kind = tag.split("-", 1)
        if prefix == "B" or prefix == "S" or (prefix in ("I", "E") and prev_type != kind):
            out.append("B-" + kind)
        elif prefix in ("I", "E"):
            out.append("I-" + kind)
        else:
            raise ValueError(f"unknown chunk tag {tag!r}")
        prev_type = None if prefix in ("E", "S") else kind
    return out


# ------------------------------------------------------------------ file readers
def read_columns(path, n_columns: int | None = None, tag_column: int = -1, word_column: int = 0) -> list[Sentence]:
    """Whitespace-separated columns, one token a line, sentences separated by blank lines.

    ``n_columns`` (default: that of the first line) must hold on every line. ``-DOCSTART-``
    lines (CoNLL-2003) and the empty "sentence" they form are skipped.
    """
    sentences: list[Sentence] = []
    words: list[str] = []
    tags: list[str] = []
    with open_any(path, "rt") as fh:
        for lineno, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                if words:
                    sentences.append(Sentence(tuple(words), tuple(tags)))
                    words, tags = [], []
                continue
            if fields[0] == "-DOCSTART-":
                continue
            if n_columns is None:
                n_columns = len(fields)
                if n_columns < 2:
                    raise InputFileError(path, f"expected at least 2 columns (word ... tag), got {line.strip()!r}", lineno)
            if len(fields) != n_columns:
                raise InputFileError(path, f"expected {n_columns} columns, found {len(fields)}: {line.strip()[:80]!r}", lineno)
            words.append(fields[word_column])
            tags.append(fields[tag_column])
    if words:
        sentences.append(Sentence(tuple(words), tuple(tags)))
    if not sentences:
        raise InputFileError(path, "no sentences found")
    return sentences


def read_conllu_xpos(path) -> list[Sentence]:
    """CoNLL-U sentences with their XPOS tags; multiword-token and empty-node lines skipped."""
    sentences: list[Sentence] = []
    words: list[str] = []
    tags: list[str] = []
    with open_any(path, "rt") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                if words:
                    sentences.append(Sentence(tuple(words), tuple(tags)))
                    words, tags = [], []
                continue
            if line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 10:
                raise InputFileError(path, f"CoNLL-U needs 10 tab-separated columns, found {len(fields)}", lineno)
            if not fields[0].isdigit():  # 3-4 (multiword token) or 5.1 (empty node)
                continue
            if fields[4] in ("_", ""):
                raise InputFileError(path, f"token {fields[1]!r} has no XPOS tag (column 5)", lineno)
            words.append(fields[1])
            tags.append(fields[4])
    if words:
        sentences.append(Sentence(tuple(words), tuple(tags)))
    if not sentences:
        raise InputFileError(path, "no sentences found")
    return sentences


_LEAF = re.compile(r"\(([^\s()]+)\s+([^\s()]+)\)")


def read_bracketed_trees(path) -> list[Sentence]:
    """Penn Treebank ``.mrg`` trees: the (TAG word) leaves of each top-level tree, traces dropped."""
    with open_any(path, "rt") as fh:
        text = fh.read()
    sentences: list[Sentence] = []
    depth, start, line, start_line = 0, None, 1, 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "(":
            if depth == 0:
                start, start_line = i, line
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise InputFileError(path, "unbalanced ')'", line)
            if depth == 0:
                leaves = [(tag, word) for tag, word in _LEAF.findall(text[start : i + 1]) if tag != "-NONE-"]
                if leaves:
                    sentences.append(Sentence(tuple(w for _, w in leaves), tuple(t for t, _ in leaves)))
    if depth != 0:
        raise InputFileError(path, "unbalanced '(': tree not closed at end of file", start_line)
    if not sentences:
        raise InputFileError(path, "no trees found")
    return sentences


def _bracketed_ne_to_iob2(path, column: list[str], lineno0: int) -> list[str]:
    """CoNLL-2012 named-entity column: ``(PERSON*``, ``*``, ``*)``, ``(GPE)`` → IOB2."""
    tags, current = [], None
    for k, cell in enumerate(column):
        if cell.startswith("("):
            kind = cell[1:].rstrip("*)")
            tags.append("B-" + kind)
            current = None if cell.endswith(")") else kind
        elif current is not None:
            tags.append("I-" + current)
            if cell.endswith(")"):
                current = None
        elif cell.endswith(")") or cell != "*":
            raise InputFileError(path, f"named-entity cell {cell!r} closes no open entity", lineno0 + k)
        else:
            tags.append("O")
    return tags


def read_conll2012(path) -> list[Sentence]:
    """CoNLL-2012 ``*gold_conll`` files: word in column 4, bracketed named entities in column 11."""
    sentences: list[Sentence] = []
    words: list[str] = []
    cells: list[str] = []
    first_line = 0

    def flush():
        if words:
            sentences.append(Sentence(tuple(words), tuple(_bracketed_ne_to_iob2(path, cells, first_line))))

    with open_any(path, "rt") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.startswith("#"):
                continue
            fields = line.split()
            if not fields:
                flush()
                words, cells = [], []
                continue
            if len(fields) < 11:
                raise InputFileError(path, f"CoNLL-2012 lines need at least 11 columns, found {len(fields)}", lineno)
            if not words:
                first_line = lineno
            words.append(fields[3])
            cells.append(fields[10])
    flush()
    if not sentences:
        raise InputFileError(path, "no sentences found")
    return sentences


# ------------------------------------------------------------------ data sets
def _require_dir(directory, what: str) -> Path:
    directory = Path(directory)
    if not directory.is_dir():
        raise StaticvecError(f"{directory}: {what} directory not found")
    return directory


def _find_one(directory: Path, patterns: Iterable[str], what: str) -> Path:
    tried = []
    for pattern in patterns:
        hits = sorted(p for p in directory.glob(pattern) if p.is_file())
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise StaticvecError(f"{directory}: several files match {pattern!r} for the {what} split: {', '.join(h.name for h in hits)}")
        tried.append(pattern)
    raise StaticvecError(f"{directory}: no {what} file (looked for {', '.join(tried)})")


def hold_out_dev(train: list[Sentence], fraction: float, seed: int) -> tuple[list[Sentence], list[Sentence]]:
    """Split off a fixed random ``fraction`` of the training sentences as dev (same for every run seed)."""
    if not 0 < fraction < 1:
        raise StaticvecError(f"dev_fraction must be in (0, 1), got {fraction}")
    order = list(range(len(train)))
    random.Random(seed).shuffle(order)
    n_dev = max(1, round(fraction * len(train)))
    dev_ids = set(order[:n_dev])
    return [s for i, s in enumerate(train) if i not in dev_ids], [train[i] for i in sorted(dev_ids)]


def load_conll2000(directory, dev_fraction: float = 0.1, dev_seed: int = 2000) -> TaskData:
    directory = _require_dir(directory, "CoNLL-2000")
    train_path = _find_one(directory, ["train.txt", "train.txt.gz"], "train")
    test_path = _find_one(directory, ["test.txt", "test.txt.gz"], "test")
    train = read_columns(train_path, n_columns=3)
    test = read_columns(test_path, n_columns=3)
    train, dev = hold_out_dev(train, dev_fraction, dev_seed)
    return TaskData(
        "chunk", "conll2000", train, dev, test,
        files={"train": [str(train_path)], "test": [str(test_path)]},
        dev_note=f"{dev_fraction:g} of the training sentences held out (split seed {dev_seed})",
    )


def load_ud(directory) -> TaskData:
    directory = _require_dir(directory, "Universal Dependencies")
    paths = {split: _find_one(directory, [f"*-ud-{split}.conllu", f"*-ud-{split}.conllu.gz"], split) for split in ("train", "dev", "test")}
    splits = {split: read_conllu_xpos(path) for split, path in paths.items()}
    return TaskData("pos", "ud", **splits, files={k: [str(v)] for k, v in paths.items()})


_SECTION_FILE = re.compile(r"^(?:wsj[_-]?|sec(?:tion)?[_-]?)?(\d{2})(?:[._-].*)?$", re.IGNORECASE)
_MRG_FILE = re.compile(r"^wsj_(\d{2})\d{2}\.mrg$", re.IGNORECASE)


def _read_ptb_file(path: Path) -> list[Sentence]:
    return read_bracketed_trees(path) if path.suffix.lower() == ".mrg" else read_columns(path, n_columns=2)


def load_ptb(directory) -> TaskData:
    """Penn Treebank WSJ POS in one of the layouts of the module doc, split 00-18 / 19-21 / 22-24."""
    directory = _require_dir(directory, "Penn Treebank WSJ")
    names = {p.name.lower(): p for p in directory.iterdir()}
    split_files = {s: sorted(p for n, p in names.items() if p.is_file() and n.split(".")[0] == s) for s in ("train", "dev", "test")}
    if all(split_files.values()):
        files = {s: [_only(directory, v, s)] for s, v in split_files.items()}
        return TaskData("pos", "ptb", **{s: read_columns(f[0], n_columns=2) for s, f in files.items()},
                        files={s: [str(f[0])] for s, f in files.items()})
    # Section folders or per-section files; a folder's name or a file's name gives the section.
    sections: dict[int, list[Path]] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        section = None
        if path.parent != directory and re.fullmatch(r"\d{2}", path.parent.name):
            section = int(path.parent.name)
        elif (m := _MRG_FILE.match(path.name)) or (path.parent == directory and (m := _SECTION_FILE.match(path.name))):
            section = int(m.group(1))
        if section is not None:
            sections.setdefault(section, []).append(path)
    missing = [f"{s:02d}" for s in range(25) if s not in sections]
    if missing:
        raise StaticvecError(
            f"{directory}: not a Penn Treebank WSJ POS directory I can read: sections {', '.join(missing)} are missing. "
            "Accepted: train.*/dev.*/test.* column files (word TAB tag); per-section column files 00.* ... 24.* "
            "(or wsj_NN.*, secNN.*); or section folders 00/ ... 24/ of .mrg trees or column files"
        )
    splits = {s: [sent for sec in secs for path in sections[sec] for sent in _read_ptb_file(path)] for s, secs in PTB_SPLIT.items()}
    files = {s: [str(p) for sec in secs for p in sections[sec]] for s, secs in PTB_SPLIT.items()}
    return TaskData("pos", "ptb", **splits, files=files)


def _only(directory: Path, paths: list[Path], split: str) -> Path:
    if len(paths) > 1:
        raise StaticvecError(f"{directory}: several {split} files: {', '.join(p.name for p in paths)}")
    return paths[0]


def load_conll2003(directory) -> TaskData:
    directory = _require_dir(directory, "CoNLL-2003")
    patterns = {"train": ["eng.train", "train.txt"], "dev": ["eng.testa", "valid.txt", "dev.txt"], "test": ["eng.testb", "test.txt"]}
    paths = {s: _find_one(directory, p, s) for s, p in patterns.items()}
    splits = {}
    for split, path in paths.items():
        sentences = read_columns(path, n_columns=4)
        splits[split] = [Sentence(s.words, tuple(_iob2(path, s.tags))) for s in sentences]
    return TaskData("ner", "conll2003", **splits, files={k: [str(v)] for k, v in paths.items()})


def _iob2(path, tags) -> list[str]:
    try:
        return to_iob2(tags)
    except ValueError as exc:
        raise InputFileError(path, str(exc)) from None


def load_ontonotes(directory) -> TaskData:
    directory = _require_dir(directory, "OntoNotes")
    folder_names = {"train": ["train"], "dev": ["development", "dev"], "test": ["test"]}
    folders = {s: next((directory / n for n in names if (directory / n).is_dir()), None) for s, names in folder_names.items()}
    if all(folders.values()):
        files = {s: sorted(folder.rglob("*gold_conll")) for s, folder in folders.items()}
        for split, paths in files.items():
            if not paths:
                raise StaticvecError(f"{folders[split]}: no *gold_conll files for the {split} split")
        splits = {s: [sent for p in paths for sent in read_conll2012(p)] for s, paths in files.items()}
        return TaskData("ner", "ontonotes", **splits, files={s: [str(p) for p in v] for s, v in files.items()})
    patterns = {"train": ["train.*"], "dev": ["dev.*", "development.*"], "test": ["test.*"]}
    paths = {s: _find_one(directory, p, s) for s, p in patterns.items()}
    splits = {}
    for split, path in paths.items():
        splits[split] = [Sentence(s.words, tuple(_iob2(path, s.tags))) for s in read_columns(path)]
    return TaskData("ner", "ontonotes", **splits, files={k: [str(v)] for k, v in paths.items()})


def detect_format(task: str, directory) -> str:
    """The data format of ``directory`` for ``task``, from the files it holds."""
    directory = _require_dir(directory, f"{task} data")
    names = {p.name for p in directory.iterdir()}
    if task == "chunk":
        return "conll2000"
    if task == "pos":
        return "ud" if any(n.endswith((".conllu", ".conllu.gz")) for n in names) else "ptb"
    if task == "ner":
        return "conll2003" if names & {"eng.train", "eng.testa", "eng.testb", "valid.txt"} else "ontonotes"
    raise StaticvecError(f"unknown task {task!r}; known: {', '.join(TASKS)}")


def load_task(task: str, directory, fmt: str = "auto", dev_fraction: float = 0.1, dev_seed: int = 2000) -> TaskData:
    """Read ``task``'s data from ``directory`` (format ``fmt`` or detected from the files)."""
    if task not in TASKS:
        raise StaticvecError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    if fmt == "auto":
        fmt = detect_format(task, directory)
    if fmt not in TASK_FORMATS[task]:
        raise StaticvecError(f"data format {fmt!r} does not fit task {task!r}; allowed: {', '.join(TASK_FORMATS[task])}")
    if fmt == "conll2000":
        return load_conll2000(directory, dev_fraction, dev_seed)
    loader = {"ud": load_ud, "ptb": load_ptb, "conll2003": load_conll2003, "ontonotes": load_ontonotes}[fmt]
    return loader(directory)
