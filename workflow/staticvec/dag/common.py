"""What every planning object needs of the corpus and the teachers, written once: the corpus' shard and
vocabulary files, the shards of a corpus fraction, the vocabulary, device and online flags, a teacher
id's model, and the wildcard constraint matching one of a list of ids."""

from __future__ import annotations

import re

from staticvec.errors import StaticvecError


def corpus_shard(results_dir: str, shard: str) -> str:
    return f"{results_dir}/corpus/shards/{shard}.tsv.gz"


def corpus_vocab(results_dir: str, min_count, frac: str = "") -> str:
    """The vocabulary of the whole corpus (``frac`` '') or of a fraction ('.KofN': words counted in its
    first K of N shards only, as if the fraction were the corpus)."""
    return f"{results_dir}/corpus/vocab.min{min_count}{frac}.tsv"


def fraction_shard_ids(frac: str, n_shards: int) -> list[str]:
    """The corpus shards of a fraction suffix: '' = all of them, '.KofN' = the first K/N of them."""
    if not frac:
        return [f"{i:05d}" for i in range(n_shards)]
    match = re.fullmatch(r"\.(\d+)of(\d+)", frac)
    if not match:
        raise StaticvecError(f"corpus fraction {frac!r}: expected .KofN")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n or (k * n_shards) % n:
        raise StaticvecError(f"corpus fraction {k}/{n} is not a whole number of the {n_shards} corpus shards "
                             "(config corpus.shards)")
    return [f"{i:05d}" for i in range(k * n_shards // n)]


def leading_shards_for_sentences(config: dict, n_shards: int, sentences: int | None) -> int:
    """How many leading shards of ``n_shards`` surely hold ``sentences`` training sentences: every kept sentence
    has at most ``corpus.max_sentence_tokens`` tokens, and a shard holds the planned tokens / shards
    (``corpus.max_tokens``, else ``plan.corpus_tokens``; all shards when neither is set). From the config
    alone, so that a resumed run plans the same inputs as the first (not from the corpus manifest)."""
    corpus = config["corpus"]
    tokens = corpus.get("max_tokens") or config.get("plan", {}).get("corpus_tokens")
    if not sentences or not tokens:
        return n_shards
    per_shard = float(tokens) / int(corpus["shards"])
    needed = -(-int(sentences) * int(corpus.get("max_sentence_tokens") or 40) // max(1, int(per_shard)))
    return max(1, min(n_shards, needed))


def temporary(path: str, deleted_once_read: bool):
    """``path`` as a rule's output, marked temporary (Snakemake's ``temp()``: deleted once every job that
    reads it has run) when ``deleted_once_read``; the plain path otherwise (the laptop default keeps it)."""
    if not deleted_once_read:
        return path
    from snakemake.io import temp

    return temp(path)


def vocab_args(config: dict) -> list[str]:
    """--min-count / --max-vocab of the corpus vocabulary, for every command that reads it."""
    corpus = config["corpus"]
    args = ["--min-count", str(corpus["min_count"])]
    if corpus.get("max_vocab"):
        args += ["--max-vocab", str(corpus["max_vocab"])]
    return args


def device_flags(config: dict) -> list[str]:
    """--device of every job that runs torch: the run's ``device`` (auto: CUDA where torch sees one)."""
    return ["--device", config.get("device", "auto")]


def online_flags(config: dict) -> list[str]:
    """--online for every job that loads a teacher, where ``teacher.offline`` is false (offline by default)."""
    return [] if config.get("teacher", {}).get("offline", True) else ["--online"]


def teacher_model(config: dict, teacher_id: str) -> str:
    """The model (hub name, alias or directory) of a teacher id of config teacher.models."""
    try:
        return config["teacher"]["models"][teacher_id]
    except KeyError:
        raise StaticvecError(f"teacher {teacher_id!r} is not in config teacher.models "
                             f"({', '.join(config['teacher']['models'])})") from None


def alternatives(names) -> str:
    """A wildcard constraint matching exactly one of ``names`` (longest first; none: matches nothing)."""
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "(?!)"
