"""File names and command options of the post-processing rules, from the ``post`` config section.

A post-processed embedding is an entry of the embeddings sheet like any other (``method: retrofit`` or
``artetxe``, its ``base`` the embedding it reads, its ``params`` the kind, lexicon or alpha); the Artetxe alpha
sweep is the sheet's sweep over ``post.artetxe``'s range (``staticvec.sheets``).
"""

from __future__ import annotations

import os

RETROFIT_METHODS = {"faruqui": "faruqui", "student-t": "student_t"}  # step name -> config key


def _under(root: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(root, path)


def lexicon_file(config: dict, name: str, results_dir: str) -> str:
    """The lexicon file of lexicon ``name``: a resource file, or the WordNet lexicon the workflow builds."""
    entry = config["post"]["lexicons"][name]
    if "file" in entry:
        return _under(config["resources"]["download_dir"], entry["file"])
    return os.path.join(results_dir, "post", "lexicons", f"wordnet-{entry['wordnet']}.txt")


def wordnet_dir(config: dict) -> str:
    return _under(config["resources"]["download_dir"], config["post"].get("wordnet", {}).get("dir", "eval/wordnet"))


def wordnet_options(config: dict) -> str:
    return "--multiword" if config["post"].get("wordnet", {}).get("multiword", False) else ""


def retrofit_options(config: dict, step: str) -> str:
    """Command-line options of ``staticvec post retrofit`` for ``step`` (faruqui or student-t)."""
    post = config["post"]
    section = post[RETROFIT_METHODS[step]]
    options = [f"--method {step}"]
    for key in ("alpha", "beta", "iterations", "solver", "nu", "sigma", "distance"):
        if key in section:
            options.append(f"--{key} {section[key]}")
    options.append(f"--duplicate-heads {post.get('duplicate_heads', 'merge')}")
    options.append("--normalize" if post.get("normalize", True) else "--no-normalize")
    options.append("--lowercase" if post.get("lowercase", True) else "--no-lowercase")
    return " ".join(options)


def artetxe_options(config: dict) -> str:
    section = config["post"]["artetxe"]
    return " ".join(
        [f"--basis {section.get('basis', 'eigen')}", "--normalize" if section.get("normalize", False) else "--no-normalize"]
    )


