"""``staticvec post``: retrofitting, Artetxe et al.'s transform, and the WordNet lexicon."""

from __future__ import annotations

import argparse
import logging

from staticvec.cli_args import add_format_arg, add_group, add_out_arg, add_seed_arg

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    steps = add_group(subparsers, "post", help="post-process an embedding (retrofitting, Artetxe et al.) or build a lexicon",
                      dest="post_command")

    p = steps.add_parser(
        "retrofit",
        help="retrofit vectors to synonym lexicons (Faruqui et al. or Context-to-Vec's Student-t weights)",
        description="Retrofit vectors to one or more lexicons (Faruqui's format: 'word neighbour ...' per line; "
        "several lexicons are merged). Defaults are the papers' and released code's values.",
    )
    p.add_argument("--vectors", required=True, help="input embedding file")
    add_format_arg(p, flag="--vectors-format", help="input format (default: from the file name)")
    p.add_argument("--lexicon", required=True, action="append", help="lexicon file (repeat to merge several)")
    p.add_argument("--method", choices=("faruqui", "student-t"), default="faruqui",
                   help="Faruqui et al. retrofitting (default) or Context-to-Vec's Student-t graph retrofitting")
    p.add_argument("--iterations", type=int, default=10, help="sweeps over the graph (released code: 10)")
    p.add_argument("--alpha", type=float, help="weight of the original vector (default: faruqui 1, student-t 0.5)")
    p.add_argument("--beta", type=float, help="total weight of the neighbours (default: faruqui 1 (= 1/degree per edge), student-t 0.5)")
    p.add_argument("--nu", type=float, default=100.0, help="Student-t degrees of freedom (released code: 100)")
    p.add_argument("--sigma", type=float, default=1.0, help="Student-t scale (released code: 1)")
    p.add_argument(
        "--distance", choices=("original", "current"), default="original",
        help="Student-t distance from the word's original vector (released code) or its current one",
    )
    p.add_argument(
        "--solver", choices=("jacobi", "gauss-seidel"), default="jacobi",
        help="jacobi: all words from the previous sweep; gauss-seidel: in place, as the released code (same fixed point)",
    )
    add_seed_arg(p, default=0, help="seed of the Gauss-Seidel order")
    p.add_argument(
        "--duplicate-heads", choices=("merge", "last"), default="merge",
        help="a head on several lexicon lines: merge the lists, or keep the last line (released code)",
    )
    p.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=True,
                   help="L2-normalise vectors first (released code: yes)")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True, help="lower-case words first (released code: yes)")
    add_out_arg(p, help="output embedding file")
    add_format_arg(p, flag="--out-format", help="output format (default: from the file name)")
    p.add_argument("--report", help="also write a JSON summary (coverage, change per sweep) here")
    p.set_defaults(handler=_retrofit)

    p = steps.add_parser(
        "artetxe",
        help="Artetxe et al. (2018): X·Q·Λ^α from the eigen-decomposition of XᵀX",
    )
    p.add_argument("--vectors", required=True, help="input embedding file")
    add_format_arg(p, flag="--vectors-format", help="input format (default: from the file name)")
    p.add_argument("--alpha", type=float, required=True, help="exponent α (the paper sweeps −1 … 1)")
    p.add_argument(
        "--basis", choices=("eigen", "original"), default="eigen",
        help="eigen: X·Q·Λ^α (paper, released code); original: rotated back, X·(XᵀX)^α",
    )
    p.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=False,
                   help="L2-normalise vectors first (released code: no)")
    add_out_arg(p, help="output embedding file")
    add_format_arg(p, flag="--out-format", help="output format (default: from the file name)")
    p.set_defaults(handler=_artetxe)

    p = steps.add_parser("wordnet-lexicon", help="build a WordNet synonym lexicon (Faruqui's format) from the WordNet 3.0 database")
    p.add_argument("--wordnet-dir", required=True, help="directory with data.noun, data.verb, data.adj, data.adv")
    p.add_argument(
        "--relations", choices=("synonyms", "synonyms+"), default="synonyms",
        help="synonyms: other lemmas of the word's synsets; synonyms+: also hypernyms and hyponyms",
    )
    p.add_argument("--multiword", action="store_true", help="keep multi-word lemmas (new_york)")
    add_out_arg(p, help="output lexicon file")
    p.set_defaults(handler=_wordnet_lexicon)


def _retrofit(args) -> int:
    from dataclasses import asdict

    from staticvec.embeddings import Embeddings
    from staticvec.errors import StaticvecError
    from staticvec.files import write_json
    from staticvec.post.lexicon import merge_lexicons, read_lexicon
    from staticvec.post.retrofit import retrofit_embeddings

    if args.iterations < 0:
        raise StaticvecError(f"--iterations must be >= 0, got {args.iterations}")
    embeddings = Embeddings.load(args.vectors, args.vectors_format)
    lexicon = merge_lexicons(read_lexicon(path, args.duplicate_heads) for path in args.lexicon)
    try:
        out, report = retrofit_embeddings(
            embeddings, lexicon, lowercase=args.lowercase, normalize=args.normalize,
            method=args.method, alpha=args.alpha, beta=args.beta, iterations=args.iterations, solver=args.solver,
            nu=args.nu, sigma=args.sigma, distance=args.distance, seed=args.seed,
        )
    except ValueError as exc:  # bad hyper-parameters
        raise StaticvecError(str(exc)) from None
    log.info(
        "%s: %d of %d words have neighbours among the vectors (lexicon: %d heads), %d edges",
        args.method, report.updated, report.words, len(lexicon), report.edges,
    )
    if report.updated == 0:
        log.warning("no word of the lexicon has a neighbour in the vocabulary: the output equals the (normalised) input")
    out.save(args.out, args.out_format)
    if args.report:
        write_json(args.report, {"vectors": args.vectors, "lexicons": args.lexicon, "method": args.method, **asdict(report)})
    return 0


def _artetxe(args) -> int:
    from staticvec.embeddings import Embeddings
    from staticvec.post.artetxe import artetxe
    from staticvec.post.retrofit import normalize_rows

    embeddings = Embeddings.load(args.vectors, args.vectors_format)
    vectors = normalize_rows(embeddings.vectors) if args.normalize else embeddings.vectors
    out = artetxe(vectors, args.alpha, args.basis)
    Embeddings(embeddings.words, out, embeddings.counts).save(args.out, args.out_format)
    log.info("artetxe: alpha %g (%s basis) applied to %d × %d vectors", args.alpha, args.basis, *out.shape)
    return 0


def _wordnet_lexicon(args) -> int:
    from staticvec.post.lexicon import write_lexicon
    from staticvec.post.wordnet import wordnet_lexicon

    lexicon = wordnet_lexicon(args.wordnet_dir, args.relations, args.multiword)
    write_lexicon(lexicon, args.out)
    log.info("wordnet %s: %d words, %d links", args.relations, len(lexicon), sum(map(len, lexicon.values())))
    return 0
