"""From tokenized input files to the prepared corpus: token budget, equal shards, counts, manifest.

Tokenizing is one job per input file (parallel, resumable: a finished file is never redone).
Preparing streams those files in order, stops at the paragraph that reaches the token
budget, and deals whole paragraphs into ``n_shards`` shards of nearly equal token count
(so the first k of n shards are the fraction k/n of the corpus used by corpus-size studies).
It also writes word counts per shard and in total, and the manifest.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from staticvec.corpus.shards import Sentence, iter_records
from staticvec.corpus.formats import SourceFormat, input_files, iter_input_documents
from staticvec.corpus.tokenize import TokenizerSettings, make_nlp, tokenize_documents
from staticvec.corpus.vocab import Vocabulary
from staticvec.errors import StaticvecError
from staticvec.files import atomic_open, read_json, write_json


@dataclass
class Stats:
    articles: int = 0
    paragraphs: int = 0
    sentences: int = 0  # training sentences (keep = 1)
    context_sentences: int = 0  # kept only as paragraph context
    tokens: int = 0  # tokens of training sentences
    _articles: set = field(default_factory=set, repr=False)

    def add_paragraph(self, sentences: list[Sentence]) -> None:
        self._articles.add(sentences[0].article)
        self.articles = len(self._articles)
        self.paragraphs += 1
        for s in sentences:
            if s.keep:
                self.sentences += 1
                self.tokens += len(s.tokens)
            else:
                self.context_sentences += 1

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("_articles")
        return d


def tokenize_file(source: str | os.PathLike, out: str | os.PathLike, stats_out: str | os.PathLike,
                  settings: TokenizerSettings, n_process: int = 1, source_format: SourceFormat | None = None) -> dict:
    """Tokenize one corpus input: a file, or every file of a directory (an extracted dump's), read as
    ``source_format`` says (default: WikiExtractor files)."""
    source = Path(source)
    source_format = source_format or SourceFormat()
    files = input_files(source, source_format)
    nlp = make_nlp(settings.split_hyphens, settings.language)
    stats = Stats()
    removed = {"paragraphs": 0, "sentences": 0, "tokens": 0}
    documents = iter_input_documents(source, source_format)
    with atomic_open(out, "wt") as fh:
        for paragraph in group_paragraphs(tokenize_documents(documents, settings, nlp, n_process=n_process,
                                                             removed=removed)):
            stats.add_paragraph(paragraph)
            fh.writelines(s.to_line() for s in paragraph)
    result = {"source": str(source), "files": len(files), **stats.as_dict(), "settings": asdict(settings),
              "format": asdict(source_format), "paragraph_filter_removed": removed}
    write_json(stats_out, result)
    return result


def group_paragraphs(sentences: Iterable[Sentence]) -> Iterator[list[Sentence]]:
    """Consecutive sentences of the same (article, paragraph) as one list."""
    current: list[Sentence] = []
    for s in sentences:
        if current and (s.article, s.paragraph) != (current[0].article, current[0].paragraph):
            yield current
            current = []
        current.append(s)
    if current:
        yield current


def prepare_corpus(tokenized: list[str | os.PathLike], stats_files: list[str | os.PathLike], out_dir: str | os.PathLike,
                   n_shards: int, max_tokens: int | None, min_count: int, description: dict | None = None) -> dict:
    """Write ``out_dir/shards/NNNNN.tsv.gz`` (+ ``.counts.tsv``), ``counts.tsv`` and ``manifest.json``."""
    out_dir = Path(out_dir)
    available = sum(read_json(p)["tokens"] for p in stats_files)
    budget = available if max_tokens is None else min(max_tokens, available)
    if budget == 0:
        raise StaticvecError(empty_corpus_message([read_json(p) for p in stats_files]))
    shard_stats = [Stats() for _ in range(n_shards)]
    shard_counts = [Counter() for _ in range(n_shards)]
    shard_paths = [out_dir / "shards" / f"{k:05d}.tsv.gz" for k in range(n_shards)]
    total = Stats()
    with contextlib.ExitStack() as stack:  # every shard is renamed into place only if all succeed
        handles = [stack.enter_context(atomic_open(p, "wt")) for p in shard_paths]
        for paragraph in _paragraphs_within_budget(tokenized, budget, total):
            k = min(n_shards - 1, (total.tokens - _kept_tokens(paragraph)) * n_shards // budget)
            handles[k].writelines(s.to_line() for s in paragraph)
            shard_stats[k].add_paragraph(paragraph)
            for s in paragraph:
                if s.keep:
                    shard_counts[k].update(s.tokens)
    counts = Counter()
    for k, c in enumerate(shard_counts):
        Vocabulary.from_counts(c).save(out_dir / "shards" / f"{k:05d}.counts.tsv")
        counts.update(c)
    Vocabulary.from_counts(counts).save(out_dir / "counts.tsv")
    vocab_size = sum(1 for c in counts.values() if c >= min_count)
    manifest = {
        "description": description or {},
        "budget_tokens": max_tokens,
        "available_tokens": available,
        "totals": {**total.as_dict(), "types": len(counts), "vocabulary": vocab_size, "min_count": min_count},
        "shards": [{"file": p.name, **s.as_dict()} for p, s in zip(shard_paths, shard_stats)],
        "inputs": [str(p) for p in tokenized],
    }
    write_json(out_dir / "manifest.json", manifest)
    return manifest


def empty_corpus_message(stats: list[dict]) -> str:
    """Why no training sentence is left, from the tokenize jobs' stats: which inputs, and what each filter removed."""
    removed = {key: sum(st.get("paragraph_filter_removed", {}).get(key, 0) for st in stats)
               for key in ("paragraphs", "sentences", "tokens")}
    settings = stats[0].get("settings", {}) if stats else {}
    sources = [st.get("source", "?") for st in stats]
    shown = ", ".join(sources[:5]) + (f" and {len(sources) - 5} more" if len(sources) > 5 else "")
    lo, hi = settings.get("min_sentence_tokens"), settings.get("max_sentence_tokens")
    if removed["paragraphs"]:
        why = (f"the paragraph filter (config corpus.paragraph_filter: at least {settings.get('min_paragraph_sentences')} "
               f"sentences and {settings.get('min_paragraph_chars')} characters) removed the {removed['paragraphs']} "
               f"paragraph(s) that had any ({removed['sentences']} sentences, {removed['tokens']} tokens); null keeps "
               "every paragraph (with corpus.paragraphs: lines, each line is a paragraph)")
    else:
        why = (f"no paragraph holds a sentence of {lo}-{hi} tokens (config corpus.min_sentence_tokens and "
               "max_sentence_tokens)")
    return f"empty corpus: the {len(stats)} input(s) ({shown}) leave no training sentence after filtering: {why}"


def _kept_tokens(paragraph: list[Sentence]) -> int:
    return sum(len(s.tokens) for s in paragraph if s.keep)


def _paragraphs_within_budget(tokenized, budget: int, total: Stats) -> Iterator[list[Sentence]]:
    """Paragraphs of the inputs in order, up to and including the one that reaches ``budget``.

    ``total`` is updated before each paragraph is yielded.
    """
    for path in tokenized:
        for paragraph in group_paragraphs(iter_records(path)):
            total.add_paragraph(paragraph)
            yield paragraph
            if total.tokens >= budget:
                return


def build_vocabulary(count_files: list[str | os.PathLike], out: str | os.PathLike, min_count: int,
                     max_size: int | None = None) -> Vocabulary:
    from staticvec.corpus.vocab import merge_count_files

    vocab = Vocabulary.from_counts(merge_count_files(count_files), min_count=min_count, max_size=max_size)
    vocab.save(out)
    return vocab
